/* SPDX-License-Identifier: Apache-2.0
 *
 * Finding, validating and loading plugin files (doc/plugin-abi.md, "The
 * load rule" and "Search path and file layout").
 *
 * Every candidate goes through one sequence, and the first failing step
 * refuses it with a DDM_LOADER_ERROR and a record (for --list-plugins):
 * trusted directory (it and every directory above it owned by us or root,
 * not writable by group/others, except a group that is the owner alone:
 * Debian's user private groups with umask 002; a sticky one such as /tmp only above a
 * search-path directory, or as the directory of a file named by the user)
 * -> lstat (regular file, not a symlink, not group/other-writable, owned
 * by us or root, readable) -> ".so" suffix -> open + fstat (the same
 * inode, the same checks) -> ELF magic -> dlopen(RTLD_NOW | RTLD_LOCAL) by
 * the real path -> that path still names the checked inode ->
 * dlsym(ddm_plugin_descriptor) -> magic -> ABI (major equal, minor not
 * newer) -> size -> name/version/init present -> name == basename.
 * Directories are walked with openat(O_NOFOLLOW) + fstat from / down and
 * files opened with openat from the checked directory; as nobody but root
 * and us can change a trusted path, the file loaded is the file checked. No
 * plugin function runs before every check passed (plugins must not have
 * constructors; doc/plugin-abi.md). Then init runs through the registry,
 * which undoes everything if it fails.
 *
 * Search path: --plugin-dir (in order), DDMON_PLUGIN_PATH (colon list;
 * ignored when running setuid/setgid), the installed plugin directory. A
 * missing directory is skipped quietly; an unsafe one with a warning, its
 * *.so recorded as refused. The first file of a name that loads (or that
 * --plugins / --disable-plugin leave out) decides the name; later files of
 * it are recorded as shadowed. A refused file decides nothing: the next
 * file of the name is tried, and if it loads a warning names both (so a
 * broken copy early in the path is visible but does not take the plugin
 * away). Policy (B5): a refused plugin found by the scan is a warning; a
 * plugin named with --plugins that no file of its name loads fails startup.
 * Non-goals: SIGSEGV traps, a registry cache, reloading.
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-loader"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pluginhost/loader.h"
#include "core/session/monitor.h"
#include "core/views/views.h"

/* The descriptor size of ABI 1.0: frozen forever, whatever fields 1.x appends. */
#define DESC_SIZE_1_0 (offsetof(ddm_plugin_desc, fini) + sizeof(void (*)(ddm_plugin *)))
G_STATIC_ASSERT(DESC_SIZE_1_0 <= sizeof(ddm_plugin_desc));

G_DEFINE_QUARK(ddm-loader-error-quark, ddm_loader_error)

/* The file name without directory and ".so": the name the descriptor must carry. */
static char *plugin_stem(const char *path)
{
    char *base = g_path_get_basename(path);
    if (g_str_has_suffix(base, ".so"))
        base[strlen(base) - 3] = '\0';
    return base;
}

/* ------------------------------------------------------ trusted locations */

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

/* A directory that passed open_trusted_dir(). */
typedef struct TrustedDir {
    int fd;     /* the checked directory (readable with fdopendir when scanned) */
    char *real; /* its path without symbolic links: plugins are loaded by it */
} TrustedDir;

static void trusted_dir_clear(TrustedDir *td)
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
 * TRUE with @out filled (trusted_dir_clear() it), or FALSE with @error
 * (DDM_LOADER_ERROR_UNSAFE, or NOT_A_PLUGIN with *@os_errno set when it
 * cannot be opened). */
static gboolean open_trusted_dir(const char *dir, gboolean scanned, TrustedDir *out,
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
    g_auto(GStrv) parts = g_strsplit(canon + 1, "/", -1); /* "/" gives { "" } */
    guint n = *parts[0] ? g_strv_length(parts) : 0;
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
    TrustedDir td;
    if (!open_trusted_dir(dir, TRUE, &td, &os_errno, error))
        return FALSE;
    trusted_dir_clear(&td);
    return TRUE;
}

/* ------------------------------------------------------------ plugin files */

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
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                    "%s is writable by group or others (mode %04o); fix with chmod go-w", path,
                    (unsigned)(st->st_mode & 07777));
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
static int open_checked_file(int dirfd, const char *name, const char *path, GError **error)
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
    return fd;
}

/* dlopen the checked file open as @fd, entry @name of @td, by its real
 * path (so dladdr, gdb and sanitizer reports name the file), then make
 * sure that path still leads to the file that was checked. Only root and
 * the effective user can change anything along a trusted path, so this
 * catches a file replaced meanwhile by the user's own rebuild, not an
 * attack. (dlopen("/proc/self/fd/N") would load the open file itself, but
 * the dynamic linker then knows the plugin by that name only: sanitizer
 * and gdb backtraces lose its symbols, and glibc hands back a loaded object
 * for any later dlopen of a name it was once opened by.) */
static void *dlopen_checked(int fd, const TrustedDir *td, const char *name, const char *path,
                            GError **error)
{
    g_autofree char *real = g_build_filename(td->real, name, NULL);
    (void)dlerror();
    void *dl = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN, "cannot load %s: %s",
                    path, why ? why : "dlopen failed");
        return NULL;
    }
    struct stat checked, in_dir, by_path;
    if (fstat(fd, &checked) != 0 || fstatat(td->fd, name, &in_dir, AT_SYMLINK_NOFOLLOW) != 0 ||
        stat(real, &by_path) != 0 || checked.st_dev != in_dir.st_dev ||
        checked.st_ino != in_dir.st_ino || checked.st_dev != by_path.st_dev ||
        checked.st_ino != by_path.st_ino) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                    "%s changed while it was being loaded", path);
        dlclose(dl);
        return NULL;
    }
    return dl;
}

/* Open and validate. @td: the trusted directory holding @path (a
 * search-path directory being scanned), or NULL to open and check the
 * directory of @path here (a file named by the user: its directory may be
 * sticky, like /tmp, since others cannot replace a file of ours there).
 * On failure abi_major and abi_minor hold what the frozen prefix said (0
 * when it was never read). */
static const ddm_plugin_desc *open_validated(const TrustedDir *td, const char *path,
                                             void **dl_out, uint16_t *abi_major,
                                             uint16_t *abi_minor, GError **error)
{
    *dl_out = NULL;
    *abi_major = *abi_minor = 0;
    TrustedDir own = {-1, NULL};
    if (!td) {
        g_autofree char *dir = g_path_get_dirname(path);
        int os_errno = 0;
        GError *derr = NULL;
        if (!open_trusted_dir(dir, FALSE, &own, &os_errno, &derr)) {
            if (os_errno) {
                g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                            "cannot read plugin file %s: %s", path, g_strerror(os_errno));
                g_error_free(derr);
            } else {
                g_propagate_error(error, derr);
            }
            return NULL;
        }
        td = &own;
    }
    g_autofree char *base = g_path_get_basename(path);
    int fd = open_checked_file(td->fd, base, path, error);
    void *dl = fd >= 0 ? dlopen_checked(fd, td, base, path, error) : NULL;
    if (fd >= 0)
        close(fd);
    trusted_dir_clear(&own);
    if (!dl)
        return NULL;
    const ddm_plugin_desc *d = dlsym(dl, DDM_PLUGIN_SYMBOL);
    if (!d) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s exports no %s symbol (use DDM_PLUGIN_DEFINE); not a ddmon plugin", path,
                    DDM_PLUGIN_SYMBOL);
        goto fail;
    }
    /* Only the frozen prefix is read until magic, ABI and size are known good. */
    if (d->magic != DDM_PLUGIN_MAGIC) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                    "bad descriptor magic 0x%08x (expected 0x%08x); file %s", d->magic,
                    DDM_PLUGIN_MAGIC, path);
        goto fail;
    }
    *abi_major = d->abi_major;
    *abi_minor = d->abi_minor;
    if (d->abi_major != DDM_CORE_ABI_MAJOR || d->abi_minor > DDM_CORE_ABI_MINOR) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_ABI_MISMATCH,
                    "plugin wants ABI %u.%u, core provides %u.%u; file %s", d->abi_major,
                    d->abi_minor, DDM_CORE_ABI_MAJOR, DDM_CORE_ABI_MINOR, path);
        goto fail;
    }
    if (d->desc_size < DESC_SIZE_1_0) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                    "descriptor size %u is smaller than the ABI 1.0 size %zu; file %s",
                    d->desc_size, (size_t)DESC_SIZE_1_0, path);
        goto fail;
    }
    if (!d->name || !d->version || !d->init) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                    "descriptor lacks %s; file %s",
                    !d->name ? "a name" : !d->version ? "a version" : "an init function", path);
        goto fail;
    }
    {
        g_autofree char *stem = plugin_stem(path);
        if (strcmp(d->name, stem) != 0) {
            g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                        "descriptor name '%.64s' does not match the file name %s.so; file %s",
                        d->name, stem, path);
            goto fail;
        }
    }
    *dl_out = dl;
    return d;

fail:
    dlclose(dl);
    return NULL;
}

static char *absolute_path(const char *path)
{
    if (g_path_is_absolute(path))
        return g_strdup(path);
    g_autofree char *cwd = g_get_current_dir();
    return g_build_filename(cwd, path, NULL);
}

const ddm_plugin_desc *ddm_loader_open(const char *path, void **dl, GError **error)
{
    g_return_val_if_fail(path != NULL && dl != NULL, NULL);
    g_autofree char *abs = absolute_path(path);
    uint16_t major, minor;
    return open_validated(NULL, abs, dl, &major, &minor, error);
}

/* ddm_loader_load_file() for the absolute @abs; @td as in open_validated(). */
static gboolean load_file_at(DdmRegistry *reg, const TrustedDir *td, const char *abs,
                             ddm_plugin **out, GError **error)
{
    g_autofree char *stem = plugin_stem(abs);
    ddm_plugin *loaded = ddm_registry_find_plugin(reg, stem);
    ddm_plugin *p = ddm_registry_add(reg, stem, abs);
    if (out)
        *out = p;
    if (loaded && loaded->status == DDM_PLUGIN_LOADED) {
        p->status = DDM_PLUGIN_REFUSED;
        p->reason = g_strdup_printf("a plugin named %s is already loaded from %s", stem,
                                    loaded->path ? loaded->path : "(built in)");
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_DUPLICATE, "%s; file %s", p->reason,
                    abs);
        return FALSE;
    }
    void *dl = NULL;
    uint16_t major, minor;
    GError *err = NULL;
    const ddm_plugin_desc *d = open_validated(td, abs, &dl, &major, &minor, &err);
    if (!d) {
        p->status = DDM_PLUGIN_REFUSED;
        p->abi_major = major;
        p->abi_minor = minor;
        g_free(p->reason);
        /* The record shows the file already; keep the reason short. */
        g_autofree char *suffix = g_strconcat("; file ", abs, NULL);
        p->reason = g_str_has_suffix(err->message, suffix)
                        ? g_strndup(err->message, strlen(err->message) - strlen(suffix))
                        : g_strdup(err->message);
        g_propagate_error(error, err);
        return FALSE;
    }
    p->dl = dl;
    p->desc = d;
    return ddm_registry_init_plugin(reg, p, error);
}

gboolean ddm_loader_load_file(DdmRegistry *reg, const char *path, ddm_plugin **out,
                              GError **error)
{
    g_return_val_if_fail(reg != NULL && path != NULL, FALSE);
    g_autofree char *abs = absolute_path(path);
    return load_file_at(reg, NULL, abs, out, error);
}

/* ---------------------------------------------------------- search path */

static void add_dir(GPtrArray *dirs, const char *dir)
{
    if (!dir || !*dir)
        return;
    for (guint i = 0; i < dirs->len; i++)
        if (strcmp(g_ptr_array_index(dirs, i), dir) == 0)
            return;
    g_ptr_array_add(dirs, g_strdup(dir));
}

char **ddm_loader_search_path(const DdmConfig *config)
{
    g_return_val_if_fail(config != NULL, NULL);
    GPtrArray *dirs = g_ptr_array_new();
    if (config->plugin_dirs)
        for (guint i = 0; i < config->plugin_dirs->len; i++)
            add_dir(dirs, g_ptr_array_index(config->plugin_dirs, i));
    const char *env = g_getenv("DDMON_PLUGIN_PATH");
    if (env && *env) {
        gboolean elevated = getuid() != geteuid() || getgid() != getegid();
        if (!config->use_env_plugin_path || elevated) {
            g_debug("DDMON_PLUGIN_PATH ignored (%s)",
                    elevated ? "running setuid/setgid" : "disabled by configuration");
        } else {
            g_auto(GStrv) parts = g_strsplit(env, ":", -1);
            for (char **s = parts; *s; s++)
                add_dir(dirs, *s);
        }
    }
    if (config->installed_plugin_dir)
        add_dir(dirs, config->installed_plugin_dir);
#ifdef DDM_PLUGINDIR
    else
        add_dir(dirs, DDM_PLUGINDIR);
#endif
    g_ptr_array_add(dirs, NULL);
    return (char **)g_ptr_array_free(dirs, FALSE);
}

static gboolean name_listed(GPtrArray *list, const char *name)
{
    if (!list)
        return FALSE;
    for (guint i = 0; i < list->len; i++)
        if (g_strcmp0(g_ptr_array_index(list, i), name) == 0)
            return TRUE;
    return FALSE;
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static gboolean is_candidate(const char *entry)
{
    return g_str_has_suffix(entry, ".so") && strlen(entry) > 3;
}

/* Every "*.so" entry of the directory open as @dirfd (or, when -1, of @dir
 * by name: only to record what a refused directory holds), sorted so load
 * order does not depend on the file system. NULL when it cannot be read. */
static GPtrArray *list_candidates(int dirfd, const char *dir)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    if (dirfd >= 0) {
        int fd = dup(dirfd); /* closedir closes it */
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
            g_debug("plugin directory %s skipped: %s", dir, g_strerror(errno));
            if (fd >= 0)
                close(fd);
            g_ptr_array_unref(names);
            return NULL;
        }
        const struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (is_candidate(e->d_name))
                g_ptr_array_add(names, g_strdup(e->d_name));
        closedir(d);
    } else {
        GDir *d = g_dir_open(dir, 0, NULL);
        const char *entry;
        while (d && (entry = g_dir_read_name(d)) != NULL)
            if (is_candidate(entry))
                g_ptr_array_add(names, g_strdup(entry));
        if (d)
            g_dir_close(d);
    }
    g_ptr_array_sort(names, cmp_str);
    return names;
}

static void record_disabled(DdmRegistry *reg, const char *name, const char *path,
                            const char *reason)
{
    ddm_plugin *p = ddm_registry_add(reg, name, path);
    p->status = DDM_PLUGIN_DISABLED;
    p->reason = g_strdup(reason);
}

/* One ddm_loader_load_all() run. A name is decided by its first file that
 * loads or that the policy (--plugins, --disable-plugin) leaves out; a
 * refused file decides nothing, so a later file of the name gets its turn. */
typedef struct Scan {
    DdmRegistry *reg;
    const DdmConfig *config;
    gboolean only;        /* --plugins given */
    GHashTable *decided;  /* stem -> path of the deciding file (owned) */
    GHashTable *refused;  /* stem -> first refused ddm_plugin record (borrowed) */
    GHashTable *failures; /* stem -> GError of that first refusal (owned) */
} Scan;

/* The file @entry of @dir: load it (@td, @dir trusted) or, when @td is
 * NULL, record it refused for @dir_refusal. */
static void scan_entry(Scan *s, const TrustedDir *td, const char *dir, const char *entry,
                       const GError *dir_refusal)
{
    g_autofree char *joined = g_build_filename(dir, entry, NULL);
    g_autofree char *path = absolute_path(joined);
    g_autofree char *stem = plugin_stem(entry);
    const char *first = g_hash_table_lookup(s->decided, stem);
    if (first) {
        g_autofree char *why = g_strdup_printf("shadowed by %s", first);
        g_info("plugin file %s %s", path, why);
        record_disabled(s->reg, stem, path, why);
        return;
    }
    gboolean required = s->only && name_listed(s->config->plugins_only, stem);
    if (s->only && !required) {
        g_hash_table_insert(s->decided, g_strdup(stem), g_strdup(path));
        record_disabled(s->reg, stem, path, "not named in --plugins");
        return;
    }
    if (name_listed(s->config->plugins_disabled, stem)) {
        if (required)
            g_warning("plugin %s is both required (--plugins) and disabled "
                      "(--disable-plugin); not loading it",
                      stem);
        g_hash_table_insert(s->decided, g_strdup(stem), g_strdup(path));
        record_disabled(s->reg, stem, path, "disabled by --disable-plugin");
        return;
    }
    ddm_plugin *p = NULL;
    GError *err = NULL;
    if (!td) {
        p = ddm_registry_add(s->reg, stem, path);
        p->status = DDM_PLUGIN_REFUSED;
        p->reason = g_strdup(dir_refusal->message);
        err = g_error_copy(dir_refusal);
    } else if (load_file_at(s->reg, td, path, &p, &err)) {
        g_hash_table_insert(s->decided, g_strdup(stem), g_strdup(path));
        ddm_plugin *bad = g_hash_table_lookup(s->refused, stem);
        if (bad) {
            g_warning("plugin %s: loaded %s instead of %s, which was refused", stem, path,
                      bad->path);
            g_autofree char *old = bad->reason;
            bad->reason = g_strdup_printf("%s (%s loaded instead)", old, path);
        }
        return;
    } else {
        /* A refused directory was reported once; its files are not. */
        g_warning("%s", err->message);
    }
    p->required = required;
    if (!g_hash_table_contains(s->refused, stem)) {
        g_hash_table_insert(s->refused, g_strdup(stem), p);
        g_hash_table_insert(s->failures, g_strdup(stem), err);
    } else {
        g_error_free(err);
    }
}

static void error_free0(gpointer e)
{
    if (e)
        g_error_free(e);
}

gboolean ddm_loader_load_all(DdmRegistry *reg, const DdmConfig *config, GError **error)
{
    g_return_val_if_fail(reg != NULL && config != NULL, FALSE);
    ddm_registry_set_chunk_filter(reg, config->chunks);
    g_auto(GStrv) dirs = ddm_loader_search_path(config);
    g_autofree char *joined = g_strjoinv(":", dirs);
    g_debug("plugin search path: %s", joined);
    Scan s = {
        .reg = reg,
        .config = config,
        .only = config->plugins_only && config->plugins_only->len > 0,
        .decided = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
        .refused = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .failures = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, error_free0),
    };

    for (char **dir = dirs; *dir; dir++) {
        int os_errno = 0;
        GError *dir_refusal = NULL;
        TrustedDir td;
        gboolean trusted = open_trusted_dir(*dir, TRUE, &td, &os_errno, &dir_refusal);
        if (!trusted && os_errno) {
            g_debug("plugin directory %s skipped: %s", *dir, dir_refusal->message);
            g_error_free(dir_refusal);
            continue;
        }
        if (!trusted)
            g_warning("%s; skipping it", dir_refusal->message);
        g_autoptr(GPtrArray) names = list_candidates(trusted ? td.fd : -1, *dir);
        for (guint i = 0; names && i < names->len; i++)
            scan_entry(&s, trusted ? &td : NULL, *dir, g_ptr_array_index(names, i), dir_refusal);
        if (trusted)
            trusted_dir_clear(&td);
        g_clear_error(&dir_refusal);
    }

    /* A plugin named with --plugins must have loaded from one of its files. */
    GError *required_error = NULL;
    for (guint i = 0; s.only && i < config->plugins_only->len; i++) {
        const char *name = g_ptr_array_index(config->plugins_only, i);
        ddm_plugin *p = ddm_registry_find_plugin(reg, name);
        if (p && p->status != DDM_PLUGIN_REFUSED)
            continue;
        if (p) {
            GError *e = g_hash_table_lookup(s.failures, name);
            if (!required_error && e)
                g_propagate_prefixed_error(&required_error, g_error_copy(e),
                                           "required plugin %s: ", name);
            continue;
        }
        p = ddm_registry_add(reg, name, NULL);
        p->status = DDM_PLUGIN_REFUSED;
        p->required = TRUE;
        p->reason = g_strdup_printf("not found in the plugin path %s", joined);
        g_warning("plugin %s (named with --plugins) was not found in the plugin path %s", name,
                  joined);
        if (!required_error)
            g_set_error(&required_error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_FOUND,
                        "required plugin %s was not found in the plugin path %s", name, joined);
    }
    g_hash_table_unref(s.decided);
    g_hash_table_unref(s.refused);
    g_hash_table_unref(s.failures);

    ddm_registry_handoff(reg);
    if (required_error) {
        g_propagate_error(error, required_error);
        return FALSE;
    }
    return TRUE;
}

/* ---------------------------------------------- --check-plugin, --list-plugins */

/* A registry with no VMs, a view store and a config: enough for a
 * plugin's init, never connected to anything. */
typedef struct Throwaway {
    DdmRegistry *registry;
    DdmViews *views;
    DdmConfig *own_config;
} Throwaway;

static void throwaway_init(Throwaway *t, const DdmConfig *config)
{
    memset(t, 0, sizeof *t);
    if (!config)
        config = t->own_config = ddm_config_new();
    t->views = ddm_views_new();
    t->registry = ddm_registry_new(NULL, t->views, config);
}

static void throwaway_clear(Throwaway *t)
{
    ddm_registry_free(t->registry);
    ddm_views_free(t->views);
    if (t->own_config)
        ddm_config_free(t->own_config);
}

static void report_line(GString *report, const char *key, const char *value)
{
    if (report)
        g_string_append_printf(report, "%-9s %s\n", key, value && *value ? value : "-");
}

gboolean ddm_loader_check_file(const char *path, GString *report, GError **error)
{
    g_return_val_if_fail(path != NULL, FALSE);
    Throwaway t;
    throwaway_init(&t, NULL);
    DdmRegistry *reg = t.registry;
    ddm_plugin *p = NULL;
    GError *err = NULL;
    gboolean ok = ddm_loader_load_file(reg, path, &p, &err);

    report_line(report, "file:", p->path);
    report_line(report, "name:", p->name);
    report_line(report, "version:", p->version);
    report_line(report, "license:", p->license);
    report_line(report, "summary:", p->summary);
    if (p->abi_major || p->abi_minor) {
        g_autofree char *abi = g_strdup_printf("%u.%u (core %u.%u)", p->abi_major, p->abi_minor,
                                               DDM_CORE_ABI_MAJOR, DDM_CORE_ABI_MINOR);
        report_line(report, "ABI:", abi);
    }
    if (ok) {
        g_autoptr(GArray) types = ddm_registry_owned_types(reg, p);
        GString *s = g_string_new(NULL);
        for (guint i = 0; i < types->len; i++) {
            char name[5];
            g_string_append_printf(s, "%s%s", i ? " " : "",
                                   ddm_chunk_name(g_array_index(types, uint32_t, i), name));
        }
        report_line(report, "chunks:", s->str);
        g_string_truncate(s, 0);
        guint taps = 0, listeners = 0;
        ddm_registry_count_observers(reg, p, &taps, &listeners);
        g_autoptr(GArray) cmds = ddm_registry_commands(reg);
        for (guint i = 0; i < cmds->len; i++) {
            const DdmCommandInfo *c = &g_array_index(cmds, DdmCommandInfo, i);
            if (g_strcmp0(c->plugin, p->name) == 0)
                g_string_append_printf(s, "%s%s", s->len ? " " : "", c->name);
        }
        report_line(report, "commands:", s->str);
        g_string_printf(s, "%u tap(s), %u VM listener(s)", taps, listeners);
        report_line(report, "observes:", s->str);
        g_string_free(s, TRUE);
        report_line(report, "result:", "OK (validated, init succeeded, unloaded)");
    } else {
        g_autofree char *res = g_strdup_printf("REFUSED: %s", err->message);
        report_line(report, "result:", res);
        g_propagate_error(error, err);
    }
    throwaway_clear(&t);
    return ok;
}

gboolean ddm_loader_list_plugins(const DdmConfig *config, JsonNode **out, GError **error)
{
    g_return_val_if_fail(config != NULL && out != NULL, FALSE);
    Throwaway t;
    throwaway_init(&t, config);
    gboolean ok = ddm_loader_load_all(t.registry, config, error);
    *out = ddm_registry_plugins_to_json(t.registry);
    throwaway_clear(&t);
    return ok;
}
