/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the harness's shell-free recursive removal
 * (tests/harness/rm-tree.c), which every test's scratch-folder teardown
 * uses: a tree of folders, files, a FIFO and links goes; a link's target
 * outside the tree stays; a folder left unreadable goes; a name with a
 * quote, spaces and "$(...)" goes (what broke system("rm -rf '...'")), as
 * does a folder whose path is longer than the 128-byte command buffers of
 * old; an absent path is not an error; a lone file goes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/harness/rm-tree.h"

typedef struct Fx {
    char top[64];     /* holds the tree and the outside target */
    char outside[PATH_MAX]; /* a folder a link points to */
} Fx;

/* @dir/@name into @out (PATH_MAX bytes); fails the test if it does not fit. */
static char *join(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);
    assert_true(n > 0 && n < PATH_MAX);
    return out;
}

static void mk(const char *dir, const char *name)
{
    char p[PATH_MAX];
    assert_int_equal(mkdir(join(p, dir, name), 0700), 0);
}

static void put(const char *dir, const char *name)
{
    char p[PATH_MAX];
    int fd;
    fd = open(join(p, dir, name), O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "x", 1), 1);
    assert_int_equal(close(fd), 0);
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static int setup(void **state)
{
    Fx *f = calloc(1, sizeof *f);
    snprintf(f->top, sizeof f->top, "/tmp/ddmon-rmtree-test.XXXXXX");
    assert_non_null(mkdtemp(f->top));
    join(f->outside, f->top, "outside");
    assert_int_equal(mkdir(f->outside, 0700), 0);
    put(f->outside, "keep");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fx *f = *state;
    char p[PATH_MAX];
    unlink(join(p, f->outside, "keep"));
    rmdir(f->outside);
    rmdir(f->top);
    free(f);
    return 0;
}

static void test_tree(void **state)
{
    Fx *f = *state;
    char t[PATH_MAX], p[PATH_MAX];

    join(t, f->top, "tree");
    assert_int_equal(mkdir(t, 0700), 0);
    mk(t, "a");
    mk(t, "a/b");
    mk(t, "a/b/c");
    put(t, "f1");
    put(t, "a/b/f2");
    put(t, "a/b/c/f3");
    assert_int_equal(mkfifo(join(p, t, "fifo"), 0600), 0);
    assert_int_equal(symlink(f->outside, join(p, t, "a/to-outside")), 0);
    assert_int_equal(symlink("/nonexistent/ddmon", join(p, t, "a/dangling")), 0);
    /* unreadable, unsearchable (for anyone but root: as root, which CI
     * is, this part tests nothing) */
    assert_int_equal(chmod(join(p, t, "a/b"), 0), 0);

    assert_int_equal(test_rm_tree(t), 0);
    assert_false(exists(t));
    assert_true(exists(join(p, f->outside, "keep"))); /* the link was removed, not followed */
}

static void test_awkward_name(void **state)
{
    Fx *f = *state;
    char t[PATH_MAX], p[PATH_MAX];

    join(t, f->top, "it's a $(touch x) `dir`");
    assert_int_equal(mkdir(t, 0700), 0);
    put(t, "o'clock");
    mk(t, "sub 'quoted'");
    put(t, "sub 'quoted'/x");

    /* a shell would run $(touch x) in its working directory: be there */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(f->top), 0);
    int rc = test_rm_tree(t);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    assert_false(exists(t));
    assert_false(exists(join(p, f->top, "x"))); /* nothing was run */
}

static void test_long_path(void **state)
{
    Fx *f = *state;
    char t[PATH_MAX], p[PATH_MAX], q[PATH_MAX];
    char seg[61];
    int i;

    memset(seg, 'd', sizeof seg - 1);
    seg[sizeof seg - 1] = '\0';
    join(t, f->top, seg);
    assert_int_equal(mkdir(t, 0700), 0);
    memcpy(p, t, sizeof p);
    for (i = 0; i < 5; i++) { /* about 360 bytes deep */
        mk(p, seg);
        memcpy(q, p, sizeof q);
        join(p, q, seg);
    }
    put(p, "deep");
    assert_true(strlen(q) > 128);

    assert_int_equal(test_rm_tree(q), 0); /* a root longer than 128 bytes */
    assert_false(exists(q));
    assert_int_equal(test_rm_tree(t), 0);
    assert_false(exists(t));
}

static void test_absent_and_file(void **state)
{
    Fx *f = *state;
    char p[PATH_MAX];

    assert_int_equal(test_rm_tree(join(p, f->top, "never-made")), 0);
    put(f->top, "lone");
    assert_int_equal(test_rm_tree(join(p, f->top, "lone")), 0);
    assert_false(exists(p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_awkward_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_absent_and_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
