/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the vminfo plugin (plugins/vminfo/ sources compiled in) through
 * the fake host: APNM with and without its optional tails and truncated,
 * WAIT, STAG, the record view from vm_info (FEAT), and the exit and gc
 * commands with every reply kind.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ddmon/bytes.h>
#include <ddmon/plugin.h>

#include <ddmon/testkit.h>
#include "vminfo.h"

extern const ddm_plugin_desc ddm_plugin_descriptor;

typedef struct fixture {
    fake_host *fh;
    ddm_vm *vm;
} fixture;

static const char *const k_features[] = {"hprof-heap-dump", "method-trace-profiling"};

/* A host whose core has ABI 1.@abi_minor (0: the kit's own), the plugin
 * loaded, one ready VM. */
static fixture *setup_abi(unsigned abi_minor)
{
    fixture *f = calloc(1, sizeof *f);
    ddm_vm_info info = {0};
    info.key = "127.0.0.1:8000";
    info.pid = 1234;
    info.ddm = 1;
    info.protocol_version = 1;
    info.vm_ident = "Dalvik v1.6.0";
    info.app_name = "<pre-initialized>";
    info.user_id = -1;
    info.abi = "64-bit (arm64)";
    info.jvm_flags = "CheckJNI=false";
    info.native_debuggable = 0;
    info.n_features = 2;
    info.features = k_features;
    f->fh = fake_host_new();
    if (abi_minor)
        fake_host_set_abi_minor(f->fh, abi_minor);
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    f->vm = fake_host_add_vm(f->fh, &info);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    return f;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    ddm_vm_info info = {0};
    info.key = "127.0.0.1:8000";
    info.pid = 1234;
    info.ddm = 1;
    info.protocol_version = 1;
    info.vm_ident = "Dalvik v1.6.0";
    info.app_name = "<pre-initialized>";
    info.user_id = -1;
    info.abi = "64-bit (arm64)";
    info.jvm_flags = "CheckJNI=false";
    info.native_debuggable = 0;
    info.n_features = 2;
    info.features = k_features;
    f->fh = fake_host_new();
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    f->vm = fake_host_add_vm(f->fh, &info);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fake_host_free(f->fh);
    free(f);
    return 0;
}

/* An APNM payload: name, then optionally user id and package. */
static uint8_t *apnm(const char *name, int with_uid, uint32_t uid, const char *pkg, size_t *len)
{
    ddm_writer w;
    ddm_writer_init(&w, 0);
    ddm_write_lstr(&w, name);
    if (with_uid)
        ddm_write_u4(&w, uid);
    if (pkg)
        ddm_write_lstr(&w, pkg);
    return ddm_writer_take(&w, len);
}

static int deliver(fixture *f, uint32_t type, const void *data, size_t len)
{
    return fake_host_deliver(f->fh, f->vm, type, DDM_ORIGIN_EVENT, data, len);
}

static void test_registers_everything(void **state)
{
    fixture *f = *state;
    assert_true(fake_host_owns(f->fh, VMINFO_CHUNK_APNM));
    assert_true(fake_host_owns(f->fh, VMINFO_CHUNK_WAIT));
    assert_true(fake_host_owns(f->fh, VMINFO_CHUNK_STAG));
    assert_true(fake_host_has_command(f->fh, "exit"));
    assert_true(fake_host_has_command(f->fh, "gc"));
    assert_int_equal(fake_host_n_vm_listeners(f->fh), 1);
}

static void test_view_from_vm_info(void **state)
{
    fixture *f = *state;
    ddm_view *v = fake_view_find(f->fh, f->vm, "vminfo");
    assert_non_null(v);
    assert_int_equal(fake_view_kind(v), DDM_VIEW_RECORD);
    assert_int_equal(fake_view_field_int(v, "pid"), 1234);
    assert_string_equal(fake_view_field_str(v, "app"), "<pre-initialized>");
    assert_string_equal(fake_view_field_str(v, "vm ident"), "Dalvik v1.6.0");
    assert_string_equal(fake_view_field_str(v, "abi"), "64-bit (arm64)");
    assert_string_equal(fake_view_field_str(v, "jvm flags"), "CheckJNI=false");
    assert_string_equal(fake_view_field_str(v, "native debuggable"), "false");
    assert_int_equal(fake_view_field_int(v, "protocol version"), 1);
    assert_string_equal(fake_view_field_str(v, "features"),
                        "hprof-heap-dump, method-trace-profiling");
    assert_true(fake_view_has_field(v, "user id"));
    assert_null(fake_view_field_str(v, "user id"));
    assert_null(fake_view_field_str(v, "package"));
    assert_string_equal(fake_view_field_str(v, "waiting"), "false");
    assert_null(fake_view_field_str(v, "boot stage"));
    assert_null(fake_host_headline(f->fh, f->vm, "wait"));
}

static void test_view_follows_vm_changed(void **state)
{
    fixture *f = *state;
    ddm_vm_info info = *fake_vm_info(f->vm);
    ddm_view *v;
    info.n_features = 0;
    info.features = NULL;
    info.native_debuggable = -1;
    fake_host_set_vm_info(f->fh, f->vm, &info);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_CHANGED);
    v = fake_view_find(f->fh, f->vm, "vminfo");
    assert_string_equal(fake_view_field_str(v, "features"), "");
    assert_null(fake_view_field_str(v, "native debuggable"));
}

static void test_apnm_name_only(void **state)
{
    fixture *f = *state;
    size_t len;
    uint8_t *p = apnm("com.example.app", 0, 0, NULL, &len);
    ddm_view *v;
    assert_int_equal(deliver(f, VMINFO_CHUNK_APNM, p, len), DDM_OK);
    free(p);
    assert_int_equal(fake_vm_set_name_calls(f->vm), 1);
    assert_string_equal(fake_vm_info(f->vm)->app_name, "com.example.app");
    assert_int_equal(fake_vm_info(f->vm)->user_id, -1);
    assert_null(fake_vm_info(f->vm)->package_name);
    v = fake_view_find(f->fh, f->vm, "vminfo");
    assert_string_equal(fake_view_field_str(v, "app"), "com.example.app");
    assert_null(fake_view_field_str(v, "user id"));
}

static void test_apnm_with_user_id(void **state)
{
    fixture *f = *state;
    size_t len;
    uint8_t *p = apnm("app", 1, 10, NULL, &len);
    assert_int_equal(deliver(f, VMINFO_CHUNK_APNM, p, len), DDM_OK);
    free(p);
    assert_string_equal(fake_vm_info(f->vm)->app_name, "app");
    assert_int_equal(fake_vm_info(f->vm)->user_id, 10);
    assert_null(fake_vm_info(f->vm)->package_name);
    assert_int_equal(fake_view_field_int(fake_view_find(f->fh, f->vm, "vminfo"), "user id"), 10);
}

static void test_apnm_with_all_tails(void **state)
{
    fixture *f = *state;
    size_t len;
    uint8_t *p = apnm("com.example:remote", 1, 0, "com.example", &len);
    ddm_view *v;
    assert_int_equal(deliver(f, VMINFO_CHUNK_APNM, p, len), DDM_OK);
    free(p);
    assert_string_equal(fake_vm_info(f->vm)->app_name, "com.example:remote");
    assert_int_equal(fake_vm_info(f->vm)->user_id, 0);
    assert_string_equal(fake_vm_info(f->vm)->package_name, "com.example");
    v = fake_view_find(f->fh, f->vm, "vminfo");
    assert_string_equal(fake_view_field_str(v, "package"), "com.example");
    assert_int_equal(fake_view_field_int(v, "user id"), 0);
}

static void test_apnm_utf16_and_trailing_bytes(void **state)
{
    fixture *f = *state;
    ddm_writer w;
    size_t len;
    uint8_t *p;
    ddm_writer_init(&w, 0);
    ddm_write_lstr(&w, "caf\xc3\xa9");
    ddm_write_u4(&w, 11);
    ddm_write_lstr(&w, "pkg");
    ddm_write_u4(&w, 0xdeadbeef); /* unknown newer tail: ignored */
    p = ddm_writer_take(&w, &len);
    assert_int_equal(deliver(f, VMINFO_CHUNK_APNM, p, len), DDM_OK);
    free(p);
    assert_string_equal(fake_vm_info(f->vm)->app_name, "caf\xc3\xa9");
    assert_string_equal(fake_vm_info(f->vm)->package_name, "pkg");
}

static void test_apnm_truncated_name(void **state)
{
    fixture *f = *state;
    /* says 100 units, carries 2 */
    static const uint8_t p[] = {0, 0, 0, 100, 0, 'a', 0, 'b'};
    static const uint8_t three[] = {0, 0, 0};
    assert_int_equal(deliver(f, VMINFO_CHUNK_APNM, p, sizeof p), -EBADMSG);
    assert_int_equal(deliver(f, VMINFO_CHUNK_APNM, three, sizeof three), -EBADMSG);
    assert_int_equal(deliver(f, VMINFO_CHUNK_APNM, NULL, 0), -EBADMSG);
    assert_int_equal(fake_vm_set_name_calls(f->vm), 0);
    assert_true(fake_host_log_contains(f->fh, "APNM"));
    assert_string_equal(fake_vm_info(f->vm)->app_name, "<pre-initialized>");
}

static void test_apnm_truncated_tails(void **state)
{
    fixture *f = *state;
    ddm_writer w;
    size_t len;
    uint8_t *p;
    /* name + 2 bytes of user id */
    ddm_writer_init(&w, 0);
    ddm_write_lstr(&w, "a1");
    ddm_write_u2(&w, 7);
    p = ddm_writer_take(&w, &len);
    assert_int_equal(deliver(f, VMINFO_CHUNK_APNM, p, len), DDM_OK);
    free(p);
    assert_string_equal(fake_vm_info(f->vm)->app_name, "a1");
    assert_int_equal(fake_vm_info(f->vm)->user_id, -1);
    assert_true(fake_host_log_contains(f->fh, "truncated user id"));
    /* name + user id + package whose length runs past the end */
    ddm_writer_init(&w, 0);
    ddm_write_lstr(&w, "a2");
    ddm_write_u4(&w, 5);
    ddm_write_u4(&w, 0x7fffffff);
    ddm_write_u2(&w, 'x');
    p = ddm_writer_take(&w, &len);
    assert_int_equal(deliver(f, VMINFO_CHUNK_APNM, p, len), DDM_OK);
    free(p);
    assert_string_equal(fake_vm_info(f->vm)->app_name, "a2");
    assert_int_equal(fake_vm_info(f->vm)->user_id, 5);
    assert_null(fake_vm_info(f->vm)->package_name);
    assert_true(fake_host_log_contains(f->fh, "truncated package"));
}

static void test_apnm_parser_direct(void **state)
{
    vminfo_apnm a;
    const char *note;
    size_t len;
    uint8_t *p = apnm("", 1, 0xffffffffu, "", &len);
    (void)state;
    assert_int_equal(vminfo_parse_apnm(p, len, &a, &note), 0);
    assert_string_equal(a.app_name, "");
    assert_int_equal(a.user_id, -1); /* top bit set: not a user id */
    assert_string_equal(a.package_name, "");
    assert_null(note);
    vminfo_apnm_clear(&a);
    free(p);
}

static void test_wait(void **state)
{
    fixture *f = *state;
    static const uint8_t zero = 0, three = 3;
    ddm_view *v;
    assert_int_equal(deliver(f, VMINFO_CHUNK_WAIT, &zero, 1), DDM_OK);
    v = fake_view_find(f->fh, f->vm, "vminfo");
    assert_string_equal(fake_view_field_str(v, "waiting"), "true");
    assert_string_equal(fake_view_field_str(v, "debugger"), "waiting for debugger");
    assert_string_equal(fake_host_headline(f->fh, f->vm, "wait"), "waiting for debugger");
    /* unknown reason is shown, empty WAIT still means waiting */
    assert_int_equal(deliver(f, VMINFO_CHUNK_WAIT, &three, 1), DDM_OK);
    assert_string_equal(fake_view_field_str(v, "debugger"), "waiting for debugger (reason 3)");
    assert_int_equal(deliver(f, VMINFO_CHUNK_WAIT, NULL, 0), DDM_OK);
    assert_string_equal(fake_view_field_str(v, "debugger"), "waiting for debugger");
    assert_true(fake_host_log_contains(f->fh, "WAIT without a reason"));
}

/* Plugin ABI 1.6: a ready VM nobody asked about holds neither the vminfo
 * view nor state; the view made at the first look shows every field READY
 * and the changes since would have (here a WAIT and a rename that came
 * before the look); the headline did not wait for the look. */
static void test_view_made_when_asked(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    static const uint8_t zero = 0;
    uint8_t *p;
    size_t len;
    ddm_view *v;

    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    assert_null(h->vm_get_data(fake_host_plugin(f->fh), f->vm));
    p = apnm("com.example.notes", 0, 0, NULL, &len);
    assert_int_equal(deliver(f, VMINFO_CHUNK_APNM, p, len), DDM_OK);
    free(p);
    assert_null(h->vm_get_data(fake_host_plugin(f->fh), f->vm)); /* a rename needs no state */
    assert_int_equal(deliver(f, VMINFO_CHUNK_WAIT, &zero, 1), DDM_OK);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "wait"), "waiting for debugger");
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    v = fake_view_find(f->fh, f->vm, "vminfo");
    assert_non_null(v);
    assert_int_equal(fake_view_kind(v), DDM_VIEW_RECORD);
    assert_string_equal(fake_view_title(v), "VM information");
    assert_int_equal(fake_view_version(v), 1);
    assert_int_equal(fake_view_field_int(v, "pid"), 1234);
    assert_string_equal(fake_view_field_str(v, "app"), "com.example.notes");
    assert_string_equal(fake_view_field_str(v, "vm ident"), "Dalvik v1.6.0");
    assert_string_equal(fake_view_field_str(v, "features"), "hprof-heap-dump, method-trace-profiling");
    assert_string_equal(fake_view_field_str(v, "waiting"), "true");
    assert_string_equal(fake_view_field_str(v, "debugger"), "waiting for debugger");
    assert_string_equal(fake_view_field_str(v, "connection"), "127.0.0.1:8000");
    assert_int_equal(fake_view_n_fields(v), 14);
    /* made: later changes go to it at once */
    fake_host_set_debugger(f->fh, f->vm, 1);
    assert_string_equal(fake_view_field_str(v, "debugger"), "attached");
    assert_int_equal(fake_view_version(v), 2);
}

static void test_stag(void **state)
{
    fixture *f = *state;
    static const uint8_t bind[] = {'B', 'I', 'N', 'D'};
    static const uint8_t a_go[] = {'A', '_', 'G', 'O', 9, 9};
    static const uint8_t shortp[] = {'N', 'A', 'M'};
    static const uint8_t ctl[] = {1, 'X', 0x7f, 'Y'};
    ddm_view *v = fake_view_find(f->fh, f->vm, "vminfo");
    assert_int_equal(deliver(f, VMINFO_CHUNK_STAG, bind, sizeof bind), DDM_OK);
    assert_string_equal(fake_view_field_str(v, "boot stage"), "BIND");
    assert_int_equal(deliver(f, VMINFO_CHUNK_STAG, a_go, sizeof a_go), DDM_OK);
    assert_string_equal(fake_view_field_str(v, "boot stage"), "A_GO");
    assert_int_equal(deliver(f, VMINFO_CHUNK_STAG, shortp, sizeof shortp), -EBADMSG);
    assert_string_equal(fake_view_field_str(v, "boot stage"), "A_GO");
    assert_true(fake_host_log_contains(f->fh, "STAG of 3 bytes"));
    assert_int_equal(deliver(f, VMINFO_CHUNK_STAG, ctl, sizeof ctl), DDM_OK);
    assert_string_equal(fake_view_field_str(v, "boot stage"), "?X?Y");
}

static void test_view_gone_with_vm(void **state)
{
    fixture *f = *state;
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_null(fake_view_find(f->fh, f->vm, "vminfo"));
    assert_int_equal(fake_host_n_views(f->fh, f->vm), 0);
}

/* ---------------------------------------------------------------- exit */

static void test_exit_default_status(void **state)
{
    fixture *f = *state;
    const char *argv[] = {"exit", "1234"};
    ddm_cmd *cmd = fake_host_run_command(f->fh, 2, argv);
    const fake_request *rq;
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "EXIT 1 sent"));
    assert_int_equal(fake_host_n_requests(f->fh), 1);
    rq = fake_host_request(f->fh, 0);
    assert_int_equal(rq->type, VMINFO_CHUNK_EXIT);
    assert_int_equal(rq->len, 4);
    assert_memory_equal(rq->data, "\0\0\0\1", 4);
    /* the VM drops the connection: the pending request ends, nothing else happens */
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_true(fake_host_request(f->fh, 0)->completed);
}

static void test_exit_with_status(void **state)
{
    fixture *f = *state;
    const char *argv[] = {"exit", "127.0.0.1:8000", "-1"};
    ddm_cmd *cmd = fake_host_run_command(f->fh, 3, argv);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_memory_equal(fake_host_request(f->fh, 0)->data, "\xff\xff\xff\xff", 4);
    /* no reply ever: the request times out quietly */
    fake_host_complete_status(f->fh, 0, DDM_REPLY_TIMEOUT);
}

static void test_exit_usage_and_errors(void **state)
{
    fixture *f = *state;
    const char *bad_status[] = {"exit", "1234", "x9"};
    const char *no_pid[] = {"exit"};
    const char *unknown[] = {"exit", "999"};
    const char *ok[] = {"exit", "1234"};
    ddm_cmd *cmd;
    assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 3, bad_status)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 1, no_pid)), DDM_CMD_USAGE);
    cmd = fake_host_run_command(f->fh, 2, unknown);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    /* The core's message (cmd_find_vm), not one of the plugin's own. */
    assert_string_equal(fake_cmd_message(cmd), "no VM matches '999' (try 'ddmon vms')");
    /* The host refuses the request (-EPERM: its type is disabled). */
    fake_host_set_request_error(f->fh, -EPERM);
    cmd = fake_host_run_command(f->fh, 2, ok);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "disabled"));
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    fake_host_set_request_error(f->fh, 0);
}

/* ------------------------------------------------------------------ gc */

static ddm_cmd *start_gc(fixture *f)
{
    const char *argv[] = {"gc", "1234"};
    size_t first = fake_host_n_requests(f->fh);
    ddm_cmd *cmd = fake_host_run_command(f->fh, 2, argv);
    int at;
    assert_non_null(cmd);
    assert_false(fake_cmd_finished(cmd));
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, VMINFO_CHUNK_HPGC), 1);
    at = fake_host_find_request(f->fh, f->vm, VMINFO_CHUNK_HPGC, first);
    assert_true(at >= 0);
    assert_int_equal(fake_host_request(f->fh, (size_t)at)->len, 0);
    assert_int_equal(fake_host_request(f->fh, (size_t)at)->timeout_ms, VMINFO_GC_TIMEOUT_MS);
    return cmd;
}

static void test_gc_empty_reply(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd = start_gc(f);
    fake_host_complete_status(f->fh, 0, DDM_REPLY_EMPTY);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_string_equal(fake_cmd_message(cmd), "GC done");
}

static void test_gc_chunk_reply(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd = start_gc(f);
    fake_host_complete_chunk(f->fh, 0, VMINFO_CHUNK_HPGC, NULL, 0);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
}

static void test_gc_timeout_is_ok(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd = start_gc(f);
    fake_host_complete_status(f->fh, 0, DDM_REPLY_TIMEOUT);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "GC requested (ended at the 3000 ms timeout: "
                                                   "ART does not answer HPGC"));
}

static void test_gc_jdwp_error(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd = start_gc(f);
    fake_host_complete_status(f->fh, 0, DDM_REPLY_ERROR);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "JDWP error 99"));
}

static void test_gc_fail_chunk(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd = start_gc(f);
    fake_host_complete_fail(f->fh, 0, 1, "GC not allowed");
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "GC not allowed"));
}

static void test_gc_vm_gone_and_bad(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd = start_gc(f);
    ddm_cmd *cmd2;
    fake_host_complete_status(f->fh, 0, DDM_REPLY_BAD);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    cmd2 = start_gc(f);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_int_equal(fake_cmd_status(cmd2), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd2), "went away"));
}

static void test_gc_usage_unknown_and_not_ready(void **state)
{
    fixture *f = *state;
    const char *noarg[] = {"gc"};
    const char *unknown[] = {"gc", "nobody"};
    const char *ok[] = {"gc", "1234"};
    ddm_cmd *cmd;
    assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 1, noarg)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 2, unknown)), DDM_CMD_NOT_FOUND);
    fake_host_set_request_error(f->fh, -ENOTCONN);
    cmd = fake_host_run_command(f->fh, 2, ok);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "not ready"));
}

/* ddm_vm_info.ddm is 0 for a plain JVM and for a DDM VM on its way up: only
 * the one foreach_plain_vm lists is refused as a plain JVM; the other gets
 * the request's own "not ready" (as the core answers an unready VM). */
static void test_gc_plain_only_when_listed(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_vm_info up = {.pid = 5, .ddm = 0, .user_id = -1, .native_debuggable = -1};
    ddm_vm_info jvm = {.pid = 6, .user_id = -1, .native_debuggable = -1};
    const char *gc_up[] = {"gc", "5"}, *gc_jvm[] = {"gc", "6"};
    ddm_cmd *cmd;
    (void)state;
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    fake_host_add_vm(fh, &up); /* no READY: its handshake goes on */
    ddm_vm *plain = fake_host_add_plain_vm(fh, &jvm);
    fake_host_vm_event(fh, plain, DDM_VM_READY);
    fake_host_set_request_error(fh, -ENOTCONN); /* what the core says of an unready VM */
    cmd = fake_host_run_command(fh, 2, gc_up);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_null(strstr(fake_cmd_message(cmd), "plain JVM"));
    assert_non_null(strstr(fake_cmd_message(cmd), "not ready"));
    cmd = fake_host_run_command(fh, 2, gc_jvm);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "is a plain JVM, not DDM-aware"));
    fake_host_free(fh);
}

static void test_gc_timeout_option(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_vm_info info = {.pid = 5, .ddm = 1, .user_id = -1, .native_debuggable = -1};
    const char *argv[] = {"gc", "5"};
    ddm_vm *vm;
    (void)state;
    fake_host_set_config(fh, "vminfo.gc_timeout", "750");
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    vm = fake_host_add_vm(fh, &info);
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    fake_host_run_command(fh, 2, argv);
    assert_int_equal(fake_host_request(fh, 0)->timeout_ms, 750);
    fake_host_free(fh); /* pending gc ends with VM_GONE, its ud freed */
}

/* --------------------------------------------- gc: what ends it early */

/* A request as another plugin (heap) sends it: the taps see it. */
static void heap_request(fixture *f, uint32_t type, uint8_t when)
{
    uint8_t req[2] = { when, 0 };
    fake_host_deliver(f->fh, f->vm, type, DDM_ORIGIN_REQUEST, req,
                      type == VMINFO_CHUNK_HPIF ? 1 : 2);
}

static void heap_event_id(fixture *f, uint32_t type, uint32_t heap)
{
    uint8_t id[4];
    ddm_put_u4(id, heap);
    fake_host_deliver(f->fh, f->vm, type, DDM_ORIGIN_EVENT, id, sizeof id);
}

/* An HPIF event of one heap, @reason its when. */
static void hpif_event(fixture *f, uint8_t reason)
{
    uint8_t p[4 + 29] = {0};
    ddm_put_u4(p, 1);
    ddm_put_u4(p + 4, 1);
    p[16] = reason;
    fake_host_deliver(f->fh, f->vm, VMINFO_CHUNK_HPIF, DDM_ORIGIN_EVENT, p, sizeof p);
}

static void test_gc_taps_registered(void **state)
{
    fixture *f = *state;
    assert_int_equal(fake_host_n_taps(f->fh, VMINFO_CHUNK_HPIF), 1);
    assert_int_equal(fake_host_n_taps(f->fh, VMINFO_CHUNK_HPSG), 1);
    assert_int_equal(fake_host_n_taps(f->fh, VMINFO_CHUNK_HPST), 1);
    assert_int_equal(fake_host_n_taps(f->fh, VMINFO_CHUNK_HPEN), 1);
    assert_false(fake_host_owns(f->fh, VMINFO_CHUNK_HPIF)); /* the heap plugin's */
}

/* Segments on (HPSG every GC): ART's gc ends once the segments of every
 * heap arrived (HPST..HPEN after the HPGC), after the owner had the last
 * HPEN (a 1 ms timer), not at the first chunk nor at the timeout. */
static void test_gc_ends_at_segments(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd;
    heap_request(f, VMINFO_CHUNK_HPIF, 3);
    heap_request(f, VMINFO_CHUNK_HPSG, 1);
    heap_event_id(f, VMINFO_CHUNK_HPEN, 1); /* the end of an earlier GC's: no gc pending */
    cmd = start_gc(f);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, VMINFO_CHUNK_REAQ), 0); /* no fence */
    heap_event_id(f, VMINFO_CHUNK_HPEN, 1); /* no HPST since the HPGC: not this GC's */
    hpif_event(f, 3);                       /* segments still to come */
    heap_event_id(f, VMINFO_CHUNK_HPST, 1);
    heap_event_id(f, VMINFO_CHUNK_HPST, 2);
    fake_host_deliver(f->fh, f->vm, VMINFO_CHUNK_HPSG, DDM_ORIGIN_EVENT, "x", 1);
    heap_event_id(f, VMINFO_CHUNK_HPEN, 1);
    assert_int_equal(fake_host_n_timers(f->fh), 0);
    heap_event_id(f, VMINFO_CHUNK_HPEN, 2);
    assert_false(fake_cmd_finished(cmd)); /* the owner handles HPEN after the taps */
    assert_int_equal(fake_host_n_timers(f->fh), 1);
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_int_equal(fake_host_n_timers(f->fh), 0);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "GC done (its heap segments arrived"));
    assert_non_null(strstr(fake_cmd_message(cmd), "ART does not answer HPGC"));
    fake_host_complete_status(f->fh, 0, DDM_REPLY_TIMEOUT); /* the HPGC ends later: nothing more */
    assert_non_null(strstr(fake_cmd_message(cmd), "heap segments arrived"));
}

/* Segments on, a Dalvik VM: the GC's segments come, then (before the
 * deferred finish) its answer to HPGC. The message says what ended it and
 * does not call the VM an ART that does not answer HPGC. */
static void test_gc_dalvik_answers_after_segments(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd;
    int at;
    heap_request(f, VMINFO_CHUNK_HPIF, 3);
    heap_request(f, VMINFO_CHUNK_HPSG, 1);
    cmd = start_gc(f);
    at = fake_host_find_request(f->fh, f->vm, VMINFO_CHUNK_HPGC, 0);
    assert_true(at >= 0);
    heap_event_id(f, VMINFO_CHUNK_HPST, 1);
    fake_host_deliver(f->fh, f->vm, VMINFO_CHUNK_HPSG, DDM_ORIGIN_EVENT, "x", 1);
    heap_event_id(f, VMINFO_CHUNK_HPEN, 1);
    assert_false(fake_cmd_finished(cmd));
    assert_int_equal(fake_host_n_timers(f->fh), 1);
    fake_host_complete_status(f->fh, (size_t)at, DDM_REPLY_EMPTY); /* Dalvik: "GC done" */
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_string_equal(fake_cmd_message(cmd), "GC done (its heap segments arrived)");
    (void)fake_host_fire_timers(f->fh); /* the deferred finish: nothing more */
    assert_string_equal(fake_cmd_message(cmd), "GC done (its heap segments arrived)");
}

/* Only HPIF at every GC: its event (reason 3, not a "now" answer) ends it. */
static void test_gc_ends_at_hpif(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd;
    heap_request(f, VMINFO_CHUNK_HPIF, 3);
    cmd = start_gc(f);
    hpif_event(f, 1); /* an answer to HPIF(now) */
    assert_int_equal(fake_host_n_timers(f->fh), 0);
    hpif_event(f, 3);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "GC done (its heap information arrived"));
}

/* Segments switched off again, nothing on: the REAQ fence sent after the
 * HPGC ends it when answered (ART), with a message saying so. */
static void test_gc_fence_when_nothing_follows(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd;
    int fence;
    uint8_t on = 0;
    heap_request(f, VMINFO_CHUNK_HPSG, 1);
    heap_request(f, VMINFO_CHUNK_HPSG, 0);
    cmd = start_gc(f);
    fence = fake_host_find_request(f->fh, f->vm, VMINFO_CHUNK_REAQ, 0);
    assert_true(fence > 0);
    hpif_event(f, 1); /* HPIF(now) from someone: not the GC's */
    assert_int_equal(fake_host_n_timers(f->fh), 0);
    fake_host_complete_chunk(f->fh, (size_t)fence, VMINFO_CHUNK_REAQ, &on, 1);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "ART does not answer HPGC and no heap "
                                                  "information was switched on"));
    assert_non_null(strstr(fake_cmd_message(cmd), "REAQ"));
    fake_host_complete_status(f->fh, 0, DDM_REPLY_TIMEOUT);
    assert_non_null(strstr(fake_cmd_message(cmd), "REAQ"));
}

/* Dalvik answers the HPGC before the fence: "GC done"; the fence's answer
 * changes nothing. */
static void test_gc_dalvik_reply_before_fence(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd = start_gc(f);
    int fence = fake_host_find_request(f->fh, f->vm, VMINFO_CHUNK_REAQ, 0);
    uint8_t on = 0;
    assert_true(fence > 0);
    fake_host_complete_status(f->fh, 0, DDM_REPLY_EMPTY);
    assert_string_equal(fake_cmd_message(cmd), "GC done");
    fake_host_complete_chunk(f->fh, (size_t)fence, VMINFO_CHUNK_REAQ, &on, 1);
    assert_string_equal(fake_cmd_message(cmd), "GC done");
}

/* REAQ disabled (--chunks): no fence, the timeout ends it and says why. */
static void test_gc_no_fence_when_reaq_disabled(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_vm_info info = {.pid = 5, .ddm = 1, .user_id = -1, .native_debuggable = -1};
    const char *argv[] = {"gc", "5"};
    ddm_cmd *cmd;
    ddm_vm *vm;
    (void)state;
    fake_host_disable_chunk(fh, VMINFO_CHUNK_REAQ);
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    vm = fake_host_add_vm(fh, &info);
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    cmd = fake_host_run_command(fh, 2, argv);
    assert_int_equal(fake_host_n_requests(fh), 1);
    fake_host_complete_status(fh, 0, DDM_REPLY_TIMEOUT);
    assert_non_null(strstr(fake_cmd_message(cmd), "no heap information was switched on"));
    fake_host_free(fh);
}

/* The VM goes away with the effect seen and the finish still deferred:
 * the gc is done (OK), the timer's reference freed (ASan: no leak). */
static void test_gc_vm_gone_while_deferred(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd;
    heap_request(f, VMINFO_CHUNK_HPSG, 1);
    cmd = start_gc(f);
    heap_event_id(f, VMINFO_CHUNK_HPST, 1);
    heap_event_id(f, VMINFO_CHUNK_HPEN, 1);
    assert_int_equal(fake_host_n_timers(f->fh), 1);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_timers(f->fh), 0);
}

/* Before any STAG event, the boot stage comes from HELO's tail (API 34). */
static void test_boot_stage_from_helo(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_vm_info info = {.pid = 6, .ddm = 1, .user_id = -1, .native_debuggable = -1};
    ddm_vm *vm;
    (void)state;
    info.size = sizeof info;
    info.boot_stage = DDM_CHUNK('N', 'A', 'M', 'D');
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    vm = fake_host_add_vm(fh, &info);
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    assert_string_equal(fake_view_field_str(fake_view_find(fh, vm, "vminfo"), "boot stage"), "NAMD");
    fake_host_free(fh);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* A view made when asked and then unwatched for the core's linger is
 * taken back (vm_view_unmake); the next look makes it again, the same,
 * WAIT included; a watched one stays. */
static void test_view_unmade_when_unwatched(void **state)
{
    fixture *f = *state;
    static const uint8_t zero = 0;
    ddm_view *v;
    assert_int_equal(deliver(f, VMINFO_CHUNK_WAIT, &zero, 1), DDM_OK);
    v = fake_view_find(f->fh, f->vm, "vminfo");
    assert_non_null(v);
    assert_string_equal(fake_view_field_str(v, "waiting"), "true");
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 1);
    assert_null(fake_view_find_made(f->fh, f->vm, "vminfo"));
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 0);
    v = fake_view_find(f->fh, f->vm, "vminfo");
    assert_non_null(v);
    assert_string_equal(fake_view_field_str(v, "waiting"), "true");
    assert_string_equal(fake_view_field_str(v, "debugger"), "waiting for debugger");
    assert_string_equal(fake_view_field_str(v, "vm ident"), "Dalvik v1.6.0");
    fake_view_set_watchers(v, 1);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 0);
    assert_ptr_equal(fake_view_find_made(f->fh, f->vm, "vminfo"), v);
}

/* A core before 1.6 (no vm_view_declare): the vminfo view is made at
 * DDM_VM_READY, as before, with the VM's identity in it. */
static void test_old_core_view_at_ready(void **state)
{
    fixture *f = setup_abi(5);
    ddm_view *v;
    (void)state;
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 1);
    v = fake_view_find_made(f->fh, f->vm, "vminfo");
    assert_non_null(v);
    assert_int_equal(fake_view_kind(v), DDM_VIEW_RECORD);
    assert_string_equal(fake_view_field_str(v, "vm ident"), "Dalvik v1.6.0");
    teardown((void **)&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_registers_everything),
        T(test_view_from_vm_info),
        T(test_view_made_when_asked),
        cmocka_unit_test(test_old_core_view_at_ready),
        T(test_view_unmade_when_unwatched),
        T(test_view_follows_vm_changed),
        T(test_apnm_name_only),
        T(test_apnm_with_user_id),
        T(test_apnm_with_all_tails),
        T(test_apnm_utf16_and_trailing_bytes),
        T(test_apnm_truncated_name),
        T(test_apnm_truncated_tails),
        cmocka_unit_test(test_apnm_parser_direct),
        T(test_wait),
        T(test_stag),
        T(test_view_gone_with_vm),
        T(test_exit_default_status),
        T(test_exit_with_status),
        T(test_exit_usage_and_errors),
        T(test_gc_empty_reply),
        T(test_gc_chunk_reply),
        T(test_gc_timeout_is_ok),
        T(test_gc_jdwp_error),
        T(test_gc_fail_chunk),
        T(test_gc_vm_gone_and_bad),
        T(test_gc_usage_unknown_and_not_ready),
        cmocka_unit_test(test_gc_timeout_option),
        cmocka_unit_test(test_gc_plain_only_when_listed),
        T(test_gc_taps_registered),
        T(test_gc_ends_at_segments),
        T(test_gc_dalvik_answers_after_segments),
        T(test_gc_ends_at_hpif),
        T(test_gc_fence_when_nothing_follows),
        T(test_gc_dalvik_reply_before_fence),
        cmocka_unit_test(test_gc_no_fence_when_reaq_disabled),
        T(test_gc_vm_gone_while_deferred),
        cmocka_unit_test(test_boot_stage_from_helo),
    };
    return cmocka_run_group_tests_name("plugin-vminfo", tests, NULL, NULL);
}
