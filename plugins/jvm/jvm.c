/* SPDX-License-Identifier: Apache-2.0
 *
 * jvm plugin: plain JVMs (HotSpot, OpenJ9) seen through standard JDWP only.
 *  - It hears of plain JVMs through register_plain_vm_listener (ABI 1.2);
 *    DDM VMs are the threads and vminfo plugins' business.
 *  - View "threads" per plain JVM, the threads plugin's columns (id, tid,
 *    name, state, daemon, utime, stime, cpu; what JDWP cannot tell is null)
 *    then "group" and "frames": polled while someone watches it, every
 *    jvm.interval ms (1000, the threads plugin's default), one round at a
 *    time: VirtualMachine.AllThreads, then ThreadReference.Name, Status,
 *    ThreadGroup and FrameCount per thread (at most JVM_WINDOW in flight)
 *    and ThreadGroupReference.Name once per group. FrameCount answers only
 *    for suspended threads (THREAD_NOT_SUSPENDED otherwise: a null cell).
 *    Each answered round also sets headline "threads" (text, and the typed
 *    figure "count": threads_count in --json); none before the first one.
 *  - Record "vminfo" per plain JVM: VirtualMachine.Version, ClassPaths and
 *    CapabilitiesNew, asked once when the VM is known.
 *  - Nothing is ever suspended by polling, and nothing is sent while a
 *    debugger is attached (the core refuses it too: -EBUSY); polling goes
 *    on when the debugger leaves (ddmon reconnects to the JVM).
 *  - The poll tick visits only the plain VMs on pl->ticks, those watched
 *    at their last visit (every one when the watches changed), and sleeps
 *    (ABI 1.7, DDM_TIMER_SLEEP) when the list is empty: a JVM is polled
 *    only while its view is watched (a watched JVM with a debugger stays
 *    on the list, to poll again when it leaves), and a JVM becomes
 *    watched only by what moves the core's watch generation (a watch
 *    begins, a view is made while a watch exists), which wakes the tick
 *    for the full walk then due. A round runs on its replies, not on the
 *    tick; the vminfo record is asked once. A JVM put on the list outside
 *    the tick (poll_one_now) goes through ddm_tick_list_add, which wakes it.
 * Options: jvm.interval (ms; 0 = no polling).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ddmon/plugin.h>

#include "jvm.h"

static const ddm_column k_columns[] = {
    {"id", DDM_VAL_INT, NULL},    {"tid", DDM_VAL_INT, NULL},   {"name", DDM_VAL_STR, NULL},
    {"state", DDM_VAL_STR, NULL}, {"daemon", DDM_VAL_BOOL, NULL},
    {"utime", DDM_VAL_INT, "ms"}, {"stime", DDM_VAL_INT, "ms"}, {"cpu", DDM_VAL_DOUBLE, "%"},
    {"group", DDM_VAL_STR, NULL}, {"frames", DDM_VAL_INT, NULL},
};

enum {
    K_IDSIZES = 1, K_ALL_THREADS, K_NAME, K_STATUS, K_GROUP, K_FRAME_COUNT, K_GROUP_NAME,
    K_VERSION, K_CLASSPATHS, K_CAPS
};
#define TASKS_PER_THREAD 4u

typedef struct jvm_req {
    jvm_plugin *pl;
    unsigned gen;
    int kind;
    size_t idx;
} jvm_req;

double jvm_monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------ per-VM */

static void clear_round(jvm_vm *st)
{
    for (size_t i = 0; i < st->n_threads; i++)
        free(st->threads[i].name);
    free(st->threads);
    st->threads = NULL;
    st->n_threads = 0;
    st->next_task = 0;
    st->outstanding = 0;
    st->in_round = 0;
}

static void vm_state_free(void *p)
{
    jvm_vm *st = p;
    clear_round(st);
    for (size_t i = 0; i < st->n_info; i++)
        free(st->info_vals[i]);
    for (size_t i = 0; i < st->n_groups; i++)
        free(st->groups[i].name);
    free(st->groups);
    free(st);
}

jvm_vm *jvm_vm_state(jvm_plugin *pl, ddm_vm *vm)
{
    const ddm_host *h = pl->host;
    jvm_vm *st = h->vm_get_data(pl->self, vm);
    if (st)
        return st;
    st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->pl = pl;
    st->vm = vm;
    if (h->vm_set_data(pl->self, vm, st, vm_state_free) != 0)
        return NULL;
    st->view = h->view_new(pl->self, vm, "threads", DDM_VIEW_TABLE, "Threads (JDWP)");
    if (st->view)
        h->view_set_columns(st->view, k_columns, sizeof k_columns / sizeof k_columns[0]);
    st->info_view = h->view_new(pl->self, vm, "vminfo", DDM_VIEW_RECORD, "JVM (JDWP)");
    return st;
}

static int send(jvm_vm *st, uint8_t cmdset, uint8_t cmd, const void *data, size_t len, int kind,
                size_t idx);

int jvm_need_ids(jvm_vm *st)
{
    if (st->ids_known)
        return 1;
    if (!st->ids_asked && send(st, JVM_VM, JVM_VM_ID_SIZES, NULL, 0, K_IDSIZES, 0) == 0)
        st->ids_asked = 1;
    return 0;
}

/* ------------------------------------------------------------ publish */

static const char *group_name(jvm_vm *st, uint64_t id)
{
    for (size_t i = 0; i < st->n_groups; i++)
        if (st->groups[i].id == id)
            return st->groups[i].name;
    return NULL;
}

static void publish(jvm_vm *st)
{
    const ddm_host *h = st->pl->host;
    ddm_view *v = st->view;
    char count[24];
    if (!v)
        return;
    h->view_begin(v);
    for (size_t i = 0; i < st->n_threads; i++) {
        const jvm_thread *t = &st->threads[i];
        char state[48];
        h->view_row(v);
        h->view_int(v, (int64_t)t->id);
        h->view_str(v, NULL); /* tid: JDWP has no native thread id */
        h->view_str(v, t->name);
        if (t->has_status) {
            snprintf(state, sizeof state, "%s%s", jvm_status_name(t->status),
                     (t->suspend & 1) ? " (suspended)" : "");
            h->view_str(v, state);
        } else {
            h->view_str(v, NULL);
        }
        h->view_str(v, NULL); /* daemon */
        h->view_str(v, NULL); /* utime */
        h->view_str(v, NULL); /* stime */
        h->view_str(v, NULL); /* cpu */
        h->view_str(v, t->has_group ? group_name(st, t->group) : NULL);
        if (t->has_frames)
            h->view_int(v, t->frames);
        else
            h->view_str(v, NULL);
    }
    h->view_commit(v);
    snprintf(count, sizeof count, "%zu", st->n_threads);
    h->vm_headline(st->pl->self, st->vm, "threads", count);
    if (DDM_HOST_HAS(h, vm_headline_figures)) { /* the count, typed: threads_count (1.2) */
        ddm_headline_figure fig = {"count", DDM_VAL_INT, (int64_t)st->n_threads, 0};
        h->vm_headline_figures(st->pl->self, st->vm, "threads", &fig, 1);
        jvm_metrics_publish(st); /* ddmon_threads by state (1.3) */
    }
}

/* ------------------------------------------------------------ requests */

static void on_reply(ddm_plugin *self, ddm_vm *vm, const ddm_jdwp_reply *r, void *ud);

static int send(jvm_vm *st, uint8_t cmdset, uint8_t cmd, const void *data, size_t len, int kind,
                size_t idx)
{
    jvm_plugin *pl = st->pl;
    jvm_req *q = calloc(1, sizeof *q);
    int rc;
    if (!q)
        return -ENOMEM;
    q->pl = pl;
    q->gen = st->gen;
    q->kind = kind;
    q->idx = idx;
    rc = pl->host->jdwp_request(pl->self, st->vm, cmdset, cmd, data, len, JVM_REQ_TIMEOUT_MS,
                                on_reply, q);
    if (rc != 0) {
        free(q);
        pl->host->log(pl->self, DDM_LOG_DEBUG, "JDWP %u/%u not sent: error %d", cmdset, cmd, rc);
    }
    return rc;
}

static void end_round(jvm_vm *st, int ok)
{
    st->in_round = 0;
    st->gen++;
    if (ok)
        publish(st);
}

/* Send what the round still has to ask, up to JVM_WINDOW in flight. */
static void pump(jvm_vm *st)
{
    static const uint8_t cmds[TASKS_PER_THREAD] = {JVM_THREAD_NAME, JVM_THREAD_STATUS,
                                                   JVM_THREAD_GROUP, JVM_THREAD_FRAME_COUNT};
    static const int kinds[TASKS_PER_THREAD] = {K_NAME, K_STATUS, K_GROUP, K_FRAME_COUNT};
    uint8_t id[8];
    size_t total = st->n_threads * TASKS_PER_THREAD;

    while (st->in_round && st->outstanding < JVM_WINDOW && st->next_task < total) {
        size_t t = st->next_task++;
        size_t i = t / TASKS_PER_THREAD, k = t % TASKS_PER_THREAD;
        jvm_put_id(id, st->threads[i].id, st->ids.object);
        if (send(st, JVM_THREAD, cmds[k], id, st->ids.object, kinds[k], i) != 0) {
            end_round(st, 0);
            return;
        }
        st->outstanding++;
    }
    /* Then the names of groups not seen before (once per group and VM). */
    for (size_t g = 0; st->in_round && st->next_task >= total && g < st->n_groups &&
                       st->outstanding < JVM_WINDOW;
         g++) {
        if (st->groups[g].name)
            continue;
        st->groups[g].name = strdup(""); /* asked: do not ask twice */
        jvm_put_id(id, st->groups[g].id, st->ids.object);
        if (send(st, JVM_GROUP, JVM_GROUP_NAME, id, st->ids.object, K_GROUP_NAME, g) != 0) {
            end_round(st, 0);
            return;
        }
        st->outstanding++;
    }
    if (st->in_round && st->outstanding == 0 && st->next_task >= total)
        end_round(st, 1);
}

static void note_group(jvm_vm *st, uint64_t id)
{
    jvm_group *grown;
    if (group_name(st, id) || st->n_groups >= 256)
        return;
    for (size_t i = 0; i < st->n_groups; i++)
        if (st->groups[i].id == id)
            return;
    grown = realloc(st->groups, (st->n_groups + 1) * sizeof *grown);
    if (!grown)
        return;
    st->groups = grown;
    st->groups[st->n_groups].id = id;
    st->groups[st->n_groups].name = NULL;
    st->n_groups++;
}

static void info_field(jvm_vm *st, const char *key, const char *value)
{
    size_t i;
    char *copy;
    if (!value || !(copy = strdup(value)))
        return;
    for (i = 0; i < st->n_info; i++)
        if (strcmp(st->info_keys[i], key) == 0)
            break;
    if (i == st->n_info) {
        if (st->n_info >= sizeof st->info_keys / sizeof st->info_keys[0]) {
            free(copy);
            return;
        }
        st->info_keys[st->n_info++] = key;
    } else {
        free(st->info_vals[i]);
    }
    st->info_vals[i] = copy;
}

static void info_publish(jvm_vm *st)
{
    const ddm_host *h = st->pl->host;
    if (!st->info_view)
        return;
    h->view_begin(st->info_view);
    for (size_t i = 0; i < st->n_info; i++) {
        if (strcmp(st->info_keys[i], "pid") == 0) /* a number, as ART's vminfo and doc/json.md */
            h->view_field_int(st->info_view, "pid", strtoll(st->info_vals[i], NULL, 10));
        else
            h->view_field_str(st->info_view, st->info_keys[i], st->info_vals[i]);
    }
    h->view_commit(st->info_view);
}

static void on_info_reply(jvm_vm *st, int kind, const ddm_jdwp_reply *r)
{
    if (r->status != DDM_REPLY_CHUNK)
        return;
    if (kind == K_VERSION) {
        jvm_version v;
        char jdwp[32];
        if (jvm_parse_version(r->data, r->len, &v) == 0) {
            snprintf(jdwp, sizeof jdwp, "%d.%d", (int)v.major, (int)v.minor);
            info_field(st, "vm", v.vm_name);
            info_field(st, "vm version", v.vm_version);
            info_field(st, "jdwp", jdwp);
            info_field(st, "description", v.description);
            jvm_version_clear(&v);
        }
    } else if (kind == K_CLASSPATHS) {
        jvm_classpaths c;
        if (jvm_parse_classpaths(r->data, r->len, &c) == 0) {
            info_field(st, "base dir", c.base_dir);
            info_field(st, "classpath", c.classpath);
            info_field(st, "boot classpath", c.bootclasspath);
            jvm_classpaths_clear(&c);
        }
    } else if (kind == K_CAPS) {
        char *caps = jvm_parse_capabilities(r->data, r->len, 1);
        info_field(st, "capabilities", caps);
        free(caps);
    }
    info_publish(st);
}

static void poll_one_now(jvm_plugin *pl, ddm_vm *vm);

static void on_reply(ddm_plugin *self, ddm_vm *vm, const ddm_jdwp_reply *r, void *ud)
{
    jvm_req *q = ud;
    jvm_plugin *pl = q->pl;
    jvm_vm *st;
    int kind = q->kind;
    size_t idx = q->idx;
    unsigned gen = q->gen;
    free(q);
    if (r->status == DDM_REPLY_VM_GONE)
        return;
    st = pl->host->vm_get_data(self, vm);
    if (!st)
        return;
    switch (kind) {
    case K_IDSIZES:
        st->ids_asked = 0;
        if (r->status == DDM_REPLY_CHUNK && jvm_parse_idsizes(r->data, r->len, &st->ids) == 0) {
            st->ids_known = 1;
            /* the tick that asked for them wanted a round: start it now,
             * not a tick later (a first look waits for it) */
            poll_one_now(pl, vm);
        }
        return;
    case K_VERSION:
    case K_CLASSPATHS:
    case K_CAPS:
        on_info_reply(st, kind, r);
        return;
    default:
        break;
    }
    if (gen != st->gen || !st->in_round)
        return; /* a round that ended (debugger, error) */
    if (kind == K_ALL_THREADS) {
        uint64_t *ids = NULL;
        size_t n = 0;
        if (r->status != DDM_REPLY_CHUNK ||
            jvm_parse_all_threads(r->data, r->len, st->ids.object, JVM_MAX_THREADS, &ids, &n) != 0) {
            end_round(st, 0);
            return;
        }
        clear_round(st);
        st->in_round = 1;
        st->threads = n ? calloc(n, sizeof *st->threads) : NULL;
        if (n && !st->threads) {
            free(ids);
            end_round(st, 0);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            st->threads[i].id = ids[i];
            st->threads[i].frames = -1;
        }
        st->n_threads = n;
        free(ids);
        pump(st);
        return;
    }
    st->outstanding--;
    if (r->status == DDM_REPLY_CHUNK) {
        if (kind == K_GROUP_NAME) {
            if (idx < st->n_groups) {
                free(st->groups[idx].name);
                st->groups[idx].name = jvm_parse_string(r->data, r->len);
            }
        } else if (idx < st->n_threads) {
            jvm_thread *t = &st->threads[idx];
            if (kind == K_NAME) {
                free(t->name);
                t->name = jvm_parse_string(r->data, r->len);
            } else if (kind == K_STATUS) {
                t->has_status = jvm_parse_status(r->data, r->len, &t->status, &t->suspend) == 0;
            } else if (kind == K_GROUP) {
                t->has_group = jvm_parse_id(r->data, r->len, st->ids.object, &t->group) == 0;
                if (t->has_group)
                    note_group(st, t->group);
            } else if (kind == K_FRAME_COUNT) {
                t->has_frames = jvm_parse_int(r->data, r->len, &t->frames) == 0;
            }
        }
    }
    /* Errors (a thread that died meanwhile: INVALID_THREAD; FrameCount of a
     * running thread: THREAD_NOT_SUSPENDED) leave the cell null. */
    pump(st);
}

/* ------------------------------------------------------------- polling */

typedef struct poll_tick {
    jvm_plugin *pl;
    double now, period, slack;
} poll_tick;

static int poll_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    const poll_tick *t = ud;
    jvm_plugin *pl = t->pl;
    const ddm_host *h = pl->host;
    jvm_vm *st = h->vm_get_data(self, vm);
    if (!st || !st->view || h->view_watchers(st->view) <= 0) {
        if (st) {
            st->was_watched = 0;
            ddm_tick_list_del(&pl->ticks, &st->tick);
        }
        return 0;
    }
    ddm_tick_list_add(&pl->ticks, &st->tick);
    if (h->vm_info(vm)->debugger) /* the VM is the debugger's: ask nothing */
        return 0;
    if (st->in_round || st->stack_busy)
        return 0;
    if (st->was_watched && t->now - st->last_poll < t->period - t->slack)
        return 0;
    if (!jvm_need_ids(st))
        return 0;
    st->gen++;
    if (send(st, JVM_VM, JVM_VM_ALL_THREADS, NULL, 0, K_ALL_THREADS, 0) != 0)
        return 0;
    st->in_round = 1;
    st->was_watched = 1;
    st->last_poll = t->now;
    return 0;
}

/* A tick now: its time, the poll period and half a tick of slack. */
static void tick_prepare(jvm_plugin *pl, poll_tick *t)
{
    unsigned tick = pl->interval_ms < JVM_TICK_MS ? pl->interval_ms : JVM_TICK_MS;
    t->pl = pl;
    t->now = pl->now();
    t->period = pl->interval_ms / 1000.0;
    t->slack = tick / 2000.0;
}

void jvm_poll_once(jvm_plugin *pl)
{
    poll_tick t;
    tick_prepare(pl, &t);
    /* Every plain VM only when the watches changed (<ddmon/ticklist.h>);
     * else only those watched at their last visit: an idle tick touches none. */
    if (ddm_tick_list_full_walk(&pl->ticks, pl->host, pl->self)) {
        pl->host->foreach_plain_vm(pl->self, poll_vm, &t);
        return;
    }
    for (ddm_tick_node *n = pl->ticks.head, *next; n; n = next) {
        next = n->next; /* poll_vm may take this one off the list */
        poll_vm(pl->self, DDM_TICK_OWNER(n, jvm_vm, tick)->vm, &t);
    }
}

/* Poll @vm now if a tick would (watched, no round running, due). */
static void poll_one_now(jvm_plugin *pl, ddm_vm *vm)
{
    poll_tick t;
    tick_prepare(pl, &t);
    (void)poll_vm(pl->self, vm, &t);
}

static int poll_timer_cb(ddm_plugin *self, void *ud)
{
    jvm_plugin *pl = ud;
    (void)self;
    jvm_poll_once(pl);
    return ddm_tick_list_idle(&pl->ticks) ? DDM_TIMER_SLEEP : DDM_TIMER_KEEP;
}

/* ------------------------------------------------------------ VM events */

static void ask_info(jvm_vm *st)
{
    if (st->info_asked || st->pl->host->vm_info(st->vm)->debugger)
        return;
    st->info_asked = 1;
    send(st, JVM_VM, JVM_VM_VERSION, NULL, 0, K_VERSION, 0);
    send(st, JVM_VM, JVM_VM_CLASS_PATHS, NULL, 0, K_CLASSPATHS, 0);
    send(st, JVM_VM, JVM_VM_CAPABILITIES_NEW, NULL, 0, K_CAPS, 0);
}

static void on_vm(ddm_plugin *self, ddm_vm *vm, ddm_vm_event event, void *ud)
{
    jvm_plugin *pl = ud;
    const ddm_vm_info *info;
    jvm_vm *st;
    char pid[16];
    if (event == DDM_VM_GONE) { /* the core frees our state and views */
        st = pl->host->vm_get_data(self, vm);
        if (st)
            ddm_tick_list_del(&pl->ticks, &st->tick); /* no tick visits it again */
        return;
    }
    st = jvm_vm_state(pl, vm);
    if (!st)
        return;
    info = pl->host->vm_info(vm);
    if (info->debugger) { /* a round in flight ends; its late replies are ignored */
        if (st->in_round)
            end_round(st, 0);
        pl->host->log(self, DDM_LOG_MESSAGE, "%s: a debugger is attached: JDWP polling stops",
                      info->key ? info->key : "?");
        return;
    }
    if (event == DDM_VM_READY) {
        /* No table, headline nor figure yet: only a round that answered
         * publishes them, so a JVM nobody looked at never shows "threads: 0". */
        if (info->pid) {
            snprintf(pid, sizeof pid, "%u", (unsigned)info->pid);
            info_field(st, "pid", pid);
        }
        info_field(st, "main class", info->app_name);
        info_publish(st);
    }
    ask_info(st);
}

/* ---------------------------------------------------------- descriptor */

static int jvm_init(ddm_plugin *self, const ddm_host *host)
{
    jvm_plugin *pl;
    int rc;
    if (!DDM_HOST_HAS(host, jdwp_request))
        return -ENOTSUP;
    pl = calloc(1, sizeof *pl);
    if (!pl)
        return -ENOMEM;
    pl->self = self;
    pl->host = host;
    pl->now = jvm_monotonic_now;
    host->set_data(self, pl, free);
    pl->interval_ms = (unsigned)ddm_config_uint(host, self, "interval", 0, 3600000u,
                                                JVM_DEFAULT_INTERVAL_MS);
    if (pl->interval_ms && pl->interval_ms < JVM_MIN_INTERVAL_MS)
        pl->interval_ms = JVM_MIN_INTERVAL_MS;
    if ((rc = host->register_plain_vm_listener(self, on_vm, pl, NULL)) != 0 ||
        (rc = jvm_stack_register(pl)) != 0 || (rc = jvm_metrics_register(pl)) != 0)
        return rc;
    if (pl->interval_ms) {
        unsigned tick = pl->interval_ms < JVM_TICK_MS ? pl->interval_ms : JVM_TICK_MS;
        pl->poll_timer = host->timer_add(self, tick, poll_timer_cb, pl, NULL);
        if (!pl->poll_timer)
            return -ENOMEM;
        /* a first look at a view nobody watched gets a poll at once (ABI 1.5) */
        (void)ddm_tick_wake_on_watch(host, self, pl->poll_timer);
        ddm_tick_list_set_timer(&pl->ticks, host, self, pl->poll_timer); /* 1.7 */
    }
    return 0;
}

DDM_PLUGIN_DEFINE("jvm", "1.0", "Apache-2.0",
                  "plain JVMs (HotSpot, OpenJ9) over standard JDWP: threads, vminfo, stacks",
                  jvm_init, NULL);
