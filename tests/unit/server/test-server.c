/* SPDX-License-Identifier: Apache-2.0
 *
 * The server side in one process: the socket directory checks, the lock,
 * the listening socket (stale socket replaced, other files refused), and
 * the control server driven through a real UNIX socket by the real client
 * code, with a minimal monitor (a view store and a VM table): requests and
 * their errors, the watch stream (current views, changes, removal, and the
 * watch released when the client leaves), oversized lines, the client past
 * the limit told why, blob file names, which replies ask for a malloc_trim
 * (core/loop/heaptrim.h); and GLib's slices from malloc
 * (server/slices.c, linked here as in ddmon).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h> /* mallinfo2 */
#define HAVE_MALLINFO2 1
#endif

#include "cli/client.h"
#include "server/control.h"
#include "core/wire/ctlproto.h"
#include "core/daemon/daemon.h"
#include "core/session/monitor.h"
#include "core/session/vm.h"
#include "core/loop/heaptrim.h"
#include "core/pluginhost/registry.h"
#include "core/session/monitor-private.h"
#include "server/server.h"
#include "cli/snapshot.h"
#include "core/views/views.h"
#include "tests/harness/private-dir.h"
#include "core/transport/target.h"
#include <netinet/in.h>

typedef struct Fixture {
    char *dir;
    char *sock;
    struct {
        DdmDaemon *daemon;
        DdmViews *views;     /* the daemon's */
    } mon;
    DdmControl *ctl;
    struct ddm_vm vm;
    gboolean stopped;
} Fixture;

static void on_stop(gpointer ud)
{
    ((Fixture *)ud)->stopped = TRUE;
}

static int setup(void **state)
{
    Fixture *f = g_new0(Fixture, 1);
    f->dir = test_private_dir_new("ddmon-test-server-XXXXXX");
    f->sock = g_build_filename(f->dir, "s", "ddmon.sock", NULL);
    ddm_heap_trim_reset(); /* no trim, no gap, left by the test before */
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    if (f->ctl != NULL)
        ddm_control_free(f->ctl);
    if (f->mon.daemon != NULL) {
        /* The hand-made VM is not the table's to free. */
        DdmMonitor *mon = ddm_daemon_monitor(f->mon.daemon);
        g_hash_table_steal(mon->vms, f->vm.info.key);
        ddm_daemon_free(f->mon.daemon);
    }
    test_private_dir_free(f->dir);
    g_free(f->sock);
    g_free(f);
    return 0;
}

/* ----------------------------------------------------------- files */

static void test_server_dir_checks(void **state)
{
    Fixture *f = *state;
    GError *error = NULL;
    char *d = g_build_filename(f->dir, "new", NULL);
    /* missing: an error without create, created 0700 with it */
    assert_false(ddm_server_check_dir(d, FALSE, &error));
    assert_true(g_error_matches(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND));
    g_clear_error(&error);
    assert_true(ddm_server_check_dir(d, TRUE, &error));
    struct stat st;
    assert_int_equal(stat(d, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    /* group/other bits: refused, with the mode and the fix in the message */
    chmod(d, 0750);
    assert_false(ddm_server_check_dir(d, TRUE, &error));
    assert_non_null(strstr(error->message, "accessible to others"));
    assert_non_null(strstr(error->message, "750"));
    g_clear_error(&error);
    chmod(d, 0700);
    /* a symlink to a good directory: refused */
    char *link = g_build_filename(f->dir, "link", NULL);
    assert_int_equal(symlink(d, link), 0);
    assert_false(ddm_server_check_dir(link, TRUE, &error));
    assert_non_null(strstr(error->message, "not a directory"));
    g_clear_error(&error);
    /* a file: refused */
    char *file = g_build_filename(f->dir, "file", NULL);
    assert_true(g_file_set_contents(file, "x", 1, NULL));
    assert_false(ddm_server_check_dir(file, TRUE, &error));
    g_clear_error(&error);
    g_free(file);
    g_free(link);
    g_free(d);
}

static void test_server_paths(void **state)
{
    char *log = ddm_server_log_path("/run/user/1/ddmon/ddmon.sock");
    assert_string_equal(log, "/run/user/1/ddmon/ddmon.log");
    g_free(log);
    log = ddm_server_log_path("/tmp/x/control");
    assert_string_equal(log, "/tmp/x/control.log");
    g_free(log);
    char *lock = ddm_server_lock_path("/tmp/x/ddmon.sock");
    assert_string_equal(lock, "/tmp/x/ddmon.sock.lock");
    g_free(lock);
}

/* ddm_server_take_lock's @between: the probe (an fd holding LOCK_SH) lets
 * go at the call numbered release_at (0: never). */
typedef struct {
    int probe_fd;
    int calls;
    int release_at;
} Probe;

static void probe_between(void *data)
{
    Probe *p = data;
    if (++p->calls == p->release_at)
        assert_int_equal(flock(p->probe_fd, LOCK_UN), 0);
}

/* A client's probe of the lock (LOCK_SH, an instant) is no server: the
 * server tries again instead of exiting "already running (pid 0)". */
static void test_server_take_lock_past_probe(void **state)
{
    Fixture *f = *state;
    GError *error = NULL;
    char *dir = g_path_get_dirname(f->sock);
    assert_true(ddm_server_check_dir(dir, TRUE, NULL));
    char *lock = ddm_server_lock_path(f->sock);
    /* the file a server just created (empty), probed: taken on a retry */
    Probe p = {open(lock, O_RDWR | O_CREAT, 0600), 0, 1};
    assert_true(p.probe_fd >= 0);
    assert_int_equal(flock(p.probe_fd, LOCK_SH | LOCK_NB), 0);
    int fd = ddm_server_take_lock(f->sock, probe_between, &p, &error);
    assert_null(error);
    assert_true(fd >= 0);
    assert_int_equal(p.calls, 1);
    assert_int_equal(ddm_server_running_pid(f->sock), (int)getpid());
    close(fd);
    /* a stale file (a SIGKILLed server's pid in it), probed: the same */
    assert_int_equal(ftruncate(p.probe_fd, 0), 0);
    assert_int_equal(pwrite(p.probe_fd, "4243\n", 5, 0), 5);
    assert_int_equal(flock(p.probe_fd, LOCK_SH | LOCK_NB), 0);
    p.calls = 0;
    p.release_at = 2;
    fd = ddm_server_take_lock(f->sock, probe_between, &p, &error);
    assert_null(error);
    assert_true(fd >= 0);
    assert_int_equal(p.calls, 2);
    close(fd);
    /* a shared holder that stays: bounded, then the usual error */
    assert_int_equal(flock(p.probe_fd, LOCK_SH | LOCK_NB), 0);
    p.calls = 0;
    p.release_at = 0;
    assert_int_equal(ddm_server_take_lock(f->sock, probe_between, &p, &error), -1);
    assert_true(g_error_matches(error, G_IO_ERROR, G_IO_ERROR_EXISTS));
    g_clear_error(&error);
    assert_int_equal(p.calls, 5);
    /* a server (LOCK_EX, its pid written): no retry */
    assert_int_equal(flock(p.probe_fd, LOCK_UN), 0);
    assert_int_equal(ftruncate(p.probe_fd, 0), 0);
    assert_int_equal(pwrite(p.probe_fd, "4242\n", 5, 0), 5);
    assert_int_equal(flock(p.probe_fd, LOCK_EX | LOCK_NB), 0);
    p.calls = 0;
    assert_int_equal(ddm_server_take_lock(f->sock, probe_between, &p, &error), -1);
    assert_true(g_error_matches(error, G_IO_ERROR, G_IO_ERROR_EXISTS));
    assert_non_null(strstr(error->message, "(pid 4242)"));
    g_clear_error(&error);
    assert_int_equal(p.calls, 0);
    close(p.probe_fd);
    g_unlink(lock);
    g_free(lock);
    g_free(dir);
}

static void test_server_listen_and_lock(void **state)
{
    Fixture *f = *state;
    GError *error = NULL;
    char *dir = g_path_get_dirname(f->sock);
    assert_true(ddm_server_check_dir(dir, TRUE, NULL));
    /* a regular file where the socket goes is never replaced */
    assert_true(g_file_set_contents(f->sock, "precious", -1, NULL));
    assert_int_equal(ddm_server_listen(f->sock, &error), -1);
    assert_non_null(strstr(error->message, "not a socket"));
    g_clear_error(&error);
    g_unlink(f->sock);
    /* a stale socket is replaced; the new one is 0600 */
    int fd = ddm_server_listen(f->sock, &error);
    assert_true(fd >= 0);
    close(fd); /* now stale: the file stays */
    fd = ddm_server_listen(f->sock, &error);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(stat(f->sock, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    close(fd);
    /* too long a path: a clear error, no crash */
    GString *lp = g_string_new(dir);
    while (lp->len < 200)
        g_string_append(lp, "/xxxxxxxxxx");
    assert_int_equal(ddm_server_listen(lp->str, &error), -1);
    assert_non_null(strstr(error->message, "too long"));
    g_clear_error(&error);
    g_string_free(lp, TRUE);

    /* the lock: no holder -> 0; a holder (another open file description) -> its pid */
    assert_int_equal(ddm_server_running_pid(f->sock), 0);
    char *lock = ddm_server_lock_path(f->sock);
    int lfd = open(lock, O_RDWR | O_CREAT, 0600);
    assert_true(lfd >= 0);
    assert_int_equal(write(lfd, "4242\n", 5), 5);
    assert_int_equal(ddm_server_running_pid(f->sock), 0); /* written but not locked */
    assert_int_equal(flock(lfd, LOCK_EX | LOCK_NB), 0);
    assert_int_equal(ddm_server_running_pid(f->sock), 4242);
    /* a stopping server's second line: the holder is stopping (a client
     * waits for it instead of starting one that cannot take the lock) */
    gboolean stopping = TRUE;
    assert_int_equal(ddm_server_lock_holder(f->sock, &stopping), 4242);
    assert_false(stopping);
    assert_int_equal(pwrite(lfd, "4242\nstopping\n", 14, 0), 14);
    assert_int_equal(ddm_server_lock_holder(f->sock, &stopping), 4242);
    assert_true(stopping);
    assert_int_equal(ddm_server_running_pid(f->sock), 4242);
    assert_int_equal(pwrite(lfd, "4242\nstoppin\n", 13, 0), 13); /* only the whole word */
    assert_int_equal(ftruncate(lfd, 13), 0);
    assert_int_equal(ddm_server_lock_holder(f->sock, &stopping), 4242);
    assert_false(stopping);
    close(lfd);
    stopping = TRUE;
    assert_int_equal(ddm_server_lock_holder(f->sock, &stopping), 0); /* not held: no one stops */
    assert_false(stopping);
    assert_int_equal(ddm_server_running_pid(f->sock), 0);
    g_free(lock);
    g_free(dir);
}

static void test_server_blob_filenames(void **state)
{
    char *n = ddm_snapshot_blob_filename("127.0.0.1:8000", "heap.bitmap", "image/png");
    assert_string_equal(n, "127.0.0.1_8000-heap.bitmap.png");
    g_free(n);
    /* nothing escapes the directory */
    n = ddm_snapshot_blob_filename("../../etc", "/passwd", NULL);
    assert_null(strchr(n, '/'));
    assert_true(n[0] != '.');
    assert_true(g_str_has_suffix(n, ".bin"));
    g_free(n);
    n = ddm_snapshot_blob_filename(NULL, "x", "application/json");
    assert_string_equal(n, "global-x.json");
    g_free(n);
}

/* ------------------------------------------------------ control server */

static void start_control(Fixture *f)
{
    char *dir = g_path_get_dirname(f->sock);
    assert_true(ddm_server_check_dir(dir, TRUE, NULL));
    g_free(dir);
    DdmConfig *config = ddm_config_new();
    config->relay = FALSE;
    config->scan_local = FALSE;
    config->scan_adb = FALSE;
    g_free(config->installed_plugin_dir);
    config->installed_plugin_dir = g_strdup("/nonexistent/ddmon-test");
    config->use_env_plugin_path = FALSE;
    f->mon.daemon = ddm_daemon_new(config, NULL);
    assert_non_null(f->mon.daemon);
    f->mon.views = ddm_daemon_views(f->mon.daemon);
    /* The test plays every view itself: drop the daemon's own. */
    GPtrArray *own = ddm_views_list(f->mon.views);
    for (guint i = 0; i < own->len; i++)
        ddm_views_destroy(f->mon.views, g_ptr_array_index(own, i));
    g_ptr_array_unref(own);
    f->vm.magic = DDM_VM_MAGIC;
    f->vm.ref_count = 1; /* the test's own; the table borrows it */
    f->vm.state = DDM_VM_STATE_READY;
    f->vm.info.size = sizeof(f->vm.info);
    f->vm.info.key = "127.0.0.1:8000";
    f->vm.info.pid = 1234;
    f->vm.info.app_name = "com.example";
    g_hash_table_insert(ddm_daemon_monitor(f->mon.daemon)->vms, (gpointer)f->vm.info.key, &f->vm);
    GError *error = NULL;
    int fd = ddm_server_listen(f->sock, &error);
    assert_true(fd >= 0);
    f->ctl = ddm_control_new(f->mon.daemon, fd, on_stop, f);
}

static ddm_view *add_table(Fixture *f, const char *vm, const char *name)
{
    static const ddm_column cols[] = {{"n", DDM_VAL_INT, NULL}};
    ddm_view *v = ddm_views_create(f->mon.views, "test", vm, name, DDM_VIEW_TABLE, name);
    assert_non_null(v);
    assert_int_equal(ddm_view_set_columns(v, cols, 1), 0);
    return v;
}

static void fill(ddm_view *v, int n)
{
    assert_int_equal(ddm_view_begin(v), 0);
    for (int i = 0; i < n; i++) {
        assert_int_equal(ddm_view_row(v), 0);
        assert_int_equal(ddm_view_cell_int(v, i), 0);
    }
    assert_int_equal(ddm_view_commit(v), 0);
}

/* Pump the main loop until the client has a message (or 5 s pass). */
static JsonNode *next_message(DdmClient *c)
{
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    while (g_get_monotonic_time() < deadline) {
        GError *error = NULL;
        JsonNode *m = ddm_client_next(c, &error);
        assert_null(error);
        if (m != NULL)
            return m;
        g_main_context_iteration(NULL, FALSE);
        if (!ddm_client_read_some(c, &error)) {
            g_clear_error(&error);
            return ddm_client_next(c, NULL);
        }
        g_usleep(1000);
    }
    return NULL;
}

static JsonNode *ask(DdmClient *c, const char *line)
{
    int fd = ddm_client_fd(c);
    gsize len = strlen(line);
    assert_int_equal(send(fd, line, len, MSG_NOSIGNAL), (ssize_t)len);
    return next_message(c);
}

static void pump(int ms)
{
    gint64 end = g_get_monotonic_time() + ms * 1000;
    while (g_get_monotonic_time() < end) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

static void test_server_control_requests(void **state)
{
    Fixture *f = *state;
    start_control(f);
    add_table(f, NULL, "vms");
    fill(add_table(f, "127.0.0.1:8000", "threads"), 2);
    add_table(f, "127.0.0.1:8000", "heap.summary");
    DdmClient *c = ddm_client_connect(f->sock, NULL);
    assert_non_null(c);
    pump(20);
    assert_int_equal(ddm_control_n_clients(f->ctl), 1);

    JsonNode *r = ask(c, "{\"op\":\"version\"}\n");
    assert_non_null(r);
    assert_true(ddm_json_get_bool(json_node_get_object(r), "ok", FALSE));
    assert_non_null(ddm_json_get_string(json_node_get_object(r), "version"));
    json_node_unref(r);

    /* one view of one VM, by pid and by app name */
    const char *specs[] = {"1234", "com.example", "127.0.0.1:8000"};
    for (gsize i = 0; i < G_N_ELEMENTS(specs); i++) {
        char *line = g_strdup_printf("{\"op\":\"view\",\"name\":\"threads\",\"vm\":\"%s\"}\n",
                                     specs[i]);
        r = ask(c, line);
        g_free(line);
        assert_non_null(r);
        JsonObject *o = json_node_get_object(r);
        assert_true(ddm_json_get_bool(o, "ok", FALSE));
        JsonArray *views = json_object_get_array_member(o, "views");
        assert_int_equal(json_array_get_length(views), 1);
        JsonObject *v = json_array_get_object_element(views, 0);
        assert_string_equal(ddm_json_get_string(v, "name"), "threads");
        assert_int_equal(json_array_get_length(json_object_get_array_member(v, "rows")), 2);
        json_node_unref(r);
    }

    /* unknown view of a known VM: code 3, and the VM's views are named */
    r = ask(c, "{\"op\":\"view\",\"name\":\"nope\",\"vm\":1234}\n");
    JsonObject *o = json_node_get_object(r);
    assert_false(ddm_json_get_bool(o, "ok", TRUE));
    assert_int_equal(ddm_json_get_int(o, "code", 0), DDM_EXIT_NOT_FOUND);
    assert_string_equal(ddm_json_get_string(o, "error"),
                        "unknown view 'nope'; views of VM 1234: heap.summary, threads");
    json_node_unref(r);

    /* a global view asked of one VM: a usage error that says so, not "unknown" */
    r = ask(c, "{\"op\":\"view\",\"name\":\"vms\",\"vm\":1234}\n");
    o = json_node_get_object(r);
    assert_false(ddm_json_get_bool(o, "ok", TRUE));
    assert_int_equal(ddm_json_get_int(o, "code", 0), DDM_EXIT_USAGE);
    assert_string_equal(ddm_json_get_string(o, "error"), "'vms' is a global view, not one VM's: drop --vm");
    json_node_unref(r);

    /* unknown VM: code 3 with a hint */
    r = ask(c, "{\"op\":\"view\",\"name\":\"threads\",\"vm\":\"999\"}\n");
    o = json_node_get_object(r);
    assert_int_equal(ddm_json_get_int(o, "code", 0), DDM_EXIT_NOT_FOUND);
    assert_non_null(strstr(ddm_json_get_string(o, "error"), "try 'ddmon vms'"));
    json_node_unref(r);

    /* every view of a name, across VMs */
    r = ask(c, "{\"op\":\"view\",\"name\":\"vms\"}\n");
    o = json_node_get_object(r);
    assert_true(ddm_json_get_bool(o, "ok", FALSE));
    json_node_unref(r);

    /* the views list names the VMs */
    r = ask(c, "{\"op\":\"views\"}\n");
    o = json_node_get_object(r);
    assert_int_equal(json_array_get_length(json_object_get_array_member(o, "views")), 3);
    JsonArray *vms = json_object_get_array_member(o, "vms");
    assert_int_equal(json_array_get_length(vms), 1);
    assert_int_equal(ddm_json_get_int(json_array_get_object_element(vms, 0), "pid", 0), 1234);
    json_node_unref(r);

    /* garbage: an error response, the connection stays usable */
    r = ask(c, "{\"op\":\n");
    o = json_node_get_object(r);
    assert_int_equal(ddm_json_get_int(o, "code", 0), DDM_EXIT_USAGE);
    json_node_unref(r);
    r = ask(c, "{\"op\":\"vms\"}\n");
    assert_true(ddm_json_get_bool(json_node_get_object(r), "ok", FALSE));
    json_node_unref(r);

    /* kill: answered, then the stop callback runs (from an idle) */
    r = ask(c, "{\"op\":\"kill\"}\n");
    assert_true(ddm_json_get_bool(json_node_get_object(r), "ok", FALSE));
    json_node_unref(r);
    pump(20);
    assert_true(f->stopped);
    ddm_client_free(c);
    pump(20);
    assert_int_equal(ddm_control_n_clients(f->ctl), 0);
}

/* The monitor's round asks for a trim every 10 s (core/session/monitor.c):
 * the trim tests see control's asks only, so they stop it. */
static void stop_monitor_round(Fixture *f)
{
    DdmMonitor *mon = ddm_daemon_monitor(f->mon.daemon);
    if (mon->trim_timer != 0)
        g_source_remove(mon->trim_timer);
    mon->trim_timer = 0;
}

/* Run the loop until @n trims were made (a guard of 60 s against a trim
 * that never comes). */
static void run_until_trims(guint64 n)
{
    gint64 guard = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (ddm_heap_trim_count() < n) {
        assert_true(g_get_monotonic_time() < guard);
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

static void ask_view_ok(DdmClient *c, const char *line)
{
    JsonNode *r = ask(c, line);
    assert_non_null(r);
    assert_true(ddm_json_get_bool(json_node_get_object(r), "ok", FALSE));
    json_node_unref(r);
}

/* A large reply (a view of 20,000 rows, ~200 KB of JSON) asks for a trim
 * (core/loop/heaptrim.h), which comes a moment later; small replies never
 * ask. Checked by what is pending and the count, not by time. */
static void test_server_control_trim_after_large_reply(void **state)
{
    Fixture *f = *state;
    start_control(f);
    stop_monitor_round(f);
    fill(add_table(f, NULL, "small"), 3);
    fill(add_table(f, NULL, "large"), 20000);
    DdmClient *c = ddm_client_connect(f->sock, NULL);
    assert_non_null(c);
    pump(20);
    for (int i = 0; i < 3; i++)
        ask_view_ok(c, "{\"op\":\"view\",\"name\":\"small\"}\n");
    assert_true(ddm_heap_trim_due() == G_MAXINT64); /* none asked for */
    assert_int_equal(ddm_heap_trim_count(), 0);
    ask_view_ok(c, "{\"op\":\"view\",\"name\":\"large\"}\n");
    run_until_trims(1);
    assert_int_equal(ddm_heap_trim_count(), 1);
    assert_true(ddm_heap_trim_due() == G_MAXINT64); /* none more coming */
    ask_view_ok(c, "{\"op\":\"view\",\"name\":\"small\"}\n");
    assert_true(ddm_heap_trim_due() == G_MAXINT64);
    ddm_client_free(c);
    pump(20);
}

/* The gap holds across askers: after a trim the monitor's round asked
 * for, a large reply's trim is due DDM_HEAP_TRIM_GAP_S after it, not
 * sooner. View-change events to a watcher never ask, however large; the
 * watch's first "added" events, the reply to its request, do (review rM 2). */
static void test_server_control_trim_gap_and_watch(void **state)
{
    Fixture *f = *state;
    start_control(f);
    stop_monitor_round(f);
    ddm_view *large = add_table(f, NULL, "large");
    fill(large, 20000);
    DdmClient *c = ddm_client_connect(f->sock, NULL);
    assert_non_null(c);
    pump(20);

    ddm_heap_trim_soon(); /* as the monitor's round does */
    gint64 d1 = ddm_heap_trim_due();
    run_until_trims(1); /* it ran at d1 or later */
    ask_view_ok(c, "{\"op\":\"view\",\"name\":\"large\"}\n");
    assert_true(ddm_heap_trim_due() != G_MAXINT64);
    assert_true(ddm_heap_trim_due() >= d1 + (gint64)DDM_HEAP_TRIM_GAP_S * G_USEC_PER_SEC);
    assert_int_equal(ddm_heap_trim_count(), 1);
    ddm_heap_trim_reset(); /* no gap for the watch below */

    ask_view_ok(c, "{\"op\":\"watch\"}\n");
    JsonNode *r = next_message(c); /* the view, "added": a large reply */
    assert_non_null(r);
    assert_string_equal(ddm_json_get_string(json_node_get_object(r), "event"), "added");
    json_node_unref(r);
    run_until_trims(1);
    assert_true(ddm_heap_trim_due() == G_MAXINT64);
    fill(large, 20001); /* a change: sent as a large event */
    r = next_message(c);
    assert_non_null(r);
    assert_string_equal(ddm_json_get_string(json_node_get_object(r), "event"), "changed");
    json_node_unref(r);
    assert_true(ddm_heap_trim_due() == G_MAXINT64); /* it did not ask */
    assert_int_equal(ddm_heap_trim_count(), 1);
    ddm_client_free(c);
    pump(20);
}

/* `view NAME` without a VM answers every view of that name: global first,
 * then by VM key (strcmp), whatever order they were made in, each as
 * ddm_view_to_json gives it; the answer's array is byte for byte the one
 * of every view of the server (ddm_views_list) filtered by name, which is
 * how it was made before the store was looked up by name (issue 16). */
static void test_server_control_view_of_name(void **state)
{
    Fixture *f = *state;
    static const char *const keys[] = {"vm2", "127.0.0.1:8000", "vm10", NULL, "a"};
    start_control(f);
    add_table(f, NULL, "vms");
    for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
        fill(add_table(f, keys[i], "headline"), (int)i + 1);
        add_table(f, keys[i], "threads");
        add_table(f, keys[i], "zz");
    }
    DdmClient *c = ddm_client_connect(f->sock, NULL);
    assert_non_null(c);
    pump(20);

    /* asked twice: the first look (delayed) and a warm one answer alike */
    for (int round = 0; round < 2; round++) {
        JsonNode *r = ask(c, "{\"op\":\"view\",\"name\":\"headline\"}\n");
        assert_non_null(r);
        JsonObject *o = json_node_get_object(r);
        assert_true(ddm_json_get_bool(o, "ok", FALSE));
        JsonNode *got = json_object_get_member(o, "views");
        JsonArray *views = json_node_get_array(got);
        static const char *const order[] = {NULL, "127.0.0.1:8000", "a", "vm10", "vm2"};
        assert_int_equal(json_array_get_length(views), G_N_ELEMENTS(order));
        for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
            JsonObject *v = json_array_get_object_element(views, i);
            assert_string_equal(ddm_json_get_string(v, "name"), "headline");
            if (order[i] == NULL)
                assert_true(json_object_get_null_member(v, "vm"));
            else
                assert_string_equal(ddm_json_get_string(v, "vm"), order[i]);
        }
        /* byte for byte the filtered list of every view */
        GPtrArray *all = ddm_views_list(f->mon.views);
        JsonArray *want = json_array_new();
        for (guint i = 0; i < all->len; i++)
            if (strcmp(ddm_view_name(all->pdata[i]), "headline") == 0)
                json_array_add_element(want, ddm_view_to_json(all->pdata[i], FALSE));
        g_ptr_array_unref(all);
        JsonNode *want_node = json_node_init_array(json_node_alloc(), want);
        char *want_text = json_to_string(want_node, FALSE);
        char *got_text = json_to_string(got, FALSE);
        assert_string_equal(got_text, want_text);
        g_free(want_text);
        g_free(got_text);
        json_node_unref(want_node);
        json_array_unref(want);
        json_node_unref(r);
    }
    ddm_client_free(c);
    pump(20);
}

static void test_server_control_watch(void **state)
{
    Fixture *f = *state;
    start_control(f);
    ddm_view *vms = add_table(f, NULL, "vms");
    fill(vms, 1);
    ddm_view *threads = add_table(f, "127.0.0.1:8000", "threads");
    DdmClient *c = ddm_client_connect(f->sock, NULL);
    assert_non_null(c);

    JsonNode *r = ask(c, "{\"op\":\"watch\"}\n");
    assert_true(ddm_json_get_bool(json_node_get_object(r), "ok", FALSE));
    json_node_unref(r);
    /* the current views first, as "added" */
    for (int i = 0; i < 2; i++) {
        r = next_message(c);
        assert_non_null(r);
        assert_string_equal(ddm_json_get_string(json_node_get_object(r), "event"), "added");
        json_node_unref(r);
    }
    /* producers see the watcher */
    assert_true(ddm_view_watchers(threads) > 0);

    /* a commit: "changed" with the new content */
    fill(threads, 3);
    r = next_message(c);
    assert_non_null(r);
    JsonObject *o = json_node_get_object(r);
    assert_string_equal(ddm_json_get_string(o, "event"), "changed");
    JsonObject *v = json_object_get_object_member(o, "view");
    assert_string_equal(ddm_json_get_string(v, "name"), "threads");
    assert_int_equal(json_array_get_length(json_object_get_array_member(v, "rows")), 3);
    json_node_unref(r);

    /* removal */
    ddm_views_destroy(f->mon.views, threads);
    r = next_message(c);
    o = json_node_get_object(r);
    assert_string_equal(ddm_json_get_string(o, "event"), "removed");
    assert_string_equal(ddm_json_get_string(json_object_get_object_member(o, "view"), "name"),
                        "threads");
    json_node_unref(r);

    /* the watcher leaves: its watch is released */
    ddm_view *later = add_table(f, "127.0.0.1:8000", "later");
    r = next_message(c); /* added */
    json_node_unref(r);
    assert_true(ddm_view_watchers(later) > 0);
    ddm_client_free(c);
    pump(50);
    assert_int_equal(ddm_view_watchers(later), 0);
    assert_int_equal(ddm_control_n_clients(f->ctl), 0);
}

/* First looks: a client that sends watch and version in one write, whose
 * version answer ("settled?") waits for the polls the watch woke. */
static const char watch_and_version[] = "{\"op\":\"watch\"}\n{\"op\":\"version\"}\n";

/* Plugin @desc (its name) loaded into the daemon's registry, init run. */
static void load_plugin(Fixture *f, const ddm_plugin_desc *desc)
{
    DdmRegistry *reg = ddm_daemon_registry(f->mon.daemon);
    ddm_plugin *p = ddm_registry_add(reg, desc->name, NULL);
    p->desc = desc;
    assert_true(ddm_registry_init_plugin(reg, p, NULL));
}

static DdmClient *connect_client(Fixture *f)
{
    DdmClient *c = ddm_client_connect(f->sock, NULL);
    assert_non_null(c);
    return c;
}

static void send_all(DdmClient *c, const char *text)
{
    gsize len = strlen(text);
    assert_int_equal(send(ddm_client_fd(c), text, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* After watch_and_version with one view to watch: "watching", the view's
 * "added", then the version answer, which says settled (transfer full). */
static JsonNode *settled_answer(DdmClient *c)
{
    JsonNode *r = next_message(c); /* watching */
    json_node_unref(r);
    r = next_message(c); /* the view, "added" */
    json_node_unref(r);
    r = next_message(c);
    assert_non_null(r);
    JsonObject *o = json_node_get_object(r);
    assert_non_null(ddm_json_get_string(o, "version"));
    assert_true(ddm_json_get_bool(o, "settled", FALSE));
    return r;
}

/* A plugin whose hour-long poll tick runs when a watch begins (ABI 1.5). */
static int wake_runs;

static int wake_tick(ddm_plugin *self, void *ud)
{
    (void)self;
    (void)ud;
    wake_runs++;
    return 1;
}

static int wake_init(ddm_plugin *self, const ddm_host *host)
{
    uint32_t id = host->timer_add(self, 3600000, wake_tick, NULL, NULL);
    return id && host->timer_wake_on_watch(self, id, 1) == 0 ? 0 : -ENOMEM;
}

static const ddm_plugin_desc wake_desc = {
    DDM_PLUGIN_MAGIC, DDM_ABI_MAJOR, DDM_ABI_MINOR, (uint32_t)sizeof(ddm_plugin_desc),
    "wake", "1.0", "Apache-2.0", "polls when a watch begins", wake_init, NULL};

/* A watch that makes views watched that nobody watched wakes the plugins'
 * poll ticks, and the watching client's version ("settled?") is answered
 * after they ran, not before and not a fixed tick later; a later version,
 * and a watch of views already watched, wake nothing and are answered at
 * once. */
static void test_server_control_first_look(void **state)
{
    Fixture *f = *state;
    start_control(f);
    load_plugin(f, &wake_desc);
    wake_runs = 0;
    (void)add_table(f, "127.0.0.1:8000", "threads");
    DdmClient *c = connect_client(f);
    /* watch and version in one write: the version waits for the first look */
    send_all(c, watch_and_version);
    JsonNode *r = settled_answer(c);
    assert_int_equal(wake_runs, 1); /* the tick ran before the answer */
    json_node_unref(r);
    r = ask(c, "{\"op\":\"version\"}\n");
    assert_true(ddm_json_get_bool(json_node_get_object(r), "settled", FALSE));
    json_node_unref(r);
    assert_int_equal(wake_runs, 1);
    /* a second watcher of the same views: nothing new is watched */
    DdmClient *c2 = connect_client(f);
    r = ask(c2, "{\"op\":\"watch\"}\n");
    json_node_unref(r);
    r = next_message(c2); /* added */
    json_node_unref(r);
    r = ask(c2, "{\"op\":\"version\"}\n");
    assert_true(ddm_json_get_bool(json_node_get_object(r), "settled", FALSE));
    json_node_unref(r);
    pump(20);
    assert_int_equal(wake_runs, 1);
    ddm_client_free(c2);
    ddm_client_free(c);
    pump(20);
}

static int silent_listener(guint16 *port);
static void pump_until_handshake(DdmMonitor *mon, guint16 port);

/* Review rF 2: a watching client's "settled" waits only for the sessions
 * that existed when its watch began, on every version it asks, not only
 * the first delayed one: a session begun after the watch (a VM that stays
 * in its handshake) does not make it say "not settled". */
static void test_server_control_settled_since_watch(void **state)
{
    Fixture *f = *state;
    start_control(f);
    (void)add_table(f, "127.0.0.1:8000", "threads");
    DdmClient *c = connect_client(f);
    JsonNode *r = ask(c, "{\"op\":\"watch\"}\n"); /* watching */
    json_node_unref(r);
    r = next_message(c); /* the view, "added" */
    json_node_unref(r);
    guint16 port = 0;
    int lfd = silent_listener(&port);
    DdmTarget *t = ddm_target_tcp_new("127.0.0.1", port, "test");
    assert_true(ddm_monitor_offer_target(ddm_daemon_monitor(f->mon.daemon), t));
    pump_until_handshake(ddm_daemon_monitor(f->mon.daemon), port);
    for (int i = 0; i < 2; i++) { /* the first (delayed) answer and a re-ask */
        r = ask(c, "{\"op\":\"version\"}\n");
        /* review rF 5: the delayed answer's wait (first_look_done) skips
         * that session too; waiting for it ran into the cap (1.2 s) */
        assert_int_equal(ddm_control_n_delays_capped(f->ctl), 0);
        assert_non_null(r);
        assert_true(ddm_json_get_bool(json_node_get_object(r), "settled", FALSE));
        json_node_unref(r);
    }
    ddm_client_free(c);
    pump(20);
    ddm_target_unref(t);
    close(lfd);
}

/* The other side of the test above: a session begun before the watch that
 * stays in its handshake holds the watching client's first "settled"
 * until the cap, which then answers "not settled" and is counted (the
 * count the test above checks stays 0). */
static void test_server_control_settled_capped_counted(void **state)
{
    Fixture *f = *state;
    start_control(f);
    (void)add_table(f, "127.0.0.1:8000", "threads");
    guint16 port = 0;
    int lfd = silent_listener(&port);
    DdmTarget *t = ddm_target_tcp_new("127.0.0.1", port, "test");
    assert_true(ddm_monitor_offer_target(ddm_daemon_monitor(f->mon.daemon), t));
    pump_until_handshake(ddm_daemon_monitor(f->mon.daemon), port);
    DdmClient *c = connect_client(f);
    JsonNode *r = ask(c, "{\"op\":\"watch\"}\n");
    json_node_unref(r);
    r = next_message(c); /* the view, "added" */
    json_node_unref(r);
    assert_int_equal(ddm_control_n_delays_capped(f->ctl), 0);
    r = ask(c, "{\"op\":\"version\"}\n");
    assert_non_null(r);
    assert_false(ddm_json_get_bool(json_node_get_object(r), "settled", TRUE));
    assert_int_equal(ddm_control_n_delays_capped(f->ctl), 1);
    json_node_unref(r);
    ddm_client_free(c);
    pump(20);
    ddm_target_unref(t);
    close(lfd);
}

/* Two clients that watch in the same loop pass: only the first one's
 * watch makes views watched that nobody watched, but the second one's
 * "settled?" is not answered "yes" before the polls that watch woke ran:
 * both wait for the same first look. */
static void test_server_control_first_look_two(void **state)
{
    Fixture *f = *state;
    start_control(f);
    load_plugin(f, &wake_desc);
    wake_runs = 0;
    (void)add_table(f, "127.0.0.1:8000", "threads");
    DdmClient *a = connect_client(f);
    DdmClient *b = connect_client(f);
    pump(20); /* both accepted */
    /* both requests are read in one loop pass */
    send_all(a, watch_and_version);
    send_all(b, watch_and_version);
    DdmClient *order[] = {b, a};
    for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
        JsonNode *r = settled_answer(order[i]);
        assert_int_equal(wake_runs, 1); /* the tick ran before either answer */
        json_node_unref(r);
    }
    ddm_client_free(b);
    ddm_client_free(a);
    pump(20);
}

/* A plugin built for ABI 1.4 (no timer_wake_on_watch) that polls at its
 * own 250 ms tick, as every plugin did. */
static int old_runs;

static int old_tick(ddm_plugin *self, void *ud)
{
    (void)self;
    (void)ud;
    old_runs++;
    return 1;
}

static int old_init(ddm_plugin *self, const ddm_host *host)
{
    return host->timer_add(self, 250, old_tick, NULL, NULL) ? 0 : -ENOMEM;
}

static const ddm_plugin_desc old_desc = {
    DDM_PLUGIN_MAGIC, DDM_ABI_MAJOR, 4, (uint32_t)sizeof(ddm_plugin_desc),
    "old", "1.0", "Apache-2.0", "polls at its tick", old_init, NULL};

/* A first look at the views of a plugin that does not poll when a watch
 * begins keeps the old floor: "settled" only after its tick had its go. */
static void test_server_control_first_look_old_abi(void **state)
{
    Fixture *f = *state;
    start_control(f);
    load_plugin(f, &old_desc);
    DdmRegistry *reg = ddm_daemon_registry(f->mon.daemon);
    assert_false(ddm_registry_polls_on_watch(reg, "old"));
    assert_true(ddm_registry_polls_on_watch(reg, "test")); /* no such plugin */
    static const ddm_column cols[] = {{"n", DDM_VAL_INT, NULL}};
    ddm_view *v = ddm_views_create(f->mon.views, "old", "127.0.0.1:8000", "oldview",
                                   DDM_VIEW_TABLE, "old");
    assert_non_null(v);
    assert_int_equal(ddm_view_set_columns(v, cols, 1), 0);
    pump(5);
    old_runs = 0;
    DdmClient *c = connect_client(f);
    send_all(c, watch_and_version);
    JsonNode *r = settled_answer(c);
    assert_true(old_runs >= 1); /* its tick ran before the answer */
    json_node_unref(r);
    ddm_client_free(c);
    pump(20);
}

static void test_server_control_oversized(void **state)
{
    Fixture *f = *state;
    start_control(f);
    DdmClient *c = ddm_client_connect(f->sock, NULL);
    assert_non_null(c);
    int fd = ddm_client_fd(c);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    char *junk = g_strnfill(65536, 'x');
    gsize sent = 0;
    gint64 deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    /* more than the cap, without a newline; the server must answer and close */
    while (sent < DDM_CTL_MAX_REQUEST + 2 * 65536 && g_get_monotonic_time() < deadline) {
        ssize_t n = send(fd, junk, 65536, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
            sent += (gsize)n;
        else if (n < 0 && errno != EAGAIN)
            break; /* closed by the server: fine */
        g_main_context_iteration(NULL, FALSE);
    }
    g_free(junk);
    JsonNode *r = next_message(c);
    if (r != NULL) { /* the answer may be lost to the reset; the close is what counts */
        JsonObject *o = json_node_get_object(r);
        assert_false(ddm_json_get_bool(o, "ok", TRUE));
        assert_non_null(strstr(ddm_json_get_string(o, "error"), "longer than"));
        json_node_unref(r);
    }
    pump(50);
    assert_int_equal(ddm_control_n_clients(f->ctl), 0);
    ddm_client_free(c);
}

static gpointer serve_until(gpointer stop)
{
    while (!g_atomic_int_get((gint *)stop)) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    return NULL;
}

/* The 65th client is refused with one error line, and the client shows that
 * line rather than the broken connection: its request goes out after the
 * server closed (EPIPE), and the server's answer stands as the reply. */
static void test_server_control_busy(void **state)
{
    Fixture *f = *state;
    start_control(f);
    DdmClient *held[DDM_CTL_MAX_CLIENTS];
    for (int i = 0; i < DDM_CTL_MAX_CLIENTS; i++) {
        held[i] = ddm_client_connect(f->sock, NULL);
        assert_non_null(held[i]);
    }
    for (int i = 0; i < 200 && ddm_control_n_clients(f->ctl) < DDM_CTL_MAX_CLIENTS; i++)
        pump(5);
    assert_int_equal(ddm_control_n_clients(f->ctl), DDM_CTL_MAX_CLIENTS);

    DdmClient *c = ddm_client_connect(f->sock, NULL);
    assert_non_null(c);
    /* Let the server refuse it (its line arrives, then the end) before it asks. */
    struct pollfd pfd = {ddm_client_fd(c), POLLIN, 0};
    for (int i = 0; i < 500 && poll(&pfd, 1, 0) == 0; i++)
        pump(5);
    assert_true(pfd.revents & POLLIN); /* sent and closed in one go */
    assert_int_equal(ddm_control_n_clients(f->ctl), DDM_CTL_MAX_CLIENTS);

    DdmCtlRequest req = {.op = DDM_CTL_OP_VERSION};
    GError *error = NULL;
    JsonNode *r = ddm_client_call(c, &req, 2000, &error);
    if (r == NULL)
        fail_msg("no answer: %s", error != NULL ? error->message : "?");
    JsonObject *o = json_node_get_object(r);
    assert_false(ddm_json_get_bool(o, "ok", TRUE));
    assert_string_equal(ddm_json_get_string(o, "error"), "server busy: 64 clients connected");
    assert_int_equal(ddm_json_get_int(o, "code", 0), DDM_EXIT_FAILED);
    json_node_unref(r);
    ddm_client_free(c);

    /* The commands' way in (version check first, blocking) reports it too;
     * the server runs in a thread meanwhile, alone on the loop. */
    char *no_args[] = {NULL};
    gint stop = 0;
    GThread *loop = g_thread_new("server", serve_until, &stop);
    c = ddm_client_connect_or_start(f->sock, no_args, TRUE, NULL, &error);
    g_atomic_int_set(&stop, 1);
    g_main_context_wakeup(NULL);
    g_thread_join(loop);
    assert_null(c);
    assert_non_null(error);
    assert_string_equal(error->message, "server busy: 64 clients connected");
    g_clear_error(&error);

    for (int i = 0; i < DDM_CTL_MAX_CLIENTS; i++)
        ddm_client_free(held[i]);
    for (int i = 0; i < 200 && ddm_control_n_clients(f->ctl) > 0; i++)
        pump(5);
    assert_int_equal(ddm_control_n_clients(f->ctl), 0);
}

/* Run the loop until the session to 127.0.0.1:@port is in its handshake
 * (connected, the handshake sent, unanswered): a wait for the state, not
 * for a time, so that a loaded machine cannot leave it connecting (an
 * assertion fails past 20 s). */
static void pump_until_handshake(DdmMonitor *mon, guint16 port)
{
    char *key = g_strdup_printf("127.0.0.1:%u", port);
    gint64 end = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
    for (;;) {
        DdmVm *vm = ddm_monitor_find_vm(mon, key);
        if (vm != NULL && vm->state == DDM_VM_STATE_HANDSHAKE)
            break;
        assert_true(g_get_monotonic_time() < end);
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    g_free(key);
}

/* A TCP listener on 127.0.0.1 that never answers the handshake (a VM
 * that stays "connecting"); its port in @port. */
static int silent_listener(guint16 *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 4), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* {"op":"view","name":"vms"} shows the VM list as it is, not the vms
 * view's last publication: a change within the coalescing interval of the
 * previous rebuild (100 ms, 300 ms with 10,000 rows) is published first,
 * as {"op":"vms"} does (review rS 3). */
static void test_server_control_view_vms_fresh(void **state)
{
    Fixture *f = *state;
    char *dir = g_path_get_dirname(f->sock);
    assert_true(ddm_server_check_dir(dir, TRUE, NULL));
    g_free(dir);
    DdmConfig *config = ddm_config_new();
    config->relay = FALSE;
    config->scan_local = FALSE;
    config->scan_adb = FALSE;
    g_free(config->installed_plugin_dir);
    config->installed_plugin_dir = g_strdup("/nonexistent/ddmon-test");
    config->use_env_plugin_path = FALSE;
    f->mon.daemon = ddm_daemon_new(config, NULL); /* its own views, the real vms view */
    assert_non_null(f->mon.daemon);
    f->vm.info.key = "none"; /* teardown steals it: nothing */
    int lfd = ddm_server_listen(f->sock, NULL);
    assert_true(lfd >= 0);
    f->ctl = ddm_control_new(f->mon.daemon, lfd, on_stop, f);
    DdmClient *c = ddm_client_connect(f->sock, NULL);
    assert_non_null(c);
    pump(150);

    guint16 pa = 0, pb = 0;
    int la = silent_listener(&pa), lb = silent_listener(&pb);
    DdmMonitor *mon = ddm_daemon_monitor(f->mon.daemon);
    DdmTarget *ta = ddm_target_tcp_new("127.0.0.1", pa, "test");
    DdmTarget *tb = ddm_target_tcp_new("127.0.0.1", pb, "test");
    g_autofree char *ka = g_strdup_printf("\"127.0.0.1:%u\"", pa);
    g_autofree char *kb = g_strdup_printf("\"127.0.0.1:%u\"", pb);
    assert_true(ddm_monitor_offer_target(mon, ta));
    pump(30); /* A's row published: a rebuild just now */
    JsonNode *r = ask(c, "{\"op\":\"view\",\"name\":\"vms\"}\n");
    g_autofree char *first = ddm_ctl_encode(r, NULL);
    json_node_unref(r);
    assert_non_null(strstr(first, ka));
    assert_null(strstr(first, kb));

    /* B within 100 ms of that rebuild: its row is due later, but asked for now */
    gint64 t0 = g_get_monotonic_time();
    assert_true(ddm_monitor_offer_target(mon, tb));
    r = ask(c, "{\"op\":\"view\",\"name\":\"vms\"}\n");
    gint64 took_ms = (g_get_monotonic_time() - t0) / 1000;
    g_autofree char *second = ddm_ctl_encode(r, NULL);
    json_node_unref(r);
    if (took_ms < 60) /* else the coalesced rebuild may have run anyway: nothing shown */
        assert_non_null(strstr(second, kb));
    assert_non_null(strstr(second, ka));

    ddm_client_free(c);
    pump(20);
    ddm_target_unref(ta);
    ddm_target_unref(tb);
    close(la);
    close(lb);
}

/* One-shot views note an interest each (MAX_INTERESTS, 256): a view that
 * does not exist notes none, and when the table is full the VM list's
 * interest still goes in (kept): after 300 requests of views that do not
 * exist and 300 of views that do, `vms` still watches the VM list (its
 * watchers are what ABI 1.6 vm_list_watchers counts; review rF1 2). */
static void test_server_control_vms_interest_when_full(void **state)
{
    Fixture *f = *state;
    start_control(f);
    ddm_view *vms = add_table(f, NULL, "vms");
    for (int i = 0; i < 300; i++) {
        char name[32];
        g_snprintf(name, sizeof name, "g%d", i);
        add_table(f, NULL, name);
    }
    DdmClient *c = ddm_client_connect(f->sock, NULL);
    assert_non_null(c);
    pump(20);
    for (int i = 0; i < 300; i++) {
        char line[96];
        g_snprintf(line, sizeof line, "{\"op\":\"view\",\"name\":\"nosuch%d\"}\n", i);
        JsonNode *r = ask(c, line);
        assert_non_null(r);
        assert_false(ddm_json_get_bool(json_node_get_object(r), "ok", TRUE));
        json_node_unref(r);
    }
    JsonNode *r = ask(c, "{\"op\":\"vms\"}\n");
    assert_non_null(r);
    assert_true(ddm_json_get_bool(json_node_get_object(r), "ok", FALSE));
    json_node_unref(r);
    assert_true(ddm_view_watchers(vms) > 0);
    for (int i = 0; i < 300; i++) {
        char line[96];
        g_snprintf(line, sizeof line, "{\"op\":\"view\",\"name\":\"g%d\"}\n", i);
        r = ask(c, line);
        assert_non_null(r);
        assert_true(ddm_json_get_bool(json_node_get_object(r), "ok", FALSE));
        json_node_unref(r);
    }
    assert_true(ddm_view_watchers(vms) > 0); /* kept: no one-shot view took its place */
    r = ask(c, "{\"op\":\"vms\"}\n");
    assert_non_null(r);
    json_node_unref(r);
    assert_true(ddm_view_watchers(vms) > 0);
    ddm_client_free(c);
    pump(20);
}

/* ASan replaces malloc: glibc's arenas then see none of the program's
 * blocks, and ASan keeps its own count. GCC says __SANITIZE_ADDRESS__,
 * clang __has_feature(address_sanitizer). */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifdef UNDER_ASAN
size_t __sanitizer_get_current_allocated_bytes(void); /* libasan; GCC ships no header for it */
#endif

/* Bytes that malloc has handed out and not taken back, counted by the
 * allocator in use (ASan's in sanitizer builds, glibc's mallinfo2 in
 * plain ones). FALSE when there is no such count here. */
static gboolean heap_in_use(size_t *bytes)
{
#if defined(UNDER_ASAN)
    *bytes = __sanitizer_get_current_allocated_bytes();
    return TRUE;
#elif defined(HAVE_MALLINFO2)
    struct mallinfo2 mi = mallinfo2();
    *bytes = mi.uordblks + mi.hblkhd;
    return TRUE;
#else
    (void)bytes;
    return FALSE;
#endif
}

/* ddmon and this test link server/slices.c, whose .preinit_array entry
 * makes GLib's slices come from malloc before GLib's constructors run.
 * Measured with the allocator's own count: freeing N slices hands at
 * least N * 24 bytes back to malloc. GLib's slab allocator would keep
 * them in its magazines and slabs (the count would not drop), so this
 * fails in a build without the entry. From GLib 2.76 on (the GLib loaded,
 * not the headers) slices are malloc whatever the entry does: skipped. */
static void test_server_slices_from_malloc(void **state)
{
    (void)state;
    enum { SLICES = 4096, SLICE_SIZE = 24 };
    size_t before, allocated, freed;

    if (glib_check_version(2, 76, 0) == NULL || !heap_in_use(&before))
        skip();
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    assert_true(g_slice_get_config(G_SLICE_CONFIG_ALWAYS_MALLOC));
    G_GNUC_END_IGNORE_DEPRECATIONS

    gpointer *slices = g_new(gpointer, SLICES);
    assert_true(heap_in_use(&before));
    for (size_t i = 0; i < SLICES; i++)
        slices[i] = g_slice_alloc(SLICE_SIZE);
    assert_true(heap_in_use(&allocated));
    for (size_t i = 0; i < SLICES; i++)
        g_slice_free1(SLICE_SIZE, slices[i]);
    assert_true(heap_in_use(&freed));
    g_free(slices);

    /* The count sees the slices at all (slabs or malloc)... */
    assert_true(allocated >= before + (size_t)SLICES * SLICE_SIZE);
    /* ...and malloc got them back. */
    assert_true(freed <= allocated - (size_t)SLICES * SLICE_SIZE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_slices_from_malloc),
        cmocka_unit_test_setup_teardown(test_server_dir_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_listen_and_lock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_take_lock_past_probe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_blob_filenames, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_view_of_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_trim_after_large_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_trim_gap_and_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_first_look, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_settled_since_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_settled_capped_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_first_look_two, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_first_look_old_abi, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_oversized, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_busy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_view_vms_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_control_vms_interest_when_full, setup, teardown),
    };
    return cmocka_run_group_tests_name("server", tests, NULL, NULL);
}
