/* SPDX-License-Identifier: Apache-2.0
 *
 * ddmon-simvm: parse options (the world's and the simulated adb devices'),
 * raise the fd limit (5000 VMs need 5000+ listeners), start the world and
 * the devices, run the main loop until SIGINT/SIGTERM or --exit-after.
 * --write-hprof only writes one heap dump and exits.
 */
#include <glib-unix.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>

#include "adb_device.h"
#include "simvm-private.h"

static gboolean quit_cb(gpointer data)
{
    g_main_loop_quit(data);
    return G_SOURCE_REMOVE;
}

static void raise_fd_limit(unsigned need)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            return;
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)need)
        g_warning("open-file limit %llu is low for %u VMs (each needs a listener and a connection)",
                  (unsigned long long)rl.rlim_cur, need / 2);
}

int main(int argc, char **argv)
{
    SimConfig cfg;
    SimWorld *w;
    SimAdbSetup *adb = sim_adb_setup_new();
    GMainLoop *loop;
    GError *err = NULL;
    int rc = 0;

    signal(SIGPIPE, SIG_IGN);
    sim_config_init(&cfg);
    if (!sim_config_parse(&cfg, &argc, &argv, sim_adb_option_group(adb), &err)) {
        fprintf(stderr, "ddmon-simvm: %s\n", err->message);
        g_error_free(err);
        sim_adb_setup_free(adb);
        sim_config_clear(&cfg);
        return 2;
    }
    if (cfg.write_hprof) { /* tests: one dump to a file, nothing else */
        char sha[65];
        uint32_t gen_seed = cfg.hprof_gen_seed >= 0 ? (uint32_t)cfg.hprof_gen_seed : sim_hprof_seed(cfg.seed);
        if (!sim_hprof_write_file(cfg.write_hprof, cfg.hprof_size, gen_seed, cfg.hprof_package, sha, &err)) {
            fprintf(stderr, "ddmon-simvm: %s\n", err->message);
            g_error_free(err);
            rc = 1;
        } else {
            printf("%s  %s\n", sha, cfg.write_hprof); /* as sha256sum prints it */
        }
        sim_adb_setup_free(adb);
        sim_config_clear(&cfg);
        return rc;
    }
    raise_fd_limit((cfg.vms + cfg.jvm_vms) * 2 + 64);
    loop = g_main_loop_new(NULL, FALSE);
    w = sim_world_new(&cfg);
    if (!sim_world_start(w, &err)) {
        fprintf(stderr, "ddmon-simvm: %s\n", err->message);
        g_error_free(err);
        rc = 1;
        goto out;
    }
    /* simulated Android devices (--adb-device) bridge to the world's VMs */
    if (!sim_adb_setup_start(adb, w, &err)) {
        fprintf(stderr, "ddmon-simvm: %s\n", err->message);
        g_error_free(err);
        rc = 1;
        goto out;
    }
    g_message("%u VM(s) running (%s mode%s, seed %" G_GUINT64_FORMAT ")", w->vms->len, sim_mode_name(cfg.mode),
              cfg.no_tcp ? ", no TCP" : "", cfg.seed);
    if (w->vms->len <= 16) {
        guint i;
        for (i = 0; i < w->vms->len; i++) {
            SimVm *vm = g_ptr_array_index(w->vms, i);
            g_message("  pid %u port %u %s (%s)", vm->pid, vm->port, vm->real_name, sim_mode_name(vm->mode));
        }
    }
    g_unix_signal_add(SIGINT, quit_cb, loop);
    g_unix_signal_add(SIGTERM, quit_cb, loop);
    if (cfg.exit_after_ms)
        g_timeout_add(cfg.exit_after_ms, quit_cb, loop);
    g_main_loop_run(loop);
out:
    sim_adb_setup_free(adb); /* before the world it follows */
    sim_world_free(w);
    g_main_loop_unref(loop);
    sim_config_clear(&cfg);
    return rc;
}
