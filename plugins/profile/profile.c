/* SPDX-License-Identifier: Apache-2.0
 *
 * The profile plugin: method tracing and sampling ("Start Method
 * Profiling" in DDMS), and summaries of .trace files.
 *  - It owns MPRS, MPRE, MPSS, MPSE, SPSS, SPSE and MPRQ. MPSE, the event
 *    that carries a whole trace, is a stream (SDK 1.2): it goes to disk and
 *    through the decoder as it arrives (profile_job.c), never held whole.
 *  - It keeps what MPRQ says current: asked when a VM is ready, after
 *    every start, stop and failure, and every PROFILE_POLL_MS while a
 *    frontend watches the VM's "profile" view (an app may start a trace
 *    itself; a cheap poll, only for watched VMs), and shown as the VM's headline
 *    ("trace: tracing|sampling" while one runs; the figure trace_mode
 *    0/1/2 always) and its record view "profile". The poll tick visits
 *    only the VMs on pl->ticks (watched at their last visit; every VM
 *    when the watches changed) and sleeps (ABI 1.7, DDM_TIMER_SLEEP)
 *    when none is: a VM is polled only while its view is watched, which
 *    only a change of the watches (a watch begins, a view made while a
 *    watch exists) brings about, and that wakes the tick for the full
 *    walk then due. A trace runs on its own timer (profile_job.c).
 *  - Commands: `ddmon trace` (and `trace VM --stop`, for a trace ddmon did
 *    not start or lost) and `ddmon trace-summary` (profile_cmd.c).
 *  - When the server stops (ABI 1.8 stopping hook), a trace of ours still
 *    running gets its stop before the VM's connection closes, and is saved
 *    while the core waits for the answers (profile_job_server_stopping):
 *    no app is left tracing, no trace recorded so far is lost.
 * Option profile.timeout_ms: how long a stop may wait for the trace
 * (default PROFILE_DEFAULT_TIMEOUT_MS).
 */
#include "build-config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

static void free_plugin(void *p)
{
    free(p);
}


/* What a VM that holds nothing but MPRQ's answer has as its data: the
 * marker k_marks[i] of i = mprq_pending * 8 + shown * 4 + mode + 1 (never
 * freed, never written), or NULL for i = 0: nothing asked yet, nothing
 * shown, mode unknown. The usual idle VM (MPRQ said off) has k_marks[5]. */
#define PROFILE_MARKS 16
static char k_marks[PROFILE_MARKS];
static size_t states_alive;

size_t profile_vm_states_alive(void)
{
    return states_alive;
}

static void profile_vm_free(void *p)
{
    profile_vm *pv = p;
    if (!pv)
        return;
    free(pv->last_path);
    free(pv);
    states_alive--;
}

/* The marker index of data pointer @d, or -1 if @d is a state. */
static int mark_index(const void *d)
{
    uintptr_t off = (uintptr_t)d - (uintptr_t)k_marks;
    if (!d)
        return 0;
    return off < PROFILE_MARKS ? (int)off : -1;
}

profile_vm *profile_vm_find(profile_plugin *pl, ddm_vm *vm)
{
    void *d = pl->host->vm_get_data(pl->self, vm);
    return mark_index(d) < 0 ? d : NULL;
}

profile_vm *profile_vm_state(profile_plugin *pl, ddm_vm *vm)
{
    void *d = pl->host->vm_get_data(pl->self, vm);
    int i = mark_index(d);
    profile_vm *pv;
    if (i < 0)
        return d;
    pv = calloc(1, sizeof *pv);
    if (!pv)
        return NULL;
    pv->mode = (int8_t)((i & 3) - 1);
    pv->shown = (i >> 2) & 1;
    pv->mprq_pending = (i >> 3) & 1;
    pv->vm = vm;
    states_alive++;
    if (pl->host->vm_set_data(pl->self, vm, pv, profile_vm_free) != 0)
        return NULL; /* the core freed it (memory rule 3) */
    return pv;
}

int profile_vm_settle(profile_plugin *pl, profile_vm *pv)
{
    int i;
    if (pv->job || pv->traces || pv->last_path || pv->info || pv->methods || pv->threads ||
        pv->summary || pv->tick.on || pv->stray_logged)
        return 0;
    i = pv->mprq_pending * 8 + pv->shown * 4 + pv->mode + 1;
    /* replaces @pv (freed by the host) with its marker, or no entry */
    (void)pl->host->vm_set_data(pl->self, pv->vm, i ? &k_marks[i] : NULL, NULL);
    return 1;
}

static void publish_info(profile_plugin *pl, profile_vm *pv);

static const char *mode_name(int mode)
{
    switch (mode) {
    case PROFILE_MODE_OFF:
        return "off";
    case PROFILE_MODE_TRACING:
        return "tracing";
    case PROFILE_MODE_SAMPLING:
        return "sampling";
    default:
        return NULL;
    }
}

void profile_show_state(profile_plugin *pl, ddm_vm *vm, profile_vm *pv)
{
    const ddm_host *h = pl->host;
    const char *name = mode_name(pv->mode);
    char text[64];

    /* the text only while something runs (an idle VM's list stays short);
     * the figure whenever MPRQ answered */
    snprintf(text, sizeof text, "%s%s", name ? name : "starting", pv->job ? " (ddmon)" : "");
    h->vm_headline(pl->self, vm, "trace",
                   pv->job || pv->mode > PROFILE_MODE_OFF ? text : NULL);
    if (DDM_HOST_HAS(h, vm_headline_figures)) {
        ddm_headline_figure f = {"mode", DDM_VAL_INT, pv->mode, 0};
        h->vm_headline_figures(pl->self, vm, "trace", &f, pv->mode >= 0 ? 1 : 0);
    }
    pv->shown = 1;
    if (!pv->info && !pl->lazy_view)
        pv->info = h->view_new(pl->self, vm, "profile", DDM_VIEW_RECORD, "Method profiling");
    if (pv->info)
        publish_info(pl, pv);
}

/* vm_view_declare's make (1.6): somebody asks for @vm's "profile". Made
 * only once there is a state to show, as when it was made at the first. */
static void make_view(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    profile_plugin *pl = ud;
    int i = mark_index(pl->host->vm_get_data(self, vm));
    profile_vm *pv;
    (void)name;
    if ((i >= 0 && !(i & 4)) || !(pv = profile_vm_state(pl, vm))) /* nothing shown yet */
        return;
    if (pv->shown && !pv->info) {
        pv->info = pl->host->view_new(self, vm, "profile", DDM_VIEW_RECORD, "Method profiling");
        if (pv->info)
            publish_info(pl, pv);
    }
    (void)profile_vm_settle(pl, pv); /* no view made: nothing kept */
}

/* vm_view_unmake's (1.6): @vm's "profile", made when asked, has not been
 * watched for the core's linger: it goes (the state it is made from
 * stays, so the next make shows the same). */
static void unmake_view(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    profile_plugin *pl = ud;
    profile_vm *pv = profile_vm_find(pl, vm);
    (void)self;
    (void)name;
    if (!pv || !pv->info)
        return;
    ddm_tick_list_del(&pl->ticks, &pv->tick);
    pl->host->view_free(pv->info);
    pv->info = NULL;
    (void)profile_vm_settle(pl, pv); /* back to MPRQ's answer, unless a trace left more */
}

static void publish_info(profile_plugin *pl, profile_vm *pv)
{
    const ddm_host *h = pl->host;
    const char *name = mode_name(pv->mode);

    h->view_begin(pv->info);
    h->view_field_str(pv->info, "mode", name);
    h->view_field_bool(pv->info, "ddmon_trace_running", pv->job != NULL);
    h->view_field_int(pv->info, "traces_saved", (int64_t)pv->traces);
    h->view_field_str(pv->info, "last_file", pv->last_path);
    h->view_commit(pv->info);
}

int profile_mprq_mode(const ddm_reply *reply)
{
    if (reply->status != DDM_REPLY_CHUNK || reply->type != PROFILE_CHUNK_MPRQ || reply->len < 1 ||
        reply->data[0] > PROFILE_MODE_SAMPLING)
        return PROFILE_MODE_UNKNOWN;
    return reply->data[0];
}

static void on_mprq(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    profile_plugin *pl = ud;
    profile_vm *pv;
    (void)self;
    if (reply->status == DDM_REPLY_VM_GONE || !(pv = profile_vm_state(pl, vm)))
        return;
    pv->mprq_pending = 0;
    if (reply->status == DDM_REPLY_CHUNK && reply->type == PROFILE_CHUNK_MPRQ)
        pv->mode = (int8_t)profile_mprq_mode(reply);
    profile_show_state(pl, vm, pv);
    (void)profile_vm_settle(pl, pv);
}

void profile_query(profile_plugin *pl, ddm_vm *vm)
{
    profile_vm *pv;
    if (!pl->host->chunk_enabled(pl->self, PROFILE_CHUNK_MPRQ) || !(pv = profile_vm_state(pl, vm)))
        return;
    if (!pv->mprq_pending &&
        pl->host->request(pl->self, vm, PROFILE_CHUNK_MPRQ, NULL, 0, 0, on_mprq, pl, NULL) == 0)
        pv->mprq_pending = 1;
    (void)profile_vm_settle(pl, pv); /* @pv may be gone now */
}

/* A VM whose "profile" view someone watches is asked again (not while a
 * trace of ours runs: the job asks itself). */
static int poll_visit(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    profile_plugin *pl = ud;
    profile_vm *pv = profile_vm_find(pl, vm);
    (void)self;
    if (!pv)
        return 0;
    if (!pv->info || pl->host->view_watchers(pv->info) <= 0) {
        ddm_tick_list_del(&pl->ticks, &pv->tick);
        return 0;
    }
    ddm_tick_list_add(&pl->ticks, &pv->tick);
    if (!pv->job)
        profile_query(pl, vm);
    return 0;
}

/* Every VM only when the watches changed (<ddmon/ticklist.h>); else only
 * those watched at their last visit: an idle tick touches none. */
static int poll_tick(ddm_plugin *self, void *ud)
{
    profile_plugin *pl = ud;
    if (ddm_tick_list_full_walk(&pl->ticks, pl->host, self)) {
        pl->host->foreach_vm(self, poll_visit, pl);
    } else {
        for (ddm_tick_node *n = pl->ticks.head, *next; n; n = next) {
            next = n->next; /* poll_visit may take this one off the list */
            poll_visit(self, DDM_TICK_OWNER(n, profile_vm, tick)->vm, pl);
        }
    }
    return ddm_tick_list_idle(&pl->ticks) ? DDM_TIMER_SLEEP : DDM_TIMER_KEEP;
}

static void on_vm(ddm_plugin *self, ddm_vm *vm, ddm_vm_event ev, void *ud)
{
    profile_plugin *pl = ud;
    (void)self;
    if (ev == DDM_VM_READY)
        profile_query(pl, vm);
    else if (ev == DDM_VM_GONE) {
        profile_vm *pv = profile_vm_find(pl, vm);
        if (pv)
            ddm_tick_list_del(&pl->ticks, &pv->tick); /* no tick visits it again */
        profile_job_vm_gone(pl, vm);
    }
}

/* The server stops (ABI 1.8): every trace of ours still running gets its
 * stop while the VMs' connections are open; an app must not go on tracing
 * (slowly) after ddmon went. */
static int stopping_visit(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    (void)self;
    profile_job_server_stopping(ud, vm);
    return 0;
}

static void on_stopping(ddm_plugin *self, void *ud)
{
    profile_plugin *pl = ud;
    pl->stopping = 1;
    pl->host->foreach_vm(self, stopping_visit, pl);
}

/* MPSE: the trace, in pieces */
static int on_mpse_begin(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, uint64_t declared,
                         void *ud)
{
    (void)self;
    (void)ci;
    return profile_job_stream_begin(ud, vm, declared);
}

static int on_mpse_data(ddm_plugin *self, ddm_vm *vm, const uint8_t *data, size_t len, void *ud)
{
    (void)self;
    return profile_job_stream_data(ud, vm, data, len);
}

static void on_mpse_end(ddm_plugin *self, ddm_vm *vm, int status, uint64_t received, void *ud)
{
    (void)self;
    profile_job_stream_end(ud, vm, status, received);
}

static const ddm_stream_ops mpse_ops = {on_mpse_begin, on_mpse_data, on_mpse_end};

/* Replies nobody waits for (a request that timed out, then answered). */
static int on_other(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                    size_t len, void *ud)
{
    profile_plugin *pl = ud;
    profile_vm *pv = profile_vm_state(pl, vm);
    char name[5] = {(char)(ci->type >> 24), (char)(ci->type >> 16), (char)(ci->type >> 8),
                    (char)ci->type, '\0'};
    (void)data;
    if (pv && !pv->stray_logged) { /* once per VM: a VM cannot flood the log */
        pv->stray_logged = 1;
        pl->host->log(self, DDM_LOG_INFO, "%s: %s (%zu bytes) that nothing waited for (logged once)",
                      pl->host->vm_info(vm)->key, name, len);
    }
    return DDM_OK;
}

static int profile_init(ddm_plugin *self, const ddm_host *host)
{
    static const uint32_t plain[] = {PROFILE_CHUNK_MPRS, PROFILE_CHUNK_MPRE, PROFILE_CHUNK_MPSS,
                                     PROFILE_CHUNK_SPSS, PROFILE_CHUNK_SPSE, PROFILE_CHUNK_MPRQ};
    profile_plugin *pl;
    int rc;

    if (!DDM_HOST_HAS(host, register_chunk_stream) || !DDM_HOST_HAS(host, cmd_cancelled)) {
        host->log(self, DDM_LOG_WARNING, "this ddmon cannot stream chunks (plugin ABI < 1.2)");
        return -ENOTSUP;
    }
    pl = calloc(1, sizeof *pl);
    if (!pl)
        return -ENOMEM;
    pl->self = self;
    pl->host = host;
    pl->timeout_ms = (unsigned)ddm_config_uint(host, self, "timeout_ms", 100,
                                               DDM_REQUEST_TIMEOUT_MAX_MS, PROFILE_DEFAULT_TIMEOUT_MS);
    host->set_data(self, pl, free_plugin);
    if ((rc = host->register_chunk_stream(self, PROFILE_CHUNK_MPSE, &mpse_ops, pl, NULL)) != 0)
        return rc;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if ((rc = host->register_chunk(self, plain[i], on_other, pl, NULL)) != 0)
            return rc;
    if ((rc = host->register_vm_listener(self, on_vm, pl, NULL)) != 0 ||
        (rc = host->register_command(self, "trace",
                                     "trace VM FILE --sampling[=INTERVAL_US] | --tracing "
                                     "[--seconds N] [--buffer SIZE] [--on-device[=PATH]] | "
                                     "trace VM --stop [FILE]",
                                     "method trace or sampling profile of a VM, saved as a .trace "
                                     "file; --stop stops one ddmon did not start (or lost)",
                                     profile_cmd_trace, pl, NULL)) != 0 ||
        (rc = host->register_command(self, "trace-summary", "trace-summary FILE [--top N] [--threads]",
                                     "top methods by inclusive and exclusive time, calls and threads "
                                     "of any .trace file",
                                     profile_cmd_summary, pl, NULL)) != 0)
        return rc;
    if (DDM_HOST_HAS(host, foreach_vm) && host->foreach_vm) {
        uint32_t poll = host->timer_add(self, PROFILE_POLL_MS, poll_tick, pl, NULL);
        if (!poll)
            return -ENOMEM;
        /* a first look at a view nobody watched gets a poll at once (ABI 1.5) */
        (void)ddm_tick_wake_on_watch(host, self, poll);
        ddm_tick_list_set_timer(&pl->ticks, host, self, poll); /* 1.7 */
    }
    /* ABI 1.8; an older core closes the VMs with their traces running */
    if (DDM_HOST_HAS(host, register_stopping) &&
        (rc = host->register_stopping(self, on_stopping, pl, NULL)) != 0)
        return rc;
    if (DDM_HOST_HAS(host, vm_view_declare)) {
        if ((rc = host->vm_view_declare(self, "profile", make_view, pl, NULL)) != 0)
            return rc;
        if (DDM_HOST_HAS(host, vm_view_unmake) &&
            (rc = host->vm_view_unmake(self, "profile", unmake_view)) != 0)
            return rc;
        pl->lazy_view = 1;
    }
    return 0;
}

DDM_PLUGIN_DEFINE("profile", "1.0", "Apache-2.0",
                  "method tracing and sampling (MPSS/SPSS streamed, MPRS on the device), .trace summaries",
                  profile_init, NULL);
