/* SPDX-License-Identifier: Apache-2.0
 *
 * Private scratch directories for cmocka tests (private-dir.h): made 0700,
 * removed depth first without following links (rm-tree.h; a failure fails
 * the test). Shared by the loader's and the web module's tests, which both
 * copy shared objects into one.
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
#include "rm-tree.h"

char *test_private_dir_new(const char *tmpl)
{
    GError *err = NULL;
    char *dir = g_dir_make_tmp(tmpl, &err);

    if (!dir)
        fail_msg("g_dir_make_tmp(%s): %s", tmpl, err->message);
    assert_int_equal(chmod(dir, 0700), 0);
    return dir;
}

void test_private_dir_free(char *dir)
{
    int rc;

    if (!dir)
        return;
    rc = test_rm_tree(dir);
    if (rc != 0)
        fail_msg("removing %s: %s", dir, g_strerror(-rc));
    g_free(dir);
}
