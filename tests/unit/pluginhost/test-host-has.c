/* SPDX-License-Identifier: Apache-2.0
 *
 * tests/plugins/host-has.c on the SDK test kit: a plugin built with SDK 1.1
 * for cores from 1.0 on (DDM_ABI_MINOR_REQUIRED 0) loads into a 1.0 host
 * and a 1.1 host, and uses foreach_vm only where DDM_HOST_HAS says the
 * table has it. A plugin that did not declare the older minor is refused
 * by a 1.0 host. (The same plugin on the real core: test-contract-real.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <ddmon/testkit.h>

extern const ddm_plugin_desc ddm_plugin_descriptor; /* host-has.c */

static ddm_cmd *run(fake_host *fh)
{
    static const char *const argv[] = {"host-has"};
    ddm_cmd *cmd = fake_host_run_command(fh, 1, argv);
    assert_non_null(cmd);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    return cmd;
}

static void two_vms_one_ready(fake_host *fh)
{
    ddm_vm *a = fake_host_add_vm(fh, NULL);
    (void)fake_host_add_vm(fh, NULL);
    fake_host_vm_event(fh, a, DDM_VM_READY);
}

static void test_on_current_host(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_cmd *cmd;
    (void)state;
    assert_int_equal(ddm_plugin_descriptor.abi_minor, 0);
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    assert_true(DDM_HOST_HAS(fake_host_table(fh), foreach_vm));
    two_vms_one_ready(fh);
    cmd = run(fh);
    assert_string_equal(fake_cmd_message(cmd), "1.1 host");
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "abi_minor"), DDM_ABI_MINOR);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "foreach_vm"), 1);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "vms"), 1);
    fake_host_free(fh);
}

static void test_on_1_0_host(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_cmd *cmd;
    (void)state;
    fake_host_set_abi_minor(fh, 0);
    assert_false(DDM_HOST_HAS(fake_host_table(fh), foreach_vm));
    assert_null(fake_host_table(fh)->foreach_vm);
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    two_vms_one_ready(fh);
    cmd = run(fh);
    assert_string_equal(fake_cmd_message(cmd), "1.0 host");
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "abi_minor"), 0);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "foreach_vm"), 0);
    assert_true(fake_view_has_field(fake_cmd_result(cmd), "vms"));
    assert_null(fake_view_field_str(fake_cmd_result(cmd), "vms"));
    fake_host_free(fh);
}

/* Built for 1.1 without saying otherwise: a 1.0 host refuses it, as the
 * core's loader does (ABI_MISMATCH). */
static void test_newer_plugin_refused_by_1_0_host(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_plugin_desc d = ddm_plugin_descriptor;
    (void)state;
    d.abi_minor = DDM_ABI_MINOR;
    fake_host_set_abi_minor(fh, 0);
    assert_int_equal(fake_host_load(fh, &d), -ENOEXEC);
    {
        char want[64];
        snprintf(want, sizeof want, "plugin wants ABI %u.%u, core provides %u.0",
                 (unsigned)DDM_ABI_MAJOR, (unsigned)DDM_ABI_MINOR, (unsigned)DDM_ABI_MAJOR);
        assert_true(fake_host_log_contains(fh, want));
    }
    assert_false(fake_host_has_command(fh, "host-has"));
    fake_host_free(fh);
}

/* A 1.1 host has foreach_vm but not 1.2's members: the table's size ends
 * before register_chunk_stream, both 1.2 members are NULL, DDM_HOST_HAS
 * says so; a 1.2 host has them. */
static void test_1_1_host_hides_1_2(void **state)
{
    fake_host *fh = fake_host_new();
    const ddm_host *h = fake_host_table(fh);
    (void)state;
    assert_true(DDM_HOST_HAS(h, register_chunk_stream));
    assert_true(DDM_HOST_HAS(h, cmd_progress));
    fake_host_set_abi_minor(fh, 1);
    assert_int_equal(h->abi_minor, 1);
    assert_int_equal(h->size, offsetof(ddm_host, register_chunk_stream));
    assert_true(DDM_HOST_HAS(h, foreach_vm));
    assert_false(DDM_HOST_HAS(h, register_chunk_stream));
    assert_false(DDM_HOST_HAS(h, cmd_progress));
    assert_null(h->register_chunk_stream);
    assert_null(h->cmd_progress);
    assert_null(h->cmd_out_dir);
    assert_null(h->vm_headline_figures);
    /* back to the SDK's own minor: everything again */
    fake_host_set_abi_minor(fh, DDM_ABI_MINOR);
    assert_int_equal(h->size, sizeof(ddm_host));
    assert_non_null(h->register_chunk_stream);
    assert_non_null(h->cmd_progress);
    assert_non_null(h->cmd_out_dir);
    assert_non_null(h->vm_headline_figures);
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    fake_host_free(fh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_on_current_host),
        cmocka_unit_test(test_on_1_0_host),
        cmocka_unit_test(test_newer_plugin_refused_by_1_0_host),
        cmocka_unit_test(test_1_1_host_hides_1_2),
    };
    return cmocka_run_group_tests_name("host-has", tests, NULL, NULL);
}
