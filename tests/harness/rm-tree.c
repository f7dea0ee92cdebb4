/* SPDX-License-Identifier: Apache-2.0
 *
 * test_rm_tree (rm-tree.h): depth-first removal with openat/unlinkat on
 * directory descriptors, so the length of the path does not matter and no
 * link is followed. libc only.
 */
#include "rm-tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Empty the directory open as @fd (taken: closed here). 0 or -errno. */
static int empty_dir(int fd)
{
    DIR *d = fdopendir(fd);
    struct dirent *e;
    int rc = 0;

    if (!d) {
        rc = -errno;
        close(fd);
        return rc;
    }
    while ((errno = 0, e = readdir(d)) != NULL) {
        struct stat st;
        int sub, r = 0;

        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            r = errno == ENOENT ? 0 : -errno;
        } else if (!S_ISDIR(st.st_mode)) {
            if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT)
                r = -errno;
        } else {
            (void)fchmodat(dirfd(d), e->d_name, 0700, 0); /* a test may have left it unreadable */
            sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            r = sub < 0 ? -errno : empty_dir(sub);
            if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT && r == 0)
                r = -errno;
        }
        if (r != 0 && rc == 0)
            rc = r;
    }
    if (errno != 0 && rc == 0)
        rc = -errno;
    closedir(d);
    return rc;
}

int test_rm_tree(const char *path)
{
    struct stat st;
    int fd, rc;

    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISDIR(st.st_mode))
        return unlink(path) == 0 || errno == ENOENT ? 0 : -errno;
    (void)chmod(path, 0700);
    fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    rc = fd < 0 ? -errno : empty_dir(fd);
    if (rmdir(path) != 0 && errno != ENOENT && rc == 0)
        rc = -errno;
    return rc;
}
