/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the log context's VM (core/session/logctx.h, logctx.c):
 * nested pushes past the bounded stack keep the deepest recorded key, pops
 * give the keys back in order down to none, and a pop too many is harmless.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <glib.h>

#include "core/session/logctx.h"

static void test_logctx_nesting_past_depth(void **state)
{
    (void)state;
    static const char *keys[10] = { "k1", "k2", "k3", "k4", "k5",
                                    "k6", "k7", "k8", "k9", "k10" };

    assert_int_equal(DDM_LOGCTX_DEPTH, 8); /* the test's numbers assume it */
    assert_null(ddm_logctx_vm());
    for (unsigned i = 0; i < 10; i++) {
        ddm_logctx_push_vm(keys[i]);
        /* up to the depth: the key just pushed; past it: the 8th */
        assert_string_equal(ddm_logctx_vm(), keys[i < DDM_LOGCTX_DEPTH ? i : DDM_LOGCTX_DEPTH - 1]);
    }
    /* depth 10 and 9 (only counted), then 8: key 8 */
    for (unsigned depth = 10; depth > DDM_LOGCTX_DEPTH; depth--) {
        assert_string_equal(ddm_logctx_vm(), "k8");
        ddm_logctx_pop_vm();
    }
    /* depth 8 .. 1: key 8 .. 1, each pop back to the one before */
    for (unsigned depth = DDM_LOGCTX_DEPTH; depth > 0; depth--) {
        assert_ptr_equal(ddm_logctx_vm(), keys[depth - 1]);
        ddm_logctx_pop_vm();
    }
    assert_null(ddm_logctx_vm());
    ddm_logctx_pop_vm(); /* one too many: harmless */
    assert_null(ddm_logctx_vm());
    ddm_logctx_push_vm("again"); /* and the stack still works from the bottom */
    assert_string_equal(ddm_logctx_vm(), "again");
    ddm_logctx_pop_vm();
    assert_null(ddm_logctx_vm());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logctx_nesting_past_depth),
    };
    return cmocka_run_group_tests_name("logctx", tests, NULL, NULL);
}
