/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the hello example plugin with the SDK's test kit
 * (libddmon-plugin-test, <ddmon/testkit.h>): no ddmon, no VM, no sockets.
 * The plugin's source is compiled into this program; the kit plays the
 * core. Build and run out of tree with `make check` (pkg-config module
 * ddmon-plugin-test-1); in the ddmon tree `make check` runs it too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ddmon/testkit.h>

extern const ddm_plugin_desc ddm_plugin_descriptor; /* hello.c */

static int setup(void **state)
{
    fake_host *fh = fake_host_new();
    fake_host_set_config(fh, "hello.interval_ms", "100");
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    *state = fh;
    return 0;
}

static int teardown(void **state)
{
    fake_host_free(*state); /* VMs go, the plugin unloads, leaks and misuse fail the test */
    return 0;
}

/* Registration: a tap on every type, a VM listener, the command, a timer. */
static void test_registers(void **state)
{
    fake_host *fh = *state;
    assert_int_equal(fake_host_n_taps(fh, 0), 1);
    assert_int_equal(fake_host_n_vm_listeners(fh), 1);
    assert_true(fake_host_has_command(fh, "hello"));
    assert_int_equal(fake_host_n_timers(fh), 1);
    assert_int_equal(fake_host_timer_interval(fh, 0), 100);
}

/* Chunks are counted per ready VM and published by the timer: the view,
 * the headline's text and its typed figure. */
static void test_counts_and_publishes(void **state)
{
    fake_host *fh = *state;
    ddm_vm_info info = {0};
    ddm_vm *vm;
    ddm_view *v;
    double figure = 0;
    info.pid = 42;
    info.app_name = "com.example";
    info.ddm = 1;
    vm = fake_host_add_vm(fh, &info);
    fake_host_deliver(fh, vm, DDM_CHUNK('E', 'A', 'R', 'L'), DDM_ORIGIN_EVENT, "x", 1);
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    fake_host_deliver(fh, vm, DDM_CHUNK('T', 'E', 'S', 'T'), DDM_ORIGIN_EVENT, "abcd", 4);
    fake_host_deliver(fh, vm, DDM_CHUNK('T', 'E', 'S', 'T'), DDM_ORIGIN_EVENT, "ef", 2);
    assert_int_equal(fake_host_fire_timers(fh), 1);
    v = fake_view_find(fh, vm, "hello");
    assert_non_null(v);
    assert_int_equal(fake_view_field_int(v, "chunks"), 2); /* not the one before READY */
    assert_int_equal(fake_view_field_int(v, "bytes"), 6);
    assert_string_equal(fake_view_field_str(v, "app"), "com.example");
    assert_string_equal(fake_host_headline(fh, vm, "chunks"), "2");
    assert_true(fake_host_headline_figure(fh, vm, "chunks_count", &figure));
    assert_true(figure == 2.0);
}

/* `ddmon hello` counts the ready VMs (host->foreach_vm); `ddmon hello VM`
 * answers for one; an unknown VM is NOT_FOUND. */
static void test_command(void **state)
{
    fake_host *fh = *state;
    ddm_vm_info info = {0};
    ddm_vm *a, *b;
    ddm_cmd *cmd;
    static const char *const all[] = {"hello"};
    static const char *const one[] = {"hello", "7"};
    static const char *const none[] = {"hello", "99"};
    info.ddm = 1;
    info.pid = 7;
    a = fake_host_add_vm(fh, &info);
    info.pid = 8;
    b = fake_host_add_vm(fh, &info);
    fake_host_vm_event(fh, a, DDM_VM_READY);
    fake_host_vm_event(fh, b, DDM_VM_READY);
    fake_host_vm_event(fh, b, DDM_VM_GONE);
    cmd = fake_host_run_command(fh, 1, all);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "vms"), 1);
    cmd = fake_host_run_command(fh, 2, one);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "chunks"), 0);
    cmd = fake_host_run_command(fh, 2, none);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_registers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counts_and_publishes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command, setup, teardown),
    };
    return cmocka_run_group_tests_name("hello", tests, NULL, NULL);
}
