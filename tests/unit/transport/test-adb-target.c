/* SPDX-License-Identifier: Apache-2.0
 *
 * The adb target (core/transport/adb_target.c), made as one block (issue
 * 16): its key, device, origin and pid are what the rest of the daemon
 * reads; a target outlives the address and serial it was made from (they
 * are copied or interned, not borrowed); and its connect sends the adb
 * server host:transport:SERIAL then jdwp:PID, to the address given, and
 * hands back the socket as the VM's stream. The fake adb server is a
 * thread on a UNIX socket in a temporary directory (no port).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "core/transport/adb_target.h"

static DdmAdbServerAddr *addr_new(const char *host, guint16 port, const char *unix_path)
{
    DdmAdbServerAddr *a = g_new0(DdmAdbServerAddr, 1);
    a->host = g_strdup(host);
    a->port = port;
    a->unix_path = g_strdup(unix_path);
    return a;
}

static void addr_free(DdmAdbServerAddr *a)
{
    ddm_adb_server_addr_clear(a);
    g_free(a);
}

static void test_fields(void **state)
{
    (void)state;
    DdmAdbServerAddr *a = addr_new("127.0.0.1", 5037, NULL);
    char *serial = g_strdup("emulator-5554");
    DdmTarget *t = ddm_target_adb_new(a, serial, 4242);
    /* The target keeps nothing of the caller's. */
    memset(serial, 'x', strlen(serial));
    g_free(serial);
    addr_free(a);
    assert_string_equal(t->key, "adb:emulator-5554:4242");
    assert_string_equal(t->device, "emulator-5554");
    assert_string_equal(t->origin, "adb");
    assert_string_equal(t->ops->transport, "adb");
    assert_int_equal(t->pid_hint, 4242);
    assert_false(t->speculative);
    g_autofree char *k = ddm_adb_vm_key("emulator-5554", 4242);
    assert_string_equal(t->key, k);
    /* A reference keeps it; the last unref frees it (ASan: no leak, no
     * double free of the strings in the block). */
    assert_ptr_equal(ddm_target_ref(t), t);
    ddm_target_unref(t);
    assert_string_equal(t->key, "adb:emulator-5554:4242");
    ddm_target_unref(t);
}

static void test_long_serial_and_pid(void **state)
{
    (void)state;
    DdmAdbServerAddr *a = addr_new(NULL, 0, "/tmp/nowhere");
    char serial[201];
    memset(serial, 's', 200);
    serial[200] = '\0';
    DdmTarget *t = ddm_target_adb_new(a, serial, G_MAXUINT32);
    addr_free(a);
    g_autofree char *want = g_strdup_printf("adb:%s:%u", serial, G_MAXUINT32);
    assert_string_equal(t->key, want);
    assert_string_equal(t->device, serial);
    char host[] = "h";
    DdmTarget *e = ddm_target_adb_new(&(DdmAdbServerAddr){.host = host}, "", 0);
    assert_string_equal(e->key, "adb::0");
    assert_string_equal(e->device, "");
    ddm_target_unref(e);
    ddm_target_unref(t);
}

/* ------------------------------------------------------------ connect */

typedef struct {
    int listen_fd;
    char *got[2]; /* the two requests the fake server read */
} FakeAdb;

static gboolean read_full(int fd, char *buf, gsize n)
{
    gsize off = 0;
    while (off < n) {
        ssize_t r = read(fd, buf + off, n - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return FALSE;
        off += (gsize)r;
    }
    return TRUE;
}

/* One client: two requests, each answered OKAY, then, once the client
 * wrote "HELO" on the stream (a VM speaks only after the debugger's
 * handshake; bytes that came with the OKAY would be a protocol error),
 * "VMDATA". */
static gpointer fake_adb(gpointer ud)
{
    FakeAdb *f = ud;
    int c = accept(f->listen_fd, NULL, NULL);
    if (c < 0)
        return NULL;
    for (int i = 0; i < 2; i++) {
        char len_hex[5] = {0};
        if (!read_full(c, len_hex, 4))
            break;
        guint64 n = g_ascii_strtoull(len_hex, NULL, 16);
        if (n == 0 || n > 1024)
            break;
        f->got[i] = g_malloc0(n + 1);
        if (!read_full(c, f->got[i], n))
            break;
        if (write(c, "OKAY", 4) != 4)
            break;
    }
    char helo[4];
    if (read_full(c, helo, 4) && memcmp(helo, "HELO", 4) == 0 && write(c, "VMDATA", 6) != 6) {
        /* the client's read fails the test */
    }
    close(c);
    return NULL;
}

typedef struct {
    int calls;
    int fd;
    GError *error;
} Result;

static void on_done(DdmTarget *target, int fd, const GError *error, gpointer ud)
{
    Result *r = ud;
    (void)target;
    r->calls++;
    r->fd = fd;
    if (error)
        r->error = g_error_copy(error);
}

static void test_connect(void **state)
{
    (void)state;
    g_autofree char *dir = g_dir_make_tmp("ddmon-adbt-XXXXXX", NULL);
    assert_non_null(dir);
    g_autofree char *path = g_build_filename(dir, "adb.sock", NULL);
    FakeAdb f = {0};
    f.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    g_strlcpy(sun.sun_path, path, sizeof sun.sun_path);
    assert_int_equal(bind(f.listen_fd, (struct sockaddr *)&sun, sizeof sun), 0);
    assert_int_equal(listen(f.listen_fd, 1), 0);
    GThread *th = g_thread_new("fake-adb", fake_adb, &f);

    DdmAdbServerAddr *a = addr_new(NULL, 0, path);
    char *serial = g_strdup("dev-1");
    DdmTarget *t = ddm_target_adb_new(a, serial, 77);
    addr_free(a); /* the target connects to the address it was given, freed since */
    g_free(serial);
    Result r = {0, -1, NULL};
    DdmConnectCancel cancel = {0};
    /* a timeout far above any scheduling delay of the fake adb thread; no
     * deadline of the test's own: the suite runs tests with no timeout,
     * so a hang ends with that connect timeout (10 min), failing below */
    t->ops->connect(t, 600000, &cancel, on_done, &r);
    assert_int_equal(r.calls, 0); /* never from inside connect */
    while (r.calls == 0)
        g_main_context_iteration(NULL, TRUE);
    assert_int_equal(r.calls, 1);
    if (r.error)
        fail_msg("connect failed: %s", r.error->message);
    assert_true(r.fd >= 0);
    /* as target.h promises: the session sets neither */
    assert_true(fcntl(r.fd, F_GETFL) & O_NONBLOCK);
    assert_true(fcntl(r.fd, F_GETFD) & FD_CLOEXEC);
    assert_string_equal(f.got[0], "host:transport:dev-1");
    assert_string_equal(f.got[1], "jdwp:77");
    assert_int_equal(write(r.fd, "HELO", 4), 4);
    char buf[6];
    int fl = fcntl(r.fd, F_GETFL);
    assert_int_equal(fcntl(r.fd, F_SETFL, fl & ~O_NONBLOCK), 0);
    assert_true(read_full(r.fd, buf, 6));
    assert_memory_equal(buf, "VMDATA", 6);
    close(r.fd);
    g_thread_join(th);
    close(f.listen_fd);
    g_free(f.got[0]);
    g_free(f.got[1]);
    ddm_target_unref(t);
    g_unlink(path);
    g_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_long_serial_and_pid),
        cmocka_unit_test(test_connect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
