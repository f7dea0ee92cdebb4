/* SPDX-License-Identifier: Apache-2.0
 *
 * Trusted locations (doc/plugin-abi.md, "The load rule"): whether a plugin
 * directory and a plugin file could have been changed by anyone but root
 * and the effective user. A directory is trusted when it and every
 * directory above it are owned by us or root and not writable by
 * group/others, except a group that is the owner alone (Debian's user
 * private groups with umask 002); a sticky one such as /tmp only above a
 * search-path directory, or as the directory of a file named by the user.
 * A file must be a regular file, not a symlink, not group/other-writable,
 * owned by us or root, readable, named *.so and start with an ELF header
 * whose segments lie within the file (loader_elf.c).
 * Directories are walked with openat(O_NOFOLLOW) + fstat from / down and
 * files opened with openat from the checked directory, checked by lstat
 * and again by fstat of the same inode: nothing is looked up twice.
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-loader"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pluginhost/loader-private.h"


/* TRUE if the group of @st is its owner's private group (Debian's user
 * private groups, where umask 002 makes everything group-writable): the
 * owner is its only member, as a primary group and in the member list.
 * Then group-writable means owner-writable (the rule Debian's OpenSSH
 * applies to ~/.ssh). Runs in the main thread at startup (getpwent). */
static gboolean group_is_owners_alone(const struct stat *st)
{
    struct group *gr = getgrgid(st->st_gid);
    if (gr == NULL)
        return FALSE;
    gid_t gid = gr->gr_gid;
    gboolean extra_member = gr->gr_mem != NULL && gr->gr_mem[0] != NULL;
    g_autofree char *member = extra_member ? g_strdup(gr->gr_mem[0]) : NULL;
    if (extra_member && gr->gr_mem[1] != NULL)
        return FALSE; /* two or more listed members */
    guint primary = 0;
    gboolean other = FALSE;
    struct passwd *pw;
    setpwent();
    while ((pw = getpwent()) != NULL) {
        if (pw->pw_gid == gid) {
            primary++;
            if (pw->pw_uid != st->st_uid)
                other = TRUE;
        }
    }
    endpwent();
    if (other)
        return FALSE;
    if (member != NULL) {
        pw = getpwuid(st->st_uid);
        if (pw == NULL || strcmp(pw->pw_name, member) != 0)
            return FALSE;
    }
    return primary > 0 || member != NULL;
}

/* Why someone other than root and the effective user could change @path
 * (a directory or file described by @st), or NULL (transfer full).
 * @sticky_ok: a sticky directory's other writers can add entries but not
 * rename or remove ours, which is fine for a directory above the plugins
 * (like /tmp) but not for the directory whose every *.so gets loaded. */
static char *write_access_problem(const struct stat *st, const char *path, gboolean sticky_ok)
{
    uid_t me = geteuid();
    unsigned mode = (unsigned)(st->st_mode & 07777);
    if (st->st_uid != 0 && st->st_uid != me)
        return g_strdup_printf("owned by uid %u, neither you (uid %u) nor root",
                               (unsigned)st->st_uid, (unsigned)me);
    if (!(st->st_mode & (S_IWGRP | S_IWOTH)))
        return NULL;
    if (!(st->st_mode & S_IWOTH) && group_is_owners_alone(st))
        return NULL; /* group-writable, but the group is the owner alone */
    if (S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX)) {
        if (sticky_ok)
            return NULL;
        return g_strdup_printf("a shared directory (mode %04o): others can add files to it; "
                               "use a directory of your own",
                               mode);
    }
    return g_strdup_printf("writable by %s (mode %04o); chmod go-w %s",
                           (st->st_mode & S_IWOTH) ? "others" : "its group", mode, path);
}

#ifdef O_PATH
#define DIR_WALK_FLAGS (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#else
#define DIR_WALK_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#endif

/* A directory that passed ddm_loader_open_trusted_dir(). */
void ddm_loader_trusted_dir_clear(DdmTrustedDir *td)
{
    if (td->fd >= 0)
        close(td->fd);
    td->fd = -1;
    g_clear_pointer(&td->real, g_free);
}

/* Open @dir after checking it and every directory above it, from / down,
 * each opened with openat(O_NOFOLLOW) from the one checked before and
 * checked with fstat (no path is looked up twice). Symbolic links in @dir
 * are resolved first (realpath); the directories they lead through are the
 * ones checked. @scanned: every *.so in @dir will be loaded (a sticky dir
 * is refused too); else @dir only holds a named file.
 * TRUE with @out filled (ddm_loader_trusted_dir_clear() it), or FALSE with @error
 * (DDM_LOADER_ERROR_UNSAFE, or NOT_A_PLUGIN with *@os_errno set when it
 * cannot be opened). */
gboolean ddm_loader_open_trusted_dir(const char *dir, gboolean scanned, DdmTrustedDir *out,
                                 int *os_errno, GError **error)
{
    *os_errno = 0;
    out->fd = -1;
    out->real = NULL;
    g_autofree char *canon = realpath(dir, NULL);
    if (!canon) {
        *os_errno = errno;
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "cannot open plugin directory %s: %s", dir, g_strerror(*os_errno));
        return FALSE;
    }
    g_auto(GStrv) parts = g_strsplit(canon + 1, "/", -1); /* "/" gives { NULL } */
    guint n = parts[0] && *parts[0] ? g_strv_length(parts) : 0;
    g_autoptr(GString) walked = g_string_new("/");
    int fd = open("/", n == 0 ? O_RDONLY | O_DIRECTORY | O_CLOEXEC : DIR_WALK_FLAGS);
    for (guint level = 0;; level++) {
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            *os_errno = errno;
            g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                        "cannot open plugin directory %s: %s: %s", dir, walked->str,
                        g_strerror(*os_errno));
            break;
        }
        gboolean last = level == n;
        if (!S_ISDIR(st.st_mode)) { /* replaced since realpath */
            *os_errno = ENOTDIR;
            g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                        "cannot open plugin directory %s: %s is not a directory", dir,
                        walked->str);
            break;
        }
        g_autofree char *problem = write_access_problem(&st, walked->str, last ? !scanned : TRUE);
        if (problem) {
            if (last)
                g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                            "plugin directory %s is %s", walked->str, problem);
            else
                g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                            "plugin directory %s is inside %s, which is %s", canon, walked->str,
                            problem);
            break;
        }
        if (last) {
            out->fd = fd;
            out->real = g_steal_pointer(&canon);
            return TRUE;
        }
        const char *name = parts[level];
        int flags = level + 1 == n ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
                                   : DIR_WALK_FLAGS;
        int next = openat(fd, name, flags);
        if (next < 0 && errno == EACCES && !scanned && flags != DIR_WALK_FLAGS)
            next = openat(fd, name, DIR_WALK_FLAGS); /* a named file needs no listing */
        int saved = errno;
        close(fd);
        fd = next;
        errno = saved;
        if (walked->str[walked->len - 1] != '/')
            g_string_append_c(walked, '/');
        g_string_append(walked, name);
    }
    if (fd >= 0)
        close(fd);
    return FALSE;
}

gboolean ddm_loader_check_dir(const char *dir, GError **error)
{
    g_return_val_if_fail(dir != NULL, FALSE);
    int os_errno;
    DdmTrustedDir td;
    if (!ddm_loader_open_trusted_dir(dir, TRUE, &td, &os_errno, error))
        return FALSE;
    ddm_loader_trusted_dir_clear(&td);
    return TRUE;
}


/* The checks on a file's metadata, run on the lstat before opening it and
 * again on the fstat of the opened file. */
static gboolean check_file_stat(const struct stat *st, const char *path, GError **error)
{
    if (S_ISLNK(st->st_mode)) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                    "%s is a symbolic link; plugins must be regular files", path);
        return FALSE;
    }
    if (!S_ISREG(st->st_mode)) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is not a regular file", path);
        return FALSE;
    }
    if ((st->st_mode & S_IWOTH) || ((st->st_mode & S_IWGRP) && !group_is_owners_alone(st))) {
        /* When the group is the reason, name it: "mode 0775" alone does
         * not say which group is not yours alone. */
        g_autofree char *which = NULL;
        if (!(st->st_mode & S_IWOTH)) {
            struct group *gr = getgrgid(st->st_gid);
            which = gr != NULL ? g_strdup_printf(", by group %s (gid %u), which is not yours alone",
                                                 gr->gr_name, (unsigned)st->st_gid)
                               : g_strdup_printf(", by gid %u, which names no group", (unsigned)st->st_gid);
        }
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                    "%s is writable by group or others (mode %04o)%s; fix with chmod go-w", path,
                    (unsigned)(st->st_mode & 07777), which != NULL ? which : "");
        return FALSE;
    }
    if (st->st_uid != 0 && st->st_uid != geteuid()) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                    "%s is owned by uid %u, neither you (uid %u) nor root", path,
                    (unsigned)st->st_uid, (unsigned)geteuid());
        return FALSE;
    }
    if (!g_str_has_suffix(path, ".so")) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s: plugin file names end in .so", path);
        return FALSE;
    }
    /* root reads mode 000 files too; a plugin nobody may read is not meant to load. */
    if (!(st->st_mode & S_IRUSR)) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is not readable (mode %04o)", path, (unsigned)(st->st_mode & 07777));
        return FALSE;
    }
    return TRUE;
}

/* Open entry @name of the trusted directory @dirfd (@path names it in
 * messages) and check it: the returned fd (caller closes) is the file that
 * passed, and the one to load. -1 with @error otherwise. */
int ddm_loader_open_checked_file(int dirfd, const char *name, const char *path, GError **error)
{
    struct stat st, fst;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        int e = errno;
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "cannot read plugin file %s: %s", path, g_strerror(e));
        return -1;
    }
    if (!check_file_stat(&st, path, error))
        return -1;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is not readable (mode %04o): %s", path, (unsigned)(st.st_mode & 07777),
                    g_strerror(e));
        return -1;
    }
    if (fstat(fd, &fst) != 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                    "%s changed while it was being checked", path);
        close(fd);
        return -1;
    }
    if (!check_file_stat(&fst, path, error)) {
        close(fd);
        return -1;
    }
    unsigned char magic[4] = {0};
    ssize_t got = pread(fd, magic, sizeof magic, 0);
    if (got != (ssize_t)sizeof magic || memcmp(magic, "\177ELF", 4) != 0) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is not a shared object (%s)", path,
                    fst.st_size == 0 ? "empty file" : "no ELF header");
        close(fd);
        return -1;
    }
    /* Before dlopen maps it: a truncated file would SIGBUS (loader_elf.c). */
    if (!ddm_loader_check_elf(fd, &fst, path, error)) {
        close(fd);
        return -1;
    }
    return fd;
}
