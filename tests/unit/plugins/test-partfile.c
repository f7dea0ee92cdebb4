/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for plugins/common/partfile.c alone, in a fresh folder: FILE
 * a device, FIFO, symlink or directory is refused by part_check_target
 * and again by part_commit (left exactly as it was, the .part gone); a
 * regular FILE is replaced; a second part_open of one FILE.part while the
 * first is open is refused (PART_BUSY) without touching the first one's
 * bytes, and works again after the commit or abandon; a stale FILE.part
 * (nobody holds it: a crash's) is replaced by a fresh empty file of the
 * asked mode, and one that is a hard link to another file never truncates
 * that file; a FIFO, device or symlink named FILE.part is refused and left
 * alone. The device cases need CAP_MKNOD (root) and are skipped without.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugins/common/partfile.h"
#include "tests/harness/rm-tree.h"

typedef struct Fx {
    char dir[64];
    char path[128]; /* FILE */
    char part[140]; /* FILE.part */
    char other[128];
} Fx;

static int setup(void **state)
{
    Fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/ddmon-partfile-test.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/out.hprof", f->dir);
    snprintf(f->part, sizeof f->part, "%s.part", f->path);
    snprintf(f->other, sizeof f->other, "%s/other", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fx *f = *state;
    assert_int_equal(test_rm_tree(f->dir), 0);
    free(f);
    return 0;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(close(fd), 0);
}

/* The file's text (at most 63 bytes), "" when it cannot be read. */
static const char *text_of(const char *path)
{
    static char buf[64];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static mode_t kind_of(const char *path)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    return st.st_mode & S_IFMT;
}

/* A char device like /dev/null (1,3) at @path: 0, or -1 without CAP_MKNOD. */
static int make_null_device(const char *path)
{
    if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0)
        return 0;
    assert_true(errno == EPERM || errno == EACCES);
    return -1;
}

/* A finished part: opened, @text written, ready for part_commit. */
static int part_with(Fx *f, const char *text)
{
    int fd = part_open(f->part, 0, 0600);
    assert_true(fd >= 0);
    assert_int_equal(part_write_all(fd, text, strlen(text)), 0);
    return fd;
}

/* ------------------------------------------------------- FILE itself */

static void test_check_target(void **state)
{
    Fx *f = *state;
    assert_int_equal(part_check_target(f->path), 0); /* absent */
    write_file(f->path, "old", 0644);
    assert_int_equal(part_check_target(f->path), 0);
    assert_int_equal(unlink(f->path), 0);
    assert_int_equal(mkfifo(f->path, 0600), 0);
    assert_int_equal(part_check_target(f->path), PART_NOT_REGULAR);
    assert_string_equal(part_strerror(PART_NOT_REGULAR), "not a regular file");
    assert_int_equal(unlink(f->path), 0);
    assert_int_equal(mkdir(f->path, 0700), 0);
    assert_int_equal(part_check_target(f->path), PART_NOT_REGULAR);
    assert_int_equal(rmdir(f->path), 0);
    write_file(f->other, "target", 0644);
    assert_int_equal(symlink(f->other, f->path), 0); /* to a regular file: still refused */
    assert_int_equal(part_check_target(f->path), PART_SYMLINK);
    assert_non_null(strstr(part_strerror(PART_SYMLINK), "symbolic link"));
    assert_int_equal(unlink(f->path), 0);
    if (make_null_device(f->path) == 0)
        assert_int_equal(part_check_target(f->path), PART_NOT_REGULAR);
}

/* A device at FILE when the dump ends: not replaced by the dump. */
static void test_commit_onto_device_refused(void **state)
{
    Fx *f = *state;
    char err[512] = "";
    struct stat st;
    int fd;

    if (make_null_device(f->path) != 0) {
        skip();
        return;
    }
    fd = part_with(f, "a heap dump");
    assert_int_equal(part_commit(fd, f->part, f->path, err, sizeof err), PART_NOT_REGULAR);
    assert_int_equal(lstat(f->path, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(st.st_rdev, makedev(1, 3));
    assert_false(exists(f->part));
    assert_non_null(strstr(err, f->path));
    assert_non_null(strstr(err, "not a regular file"));
}

static void test_commit_onto_fifo_refused(void **state)
{
    Fx *f = *state;
    char err[512] = "";
    int fd;

    assert_int_equal(mkfifo(f->path, 0600), 0);
    fd = part_with(f, "a trace");
    assert_int_equal(part_commit(fd, f->part, f->path, err, sizeof err), PART_NOT_REGULAR);
    assert_int_equal(kind_of(f->path), S_IFIFO);
    assert_false(exists(f->part));
    assert_non_null(strstr(err, "cannot replace"));
}

/* A symlink at FILE: neither replaced nor followed; its target untouched. */
static void test_commit_onto_symlink_refused(void **state)
{
    Fx *f = *state;
    char err[512] = "", link[128] = "";
    int fd;

    write_file(f->other, "keep me", 0644);
    assert_int_equal(symlink(f->other, f->path), 0);
    fd = part_with(f, "a capture");
    assert_int_equal(part_commit(fd, f->part, f->path, err, sizeof err), PART_SYMLINK);
    assert_int_equal(kind_of(f->path), S_IFLNK);
    assert_true(readlink(f->path, link, sizeof link - 1) > 0);
    assert_string_equal(link, f->other);
    assert_string_equal(text_of(f->other), "keep me");
    assert_false(exists(f->part));
}

/* A regular FILE (an earlier dump) is replaced, as before. */
static void test_commit_replaces_regular(void **state)
{
    Fx *f = *state;
    char err[512] = "";
    struct stat st;
    int fd;

    write_file(f->path, "yesterday's dump", 0644);
    fd = part_with(f, "today's");
    assert_int_equal(part_commit(fd, f->part, f->path, err, sizeof err), 0);
    assert_string_equal(text_of(f->path), "today's");
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_false(exists(f->part));
}

/* ------------------------------------------------------- FILE.part */

/* Two writers of one FILE: the second is refused at once and the first
 * one's part is neither truncated nor taken; after the first's commit the
 * name is free again. */
static void test_second_writer_refused(void **state)
{
    Fx *f = *state;
    char err[512] = "";
    int fd1, fd2;

    fd1 = part_with(f, "first half, ");
    fd2 = part_open(f->part, 1, 0600);
    assert_int_equal(fd2, PART_BUSY);
    assert_non_null(strstr(part_strerror(PART_BUSY), "another command"));
    assert_true(exists(f->part));
    assert_string_equal(text_of(f->part), "first half, ");
    assert_int_equal(part_write_all(fd1, "second half", 11), 0);
    assert_int_equal(part_commit(fd1, f->part, f->path, err, sizeof err), 0);
    assert_string_equal(text_of(f->path), "first half, second half");

    /* free again; and a refused writer's part_abandon of nothing (fd < 0)
     * removes nothing */
    fd1 = part_with(f, "again");
    fd2 = part_open(f->part, 0, 0600);
    assert_int_equal(fd2, PART_BUSY);
    part_abandon(fd2, f->part);
    assert_true(exists(f->part));
    part_abandon(fd1, f->part);
    assert_false(exists(f->part));
    fd2 = part_open(f->part, 0, 0600);
    assert_true(fd2 >= 0);
    part_abandon(fd2, f->part);
}

/* A FILE.part nobody holds (a crash left it): replaced by a new, empty
 * file of the asked mode, not refused forever. */
static void test_stale_part_replaced(void **state)
{
    Fx *f = *state;
    struct stat before, after;
    int fd;

    write_file(f->part, "half a dump from a crash", 0644);
    assert_int_equal(lstat(f->part, &before), 0);
    fd = part_open(f->part, 1, 0600);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &after), 0);
    assert_int_equal(after.st_size, 0);
    assert_int_equal(after.st_mode & 0777, 0600);
    assert_int_equal(lstat(f->part, &before), 0);
    assert_true(before.st_ino == after.st_ino); /* the name is the new file */
    part_abandon(fd, f->part);
    assert_false(exists(f->part));
}

/* A stale FILE.part that is a hard link to someone's file: the name is
 * replaced, the other file keeps its bytes (O_TRUNC would have cut it). */
static void test_stale_hard_link_not_truncated(void **state)
{
    Fx *f = *state;
    int fd;

    write_file(f->other, "precious", 0644);
    assert_int_equal(link(f->other, f->part), 0);
    fd = part_open(f->part, 0, 0600);
    assert_true(fd >= 0);
    assert_string_equal(text_of(f->other), "precious");
    assert_int_equal(part_write_all(fd, "dump", 4), 0);
    assert_string_equal(text_of(f->other), "precious");
    part_abandon(fd, f->part);
    assert_string_equal(text_of(f->other), "precious");
}

/* A FIFO, device or symlink named FILE.part: refused, left alone. */
static void test_odd_part_refused(void **state)
{
    Fx *f = *state;
    char link[128] = "";

    assert_int_equal(mkfifo(f->part, 0600), 0);
    assert_int_equal(part_open(f->part, 0, 0600), PART_NOT_REGULAR);
    assert_int_equal(part_open(f->part, 1, 0600), PART_NOT_REGULAR);
    assert_int_equal(kind_of(f->part), S_IFIFO);
    assert_int_equal(unlink(f->part), 0);

    write_file(f->other, "target", 0644);
    assert_int_equal(symlink(f->other, f->part), 0);
    assert_int_equal(part_open(f->part, 0, 0600), PART_SYMLINK);
    assert_true(readlink(f->part, link, sizeof link - 1) > 0);
    assert_string_equal(text_of(f->other), "target");
    assert_int_equal(unlink(f->part), 0);

    if (make_null_device(f->part) == 0) {
        assert_int_equal(part_open(f->part, 1, 0600), PART_NOT_REGULAR);
        assert_int_equal(kind_of(f->part), S_IFCHR);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_check_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_onto_device_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_onto_fifo_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_onto_symlink_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_replaces_regular, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_writer_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_part_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_hard_link_not_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_odd_part_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
