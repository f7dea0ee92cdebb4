/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the log context's VM (core/session/logctx.h, logctx.c):
 * nested enters, to any depth, each make their key the current one, and
 * each leave gives back the key before, down to none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <glib.h>

#include "core/session/logctx.h"

#define NESTED 40 /* deeper than the old bounded stack's 8 */

static void test_logctx_nesting(void **state)
{
    (void)state;
    char keys[NESTED][8];
    const char *before[NESTED];

    assert_null(ddm_logctx_vm());
    for (unsigned i = 0; i < NESTED; i++) {
        g_snprintf(keys[i], sizeof keys[i], "k%u", i + 1);
        before[i] = ddm_logctx_enter(keys[i]);
        assert_ptr_equal(before[i], i ? keys[i - 1] : NULL);
        assert_ptr_equal(ddm_logctx_vm(), keys[i]); /* the key just entered */
    }
    /* each leave back to the one before, down to none */
    for (unsigned depth = NESTED; depth > 0; depth--) {
        assert_ptr_equal(ddm_logctx_vm(), keys[depth - 1]);
        ddm_logctx_leave(before[depth - 1]);
    }
    assert_null(ddm_logctx_vm());
    const char *none = ddm_logctx_enter("again"); /* and it works from the bottom again */
    assert_null(none);
    assert_string_equal(ddm_logctx_vm(), "again");
    ddm_logctx_leave(none);
    assert_null(ddm_logctx_vm());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logctx_nesting),
    };
    return cmocka_run_group_tests_name("logctx", tests, NULL, NULL);
}
