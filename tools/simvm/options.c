/* SPDX-License-Identifier: Apache-2.0
 *
 * ddmon-simvm's configuration: defaults and the command line (GOption).
 * Every option is documented in --help and in doc/ddmon-simvm.md.
 */
#include "simvm.h"

#include <string.h>

#include "heap.h"
#include "hprof_gen.h"
#include "view_model.h"

#define HPROF_DEFAULT_SIZE ((guint64)2 << 20)
#define LIE_LONG_EXTRA 1000u /* keep in step with hprof_dump.c */

void sim_config_init(SimConfig *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->vms = 1;
    cfg->base_port = 8000;
    cfg->bind_address = g_strdup("127.0.0.1");
    cfg->mode = SIM_MODE_ART;
    cfg->hprof_gen_seed = -1;
    cfg->seed = 1;
    cfg->tick_ms = 100;
    cfg->thread_activity_ms = 3000;
    cfg->nhgt_version = 2;
    cfg->ptr_size = 8;
    cfg->heap_kib = 8192;
    cfg->threads = 14;
    cfg->helo_tails = 5;
    cfg->seg_chunk_max = SIM_SEG_ART_MAX_CHUNK;
    cfg->max_request = 1u << 20;
    cfg->hprof_mode = SIM_HPROF_STREAM;
    cfg->hprof_size = HPROF_DEFAULT_SIZE;
}

void sim_config_clear(SimConfig *cfg)
{
    g_free(cfg->bind_address);
    g_free(cfg->port_file);
    g_free(cfg->state_file);
    g_strfreev(cfg->apps);
    g_free(cfg->device_dir);
    g_free(cfg->write_hprof);
    g_free(cfg->hprof_package);
    g_free(cfg->trace_opt);
    g_free(cfg->trace_clock_opt);
    g_free(cfg->trace_fault_opt);
    memset(cfg, 0, sizeof *cfg);
}

const char *sim_mode_name(SimMode mode)
{
    switch (mode) {
    case SIM_MODE_ART:
        return "art";
    case SIM_MODE_DALVIK:
        return "dalvik";
    case SIM_MODE_JVM:
        return "jvm";
    }
    return "?";
}

const char *sim_hprof_fault_name(SimHprofFault fault)
{
    static const char *const names[] = { "none", "truncate", "lie-long", "lie-short", "fail" };
    return (unsigned)fault < G_N_ELEMENTS(names) ? names[fault] : "?";
}

static gboolean parse_hprof(SimConfig *cfg, const char *hprof, const char *fault, GError **error)
{
    unsigned i;

    if (hprof) {
        if (g_ascii_strcasecmp(hprof, "stream") == 0)
            cfg->hprof_mode = SIM_HPROF_STREAM;
        else if (g_ascii_strcasecmp(hprof, "device") == 0)
            cfg->hprof_mode = SIM_HPROF_DEVICE;
        else if (g_ascii_strcasecmp(hprof, "none") == 0)
            cfg->hprof_mode = SIM_HPROF_NONE;
        else {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--hprof must be stream, device or none");
            return FALSE;
        }
    }
    if (fault) {
        for (i = 0; i <= SIM_HPROF_FAULT_FAIL; i++)
            if (g_ascii_strcasecmp(fault, sim_hprof_fault_name((SimHprofFault)i)) == 0)
                break;
        if (i > SIM_HPROF_FAULT_FAIL) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--hprof-fault must be none, truncate, lie-long, lie-short or fail");
            return FALSE;
        }
        cfg->hprof_fault = (SimHprofFault)i;
    }
    return TRUE;
}

static gboolean check_range(const char *name, gint64 v, gint64 lo, gint64 hi, GError **error)
{
    if (v >= lo && v <= hi)
        return TRUE;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--%s must be between %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT, name, lo, hi);
    return FALSE;
}

gboolean sim_config_parse(SimConfig *cfg, int *argc, char ***argv, GOptionGroup *extra, GError **error)
{
    int vms = (int)cfg->vms, jvm_vms = (int)cfg->jvm_vms, base_port = cfg->base_port;
    int rename_after = (int)cfg->rename_after_ms, churn = (int)cfg->churn_ms;
    int gc_every = (int)cfg->gc_every_ms, tick = (int)cfg->tick_ms;
    int activity = (int)cfg->thread_activity_ms, exit_after = (int)cfg->exit_after_ms;
    int main_state_every = (int)cfg->main_state_every_ms;
    int ptr_size = (int)cfg->ptr_size, heap_kib = (int)cfg->heap_kib, threads = (int)cfg->threads;
    int tails = (int)cfg->helo_tails, chunk_max = (int)cfg->seg_chunk_max;
    int max_request = (int)cfg->max_request;
    gint64 seed = (gint64)cfg->seed, hprof_size = (gint64)cfg->hprof_size;
    char *hprof = NULL, *hprof_fault = NULL, *device_dir = NULL, *write_hprof = NULL;
    char *hprof_package = NULL;
    char *view_fault = NULL;
    gint64 hprof_gen_seed = -1;
    char *mode = NULL, *nhgt = NULL, *dbgd = NULL, *bind = NULL, *port_file = NULL, *state_file = NULL;
    char **apps = NULL;
    gboolean ok = FALSE;
    GOptionEntry entries[] = {
        { "vms", 'n', 0, G_OPTION_ARG_INT, &vms, "Number of DDM VMs (default 1)", "N" },
        { "jvm-vms", 0, 0, G_OPTION_ARG_INT, &jvm_vms, "Add N plain-JVM VMs (HELO -> JDWP error 99)", "N" },
        { "base-port", 'p', 0, G_OPTION_ARG_INT, &base_port,
          "First TCP port (default 8000; busy ports are skipped); 0 = kernel-chosen ports", "PORT" },
        { "bind", 0, 0, G_OPTION_ARG_STRING, &bind, "Listen address (default 127.0.0.1)", "ADDR" },
        { "no-tcp", 0, 0, G_OPTION_ARG_NONE, &cfg->no_tcp, "No TCP listeners (VMs reachable only through a device)", NULL },
        { "port-file", 0, 0, G_OPTION_ARG_FILENAME, &port_file,
          "Write \"pid port app\" lines here, rewritten atomically on every change", "FILE" },
        { "state-file", 0, 0, G_OPTION_ARG_FILENAME, &state_file,
          "Write the ground truth (JSON) here, rewritten atomically on every change", "FILE" },
        { "mode", 'm', 0, G_OPTION_ARG_STRING, &mode,
          "art (default: no reply when there is nothing to say), dalvik (empty replies) or jvm (no DDM)", "MODE" },
        { "seed", 's', 0, G_OPTION_ARG_INT64, &seed, "Seed of every random choice (default 1)", "N" },
        /* (bytes, checked as UTF-8 below: GLib's STRING converts from the
         * locale's charset, and this program runs in the C locale, so a
         * non-ASCII name was refused) */
        { "app", 'a', 0, G_OPTION_ARG_FILENAME_ARRAY, &apps, "Name of the next VM (repeatable, UTF-8)", "NAME" },
        { "apnm-before-echo", 0, 0, G_OPTION_ARG_NONE, &cfg->apnm_before_echo,
          "Send an APNM event before the handshake echo (a real race)", NULL },
        { "wait-for-debugger", 0, 0, G_OPTION_ARG_NONE, &cfg->wait_for_debugger,
          "Send WAIT with the HELO reply until a non-DDM JDWP command arrives", NULL },
        { "dbgd", 0, 0, G_OPTION_ARG_STRING, &dbgd,
          "DBGD (debugger detached) request: ack = reply with an empty DBGD chunk, ignore = as real VMs (default)",
          "ack|ignore" },
        { "rename-after", 0, 0, G_OPTION_ARG_INT, &rename_after,
          "Be \"<pre-initialized>\" for MS milliseconds, then take the real name (APNM)", "MS" },
        { "churn", 0, 0, G_OPTION_ARG_INT, &churn, "Every MS, some VMs exit and new ones start", "MS" },
        { "zlib", 0, 0, G_OPTION_ARG_NONE, &cfg->zlib,
          "Wrap large chunks (THST, STKL, HPSG/HPSO/NHSG, NHGT) in ZLIB chunks", NULL },
        { "two-heaps", 0, 0, G_OPTION_ARG_NONE, &cfg->two_heaps,
          "Two managed heaps (ids 1 and 2) whose segments arrive interleaved", NULL },
        { "gc-every", 0, 0, G_OPTION_ARG_INT, &gc_every, "Run a GC every MS (0: only on HPGC)", "MS" },
        { "tick", 0, 0, G_OPTION_ARG_INT, &tick, "Model tick (default 100)", "MS" },
        { "thread-activity", 0, 0, G_OPTION_ARG_INT, &activity,
          "Mean time between thread births, renames and deaths per VM (default 3000; 0 = none)", "MS" },
        { "main-state-every", 0, 0, G_OPTION_ARG_INT, &main_state_every,
          "Every MS, each VM's main thread switches between waiting and runnable, and only then "
          "(default 0: now and then, at random)", "MS" },
        { "exit-after", 0, 0, G_OPTION_ARG_INT, &exit_after, "Quit after MS milliseconds", "MS" },
        { "nhgt", 0, 0, G_OPTION_ARG_STRING, &nhgt, "NHGT header: v1 or v2 (default)", "v1|v2" },
        { "ptr-size", 0, 0, G_OPTION_ARG_INT, &ptr_size,
          "Native pointer size: 8 (default, 64-bit ABI) or 4 (32-bit ABI; forced by --nhgt=v1)", "4|8" },
        { "heap-kib", 0, 0, G_OPTION_ARG_INT, &heap_kib, "Initial managed heap size (default 8192)", "KIB" },
        { "threads", 0, 0, G_OPTION_ARG_INT, &threads, "Initial threads per VM (default 14)", "N" },
        { "helo-tails", 0, 0, G_OPTION_ARG_INT, &tails,
          "Optional HELO tails to send: 0-6 (default 5; 6 adds the API 34 boot stage)", "N" },
        { "seg-chunk-max", 0, 0, G_OPTION_ARG_INT, &chunk_max,
          "Largest heap segment chunk in bytes (1024-16368, default 16368 as ART)", "BYTES" },
        { "max-request", 0, 0, G_OPTION_ARG_INT, &max_request,
          "Largest JDWP packet accepted from a client; longer = connection closed (default 1 MiB)", "BYTES" },
        { "hprof", 0, 0, G_OPTION_ARG_STRING, &hprof,
          "Heap dumps: stream (default: FEAT lists hprof-heap-dump-streaming, HPDS and HPDU work), "
          "device (HPDU only) or none", "stream|device|none" },
        { "hprof-size", 0, 0, G_OPTION_ARG_INT64, &hprof_size,
          "Size of every heap dump in bytes (default 2 MiB; 4096 to 4 GiB - 20)", "BYTES" },
        { "hprof-fault", 0, 0, G_OPTION_ARG_STRING, &hprof_fault,
          "Misbehave on HPDS: truncate, lie-long, lie-short, fail (default none)", "FAULT" },
        { "device-dir", 0, 0, G_OPTION_ARG_FILENAME, &device_dir,
          "HPDU also writes the dump to DIR/<basename of the device path>", "DIR" },
        { "write-hprof", 0, 0, G_OPTION_ARG_FILENAME, &write_hprof,
          "Only write a heap dump of --hprof-size bytes (from --seed) to FILE, print its sha256, exit", "FILE" },
        { "hprof-gen-seed", 0, 0, G_OPTION_ARG_INT64, &hprof_gen_seed,
          "--write-hprof: the generator's own seed, as a state file's hprof.last.gen_seed says "
          "(rebuilds the bytes a VM sent)", "N" },
        { "hprof-package", 0, 0, G_OPTION_ARG_STRING, &hprof_package,
          "--write-hprof: the package name the generator uses (hprof.last.package)", "NAME" },
        { "trace", 0, 0, G_OPTION_ARG_STRING, &cfg->trace_opt,
          "Method profiling: stream (default: MPSS/MPSE, SPSS/SPSE, MPRS/MPRE), device (MPRS/MPRE "
          "only) or none", "stream|device|none" },
        { "trace-clock", 0, 0, G_OPTION_ARG_STRING, &cfg->trace_clock_opt,
          "Clock of the traces: dual (default, version 3) or thread-cpu (version 2)", "dual|thread-cpu" },
        { "trace-rate", 0, 0, G_OPTION_ARG_INT64, &cfg->trace_rate,
          "Bytes of trace records per second traced (default 65536; at most the buffer size asked)",
          "BYTES" },
        { "trace-fault", 0, 0, G_OPTION_ARG_STRING, &cfg->trace_fault_opt,
          "Misbehave on MPSE/SPSE: truncate (close halfway through the MPSE event) or silent (stop as if "
          "nothing ran: no event, no reply); default none",
          "FAULT" },
        { "no-view-hierarchy", 0, 0, G_OPTION_ARG_NONE, &cfg->no_view_hierarchy,
          "FEAT without view-hierarchy; VULW, VURT and VUOP unanswered, as a VM without the handler", NULL },
        { "view-fault", 0, 0, G_OPTION_ARG_STRING, &view_fault,
          "Misbehave on view debugging: indent, no-done, huge-vulw, not-png, silent (default none)", "FAULT" },
        { NULL, 0, 0, 0, NULL, NULL, NULL }
    };
    GOptionContext *ctx = g_option_context_new("- simulated DDM-aware VMs for ddmon");

    g_option_context_set_summary(ctx,
        "Plays one or many Android VMs (ART or Dalvik) or plain JVMs on local TCP ports,\n"
        "speaking JDWP and DDM as real devices do: HELO, FEAT, APNM, WAIT, threads, heaps,\n"
        "native heap. Everything runs in one process and one event loop.");
    g_option_context_set_description(ctx,
        "Examples:\n"
        "  ddmon-simvm --vms 3 --port-file /tmp/ports\n"
        "  ddmon-simvm --vms 5000 --base-port 0 --port-file ports --tick 500\n"
        "  ddmon-simvm --mode dalvik --two-heaps --gc-every 2000 --zlib --state-file truth.json\n"
        "See doc/ddmon-simvm.md for the ground-truth format.");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (extra)
        g_option_context_add_group(ctx, extra);
    if (!g_option_context_parse(ctx, argc, argv, error))
        goto out;
    /* Options only: a stray word (a typo, a value without its option) is
     * refused, as ddmon's commands refuse one, not silently ignored. */
    if (*argc > 1) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                    "unexpected argument '%s' (ddmon-simvm takes options only; see --help)", (*argv)[1]);
        goto out;
    }
    if (!check_range("vms", vms, 0, 100000, error) || !check_range("jvm-vms", jvm_vms, 0, 100000, error) ||
        !check_range("base-port", base_port, 0, 65535, error) ||
        !check_range("rename-after", rename_after, 0, G_MAXINT, error) ||
        !check_range("churn", churn, 0, G_MAXINT, error) || !check_range("gc-every", gc_every, 0, G_MAXINT, error) ||
        !check_range("tick", tick, 10, 60000, error) ||
        !check_range("thread-activity", activity, 0, G_MAXINT, error) ||
        !check_range("main-state-every", main_state_every, 0, G_MAXINT, error) ||
        !check_range("exit-after", exit_after, 0, G_MAXINT, error) ||
        !check_range("heap-kib", heap_kib, 64, 131072, error) || !check_range("threads", threads, 1, 1000, error) ||
        !check_range("helo-tails", tails, 0, 6, error) ||
        !check_range("seg-chunk-max", chunk_max, SIM_SEG_MIN_CHUNK, SIM_SEG_ART_MAX_CHUNK, error) ||
        !check_range("max-request", max_request, 64, 256 << 20, error) ||
        !check_range("seed", seed, 0, G_MAXINT64, error) ||
        !check_range("hprof-size", hprof_size, HPROF_GEN_MIN_TOTAL, (gint64)HPROF_GEN_MAX_TOTAL, error) ||
        (hprof_gen_seed != -1 && !check_range("hprof-gen-seed", hprof_gen_seed, 0, G_MAXUINT32, error)) ||
        !parse_hprof(cfg, hprof, hprof_fault, error) || !sim_profiling_parse_config(cfg, error))
        goto out;
    if (view_fault && !sim_view_fault_parse(view_fault, &cfg->view_fault, error))
        goto out;
    if (cfg->hprof_fault == SIM_HPROF_FAULT_LIE_LONG &&
        !check_range("hprof-size", hprof_size, HPROF_GEN_MIN_TOTAL,
                     (gint64)(HPROF_GEN_MAX_TOTAL - LIE_LONG_EXTRA), error))
        goto out;
    if (ptr_size != 4 && ptr_size != 8) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--ptr-size must be 4 or 8");
        goto out;
    }
    if (mode) {
        if (g_ascii_strcasecmp(mode, "art") == 0)
            cfg->mode = SIM_MODE_ART;
        else if (g_ascii_strcasecmp(mode, "dalvik") == 0)
            cfg->mode = SIM_MODE_DALVIK;
        else if (g_ascii_strcasecmp(mode, "jvm") == 0)
            cfg->mode = SIM_MODE_JVM;
        else {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--mode must be art, dalvik or jvm");
            goto out;
        }
    }
    if (nhgt) {
        if (g_ascii_strcasecmp(nhgt, "v1") == 0 || strcmp(nhgt, "1") == 0)
            cfg->nhgt_version = 1;
        else if (g_ascii_strcasecmp(nhgt, "v2") == 0 || strcmp(nhgt, "2") == 0)
            cfg->nhgt_version = 2;
        else {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--nhgt must be v1 or v2");
            goto out;
        }
    }
    if (dbgd) {
        if (g_ascii_strcasecmp(dbgd, "ack") == 0)
            cfg->dbgd_ack = TRUE;
        else if (g_ascii_strcasecmp(dbgd, "ignore") == 0)
            cfg->dbgd_ack = FALSE;
        else {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--dbgd must be ack or ignore");
            goto out;
        }
    }
    if (cfg->nhgt_version == 1 && ptr_size == 8) {
        g_message("--nhgt=v1 implies 4-byte pointers; using --ptr-size=4");
        ptr_size = 4;
    }
    cfg->vms = (unsigned)vms;
    cfg->jvm_vms = (unsigned)jvm_vms;
    cfg->base_port = base_port;
    cfg->rename_after_ms = (unsigned)rename_after;
    cfg->churn_ms = (unsigned)churn;
    cfg->gc_every_ms = (unsigned)gc_every;
    cfg->tick_ms = (unsigned)tick;
    cfg->thread_activity_ms = (unsigned)activity;
    cfg->main_state_every_ms = (unsigned)main_state_every;
    cfg->exit_after_ms = (unsigned)exit_after;
    cfg->ptr_size = (unsigned)ptr_size;
    cfg->heap_kib = (unsigned)heap_kib;
    cfg->threads = (unsigned)threads;
    cfg->helo_tails = (unsigned)tails;
    cfg->seg_chunk_max = (unsigned)chunk_max;
    cfg->max_request = (unsigned)max_request;
    cfg->seed = (guint64)seed;
    cfg->hprof_size = (guint64)hprof_size;
    if (device_dir) {
        g_free(cfg->device_dir);
        cfg->device_dir = g_steal_pointer(&device_dir);
    }
    if (write_hprof) {
        g_free(cfg->write_hprof);
        cfg->write_hprof = g_steal_pointer(&write_hprof);
    }
    cfg->hprof_gen_seed = hprof_gen_seed;
    g_free(cfg->hprof_package);
    cfg->hprof_package = g_steal_pointer(&hprof_package);
    if (bind) {
        g_free(cfg->bind_address);
        cfg->bind_address = g_steal_pointer(&bind);
    }
    if (port_file) {
        g_free(cfg->port_file);
        cfg->port_file = g_steal_pointer(&port_file);
    }
    if (state_file) {
        g_free(cfg->state_file);
        cfg->state_file = g_steal_pointer(&state_file);
    }
    for (char **a = apps; a != NULL && *a != NULL; a++) {
        if (!g_utf8_validate(*a, -1, NULL)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--app: not UTF-8");
            goto out;
        }
    }
    if (apps) {
        g_strfreev(cfg->apps);
        cfg->apps = g_steal_pointer(&apps);
    }
    ok = TRUE;
out:
    g_free(hprof);
    g_free(view_fault);
    g_free(hprof_fault);
    g_free(device_dir);
    g_free(write_hprof);
    g_free(mode);
    g_free(nhgt);
    g_free(dbgd);
    g_free(bind);
    g_free(port_file);
    g_free(state_file);
    g_strfreev(apps);
    g_option_context_free(ctx);
    return ok;
}
