/* SPDX-License-Identifier: Apache-2.0
 *
 * Private scratch directories for cmocka tests (private-dir.h): made 0700,
 * removed depth first without following links. Shared by the loader's and
 * the web module's tests, which both copy shared objects into one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "private-dir.h"

char *test_private_dir_new(const char *tmpl)
{
    GError *err = NULL;
    char *dir = g_dir_make_tmp(tmpl, &err);

    if (!dir)
        fail_msg("g_dir_make_tmp(%s): %s", tmpl, err->message);
    assert_int_equal(chmod(dir, 0700), 0);
    return dir;
}

static void remove_tree(const char *path)
{
    GStatBuf st;
    GDir *d;
    const char *e;

    if (g_lstat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        g_unlink(path);
        return;
    }
    (void)chmod(path, 0700); /* a test may have left it unreadable */
    d = g_dir_open(path, 0, NULL);
    while (d && (e = g_dir_read_name(d)) != NULL) {
        g_autofree char *sub = g_build_filename(path, e, NULL);
        remove_tree(sub);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(path);
}

void test_private_dir_free(char *dir)
{
    if (!dir)
        return;
    remove_tree(dir);
    g_free(dir);
}
