/* SPDX-License-Identifier: Apache-2.0
 *
 * alloc plugin: the DDMS Allocation Tracker.
 *  - On DDM_VM_READY it asks REAQ (is tracking on?), as ddmlib does for
 *    every new client; the answer is the VM's headline "alloc" (on/off),
 *    kept current by the start/stop commands (alloc-cmd.c).
 *  - It owns REAQ and REAL (replies nobody waits for, and events).
 *  - Views per VM: "alloc" (class, size, thread, site = top frame), and
 *    "alloc.by-class", "alloc.by-site", "alloc.by-thread" (count, bytes,
 *    sorted by bytes). They are filled from REAL, which is asked only
 *    while one of them is watched (every alloc.interval ms, at most one in
 *    flight per VM) or by `ddmon alloc VM show`: REAL makes the VM copy
 *    its whole record table.
 *  - When the server stops (ABI 1.8 stopping hook), a VM whose tracking
 *    REAQ last said on gets REAE(0) before its connection closes: nobody
 *    would read the records, and the app would keep paying for them.
 *  - The poll tick (ALLOC_TICK_MS) visits only the VMs on pl->ticks, those
 *    watched at their last visit (every VM when the watches changed), and
 *    sleeps (ABI 1.7, DDM_TIMER_SLEEP) when the list is empty: a VM is
 *    polled only while a view of it is watched, and a VM becomes watched
 *    only by what moves the core's watch generation (a watch begins, a
 *    view is made while a watch exists), which wakes the tick for the
 *    full walk then due. The views a `show` or a listing made are taken
 *    back by the core (vm_view_unmake), not by the tick; a REAL in flight
 *    ends with its reply. Nothing else is left for an idle tick.
 * Options: interval  REAL poll period in ms while a view is watched (2000;
 *          0 = only on show).
 * Bad chunks are logged and rejected with -EBADMSG; they never change a view.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ddmon/bytes.h>
#include <ddmon/plugin.h>

#include "alloc.h"
#include "../common/lazyviews.h"

static const ddm_column k_list_cols[] = {
    {"class", DDM_VAL_STR, NULL},
    {"size", DDM_VAL_INT, "B"},
    {"thread", DDM_VAL_INT, NULL},
    {"site", DDM_VAL_STR, NULL},
};
static const ddm_column k_class_cols[] = {
    {"class", DDM_VAL_STR, NULL}, {"count", DDM_VAL_INT, NULL}, {"bytes", DDM_VAL_INT, "B"}};
static const ddm_column k_site_cols[] = {
    {"site", DDM_VAL_STR, NULL}, {"count", DDM_VAL_INT, NULL}, {"bytes", DDM_VAL_INT, "B"}};
static const ddm_column k_thread_cols[] = {
    {"thread", DDM_VAL_INT, NULL}, {"count", DDM_VAL_INT, NULL}, {"bytes", DDM_VAL_INT, "B"}};

double alloc_monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *alloc_vm_label(alloc_plugin *pl, ddm_vm *vm, char *buf, size_t n)
{
    const ddm_vm_info *in = pl->host->vm_info(vm);
    if (in && in->key)
        snprintf(buf, n, "%s", in->key);
    else
        snprintf(buf, n, "pid %u", in ? (unsigned)in->pid : 0u);
    return buf;
}

/* ------------------------------------------------------------- views */

static int set_cols(const ddm_host *h, ddm_view *v, alloc_by by)
{
    switch (by) {
    case ALLOC_BY_CLASS: return h->view_set_columns(v, k_class_cols, 3);
    case ALLOC_BY_SITE: return h->view_set_columns(v, k_site_cols, 3);
    case ALLOC_BY_THREAD: return h->view_set_columns(v, k_thread_cols, 3);
    default: return h->view_set_columns(v, k_list_cols, sizeof k_list_cols / sizeof k_list_cols[0]);
    }
}

int alloc_fill_view(const ddm_host *h, ddm_view *v, const alloc_rows *rows, alloc_by by, size_t top,
                    int set_columns)
{
    size_t i, n;
    if (set_columns)
        set_cols(h, v, by);
    h->view_begin(v);
    if (by == ALLOC_BY_NONE) {
        n = top && top < rows->n ? top : rows->n;
        for (i = 0; i < n; i++) {
            const alloc_row *r = &rows->r[i];
            h->view_row(v);
            h->view_str(v, r->cls);
            h->view_int(v, r->size);
            h->view_int(v, r->tid);
            h->view_str(v, r->site);
        }
    } else {
        alloc_group *g;
        long ng = alloc_group_rows(rows, by, &g);
        if (ng < 0) {
            h->view_commit(v);
            return (int)ng;
        }
        n = top && top < (size_t)ng ? top : (size_t)ng;
        for (i = 0; i < n; i++) {
            h->view_row(v);
            if (by == ALLOC_BY_THREAD)
                h->view_int(v, g[i].tid);
            else
                h->view_str(v, g[i].key);
            h->view_int(v, (int64_t)g[i].count);
            h->view_int(v, (int64_t)g[i].bytes);
        }
        free(g);
    }
    h->view_commit(v);
    return 0;
}

/* ----------------------------------------------------------- per-VM */

/* What a VM that holds nothing but REAQ's answer has as its data: NULL
 * ("off", the usual idle VM: the core keeps no entry for it), or the
 * address of one of these markers (never freed, never written):
 * k_marks[logged][enabled + 1], where @logged says a failed poll was
 * logged for the VM, so that it stays logged once per VM however often
 * the state is made again (review rP 7). NULL is "off, not logged". */
static char k_marks[2][3];
static size_t states_alive;

size_t alloc_vm_states_alive(void)
{
    return states_alive;
}

static void vm_state_free(void *p)
{
    free(p);
    states_alive--;
}

/* @d's place in k_marks (logged * 3 + enabled + 1), or -1 if it is none
 * (NULL or a state). */
static int marker_index(const void *d)
{
    for (int i = 0; i < 6; i++)
        if (d == &k_marks[i / 3][i % 3])
            return i;
    return -1;
}

static int is_marker(const void *d)
{
    return marker_index(d) >= 0;
}

/* REAQ's answer as a VM's data pointer says it (no state; NULL: off). */
static int marker_enabled(const void *d)
{
    int i = marker_index(d);
    return i < 0 ? 0 : i % 3 - 1;
}

/* Whether a failed poll was logged, as the data pointer says it. */
static int marker_logged(const void *d)
{
    return marker_index(d) >= 3;
}

static void *marker_of(int enabled, int logged)
{
    int e = enabled > 0 ? 1 : enabled < 0 ? -1 : 0;
    return e == 0 && !logged ? NULL : &k_marks[logged ? 1 : 0][e + 1];
}

alloc_vm *alloc_vm_find(alloc_plugin *pl, ddm_vm *vm)
{
    void *d = pl->host->vm_get_data(pl->self, vm);
    return is_marker(d) ? NULL : d;
}

int alloc_vm_settle(alloc_vm *av)
{
    alloc_plugin *pl = av->pl;
    if (!pl->views_on_demand || av->list || av->by_class || av->by_site || av->by_thread ||
        av->tick.on || av->real_in_flight)
        return 0;
    /* replaces @av (freed by the host) with REAQ's answer */
    (void)pl->host->vm_set_data(pl->self, av->vm, marker_of(av->enabled, av->fail_logged), NULL);
    return 1;
}

static ddm_view *new_view(alloc_plugin *pl, ddm_vm *vm, const char *name, const char *title,
                          alloc_by by)
{
    ddm_view *v = pl->host->view_new(pl->self, vm, name, DDM_VIEW_TABLE, title);
    if (v)
        set_cols(pl->host, v, by);
    else
        pl->host->log(pl->self, DDM_LOG_WARNING, "cannot create the %s view (name taken?)", name);
    return v;
}

/* The VM's four views (REAL enabled), those not made already (after an
 * unmake, the ones taken back). */
static void alloc_views_ensure(alloc_vm *av)
{
    alloc_plugin *pl = av->pl;
    ddm_vm *vm = av->vm;

    if (av->views_made)
        return;
    av->views_made = 1;
    if (pl->host->chunk_enabled(pl->self, ALLOC_CHUNK_REAL)) {
        if (!av->list)
            av->list = new_view(pl, vm, "alloc", "Allocations", ALLOC_BY_NONE);
        if (!av->by_class)
            av->by_class = new_view(pl, vm, "alloc.by-class", "Allocations by class", ALLOC_BY_CLASS);
        if (!av->by_site)
            av->by_site = new_view(pl, vm, "alloc.by-site", "Allocations by site", ALLOC_BY_SITE);
        if (!av->by_thread)
            av->by_thread = new_view(pl, vm, "alloc.by-thread", "Allocations by thread",
                                     ALLOC_BY_THREAD);
    }
}

/* A VM's views, in one order: their names here, their pointers in unmake_view. */
static const char *const view_names[] = { "alloc", "alloc.by-class", "alloc.by-site",
                                          "alloc.by-thread" };

/* vm_view_unmake's (1.6): view @name of @vm has not been watched for the
 * core's linger: it goes, and its rows with it: the plugin keeps no copy
 * of a REAL (a VM's table may hold tens of thousands of allocations), so
 * the next make shows an empty table until the next REAL, which a watch
 * asks for at once (the poll tick wakes on a watch, ABI 1.5). */
static void unmake_view(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    alloc_plugin *pl = ud;
    alloc_vm *av = alloc_vm_find(pl, vm);
    (void)self;
    if (!av)
        return;
    ddm_view **const slots[] = { &av->list, &av->by_class, &av->by_site, &av->by_thread };
    _Static_assert(LAZY_VIEWS_N(slots) == LAZY_VIEWS_N(view_names), "one slot a view name");
    if (lazy_views_free(pl->host, lazy_views_slot(view_names, slots, LAZY_VIEWS_N(slots), name)))
        av->views_made = 0; /* the next ensure makes it again */
    (void)alloc_vm_settle(av); /* the last view gone: back to REAQ's answer */
}

/* vm_view_declare's make (1.6): somebody asks for one of @vm's views. */
static void make_views(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    alloc_vm *av = alloc_vm_state(ud, vm);
    (void)self;
    (void)name;
    if (av)
        alloc_views_ensure(av); /* all four, as at the VM's first state before */
}

/* Declare the views alloc_views_ensure makes (1.6), so an idle VM nobody
 * looks at holds none; on an older core, nothing (made with the state). */
static int alloc_views_declare(alloc_plugin *pl)
{
    int rc;

    if (!pl->host->chunk_enabled(pl->self, ALLOC_CHUNK_REAL)) {
        pl->views_on_demand = 1; /* none at all (review rP 6) */
        return 0;
    }
    rc = lazy_views_declare(pl->host, pl->self, view_names, LAZY_VIEWS_N(view_names), make_views,
                            unmake_view, pl);
    if (rc < 0)
        return rc;
    pl->lazy_views = rc;
    pl->views_on_demand = rc;
    return 0;
}

alloc_vm *alloc_vm_state(alloc_plugin *pl, ddm_vm *vm)
{
    const ddm_host *h = pl->host;
    void *d = h->vm_get_data(pl->self, vm);
    alloc_vm *av;
    if (d && !is_marker(d))
        return d;
    av = calloc(1, sizeof *av);
    if (!av)
        return NULL;
    av->pl = pl;
    av->vm = vm;
    /* no data: REAQ said off; before READY (a make then) it is soon asked */
    av->enabled = (int8_t)marker_enabled(d);
    av->fail_logged = marker_logged(d) ? 1 : 0;
    states_alive++;
    if (h->vm_set_data(pl->self, vm, av, vm_state_free) != 0)
        return NULL; /* the host freed it */
    if (!pl->views_on_demand)
        alloc_views_ensure(av); /* else when asked for (the make), or never */
    return av;
}

void alloc_set_enabled(alloc_plugin *pl, ddm_vm *vm, int enabled)
{
    alloc_vm *av = alloc_vm_find(pl, vm);
    if (av)
        av->enabled = (int8_t)(enabled < 0 ? -1 : enabled > 0);
    else
        (void)pl->host->vm_set_data(
            pl->self, vm,
            marker_of(enabled, marker_logged(pl->host->vm_get_data(pl->self, vm))), NULL);
    pl->host->vm_headline(pl->self, vm, "alloc", enabled < 0 ? NULL : enabled ? "on" : "off");
}

int alloc_parse_reaq(const uint8_t *data, size_t len)
{
    if (len < 1)
        return -1;
    return data[0] != 0;
}

int alloc_handle_real(alloc_vm *av, const uint8_t *data, size_t len, int make_views,
                      alloc_rows *rows_out, char *why, size_t whylen)
{
    alloc_plugin *pl = av->pl;
    const ddm_host *h = pl->host;
    alloc_table t;
    alloc_rows rows;
    char label[128];
    int rc = alloc_parse_real(data, len, &t, why, whylen);

    if (rc == -ENOMEM)
        snprintf(why, whylen, "out of memory");
    if (rc != 0) {
        h->log(pl->self, DDM_LOG_WARNING, "VM %s sent a bad REAL (%zu bytes): %s",
               alloc_vm_label(pl, av->vm, label, sizeof label), len, why);
        return rc;
    }
    rc = alloc_rows_build(&t, &rows);
    alloc_real_clear(&t);
    if (rc != 0) {
        snprintf(why, whylen, "out of memory");
        return rc;
    }
    /* Made on demand (1.6), only the views that exist are filled: made
     * here, the missing siblings of one watched view would come back at
     * every REAL and be taken back a linger later, for ever. A command's
     * REAL (@make_views) makes them (review rU3 2): with alloc.interval=0
     * nothing else asks, and the plugin keeps no copy for a later look;
     * they are taken back after the linger like a look's. */
    if (!pl->lazy_views || make_views)
        alloc_views_ensure(av);
    if (av->list)
        alloc_fill_view(h, av->list, &rows, ALLOC_BY_NONE, 0, 0);
    if (av->by_class)
        alloc_fill_view(h, av->by_class, &rows, ALLOC_BY_CLASS, 0, 0);
    if (av->by_site)
        alloc_fill_view(h, av->by_site, &rows, ALLOC_BY_SITE, 0, 0);
    if (av->by_thread)
        alloc_fill_view(h, av->by_thread, &rows, ALLOC_BY_THREAD, 0, 0);
    if (rows_out)
        *rows_out = rows;
    else
        alloc_rows_clear(&rows);
    return 0;
}

/* ------------------------------------------------------------ chunks */

static int on_reaq(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    int on = alloc_parse_reaq(data, len);
    (void)ci;
    if (on < 0) {
        ((alloc_plugin *)ud)->host->log(self, DDM_LOG_WARNING, "empty REAQ; ignored");
        return -EBADMSG;
    }
    alloc_set_enabled(ud, vm, on);
    return DDM_OK;
}

static int on_real(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    alloc_vm *av = alloc_vm_state(ud, vm);
    char why[256];
    int rc;
    (void)self;
    (void)ci;
    if (!av)
        return -ENOMEM;
    rc = alloc_handle_real(av, data, len, 0, NULL, why, sizeof why);
    (void)alloc_vm_settle(av); /* no view to fill: nothing kept */
    return rc;
}

/* ---------------------------------------------------------- VM events */

static void reaq_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    alloc_plugin *pl = ud;
    int on;
    if (reply->status == DDM_REPLY_VM_GONE)
        return;
    if (reply->status == DDM_REPLY_CHUNK && reply->type == ALLOC_CHUNK_REAQ &&
        (on = alloc_parse_reaq(reply->data, reply->len)) >= 0) {
        alloc_set_enabled(pl, vm, on);
        return;
    }
    pl->host->log(self, DDM_LOG_INFO, "REAQ: no allocation tracking state (reply status %d)",
                  (int)reply->status);
}

static void on_vm(ddm_plugin *self, ddm_vm *vm, ddm_vm_event event, void *ud)
{
    alloc_plugin *pl = ud;
    alloc_vm *av;
    int rc;
    if (event == DDM_VM_GONE) { /* the core frees our state and views */
        if ((av = alloc_vm_find(pl, vm)) != NULL)
            ddm_tick_list_del(&pl->ticks, &av->tick); /* no tick visits it again */
        return;
    }
    if (event != DDM_VM_READY)
        return;
    /* REAQ's answer is not known yet: a marker, or the state a make just
     * made; on a core before 1.6 the state, with its views */
    if ((av = alloc_vm_find(pl, vm)) != NULL)
        av->enabled = -1;
    else if (!pl->views_on_demand
                 ? !alloc_vm_state(pl, vm)
                 : pl->host->vm_set_data(
                       self, vm, marker_of(-1, marker_logged(pl->host->vm_get_data(self, vm))),
                       NULL) != 0)
        return;
    if (!pl->host->chunk_enabled(self, ALLOC_CHUNK_REAQ))
        return;
    rc = pl->host->request(self, vm, ALLOC_CHUNK_REAQ, NULL, 0, ALLOC_REAQ_TIMEOUT_MS, reaq_reply,
                           pl, NULL);
    if (rc != 0)
        pl->host->log(self, DDM_LOG_INFO, "REAQ not sent: error %d", rc);
}

/* --------------------------------------------------------------- poll */

static void real_poll_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    alloc_plugin *pl = ud;
    alloc_vm *av;
    char why[256], label[128];
    if (reply->status == DDM_REPLY_VM_GONE)
        return;
    if (!(av = alloc_vm_find(pl, vm)))
        return;
    av->real_in_flight = 0;
    if (reply->status == DDM_REPLY_CHUNK && reply->type == ALLOC_CHUNK_REAL) {
        (void)alloc_handle_real(av, reply->data, reply->len, 0, NULL, why, sizeof why);
    } else {
        pl->host->log(self, av->fail_logged ? DDM_LOG_DEBUG : DDM_LOG_INFO,
                      "VM %s: no allocations from REAL (reply status %d%s%s)",
                      alloc_vm_label(pl, vm, label, sizeof label), (int)reply->status,
                      reply->fail_msg ? ": " : "", reply->fail_msg ? reply->fail_msg : "");
        av->fail_logged = 1;
    }
    (void)alloc_vm_settle(av); /* its views went while the REAL was out */
}

static int watched(const alloc_vm *av)
{
    const ddm_host *h = av->pl->host;
    ddm_view *const v[] = {av->list, av->by_class, av->by_site, av->by_thread};
    size_t i;
    for (i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i] && h->view_watchers(v[i]) > 0)
            return 1;
    return 0;
}

typedef struct poll_tick {
    alloc_plugin *pl;
    double now, period, slack;
} poll_tick;

static int poll_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    const poll_tick *t = ud;
    alloc_plugin *pl = t->pl;
    alloc_vm *av = alloc_vm_find(pl, vm);
    int rc;
    if (!av)
        return 0;
    if (!watched(av)) {
        av->was_watched = 0;
        ddm_tick_list_del(&pl->ticks, &av->tick);
        (void)alloc_vm_settle(av);
        return 0;
    }
    ddm_tick_list_add(&pl->ticks, &av->tick);
    if (av->real_in_flight || (av->was_watched && t->now - av->last_poll < t->period - t->slack))
        return 0;
    rc = pl->host->request(self, vm, ALLOC_CHUNK_REAL, NULL, 0, 0, real_poll_reply, pl, NULL);
    if (rc == 0) {
        av->real_in_flight = 1;
        av->was_watched = 1;
        av->last_poll = t->now;
    } else {
        pl->host->log(self, DDM_LOG_DEBUG, "REAL not sent: error %d", rc);
    }
    return 0;
}

void alloc_poll_once(alloc_plugin *pl)
{
    poll_tick t;
    if (!pl->interval_ms || !pl->host->chunk_enabled(pl->self, ALLOC_CHUNK_REAL))
        return;
    t.pl = pl;
    t.now = pl->now();
    t.period = pl->interval_ms / 1000.0;
    t.slack = ALLOC_TICK_MS / 2000.0;
    /* Every VM only when the watches changed (<ddmon/ticklist.h>); else
     * only those watched at their last visit: an idle tick touches none. */
    if (ddm_tick_list_full_walk(&pl->ticks, pl->host, pl->self)) {
        pl->host->foreach_vm(pl->self, poll_vm, &t);
        return;
    }
    for (ddm_tick_node *n = pl->ticks.head, *next; n; n = next) {
        next = n->next; /* poll_vm may take this one off the list */
        poll_vm(pl->self, DDM_TICK_OWNER(n, alloc_vm, tick)->vm, &t);
    }
}

static int poll_timer_cb(ddm_plugin *self, void *ud)
{
    alloc_plugin *pl = ud;
    (void)self;
    alloc_poll_once(pl);
    return ddm_tick_list_idle(&pl->ticks) ? DDM_TIMER_SLEEP : DDM_TIMER_KEEP;
}

/* ----------------------------------------------------- server stopping */

/* The server stops (ABI 1.8): a VM whose tracking REAQ last said on gets
 * REAE(0), fire and forget, before its connection closes. ddmon is the
 * VM's one DDM client while connected: once it goes, nobody reads the
 * records, and the app would go on recording every allocation's stack. */
static int stopping_visit(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    alloc_plugin *pl = ud;
    void *d = pl->host->vm_get_data(self, vm);
    const alloc_vm *av = d && !is_marker(d) ? d : NULL;
    uint8_t off = 0;
    char label[128];
    int rc;
    if ((av ? av->enabled : marker_enabled(d)) != 1 || !pl->host->chunk_enabled(self, ALLOC_CHUNK_REAE))
        return 0;
    rc = pl->host->request(self, vm, ALLOC_CHUNK_REAE, &off, 1, 0, NULL, NULL, NULL);
    pl->host->log(self, rc == 0 ? DDM_LOG_MESSAGE : DDM_LOG_WARNING,
                  "VM %s: ddmon is stopping: allocation tracking %s", alloc_vm_label(pl, vm, label,
                  sizeof label), rc == 0 ? "turned off (REAE 0 sent)" : "left on (REAE 0 not sent)");
    return 0;
}

static void on_stopping(ddm_plugin *self, void *ud)
{
    alloc_plugin *pl = ud;
    pl->host->foreach_vm(self, stopping_visit, pl);
}

/* --------------------------------------------------------- descriptor */

static int alloc_init(ddm_plugin *self, const ddm_host *host)
{
    alloc_plugin *pl = calloc(1, sizeof *pl);
    int rc;
    if (!pl)
        return -ENOMEM;
    pl->self = self;
    pl->host = host;
    pl->now = alloc_monotonic_now;
    host->set_data(self, pl, free);
    pl->interval_ms = (unsigned)ddm_config_uint(host, self, "interval", 0, 3600000u,
                                                ALLOC_DEFAULT_INTERVAL_MS);
    if (pl->interval_ms && pl->interval_ms < ALLOC_MIN_INTERVAL_MS)
        pl->interval_ms = ALLOC_MIN_INTERVAL_MS;
    if ((rc = host->register_chunk(self, ALLOC_CHUNK_REAQ, on_reaq, pl, NULL)) != 0 ||
        (rc = host->register_chunk(self, ALLOC_CHUNK_REAL, on_real, pl, NULL)) != 0 ||
        (rc = host->register_vm_listener(self, on_vm, pl, NULL)) != 0 ||
        (rc = alloc_commands_register(pl)) != 0 || (rc = alloc_views_declare(pl)) != 0)
        return rc;
    /* ABI 1.8; an older core closes the VMs with tracking left on */
    if (DDM_HOST_HAS(host, register_stopping) &&
        (rc = host->register_stopping(self, on_stopping, pl, NULL)) != 0)
        return rc;
    if (pl->interval_ms) {
        pl->poll_timer = host->timer_add(self, ALLOC_TICK_MS, poll_timer_cb, pl, NULL);
        if (!pl->poll_timer)
            return -ENOMEM;
        /* a first look at a view nobody watched gets a poll at once (ABI 1.5) */
        (void)ddm_tick_wake_on_watch(host, self, pl->poll_timer);
        ddm_tick_list_set_timer(&pl->ticks, host, self, pl->poll_timer); /* 1.7 */
    }
    return 0;
}

DDM_PLUGIN_DEFINE("alloc", "1.0", "Apache-2.0",
                  "allocation tracker (REAE/REAQ/REAL): recent allocations by class, site, thread",
                  alloc_init, NULL);
