/* SPDX-License-Identifier: Apache-2.0
 *
 * The number of GSources does not grow with the number of VMs (issue 16):
 * a whole daemon (core only, no plugins; local scan, relay on) connects to
 * N idle VMs of a real ddmon-simvm process, and the sources attached to the
 * main context since discovery started are counted (core/loop/census.h)
 * once every VM is READY: none with 20 VMs, none with 200. The same run
 * checks that the epoll watches did grow with N (so the VMs were watched,
 * just not by sources of their own).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/daemon/daemon.h"
#include "core/loop/census.h"
#include "core/loop/timer.h"
#include "core/loop/watch.h"

#ifndef DDM_TEST_BUILDDIR
#error "DDM_TEST_BUILDDIR must name the build directory (ddmon-simvm)"
#endif

static gboolean flag_cb(gpointer p)
{
    *(gboolean *)p = TRUE;
    return G_SOURCE_REMOVE;
}

static void spin(guint ms)
{
    gboolean done = FALSE;
    guint id = g_timeout_add(ms, flag_cb, &done);
    while (!done)
        g_main_context_iteration(NULL, TRUE);
    (void)id;
}

/* Start ddmon-simvm with @n idle VMs on kernel-chosen ports; their ports. */
static GArray *start_simvm(guint n, GPid *pid, char **dir)
{
    GError *err = NULL;
    GArray *ports = g_array_new(FALSE, FALSE, sizeof(guint16));
    *dir = g_dir_make_tmp("ddm-census-XXXXXX", &err);
    assert_null(err);
    g_autofree char *port_file = g_build_filename(*dir, "ports", NULL);
    g_autofree char *vms = g_strdup_printf("--vms=%u", n);
    g_autofree char *pf = g_strdup_printf("--port-file=%s", port_file);
    g_autofree char *prog = g_strdup(DDM_TEST_BUILDDIR "/ddmon-simvm");
    g_autofree char *a_port = g_strdup("--base-port=0");
    g_autofree char *a_quiet = g_strdup("--thread-activity=0");
    char *argv[] = {prog, vms, a_port, pf, a_quiet, NULL};

    if (!g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                       NULL, NULL, pid, &err))
        fail_msg("cannot start %s: %s", argv[0], err->message);
    for (int i = 0; i < 1000 && ports->len < n; i++) {
        g_autofree char *text = NULL;
        g_usleep(20000);
        if (!g_file_get_contents(port_file, &text, NULL, NULL))
            continue;
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        g_array_set_size(ports, 0);
        for (char **l = lines; *l; l++) {
            unsigned p_pid, port;
            if (sscanf(*l, "%u %u", &p_pid, &port) == 2 && port > 0 && port < 65536)
                g_array_append_val(ports, (guint16){(guint16)port});
        }
    }
    assert_int_equal(ports->len, n);
    return ports;
}

static void stop_simvm(GPid pid, char *dir)
{
    g_autofree char *port_file = g_build_filename(dir, "ports", NULL);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    g_spawn_close_pid(pid);
    unlink(port_file);
    rmdir(dir);
    g_free(dir);
}

static guint count_ready(DdmMonitor *mon)
{
    GPtrArray *all = ddm_monitor_list_vms(mon);
    guint n = 0;
    for (guint i = 0; i < all->len; i++)
        n += ((DdmVm *)all->pdata[i])->state == DDM_VM_STATE_READY;
    g_ptr_array_unref(all);
    return n;
}

static void noop_timer(DdmTimer *t, gpointer ud)
{
    (void)t;
    (void)ud;
}

static gboolean noop_watch(gint fd, GIOCondition cond, gpointer ud)
{
    (void)fd;
    (void)cond;
    (void)ud;
    return G_SOURCE_CONTINUE;
}

/* Connect @n VMs; return the sources attached since discovery started that
 * are still attached once all are READY, and the watches added. */
static guint sources_added_by(guint n, guint *watches_added)
{
    GPid pid;
    char *dir;
    GArray *ports = start_simvm(n, &pid, &dir);
    DdmConfig *c = ddm_config_new();
    GError *err = NULL;
    guint live0, live1, added;
    gint64 end;

    c->scan_local = TRUE;
    c->scan_adb = FALSE;
    c->use_env_plugin_path = FALSE;
    g_free(c->installed_plugin_dir);
    c->installed_plugin_dir = g_strdup("/nonexistent/ddmon-test-plugins");
    c->selected_port = 0;
    c->debug_port_base = 0; /* the kernel picks each VM's debugger port */
    c->scan_interval_ms = 200;
    g_array_set_size(c->scan_ranges, 0);
    for (guint i = 0; i < ports->len; i++) {
        guint16 p = g_array_index(ports, guint16, i);
        DdmPortRange r = {p, p};
        g_array_append_val(c->scan_ranges, r);
    }
    DdmDaemon *d = ddm_daemon_new(c, &err);
    assert_null(err);

    /* The loop's own two sources exist before the mark. */
    {
        DdmTimer t;
        int sv[2];
        ddm_timer_init(&t, noop_timer, NULL);
        ddm_timer_arm(&t, 1000);
        ddm_timer_cancel(&t);
        assert_int_equal(pipe(sv), 0);
        ddm_watch_remove(ddm_watch_add(sv[0], G_IO_IN, noop_watch, NULL));
        close(sv[0]);
        close(sv[1]);
    }
    ddm_watch_stats(&live0, NULL, NULL);
    guint mark = ddm_census_mark(NULL);
    ddm_daemon_start(d);
    end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (count_ready(ddm_daemon_monitor(d)) < n && g_get_monotonic_time() < end)
        spin(50);
    assert_int_equal(count_ready(ddm_daemon_monitor(d)), n);
    spin(500); /* idle: what connecting left behind */
    added = ddm_census_live_since(NULL, mark);
    ddm_watch_stats(&live1, NULL, NULL);
    *watches_added = live1 - live0;

    ddm_daemon_free(d);
    stop_simvm(pid, dir);
    g_array_unref(ports);
    return added;
}

static void test_sources_do_not_grow_with_vms(void **state)
{
    guint w20, w200;
    guint s20 = sources_added_by(20, &w20);
    guint s200 = sources_added_by(200, &w200);
    (void)state;

    print_message("sources added: %u with 20 VMs, %u with 200; watches added: %u, %u\n", s20,
                  s200, w20, w200);
    assert_int_equal(s20, 0);
    assert_int_equal(s200, 0);
    assert_true(w200 >= 200 && w200 > w20); /* every VM is watched, on the epoll fd */
}

int main(void)
{
    struct rlimit rl;
    /* 200 sessions and 200 debugger ports, and the simulator's side */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2048 && rl.rlim_max >= 2048) {
        rl.rlim_cur = 2048;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sources_do_not_grow_with_vms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
