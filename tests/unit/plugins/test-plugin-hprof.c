/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the hprof plugin (plugins/hprof/) on the SDK's test kit:
 * the command's forms and usage errors, the HPDS path in every order the
 * wire allows (event then reply, reply then event within the grace, reply
 * without event), every way a dump fails (VM says no, goes away, stalls,
 * malformed, unwritable path) leaving no file, FILE a FIFO or device
 * (refused, left alone), two dumps to one FILE (the second refused), the
 * J2SE conversion, the HPDU path with ddmlib's default device path,
 * several VMs at once with --out-dir (two of one app and pid get distinct
 * names), progress, unsolicited dumps, a second dump of one VM, and a 1.1
 * core.
 */
#include "build-config.h" /* HAVE_LIBCRYPTO */

#include <errno.h>
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
#include <glib.h>

#include <ddmon/testkit.h>

#include "tests/harness/plugin-fixture.h"

#include "plugins/hprof/hprof.h"
#include "plugins/hprof/hprof_hash.h"

extern const ddm_plugin_desc ddm_plugin_descriptor;

#define HPDS HPROF_CHUNK_HPDS
#define HPDU HPROF_CHUNK_HPDU

/* ------------------------------------------------------------ fixtures */

typedef struct Fx {
    fake_host *fh;
    ddm_vm *stream_vm; /* FEAT lists hprof-heap-dump-streaming */
    ddm_vm *device_vm; /* it does not */
    char dir[64];
} Fx;

static const char *const feats_stream[] = {"hprof-heap-dump", HPROF_FEATURE_STREAMING};
static const char *const feats_device[] = {"hprof-heap-dump"};

static int setup(void **state)
{
    Fx *f = calloc(1, sizeof *f);
    f->fh = fake_host_new();
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    f->stream_vm = pfx_add_ready_vm(f->fh, "127.0.0.1:8000", 1234, "com.example.notes", feats_stream,
                                   sizeof feats_stream / sizeof feats_stream[0]);
    f->device_vm = pfx_add_ready_vm(f->fh, "127.0.0.1:8001", 2345, "com.example:remote", feats_device, 1);
    pfx_client_dir_new(f->fh, "hprof", f->dir, sizeof f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fx *f = *state;
    fake_host_free(f->fh);
    pfx_dir_remove(f->dir);
    free(f);
    return 0;
}

/* A small Android dump: header, a heap-dump segment with HEAP_DUMP_INFO
 * and ROOT_INTERNED_STRING, then HEAP_DUMP_END. *len gets its size. */
static uint8_t *sample_dump(size_t *len)
{
    static const uint8_t body[] = {
        /* HEAP_DUMP_SEGMENT, time 0, length 14 */
        0x1c, 0, 0, 0, 0, 0, 0, 0, 14,
        0xfe, 0, 0, 0, 'A', 0, 0, 0, 1, /* HEAP_DUMP_INFO heap 'A' name id 1 */
        0x89, 0, 0, 0, 7,              /* ROOT_INTERNED_STRING id 7 */
        /* HEAP_DUMP_END */
        0x2c, 0, 0, 0, 0, 0, 0, 0, 0};
    static const char magic[] = "JAVA PROFILE 1.0.3";
    uint8_t *p = malloc(19 + 4 + 8 + sizeof body);
    memcpy(p, magic, 19);                      /* with its NUL */
    memcpy(p + 19, "\0\0\0\4", 4);             /* id size 4 */
    memcpy(p + 23, "\0\0\0\0\0\0\0\1", 8);     /* time */
    memcpy(p + 31, body, sizeof body);
    *len = 31 + sizeof body;
    return p;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    uint8_t *p;
    long n;
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    p = malloc((size_t)n + 1);
    assert_int_equal(fread(p, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return p;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static ddm_cmd *run(Fx *f, const char *a0, const char *a1, const char *a2, const char *a3)
{
    const char *argv[5] = {"hprof", a0, a1, a2, a3};
    int argc = 1;
    while (argc < 5 && argv[argc])
        argc++;
    return fake_host_run_command(f->fh, argc, argv);
}

/* The last HPDS request's index (must exist and be pending). */
static size_t hpds_request(Fx *f, ddm_vm *vm)
{
    int idx = fake_host_find_request(f->fh, vm, HPDS, 0);
    assert_true(idx >= 0);
    return (size_t)idx;
}

/* ----------------------------------------------------------- the tests */

static void test_registers(void **state)
{
    Fx *f = *state;
    assert_true(fake_host_owns_stream(f->fh, HPDS));
    assert_true(fake_host_owns(f->fh, HPDU));
    assert_false(fake_host_owns_stream(f->fh, HPDU));
    assert_true(fake_host_has_command(f->fh, "hprof"));
}

/* ART's order: the event, then the empty reply. Byte-exact file, sha256,
 * mode 0600, no .part, a record result, progress in bytes. */
static void test_stream_event_then_reply(void **state)
{
    Fx *f = *state;
    size_t len, got_len;
    uint8_t *dump = sample_dump(&len);
    char path[128], part[140];
    ddm_cmd *cmd;
    ddm_view *res;
    uint64_t done = 0, total = 0;
    struct stat st;

    snprintf(path, sizeof path, "%s/notes.hprof", f->dir);
    snprintf(part, sizeof part, "%s.part", path);
    cmd = run(f, "notes", "notes.hprof", NULL, NULL); /* relative to the client's cwd */
    assert_non_null(cmd);
    assert_false(fake_cmd_finished(cmd));
    assert_true(exists(part));
    assert_int_equal(fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 7, 0), DDM_OK);
    assert_false(fake_cmd_finished(cmd)); /* the reply is still to come */
    assert_false(exists(path));
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_EMPTY);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), path));
    {
        uint8_t *got = read_file(path, &got_len);
        assert_non_null(got);
        assert_memory_equal(got, dump, len);
        assert_int_equal(got_len, len);
        free(got);
    }
    assert_false(exists(part));
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    res = fake_cmd_result(cmd);
    assert_non_null(res);
    assert_string_equal(fake_view_field_str(res, "via"), "stream");
    assert_string_equal(fake_view_field_str(res, "path"), path);
    assert_int_equal(fake_view_field_int(res, "bytes"), (int64_t)len);
    assert_int_equal(strlen(fake_view_field_str(res, "sha256")), 64);
    assert_true(fake_cmd_progress(cmd, &done, &total));
    assert_int_equal(total, len);
    assert_true(fake_cmd_progress_count(cmd) >= 2);
    assert_string_equal(fake_cmd_progress_unit(cmd), "B");
    free(dump);
}

/* The sha256 is the file's: a known vector (SHA-256 of the sample). */
static void test_sha256_is_the_files(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *dump = sample_dump(&len);
    char path[128];
    g_autofree char *bytes = NULL, *want = NULL;
    gsize n = 0;
    ddm_cmd *cmd;

    snprintf(path, sizeof path, "%s/s.hprof", f->dir);
    cmd = run(f, "1234", path, NULL, NULL);
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 0, 0);
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_EMPTY);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    /* GLib's SHA-256 of the file as written: a reader independent of the
     * plugin's hash, and no shell */
    assert_true(g_file_get_contents(path, &bytes, &n, NULL));
    want = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)bytes, n);
    assert_string_equal(fake_view_field_str(fake_cmd_result(cmd), "sha256"), want);
    free(dump);
}

/* The reply first (the draft says nothing of the order): the event may
 * still come within the grace; without it the dump fails, no file. */
static void test_reply_before_event(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *dump = sample_dump(&len);
    char path[128];
    ddm_cmd *cmd;

    snprintf(path, sizeof path, "%s/late.hprof", f->dir);
    cmd = run(f, "notes", path, NULL, NULL);
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_EMPTY);
    assert_false(fake_cmd_finished(cmd));
    assert_int_equal(fake_host_n_timers(f->fh), 1);
    assert_int_equal(fake_host_timer_interval(f->fh, 0), HPROF_EVENT_GRACE_MS);
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 5, 0);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_host_n_timers(f->fh), 0);
    assert_true(exists(path));
    free(dump);
}

static void test_reply_without_event_fails(void **state)
{
    Fx *f = *state;
    char path[128], part[140];
    ddm_cmd *cmd;
    int idx;

    snprintf(path, sizeof path, "%s/never.hprof", f->dir);
    snprintf(part, sizeof part, "%s.part", path);
    cmd = run(f, "notes", path, NULL, NULL);
    idx = fake_host_find_request(f->fh, f->stream_vm, HPDS, 0);
    fake_host_complete_status(f->fh, (size_t)idx, DDM_REPLY_EMPTY);
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "sent no dump"));
    assert_false(exists(path));
    assert_false(exists(part));
}

/* Every failure: a clear message with the bytes that arrived; no file. */
static void check_failed(Fx *f, ddm_cmd *cmd, const char *path, const char *text)
{
    char part[160];
    snprintf(part, sizeof part, "%s.part", path);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    if (!strstr(fake_cmd_message(cmd), text))
        fail_msg("message \"%s\" lacks \"%s\"", fake_cmd_message(cmd), text);
    assert_false(exists(path));
    assert_false(exists(part));
    (void)f;
}

static void test_stream_failures(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *dump = sample_dump(&len);
    char path[128];
    ddm_cmd *cmd;
    char half[64];

    snprintf(half, sizeof half, "%zu of %zu bytes arrived", len / 2, len);
    /* the VM's packet ends early */
    snprintf(path, sizeof path, "%s/a.hprof", f->dir);
    cmd = run(f, "notes", path, NULL, NULL);
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 3, -EPROTO);
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_EMPTY);
    check_failed(f, cmd, path, half);
    check_failed(f, cmd, path, "ended before");

    /* stalls */
    snprintf(path, sizeof path, "%s/b.hprof", f->dir);
    cmd = run(f, "notes", path, NULL, NULL);
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 3, -ETIMEDOUT);
    check_failed(f, cmd, path, "stopped sending");
    fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, f->stream_vm, HPDS, 1),
                              DDM_REPLY_VM_GONE);

    /* past the user's cap */
    snprintf(path, sizeof path, "%s/c.hprof", f->dir);
    cmd = run(f, "notes", path, NULL, NULL);
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 3, -EFBIG);
    check_failed(f, cmd, path, "--max-stream");
    fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, f->stream_vm, HPDS, 2),
                              DDM_REPLY_EMPTY);

    /* the VM says no */
    snprintf(path, sizeof path, "%s/d.hprof", f->dir);
    cmd = run(f, "notes", path, NULL, NULL);
    fake_host_complete_fail(f->fh, (size_t)fake_host_find_request(f->fh, f->stream_vm, HPDS, 3), 1,
                            "no space");
    check_failed(f, cmd, path, "the VM said: no space");

    /* a malformed dump: a sub-record runs past its record */
    snprintf(path, sizeof path, "%s/e.hprof", f->dir);
    cmd = run(f, "notes", path, NULL, NULL);
    dump[31 + 8] = 6; /* the segment's length: shorter than its sub-records */
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 4, 0);
    check_failed(f, cmd, path, "malformed heap dump");
    fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, f->stream_vm, HPDS, 4),
                              DDM_REPLY_EMPTY);
    free(dump);
}

static void test_unwritable_path(void **state)
{
    Fx *f = *state;
    ddm_cmd *cmd = run(f, "notes", "/nonexistent-dir/x.hprof", NULL, NULL);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "cannot create /nonexistent-dir/x.hprof.part"));
    assert_int_equal(fake_host_n_pending(f->fh, NULL, HPDS), 0); /* nothing sent */
}

/* FILE a FIFO (or a device, as root): refused before HPDS goes out,
 * naming FILE, and left as it was (it used to be replaced by the dump). */
static void test_target_not_regular(void **state)
{
    Fx *f = *state;
    char path[128], part[140];
    struct stat st;
    ddm_cmd *cmd;

    snprintf(path, sizeof path, "%s/fifo.hprof", f->dir);
    snprintf(part, sizeof part, "%s.part", path);
    assert_int_equal(mkfifo(path, 0600), 0);
    cmd = run(f, "notes", path, NULL, NULL);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), path));
    assert_non_null(strstr(fake_cmd_message(cmd), "not a regular file"));
    assert_int_equal(fake_host_n_pending(f->fh, NULL, HPDS), 0); /* nothing sent */
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_false(exists(part));

    snprintf(path, sizeof path, "%s/null", f->dir);
    if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        cmd = run(f, "notes", path, NULL, NULL);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
        assert_non_null(strstr(fake_cmd_message(cmd), "not a regular file"));
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
        assert_int_equal(fake_host_n_pending(f->fh, NULL, HPDS), 0);
    }
}

/* A FIFO appears at FILE while the dump streams: the dump is not renamed
 * onto it; the command fails naming it and no .part stays. */
static void test_target_turns_fifo(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *dump = sample_dump(&len);
    char path[128], part[140];
    struct stat st;
    ddm_cmd *cmd;

    snprintf(path, sizeof path, "%s/late-fifo.hprof", f->dir);
    snprintf(part, sizeof part, "%s.part", path);
    cmd = run(f, "notes", path, NULL, NULL);
    assert_false(fake_cmd_finished(cmd));
    assert_int_equal(mkfifo(path, 0600), 0);
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 0, 0);
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_EMPTY);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "not a regular file"));
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_false(exists(part));
    free(dump);
}

/* Two dumps (of two VMs) to one FILE: the second is refused at once and
 * the first completes byte-exact (they used to share one truncated
 * FILE.part). */
static void test_same_file_refused(void **state)
{
    Fx *f = *state;
    size_t len, got_len;
    uint8_t *dump = sample_dump(&len), *got;
    char path[128];
    ddm_vm *twin;
    ddm_cmd *first, *second;

    twin = pfx_add_ready_vm(f->fh, "127.0.0.1:8002", 4321, "com.example.other", feats_stream,
                            sizeof feats_stream / sizeof feats_stream[0]);
    snprintf(path, sizeof path, "%s/same.hprof", f->dir);
    first = run(f, "notes", path, NULL, NULL);
    assert_false(fake_cmd_finished(first));
    second = run(f, "4321", path, NULL, NULL);
    assert_true(fake_cmd_finished(second));
    assert_int_equal(fake_cmd_status(second), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(second), "another command is writing"));
    assert_int_equal(fake_host_n_pending(f->fh, twin, HPDS), 0);
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 0, 0);
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_EMPTY);
    assert_int_equal(fake_cmd_status(first), DDM_CMD_OK);
    got = read_file(path, &got_len);
    assert_non_null(got);
    assert_int_equal(got_len, len);
    assert_memory_equal(got, dump, len);
    free(got);
    free(dump);
}

/* Two VMs with the same app and pid (two devices) in one --out-dir
 * command: two files, APP-PID.hprof and APP-PID-2.hprof. */
static void test_out_dir_same_default_name(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *dump = sample_dump(&len);
    char out[128], p1[200], p2[200];
    ddm_vm *twin;
    ddm_cmd *cmd;
    ddm_view *res;

    twin = pfx_add_ready_vm(f->fh, "127.0.0.1:8002", 1234, "com.example.notes", feats_stream,
                            sizeof feats_stream / sizeof feats_stream[0]);
    snprintf(out, sizeof out, "%s/two", f->dir);
    cmd = run(f, "--out-dir", out, "127.0.0.1:8000", "127.0.0.1:8002");
    assert_false(fake_cmd_finished(cmd));
    assert_int_equal(fake_host_n_pending(f->fh, f->stream_vm, HPDS), 1);
    assert_int_equal(fake_host_n_pending(f->fh, twin, HPDS), 1);
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 0, 0);
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_EMPTY);
    fake_host_stream(f->fh, twin, HPDS, dump, len, 0, 0);
    fake_host_complete_status(f->fh, hpds_request(f, twin), DDM_REPLY_EMPTY);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    res = fake_cmd_result(cmd);
    snprintf(p1, sizeof p1, "%s/com.example.notes-1234.hprof", out);
    snprintf(p2, sizeof p2, "%s/com.example.notes-1234-2.hprof", out);
    assert_true(exists(p1));
    assert_true(exists(p2));
    assert_true(fake_view_find_row(res, "path", p1) >= 0);
    assert_true(fake_view_find_row(res, "path", p2) >= 0);
    free(dump);
}

/* --format=standard: hprof-conv's rules on the sample (header 1.0.2,
 * HEAP_DUMP_INFO dropped, the interned-string root a ROOT_UNKNOWN, the
 * segment's length patched). */
static void test_standard_format(void **state)
{
    Fx *f = *state;
    size_t len, got_len;
    uint8_t *dump = sample_dump(&len), *got;
    static const uint8_t want_body[] = {0x1c, 0, 0, 0, 0, 0, 0, 0, 5, 0xff, 0, 0, 0, 7,
                                        0x2c, 0, 0, 0, 0, 0, 0, 0, 0};
    char path[128];
    ddm_cmd *cmd;

    snprintf(path, sizeof path, "%s/std.hprof", f->dir);
    cmd = run(f, "notes", path, "--format=standard", NULL);
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 1, 0);
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_EMPTY);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    got = read_file(path, &got_len);
    assert_non_null(got);
    assert_int_equal(got_len, 31 + sizeof want_body);
    assert_memory_equal(got, "JAVA PROFILE 1.0.2", 19);
    assert_memory_equal(got + 31, want_body, sizeof want_body);
    assert_string_equal(fake_view_field_str(fake_cmd_result(cmd), "format"), "standard");
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "bytes"), (int64_t)got_len);
    free(got);
    free(dump);
}

/* No streaming feature: HPDU with ddmlib's path; --on-device forces it. */
static void test_device(void **state)
{
    Fx *f = *state;
    ddm_cmd *cmd = run(f, "2345", NULL, NULL, NULL);
    const fake_request *rq;
    static const uint8_t ok = 0, bad = 0xFF;
    /* lstr "/sdcard/com.example_remote.hprof" */
    const char *want = "/sdcard/com.example_remote.hprof";
    size_t n = strlen(want);
    int idx = fake_host_find_request(f->fh, f->device_vm, HPDU, 0);

    assert_true(idx >= 0);
    assert_int_equal(fake_host_n_pending(f->fh, f->device_vm, HPDS), 0);
    rq = fake_host_request(f->fh, (size_t)idx);
    assert_int_equal(rq->len, 4 + 2 * n);
    assert_int_equal(rq->data[3], n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rq->data[4 + 2 * i + 1], (uint8_t)want[i]);
    fake_host_complete_chunk(f->fh, (size_t)idx, HPDU, &ok, 1);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "written on the device to /sdcard/"));
    assert_non_null(strstr(fake_cmd_message(cmd), "cannot stream"));
    assert_string_equal(fake_view_field_str(fake_cmd_result(cmd), "via"), "device");

    cmd = run(f, "notes", "--on-device=/data/local/tmp/n.hprof", NULL, NULL);
    idx = fake_host_find_request(f->fh, f->stream_vm, HPDU, 0);
    assert_true(idx >= 0);
    fake_host_complete_chunk(f->fh, (size_t)idx, HPDU, &bad, 1);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "could not write /data/local/tmp/n.hprof"));
}

/* Several VMs with --out-dir (the client's): a table; the directory is made. */
static void test_out_dir_batch(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *dump = sample_dump(&len);
    char out[128], p1[200];
    ddm_cmd *cmd;
    ddm_view *res;
    int idx;
    static const uint8_t ok = 0;

    snprintf(out, sizeof out, "%s/dumps/today", f->dir);
    fake_host_set_client_out_dir(f->fh, out);
    cmd = run(f, "all", NULL, NULL, NULL);
    assert_false(fake_cmd_finished(cmd));
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 0, 0);
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_EMPTY);
    assert_false(fake_cmd_finished(cmd)); /* the device VM is still at it */
    idx = fake_host_find_request(f->fh, f->device_vm, HPDU, 0);
    fake_host_complete_chunk(f->fh, (size_t)idx, HPDU, &ok, 1);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    res = fake_cmd_result(cmd);
    assert_int_equal(fake_view_kind(res), DDM_VIEW_TABLE);
    assert_int_equal(fake_view_n_rows(res), 2);
    snprintf(p1, sizeof p1, "%s/com.example.notes-1234.hprof", out);
    assert_true(exists(p1));
    assert_true(fake_view_find_row(res, "path", p1) >= 0);
    assert_string_equal(fake_cmd_message(cmd), "2 heap dumps written");
    free(dump);
}

static void test_usage_errors(void **state)
{
    Fx *f = *state;
    ddm_cmd *cmd = run(f, NULL, NULL, NULL, NULL);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_USAGE);
    cmd = run(f, "notes", "x.hprof", "--format=j2se", NULL);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_USAGE);
    cmd = run(f, "notes", "1234", "x.hprof", NULL);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_USAGE);
    assert_non_null(strstr(fake_cmd_message(cmd), "--out-dir"));
    cmd = run(f, "all", NULL, NULL, NULL);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_USAGE);
    cmd = run(f, "notes", "--bogus", NULL, NULL);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_USAGE);
    cmd = run(f, "notes", "--on-device=relative.hprof", NULL, NULL);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_USAGE);
    cmd = run(f, "nosuchapp", "x.hprof", NULL, NULL);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    assert_int_equal(fake_host_n_requests(f->fh), 0);
}

/* A dump nobody asked for is skipped; a second dump of a VM is refused. */
static void test_unsolicited_and_second(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *dump = sample_dump(&len);
    char path[128];
    ddm_cmd *first, *second;

    assert_true(fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 0, 0) < 0);
    assert_true(fake_host_log_contains(f->fh, "no command asked for"));

    snprintf(path, sizeof path, "%s/one.hprof", f->dir);
    first = run(f, "notes", path, NULL, NULL);
    second = run(f, "notes", "two.hprof", NULL, NULL);
    assert_int_equal(fake_cmd_status(second), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(second), "already running"));
    assert_int_equal(fake_host_n_pending(f->fh, f->stream_vm, HPDS), 1);
    fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 0, 0);
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_EMPTY);
    assert_int_equal(fake_cmd_status(first), DDM_CMD_OK);
    free(dump);
}

/* The VM goes away before it sent anything. */
static void test_vm_gone(void **state)
{
    Fx *f = *state;
    char path[128];
    ddm_cmd *cmd;

    snprintf(path, sizeof path, "%s/gone.hprof", f->dir);
    cmd = run(f, "notes", path, NULL, NULL);
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_VM_GONE);
    check_failed(f, cmd, path, "the VM went away");
    fake_host_vm_event(f->fh, f->stream_vm, DDM_VM_GONE);
}

/* The client goes away mid-dump: the dump stops, no file stays. */
static void test_cancelled(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *dump = sample_dump(&len);
    char path[128];
    ddm_cmd *cmd;

    snprintf(path, sizeof path, "%s/cancel.hprof", f->dir);
    cmd = run(f, "notes", path, NULL, NULL);
    fake_cmd_cancel(cmd);
    assert_true(fake_host_stream(f->fh, f->stream_vm, HPDS, dump, len, 5, 0) < 0 ||
                fake_cmd_finished(cmd));
    check_failed(f, cmd, path, "cancelled");
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_EMPTY);
    free(dump);
}

/* Forms a user types: --on-device PATH (space), ddmon's --out-dir with
 * VM FILE, a directory as FILE (refused before anything is sent). */
static void test_argument_forms(void **state)
{
    Fx *f = *state;
    ddm_cmd *cmd;
    int idx;
    const fake_request *rq;
    static const uint8_t ok = 0;
    char out[128], file[160];

    cmd = run(f, "notes", "--on-device", "/data/local/tmp/mine.hprof", NULL);
    idx = fake_host_find_request(f->fh, f->stream_vm, HPDU, 0);
    assert_true(idx >= 0);
    rq = fake_host_request(f->fh, (size_t)idx);
    assert_int_equal(rq->data[3], strlen("/data/local/tmp/mine.hprof"));
    fake_host_complete_chunk(f->fh, (size_t)idx, HPDU, &ok, 1);
    assert_non_null(strstr(fake_cmd_message(cmd), "/data/local/tmp/mine.hprof"));

    snprintf(out, sizeof out, "%s/outdir", f->dir);
    fake_host_set_client_out_dir(f->fh, out);
    snprintf(file, sizeof file, "%s/explicit.hprof", f->dir);
    cmd = run(f, "notes", file, NULL, NULL);
    assert_false(fake_cmd_finished(cmd)); /* FILE taken as the file, not a VM */
    assert_true(fake_host_find_request(f->fh, f->stream_vm, HPDS, 0) >= 0);
    fake_host_complete_status(f->fh, hpds_request(f, f->stream_vm), DDM_REPLY_VM_GONE);
    assert_true(fake_cmd_finished(cmd));
    fake_host_set_client_out_dir(f->fh, NULL);

    cmd = run(f, "2345", f->dir, "--format=standard", NULL); /* the device VM: HPDU, no FILE use */
    (void)cmd;
    cmd = run(f, "notes", f->dir, NULL, NULL);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "is a directory"));
}

/* A 1.1 core cannot stream: the plugin (built for 1.2) does not load. */
static void test_old_core(void **state)
{
    fake_host *fh = fake_host_new();
    (void)state;
    fake_host_set_abi_minor(fh, 1);
    assert_true(fake_host_load(fh, &ddm_plugin_descriptor) != 0);
    assert_false(fake_host_has_command(fh, "hprof"));
    fake_host_free(fh);
}

/* 1 if /proc/self/maps names a mapping of @needle. */
static int mapped(const char *needle)
{
    char line[512];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

/* libcrypto (when the build has it) is loaded at the first dump's hash,
 * not with the plugin: a server that writes no dump does not map it
 * (~1.4 MB of RSS, issue 16). Either implementation gives SHA-256. Runs
 * first: nothing before it hashed. */
static void test_hash_loads_libcrypto_at_first_use(void **state)
{
    hprof_hash *h;
    char hex[HPROF_SHA256_HEX + 1];
    (void)state;
    if (mapped("/") < 0)
        skip(); /* no /proc */
    assert_int_equal(mapped("libcrypto"), 0);
    h = hprof_hash_new();
    assert_non_null(h);
    hprof_hash_update(h, (const uint8_t *)"ab", 2);
    hprof_hash_update(h, (const uint8_t *)"c", 1);
    hprof_hash_hex(h, hex);
    hprof_hash_free(h);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
#ifdef HAVE_LIBCRYPTO
    /* the build found it, so the machine has it: loaded now */
    assert_string_equal(hprof_hash_impl(), "libcrypto");
    assert_int_equal(mapped("libcrypto"), 1);
#else
    assert_string_equal(hprof_hash_impl(), "glib");
    assert_int_equal(mapped("libcrypto"), 0);
#endif
    h = hprof_hash_new(); /* empty input */
    hprof_hash_hex(h, hex);
    hprof_hash_free(h);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

/* The same random pieces (sizes 0 to 70,000, odd boundaries) hashed by
 * the implementation the build uses and by GLib's fallback give the same
 * digest, and GLib's is the one g_compute_checksum gives for the whole. */
static void test_hash_both_ways(void **state)
{
    enum { TOTAL = 1 << 20 };
    g_autofree guint8 *data = g_malloc(TOTAL);
    g_autoptr(GRand) r = g_rand_new_with_seed(0x5eed);
    char hex[2][HPROF_SHA256_HEX + 1];
    size_t cuts[64], n_cuts = 0, at = 0;
    const size_t max_cuts = sizeof cuts / sizeof cuts[0];
    (void)state;
    for (size_t i = 0; i < TOTAL; i++)
        data[i] = (guint8)g_rand_int(r);
    while (at < TOTAL && n_cuts < max_cuts - 1) {
        size_t piece = (size_t)g_rand_int_range(r, 0, 70000);
        at = at + piece > TOTAL ? TOTAL : at + piece;
        cuts[n_cuts++] = at;
    }
    cuts[n_cuts++] = TOTAL;
    for (int glib = 0; glib < 2; glib++) {
        hprof_hash_force_glib(glib);
        assert_string_equal(hprof_hash_impl(), glib ? "glib" :
#ifdef HAVE_LIBCRYPTO
                                                     "libcrypto"
#else
                                                     "glib"
#endif
        );
        hprof_hash *h = hprof_hash_new();
        assert_non_null(h);
        size_t from = 0;
        for (size_t i = 0; i < n_cuts; i++) {
            hprof_hash_update(h, data + from, cuts[i] - from);
            from = cuts[i];
        }
        hprof_hash_hex(h, hex[glib]);
        hprof_hash_free(h);
    }
    hprof_hash_force_glib(0);
    assert_string_equal(hex[0], hex[1]);
    g_autofree char *want = g_compute_checksum_for_data(G_CHECKSUM_SHA256, data, TOTAL);
    assert_string_equal(hex[1], want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_loads_libcrypto_at_first_use),
        cmocka_unit_test(test_hash_both_ways),
        cmocka_unit_test_setup_teardown(test_registers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_event_then_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sha256_is_the_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reply_before_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reply_without_event_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_not_regular, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_turns_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_file_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_dir_same_default_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_standard_format, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_dir_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsolicited_and_second, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vm_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancelled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_argument_forms, setup, teardown),
        cmocka_unit_test(test_old_core),
    };
    return cmocka_run_group_tests_name("plugin-hprof", tests, NULL, NULL);
}
