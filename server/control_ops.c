/* SPDX-License-Identifier: Apache-2.0
 *
 * Control server requests: what each op does (version, vms, plugins, views,
 * view, watch, command, commands, kill, scan, select), keyed by op in one
 * table; the delayed replies (a view nobody looked at, the VM list just
 * after the start, a watching snapshot's "settled") and the "interest"
 * that keeps a one-shot view watched for a while. Connections, queues and
 * dispatch are control.c's.
 */
#include <build-config.h>

#include "server/control-private.h"

#include <string.h>
#include <unistd.h>

#include "core/pluginhost/registry.h"
#include "core/relay/relay.h"
#include "core/views/jq_text.h"

/* A one-shot `ddmon view NAME` keeps that view watched for a while, so
 * producers that poll only while someone looks (threads) have data. */
#define INTEREST_SECONDS 30
#define MAX_INTERESTS 256
/* A view nobody watched (its content may be stale) has its "first look":
 * the plugins poll a view only while it is watched, so the watch or ask
 * that makes it watched wakes their poll ticks at once
 * (ddm_registry_wake_watch_timers: the timers that opted in with
 * ddm_host.timer_wake_on_watch run at the next loop iteration). Its answer
 * (a one-shot view, or the "settled" of a watching snapshot's version)
 * waits until those ticks ran and the requests they sent are answered,
 * timed out or never to be (ddm_registry_first_look_settled), then until
 * the server is settled (ddm_daemon_look_settled_since the request, or the
 * watch: discovery's first round, the VM list, the requests of every VM
 * whose session began before, DDM or plain); never later than
 * FIRST_LOOK_MS. A VM that left its handshake, HELO or the requests a look
 * found in flight unanswered that long is late: no look waits for it until
 * it answers again (ddm_registry_look_vm_settled), so one hung or hostile
 * VM holds up one look, not every `ddmon vms` or view after it. The
 * core's own views (owner "ddmon": the VM list, the headline figures) wake
 * no poll. */
#define FIRST_LOOK_MS DDM_FIRST_LOOK_MS
/* A plugin that does not poll when a watch begins (built for ABI 1.4 or
 * older, or whose timers none opted in: ddm_registry_polls_on_watch) asks
 * a VM what a watched view shows only at its next poll tick (at most
 * 250 ms): a first look at one of its views waits at least this long, the
 * fixed wait every first look had before ABI 1.5. */
#define FIRST_POLL_MS 300
/* Just after the server started (an autostarting `ddmon vms`), the VM list
 * is answered once discovery has had its first go: as soon as every
 * discovery module had its first round (the local scan offers every port
 * at start; adb has the device and pid lists) and no session is still
 * connecting or asking HELO (ddm_daemon_vm_list_complete), and never later
 * than STARTUP_MAX_MS after the start: the headline figures' first look
 * that follows (op_vms_doc) ends at that bound too (ddmon(1) says so). */
#define STARTUP_MAX_MS 3000
/* A delayed reply looks again after 0, 1, 2, 4 ... ms, the wait doubling up
 * to a cap: a few looks when the VMs answer within milliseconds. A first
 * look's looks cost O(the VMs its polls asked) until those are settled,
 * then one O(VMs) look at the whole server (first_look_ready): their wait
 * stops doubling at FIRST_LOOK_STEP_MAX_MS while the polls are not
 * settled, so the answer comes at most that late after them (at most ~150
 * cheap looks before FIRST_LOOK_MS, when a VM never answers), and at
 * STARTUP_STEP_MAX_MS once only the whole server is waited for. The VM
 * list's looks (ddm_daemon_vm_list_complete) stop at the first session
 * still connecting, so they are cheap until the last one, which walks
 * every VM: theirs stop doubling at STARTUP_STEP_MAX_MS, the old fixed
 * period, so a fresh server's `vms` comes no later than it did. */
#define FIRST_LOOK_STEP_MAX_MS 8
#define STARTUP_STEP_MAX_MS 20

/* ------------------------------------------------------------- helpers */

static JsonNode *view_json(ddm_view *v, gboolean blobs)
{
    return ddm_view_to_json(v, blobs);
}

/* The VM's key as views know it. */
static const char *vm_key(DdmVm *vm)
{
    return vm->info.key != NULL ? vm->info.key : vm->target->key;
}

/* "1234" or the key, for messages. (transfer full) */
static char *vm_label(DdmVm *vm)
{
    if (vm->info.pid != 0)
        return g_strdup_printf("%u", vm->info.pid);
    return g_strdup(vm_key(vm));
}

/* @names (a set) sorted and comma separated, "(none)" if empty. (transfer full) */
static char *names_joined(GHashTable *names)
{
    GList *sorted = g_list_sort(g_hash_table_get_keys(names), (GCompareFunc)strcmp);
    GString *s = g_string_new(NULL);
    for (GList *l = sorted; l != NULL; l = l->next) {
        if (s->len > 0)
            g_string_append(s, ", ");
        g_string_append(s, l->data);
    }
    g_list_free(sorted);
    if (s->len == 0)
        g_string_append(s, "(none)");
    return g_string_free(s, FALSE);
}

/* Names of the views of VM @key, comma separated: its declared views by
 * name, none made (ddm_views_names). (transfer full) */
static char *view_names_of(DdmControl *ctl, const char *key)
{
    g_autoptr(GHashTable) names = ddm_views_names(ddm_daemon_views(ctl->daemon), key);
    return names_joined(names);
}

/* Every view name there is, made or declared, none made. (transfer full) */
static char *all_view_names(DdmControl *ctl)
{
    g_autoptr(GHashTable) names = ddm_views_names(ddm_daemon_views(ctl->daemon), NULL);
    return names_joined(names);
}

/* Resolve a VM spec; on failure send ddmon's one message and return NULL. */
static DdmVm *resolve_vm_or_fail(Client *c, const char *spec)
{
    g_autofree char *error = NULL;
    DdmVm *vm = ddm_monitor_resolve_vm_or_error(ddm_daemon_monitor(c->ctl->daemon), spec, &error);
    if (vm == NULL)
        ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_NOT_FOUND, "%s", error));
    return vm;
}

/* ----------------------------------------------------------------- ops */

/* The version op's answer; @capped: a watching client's answer its cap
 * let go, which says "settled": false whatever a look would say now (a VM
 * waited for through the cap counts as late by then). */
static void op_version_answer(Client *c, gboolean capped)
{
    JsonBuilder *b = ddm_ctl_ok_begin();
    json_builder_set_member_name(b, "version");
    json_builder_add_string_value(b, PACKAGE_VERSION);
    json_builder_set_member_name(b, "abi");
    g_autofree char *abi = g_strdup_printf("%d.%d", DDM_CORE_ABI_MAJOR, DDM_CORE_ABI_MINOR);
    json_builder_add_string_value(b, abi);
    json_builder_set_member_name(b, "pid");
    json_builder_add_int_value(b, getpid());
    /* The server options it was started with (as the client normalizes
     * them), so a client given other ones can say they do not apply. */
    const DdmConfig *cfg = ddm_daemon_config(c->ctl->daemon);
    json_builder_set_member_name(b, "options");
    json_builder_begin_array(b);
    for (guint i = 0; cfg->server_args != NULL && i < cfg->server_args->len; i++)
        json_builder_add_string_value(b, cfg->server_args->pdata[i]);
    json_builder_end_array(b);
    /* The dashboard's URL: the client runs as our uid on our private
     * socket, so it may see the token (as `jupyter server list` does). */
    json_builder_set_member_name(b, "web_url");
    if (c->ctl->web_url != NULL)
        json_builder_add_string_value(b, c->ctl->web_url);
    else
        json_builder_add_null_value(b);
    /* Discovery has nothing more to say right now (ddm_daemon_look_settled_since
     * the watch began: a late VM, and a session begun after the watch, are
     * not waited for; review rF 2): a snapshot asks this after its watch,
     * and answers at once if TRUE. Only to a client that watches: the walk
     * over the VMs, and the FEAT fences it may send, are for snapshots,
     * not every client's hello. */
    if (c->watching) {
        json_builder_set_member_name(b, "settled");
        json_builder_add_boolean_value(
            b, !capped && ddm_daemon_look_settled_since(c->ctl->daemon, c->watch_started_us));
    }
    ddm_control_send(c, ddm_ctl_ok_end(b));
}

static void op_version(Client *c, const DdmCtlRequest *req)
{
    (void)req;
    op_version_answer(c, FALSE);
}

static void delay_reply(Client *c, const DdmCtlRequest *req);
static void op_vms_doc(Client *c, const DdmCtlRequest *req);
static void op_vms_doc_since(Client *c, const DdmCtlRequest *req, gint64 since_us);
static void vms_doc_now(Client *c);

/* TRUE while some client's first look is under way: polls a watch woke
 * have not run yet, or the requests they sent are not settled. O(the VMs
 * those polls asked). */
static gboolean first_look_under_way(DdmControl *ctl)
{
    DdmRegistry *reg = ddm_daemon_registry(ctl->daemon);
    return g_get_monotonic_time() < ctl->first_poll_until_us ||
           ddm_registry_watch_wakes_pending(reg) || !ddm_registry_first_look_settled(reg);
}

/* @v is looked at first and its owner does not poll when a watch begins:
 * no first look is done before FIRST_POLL_MS from now. */
static void first_poll_floor(DdmControl *ctl, ddm_view *v)
{
    const char *owner = ddm_view_owner(v);
    if (g_strcmp0(owner, "ddmon") == 0 ||
        ddm_registry_polls_on_watch(ddm_daemon_registry(ctl->daemon), owner))
        return;
    ctl->first_poll_until_us =
        MAX(ctl->first_poll_until_us, g_get_monotonic_time() + (gint64)FIRST_POLL_MS * 1000);
}

/* A watching client whose watch made views watched that nobody watched
 * has its version (its question "settled?") answered after their first
 * look (first_look_ready), not at once with a "no". */
static void op_version_or_wait(Client *c, const DdmCtlRequest *req)
{
    if (c->watching && c->first_look_us != 0)
        delay_reply(c, req);
    else
        op_version(c, req);
}

void ddm_control_set_web_url(DdmControl *ctl, const char *url)
{
    g_free(ctl->web_url);
    ctl->web_url = g_strdup(url);
}

static void op_core_view(Client *c, const char *name, gboolean blobs)
{
    if (strcmp(name, "vms") == 0)
        ddm_daemon_vm_list_fresh(c->ctl->daemon); /* its rebuild is coalesced */
    ddm_view *v = ddm_views_lookup(ddm_daemon_views(c->ctl->daemon), name, NULL);
    if (v == NULL) {
        ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_NOT_FOUND, "the server has no '%s' view",
                                              name));
        return;
    }
    JsonBuilder *b = ddm_ctl_ok_begin();
    json_builder_set_member_name(b, "view");
    json_builder_add_value(b, view_json(v, blobs));
    ddm_control_send(c, ddm_ctl_ok_end(b));
}

static void op_plugins(Client *c, const DdmCtlRequest *req)
{
    op_core_view(c, "plugins", FALSE);
}

/* A VM's "key", "pid" and "app" (null when it has none yet), as members of
 * the object @b is building. */
static void add_vm_ident(JsonBuilder *b, DdmVm *vm)
{
    json_builder_set_member_name(b, "key");
    json_builder_add_string_value(b, vm_key(vm));
    json_builder_set_member_name(b, "pid");
    json_builder_add_int_value(b, vm->info.pid);
    json_builder_set_member_name(b, "app");
    if (vm->info.app_name != NULL)
        json_builder_add_string_value(b, vm->info.app_name);
    else
        json_builder_add_null_value(b);
}

static void add_view_meta(JsonBuilder *b, ddm_view *v)
{
    static const char *const kinds[] = {"?", "table", "record", "blob"};
    ddm_view_kind k = ddm_view_kind_of(v);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, ddm_view_name(v));
    json_builder_set_member_name(b, "vm");
    if (ddm_view_vm_key(v) != NULL)
        json_builder_add_string_value(b, ddm_view_vm_key(v));
    else
        json_builder_add_null_value(b);
    const char *owner = ddm_view_owner(v), *title = ddm_view_title(v);
    json_builder_set_member_name(b, "owner");
    if (owner != NULL)
        json_builder_add_string_value(b, owner);
    else
        json_builder_add_null_value(b);
    json_builder_set_member_name(b, "title");
    if (title != NULL)
        json_builder_add_string_value(b, title);
    else
        json_builder_add_null_value(b);
    json_builder_set_member_name(b, "kind");
    json_builder_add_string_value(b, (guint)k < G_N_ELEMENTS(kinds) ? kinds[k] : "?");
    json_builder_set_member_name(b, "version");
    json_builder_add_int_value(b, (gint64)ddm_view_version(v));
    json_builder_end_object(b);
}

static void op_views(Client *c, const DdmCtlRequest *req)
{
    const char *key = NULL;
    if (req->vm != NULL) {
        DdmVm *vm = resolve_vm_or_fail(c, req->vm);
        if (vm == NULL)
            return;
        key = vm_key(vm);
    }
    /* --vm K: K's views, its declared ones made (no other VM's). No --vm:
     * every view made, as a list shows each one's title, kind and version */
    g_autoptr(GPtrArray) all = key != NULL ? ddm_views_list_vm(ddm_daemon_views(c->ctl->daemon), key)
                                           : ddm_views_list(ddm_daemon_views(c->ctl->daemon));
    JsonBuilder *b = ddm_ctl_ok_begin();
    json_builder_set_member_name(b, "views");
    json_builder_begin_array(b);
    for (guint i = 0; i < all->len; i++) {
        ddm_view *v = g_ptr_array_index(all, i);
        if (key != NULL && g_strcmp0(ddm_view_vm_key(v), key) != 0)
            continue;
        add_view_meta(b, v);
    }
    json_builder_end_array(b);
    /* The VMs, so a client can label keys. */
    json_builder_set_member_name(b, "vms");
    json_builder_begin_array(b);
    g_autoptr(GPtrArray) vms = ddm_monitor_list_vms(ddm_daemon_monitor(c->ctl->daemon));
    for (guint vi = 0; vi < vms->len; vi++) {
        DdmVm *vm = g_ptr_array_index(vms, vi);
        if (key != NULL && g_strcmp0(vm_key(vm), key) != 0)
            continue;
        json_builder_begin_object(b);
        add_vm_ident(b, vm);
        json_builder_set_member_name(b, "state");
        json_builder_add_string_value(b, ddm_vm_state_name(vm->state));
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    ddm_control_send(c, ddm_ctl_ok_end(b));
}

/* ------------------------------------------------------ one-shot views */

/* Keep views named @name of VM @key (NULL: of every VM) watched for
 * INTEREST_SECONDS more. TRUE if nobody watched them before (their content
 * may be stale: see op_view). No note for views that do not exist (made
 * or declared): a typo takes no place in the table. The VM list's note
 * is kept (never gives way to one-shot views when the table is full:
 * ddm_view_interest_note_kept), so `ddmon vms` always watches it. */
static gboolean note_interest(DdmControl *ctl, const char *name, const char *key)
{
    gboolean fresh = FALSE;
    gboolean vm_list = key == NULL && strcmp(name, "vms") == 0;
    if (!ddm_view_interest_has(ctl->interest, name, key)) {
        DdmViews *store = ddm_daemon_views(ctl->daemon);
        if (key != NULL) {
            ddm_view *v = ddm_views_lookup(store, name, key);
            if (v == NULL)
                return FALSE;
            fresh = ddm_view_watchers(v) == 0;
        } else {
            g_autoptr(GPtrArray) all = ddm_views_list_named(store, name);
            if (all->len == 0)
                return FALSE;
            fresh = TRUE;
            for (guint i = 0; i < all->len && fresh; i++)
                if (ddm_view_watchers(all->pdata[i]) > 0)
                    fresh = FALSE;
        }
    }
    if (vm_list)
        (void)ddm_view_interest_note_kept(ctl->interest, name, key);
    else
        (void)ddm_view_interest_note(ctl->interest, name, key);
    if (!ddm_view_interest_has(ctl->interest, name, key))
        g_debug("no interest noted in view '%s'", name); /* only with MAX_INTERESTS 0 */
    return fresh;
}

static void op_view_now(Client *c, const DdmCtlRequest *req);

/* TRUE once the VM list is worth answering (see STARTUP_MAX_MS). */
static gboolean startup_settled(DdmControl *ctl)
{
    gint64 ms = (g_get_monotonic_time() - ctl->started_us) / 1000;
    if (ms >= STARTUP_MAX_MS)
        return TRUE;
    return ddm_daemon_vm_list_complete(ctl->daemon);
}

/* TRUE once views nobody watched until @pc's request had their first look
 * (its cap, FIRST_LOOK_MS, is delay_over's): the poll ticks their watch
 * woke have run and the requests they sent are settled, both O(the VMs
 * those polls asked) (pc->polled then); only then the whole server
 * (ddm_daemon_look_settled, O(VMs)), which a warm server is at once. */
static gboolean first_look_ready(PendingCmd *pc)
{
    DdmControl *ctl = pc->delay_ctl;
    DdmRegistry *reg = ddm_daemon_registry(ctl->daemon);
    gint64 now = g_get_monotonic_time();
    if (now < ctl->first_poll_until_us) /* a plugin that polls at its own tick */
        return FALSE;
    if (!pc->polled && (ddm_registry_watch_wakes_pending(reg) ||
                        !ddm_registry_first_look_settled(reg)))
        return FALSE;
    pc->polled = TRUE;
    return ddm_daemon_look_settled_since(ctl->daemon, pc->delay_since_us);
}

/* TRUE if @pc waits for the VM list after the start (op_vms), FALSE if
 * for a first look (a view, a watching client's version, the headline
 * figures of a `vms` with "jq"). */
static gboolean waits_for_vm_list(const PendingCmd *pc)
{
    return pc->delayed_req.op == DDM_CTL_OP_VMS && !pc->doc_look;
}

/* The longest a delayed reply waits, from its request. */
static guint delay_cap_ms(const PendingCmd *pc)
{
    return waits_for_vm_list(pc) ? STARTUP_MAX_MS : FIRST_LOOK_MS;
}

/* The longest wait between two looks at a delayed reply: a first look's
 * polls are looked at often (each look is cheap), the whole server (each
 * look O(VMs)) as the VM list is. */
static guint delay_step_max_ms(const PendingCmd *pc)
{
    return waits_for_vm_list(pc) || pc->polled ? STARTUP_STEP_MAX_MS : FIRST_LOOK_STEP_MAX_MS;
}

/* TRUE when @pc is to be answered now: what it waits for is there, or
 * else its cap ran out, which is counted (ddm_control_n_delays_capped:
 * only answers that went without what they waited for, however late a
 * loaded machine looked). A first look's cap is asked first: a VM waited
 * for since that look began turns "late" (settled, as given up on) at the
 * same DDM_FIRST_LOOK_MS, and a check that comes at or past it (a timer
 * run late on a loaded machine) must read that as the cap, not as a look
 * that found everything answered. */
static gboolean delay_over(PendingCmd *pc)
{
    DdmControl *ctl = pc->delay_ctl;
    gint64 now = g_get_monotonic_time();
    gboolean first_look_capped = !waits_for_vm_list(pc) &&
                                 now - pc->delay_since_us >= (gint64)FIRST_LOOK_MS * 1000;
    if (!first_look_capped &&
        (waits_for_vm_list(pc) ? ddm_daemon_vm_list_complete(ctl->daemon) : first_look_ready(pc)))
        return TRUE;
    gboolean capped = waits_for_vm_list(pc)
                          ? now - ctl->started_us >= (gint64)STARTUP_MAX_MS * 1000
                          : first_look_capped || (pc->cap_at_us != 0 && now >= pc->cap_at_us);
    if (capped) {
        pc->capped = TRUE;
        ctl->n_delays_capped++;
        if (pc->cap_at_us != 0 && now >= pc->cap_at_us)
            g_debug("control: a delayed answer went out at the startup bound (%u ms after the "
                    "start)", (guint)STARTUP_MAX_MS);
        else
            g_debug("control: a delayed answer went out at its cap (%u ms)", delay_cap_ms(pc));
    }
    return capped;
}

/* TRUE while a first look is still waited for: a delayed reply other than
 * the VM list's, or polls a watch woke that have not run. Once none is,
 * the VMs the first look recorded (and its references to them) go
 * (ddm_registry_first_look_end), not at the next fresh watch. O(delayed
 * replies). */
static gboolean first_look_waited_for(DdmControl *ctl)
{
    if (ddm_registry_watch_wakes_pending(ddm_daemon_registry(ctl->daemon)))
        return TRUE;
    for (GList *l = ctl->delayed_replies; l != NULL; l = l->next)
        if (!waits_for_vm_list(l->data))
            return TRUE;
    return FALSE;
}

/* A delayed answer (a view nobody looked at, the VM list just after the
 * start, a snapshot's "settled" after a watch): each look that finds it
 * not due yet looks again after a wait that doubles up to
 * delay_step_max_ms, never past the reply's cap (delay_cap_ms). */
static void delayed_reply_fire(DdmTimer *t, gpointer ud)
{
    PendingCmd *pc = ud;
    Client *c = pc->client;
    gboolean live = c != NULL && !c->dead;
    (void)t;
    if (live && !delay_over(pc)) {
        gint64 now = g_get_monotonic_time();
        gint64 left_ms = delay_cap_ms(pc) - (now - pc->delay_since_us) / 1000;
        if (pc->cap_at_us != 0)
            left_ms = MIN(left_ms, (pc->cap_at_us - now) / 1000);
        ddm_timer_arm(&pc->delay_timer, (guint)CLAMP(left_ms, 0, (gint64)pc->delay_step_ms));
        pc->delay_step_ms = MIN(MAX(pc->delay_step_ms * 2, 1u), delay_step_max_ms(pc));
        return;
    }
    if (live) {
        c->cmd = NULL;
        switch (pc->delayed_req.op) {
        case DDM_CTL_OP_VMS:
            if (pc->doc_look && pc->delayed_req.jq)
                vms_doc_now(c);
            else if (pc->doc_look)
                op_core_view(c, "vms", FALSE);
            else /* may wait again, for its look, within the startup bound */
                op_vms_doc_since(c, &pc->delayed_req, pc->delay_since_us);
            break;
        case DDM_CTL_OP_VERSION:
            c->first_look_us = 0; /* this first look is over */
            op_version_answer(c, pc->capped);
            break;
        default:
            op_view_now(c, &pc->delayed_req);
            break;
        }
        ddm_control_resume(c);
    }
    DdmControl *ctl = pc->delay_ctl;
    ctl->delayed_replies = g_list_remove(ctl->delayed_replies, pc);
    if (!waits_for_vm_list(pc) && !first_look_waited_for(ctl))
        ddm_registry_first_look_end(ddm_daemon_registry(ctl->daemon));
    ddm_ctl_request_clear(&pc->delayed_req);
    g_free(pc);
}

/* Answer @req later (delayed_reply_fire; its first look at the next loop
 * iteration, after the poll ticks a watch woke); the client waits as for
 * a command. */
static void delay_reply(Client *c, const DdmCtlRequest *req)
{
    PendingCmd *pc = g_new0(PendingCmd, 1);
    pc->client = c;
    pc->delay_ctl = c->ctl;
    pc->delay_since_us = req->op == DDM_CTL_OP_VERSION && c->first_look_us != 0
                             ? c->first_look_us
                             : g_get_monotonic_time();
    pc->delayed_req.op = req->op;
    pc->delayed_req.name = g_strdup(req->name);
    pc->delayed_req.vm = g_strdup(req->vm);
    pc->delayed_req.blobs = req->blobs;
    pc->delayed_req.jq = req->jq;
    c->cmd = pc;
    pc->delay_step_ms = 1;
    ddm_timer_init(&pc->delay_timer, delayed_reply_fire, pc);
    ddm_timer_arm(&pc->delay_timer, 0);
    c->ctl->delayed_replies = g_list_prepend(c->ctl->delayed_replies, pc);
}

/* Which views are named @name: none, only the core's own (owner "ddmon",
 * which no plugin polls), or some plugin's too. */
typedef enum { VIEWS_NONE, VIEWS_CORE_ONLY, VIEWS_OF_PLUGINS } ViewsNamed;

static ViewsNamed views_named(DdmControl *ctl, const char *name)
{
    g_autoptr(GPtrArray) all = ddm_views_list_named(ddm_daemon_views(ctl->daemon), name);
    ViewsNamed found = VIEWS_NONE;
    for (guint i = 0; i < all->len; i++) {
        if (g_strcmp0(ddm_view_owner(all->pdata[i]), "ddmon") != 0) {
            found = VIEWS_OF_PLUGINS;
            first_poll_floor(ctl, all->pdata[i]);
        } else if (found == VIEWS_NONE) {
            found = VIEWS_CORE_ONLY;
        }
    }
    return found;
}

static void op_vms(Client *c, const DdmCtlRequest *req)
{
    if (!startup_settled(c->ctl)) /* the server has just started: wait for discovery's first results */
        delay_reply(c, req);
    else
        op_vms_doc(c, req);
}

/* `vms`, plain or with "jq", once the VM list is there: a look at the VM
 * list. Its interest keeps the "vms" view watched INTEREST_SECONDS (a
 * plugin that puts figures in the list refreshes them while it is:
 * threads' counts, ddm_host.vm_list_watchers), the timers that poll when
 * a watch begins run now, and the answer waits for that first look
 * (first_look_ready), so the list shows figures of this moment. With
 * "jq" the answer is the document `ddmon --json vms` prints, written from
 * the views and the VMs' headline figures (jq_text.h): one request, and no
 * JSON tree on either side; the figures are read from the VMs' tables,
 * so the answer makes no VM's "headline" view (ddm_registry_headline_records;
 * issue 16). */
static void op_vms_doc_since(Client *c, const DdmCtlRequest *req, gint64 since_us)
{
    DdmControl *ctl = c->ctl;
    gboolean look = FALSE;
    (void)note_interest(ctl, "vms", NULL);
    if (ddm_registry_wake_watch_timers(ddm_daemon_registry(ctl->daemon)) > 0)
        look = TRUE;
    if (look) {
        delay_reply(c, req);
        c->cmd->doc_look = TRUE;
        /* Asked in the server's first STARTUP_MAX_MS: answered by then. */
        if (since_us - ctl->started_us < (gint64)STARTUP_MAX_MS * 1000)
            c->cmd->cap_at_us = ctl->started_us + (gint64)STARTUP_MAX_MS * 1000;
        return;
    }
    if (req->jq)
        vms_doc_now(c);
    else
        op_core_view(c, "vms", FALSE);
}

static void op_vms_doc(Client *c, const DdmCtlRequest *req)
{
    op_vms_doc_since(c, req, g_get_monotonic_time());
}

static void vms_doc_now(Client *c)
{
    ddm_daemon_vm_list_fresh(c->ctl->daemon); /* its rebuild is coalesced */
    ddm_view *v = ddm_views_lookup(ddm_daemon_views(c->ctl->daemon), "vms", NULL);
    if (v == NULL || ddm_view_kind_of(v) != DDM_VIEW_TABLE) {
        ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_NOT_FOUND, "the server has no 'vms' view"));
        return;
    }
    g_autoptr(GPtrArray) made_here = NULL; /* freed after the answer */
    g_autoptr(GPtrArray) direct = NULL;    /* VMs whose figures are written from their tables */
    g_autoptr(GPtrArray) heads =
        ddm_registry_headline_records(ddm_daemon_registry(c->ctl->daemon), &made_here, &direct);
    static const char head[] = "{\"ok\":true,\"doc\":";
    GString *line = g_string_sized_new(256 + 384 * (gsize)heads->len);
    g_string_append(line, head);
    ddm_jq_table_with_figures_more_text(line, v, heads, ddm_registry_headline_write_figures,
                                        direct);
    g_string_append(line, "}\n");
    ddm_control_send_text(c, line->str, line->len);
    g_string_free(line, TRUE);
}

static void op_view(Client *c, const DdmCtlRequest *req)
{
    const char *key = NULL;
    if (req->vm != NULL) { /* only that VM's view is looked at */
        g_autofree char *error = NULL;
        DdmVm *vm = ddm_monitor_resolve_vm_or_error(ddm_daemon_monitor(c->ctl->daemon), req->vm,
                                                    &error);
        if (vm == NULL) {
            op_view_now(c, req); /* its message */
            return;
        }
        key = vm_key(vm);
    }
    if (!note_interest(c->ctl, req->name, key)) {
        op_view_now(c, req);
        return;
    }
    /* Nobody looked at it until now: its producers poll at once, and the
     * answer waits for that first look (first_look_ready). */
    switch (views_named(c->ctl, req->name)) {
    case VIEWS_NONE:
        op_view_now(c, req); /* its "unknown view" message */
        return;
    case VIEWS_OF_PLUGINS:
        ddm_registry_wake_watch_timers(ddm_daemon_registry(c->ctl->daemon));
        break;
    case VIEWS_CORE_ONLY:
        break;
    }
    delay_reply(c, req);
}

static void op_view_now(Client *c, const DdmCtlRequest *req)
{
    DdmControl *ctl = c->ctl;
    if (req->vm != NULL) {
        DdmVm *vm = resolve_vm_or_fail(c, req->vm);
        if (vm == NULL)
            return;
        ddm_view *v = ddm_views_lookup(ddm_daemon_views(ctl->daemon), req->name, vm_key(vm));
        if (v == NULL && ddm_views_lookup(ddm_daemon_views(ctl->daemon), req->name, NULL) != NULL) {
            /* A global view (vms, devices...) is no VM's: --vm is the mistake. */
            ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_USAGE,
                                                  "'%s' is a global view, not one VM's: drop --vm",
                                                  req->name));
            return;
        }
        if (v == NULL) {
            g_autofree char *names = view_names_of(ctl, vm_key(vm));
            g_autofree char *label = vm_label(vm);
            ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_NOT_FOUND,
                                                  "unknown view '%s'; views of VM %s: %s",
                                                  req->name, label, names));
            return;
        }
        JsonBuilder *b = ddm_ctl_ok_begin();
        json_builder_set_member_name(b, "views");
        json_builder_begin_array(b);
        json_builder_add_value(b, view_json(v, req->blobs));
        json_builder_end_array(b);
        ddm_control_send(c, ddm_ctl_ok_end(b));
        return;
    }
    if (strcmp(req->name, "vms") == 0)
        ddm_daemon_vm_list_fresh(ctl->daemon); /* its rebuild is coalesced */
    /* Only the views of that name, in ddm_views_list's order: sorting every
     * view of the server per request was 14% of its CPU at 10,000 VMs. */
    g_autoptr(GPtrArray) named = ddm_views_list_named(ddm_daemon_views(ctl->daemon), req->name);
    JsonBuilder *b = ddm_ctl_ok_begin();
    json_builder_set_member_name(b, "views");
    json_builder_begin_array(b);
    guint found = 0;
    for (guint i = 0; i < named->len; i++) {
        json_builder_add_value(b, view_json(g_ptr_array_index(named, i), req->blobs));
        found++;
    }
    json_builder_end_array(b);
    JsonNode *ok = ddm_ctl_ok_end(b);
    if (found == 0) {
        json_node_unref(ok);
        g_autofree char *names = all_view_names(ctl);
        ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_NOT_FOUND,
                                              "unknown view '%s'; known views: %s", req->name,
                                              names));
        return;
    }
    ddm_control_send(c, ok);
}

/* --------------------------------------------------------------- watch */

gboolean ddm_control_watch_matches(const Client *c, ddm_view *v)
{
    if (c->watch_name != NULL && strcmp(c->watch_name, ddm_view_name(v)) != 0)
        return FALSE;
    if (c->watch_vm != NULL && g_strcmp0(c->watch_vm, ddm_view_vm_key(v)) != 0)
        return FALSE;
    return TRUE;
}

static JsonNode *event_new(const char *event, JsonNode *view /* taken */)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "event");
    json_builder_add_string_value(b, event);
    json_builder_set_member_name(b, "view");
    json_builder_add_value(b, view);
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    g_object_unref(b);
    return root;
}

static void op_watch(Client *c, const DdmCtlRequest *req)
{
    if (c->watching) {
        ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_USAGE, "already watching"));
        return;
    }
    char *key = NULL;
    if (req->vm != NULL) {
        DdmVm *vm = resolve_vm_or_fail(c, req->vm);
        if (vm == NULL)
            return;
        key = g_strdup(vm_key(vm));
    }
    c->watch_name = g_strdup(req->name);
    c->watch_vm = key;
    c->watch_blobs = req->blobs;
    /* Views nobody watched get their first look: the plugins' poll ticks run
     * now (first_look_ready), and the client's next version waits for it. */
    /* The views made so far (not every declared view of every VM:
     * ddm_views_watch makes those the watch matches, and those count as
     * fresh below). */
    g_autoptr(GPtrArray) before = ddm_views_list_made(ddm_daemon_views(c->ctl->daemon));
    gboolean fresh = FALSE;
    guint matched_before = 0;
    for (guint i = 0; i < before->len; i++) {
        if (!ddm_control_watch_matches(c, before->pdata[i]))
            continue;
        matched_before++;
        if (ddm_view_watchers(before->pdata[i]) != 0)
            continue;
        fresh = TRUE;
        first_poll_floor(c->ctl, before->pdata[i]);
    }
    c->watch_id = ddm_views_watch(ddm_daemon_views(c->ctl->daemon), c->watch_name, c->watch_vm);
    c->watching = TRUE;
    c->watch_started_us = g_get_monotonic_time();
    g_autoptr(GPtrArray) all = ddm_views_list_made(ddm_daemon_views(c->ctl->daemon));
    guint matched = 0;
    for (guint i = 0; i < all->len; i++) {
        if (!ddm_control_watch_matches(c, all->pdata[i]))
            continue;
        matched++;
        if (ddm_view_watchers(all->pdata[i]) == 1)
            first_poll_floor(c->ctl, all->pdata[i]); /* made by this watch, or fresh */
    }
    if (matched > matched_before)
        fresh = TRUE; /* views the watch made: nobody watched them */
    if (fresh) {
        c->first_look_us = g_get_monotonic_time();
        ddm_registry_wake_watch_timers(ddm_daemon_registry(c->ctl->daemon));
    } else if (first_look_under_way(c->ctl)) {
        /* Another client's watch (in this loop pass or an earlier one) woke
         * polls that have not run or not been answered yet: this client's
         * views were fresh a moment ago too, so its "settled?" waits for
         * the same first look, not answered "yes" before any poll ran. */
        c->first_look_us = g_get_monotonic_time();
    }
    JsonBuilder *b = ddm_ctl_ok_begin();
    json_builder_set_member_name(b, "watching");
    json_builder_add_boolean_value(b, TRUE);
    ddm_control_send(c, ddm_ctl_ok_end(b));
    /* What exists now, as "added" events, so the client starts complete. */
    for (guint i = 0; i < all->len && !c->dead; i++) {
        ddm_view *v = g_ptr_array_index(all, i);
        if (ddm_control_watch_matches(c, v))
            ddm_control_send(c, event_new("added", view_json(v, c->watch_blobs)));
    }
}

/* The event of @change of @v: a removed view is described by its metadata. */
JsonNode *ddm_control_change_event(ddm_view *v, DdmViewChange change, gboolean blobs)
{
    const char *event = change == DDM_VIEW_ADDED     ? "added"
                        : change == DDM_VIEW_CHANGED ? "changed"
                                                     : "removed";
    JsonNode *view;
    if (change == DDM_VIEW_REMOVED) {
        JsonBuilder *b = json_builder_new();
        add_view_meta(b, v);
        view = json_builder_get_root(b);
        g_object_unref(b);
    } else {
        view = view_json(v, blobs);
    }
    return event_new(event, view);
}

/* ------------------------------------------------------------ commands */

static void command_done(ddm_cmd_status status, const char *message, ddm_view *result,
                         gpointer ud)
{
    PendingCmd *pc = ud;
    Client *c = pc->client;
    if (c != NULL && !c->dead) {
        /* Success: {"ok":true,"status":0,"message":...,"result":...};
         * failure: one shape, {"ok":false,"status":N,"error":"..."}, the
         * message once and no empty result; a result the plugin made
         * anyway (hprof of two VMs, one dump written) is kept. A VM that
         * no name matched has the core's message already
         * (ddm_host.cmd_find_vm). */
        JsonBuilder *b = json_builder_new();
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "ok");
        json_builder_add_boolean_value(b, status == DDM_CMD_OK);
        json_builder_set_member_name(b, "status");
        json_builder_add_int_value(b, status);
        if (status != DDM_CMD_OK) {
            json_builder_set_member_name(b, "error");
            json_builder_add_string_value(b, message != NULL && *message ? message : "command failed");
            if (result != NULL) {
                json_builder_set_member_name(b, "result");
                json_builder_add_value(b, view_json(result, pc->blobs));
            }
        } else {
            json_builder_set_member_name(b, "message");
            if (message != NULL)
                json_builder_add_string_value(b, message);
            else
                json_builder_add_null_value(b);
            json_builder_set_member_name(b, "result");
            if (result != NULL)
                json_builder_add_value(b, view_json(result, pc->blobs));
            else
                json_builder_add_null_value(b);
        }
        json_builder_end_object(b);
        JsonNode *root = json_builder_get_root(b);
        g_object_unref(b);
        c->cmd = NULL;
        ddm_control_send(c, root);
        ddm_control_resume(c);
    }
    g_free(pc);
}

/* How far the command got: one line {"progress":{"done":N,"total":N,"unit":"B"}}
 * before its answer (at most a few a second: the registry limits them). */
static void command_progress(guint64 done, guint64 total, const char *unit, gpointer ud)
{
    PendingCmd *pc = ud;
    Client *c = pc->client;
    if (c == NULL || c->dead)
        return;
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "progress");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "done");
    json_builder_add_int_value(b, (gint64)MIN(done, (guint64)G_MAXINT64));
    json_builder_set_member_name(b, "total");
    json_builder_add_int_value(b, (gint64)MIN(total, (guint64)G_MAXINT64));
    json_builder_set_member_name(b, "unit");
    json_builder_add_string_value(b, unit != NULL ? unit : "");
    json_builder_end_object(b);
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    g_object_unref(b);
    ddm_control_send(c, root);
}

static void op_command(Client *c, const DdmCtlRequest *req)
{
    PendingCmd *pc = g_new0(PendingCmd, 1);
    pc->client = c;
    pc->blobs = req->blobs;
    int argc = (int)g_strv_length(req->argv);
    c->cmd = pc;
    if (!ddm_registry_run_command_progress(ddm_daemon_registry(c->ctl->daemon), argc,
                                           (const char *const *)req->argv, req->cwd,
                                           req->out_dir, command_done, command_progress, pc)) {
        c->cmd = NULL;
        g_free(pc);
        /* "unknown_command": the client stops a server it started for
         * this command only (cli/cmd-plugin.c). */
        JsonNode *e = ddm_ctl_error_new(DDM_EXIT_USAGE, "unknown command '%s' (try 'ddmon help')",
                                        req->argv[0]);
        json_object_set_string_member(json_node_get_object(e), "unknown_command", req->argv[0]);
        ddm_control_send(c, e);
    }
}

static void op_commands(Client *c, const DdmCtlRequest *req)
{
    g_autoptr(GArray) cmds = ddm_registry_commands(ddm_daemon_registry(c->ctl->daemon));
    JsonBuilder *b = ddm_ctl_ok_begin();
    json_builder_set_member_name(b, "commands");
    json_builder_begin_array(b);
    for (guint i = 0; cmds != NULL && i < cmds->len; i++) {
        const DdmCommandInfo *ci = &g_array_index(cmds, DdmCommandInfo, i);
        json_builder_begin_object(b);
        const char *members[] = {"name", ci->name, "usage", ci->usage,
                                 "summary", ci->summary, "plugin", ci->plugin};
        for (gsize m = 0; m < G_N_ELEMENTS(members); m += 2) {
            json_builder_set_member_name(b, members[m]);
            if (members[m + 1] != NULL)
                json_builder_add_string_value(b, members[m + 1]);
            else
                json_builder_add_null_value(b);
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    ddm_control_send(c, ddm_ctl_ok_end(b));
}

/* -------------------------------------------------------------- server */

static void stop_fire(DdmTimer *t, gpointer data)
{
    DdmControl *ctl = data;
    (void)t;
    if (ctl->stop != NULL)
        ctl->stop(ctl->stop_ud);
}

static void op_kill(Client *c, const DdmCtlRequest *req)
{
    g_message("control: stop requested by a client");
    ddm_control_send(c, ddm_ctl_ok_end(ddm_ctl_ok_begin()));
    if (!ddm_timer_armed(&c->ctl->stop_timer)) {
        ddm_timer_init(&c->ctl->stop_timer, stop_fire, c->ctl);
        ddm_timer_arm(&c->ctl->stop_timer, 0);
    }
}

static void op_scan(Client *c, const DdmCtlRequest *req)
{
    g_autoptr(GError) error = NULL;
    if (!ddm_daemon_set_scan(c->ctl->daemon, req->spec, &error)) {
        ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_USAGE, "%s", error->message));
        return;
    }
    ddm_control_send(c, ddm_ctl_ok_end(ddm_ctl_ok_begin()));
}

/* Run-time selection of the VM the selected debugger port reaches. */
static void op_select(Client *c, const DdmCtlRequest *req)
{
    DdmRelay *relay = ddm_daemon_relay(c->ctl->daemon);
    if (relay == NULL) {
        ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_FAILED,
                                              "the debugger relay is not running; "
                                              "nothing to select"));
        return;
    }
    if (req->spec != NULL && req->spec[0] != '\0') {
        /* A name that several VMs of one app share follows that app (the
         * newest VM); one that names different apps ("mail": com.a.mail,
         * com.b.mail) is refused, as by every other command. */
        DdmMonitor *mon = ddm_daemon_monitor(c->ctl->daemon);
        g_autoptr(GPtrArray) m = ddm_monitor_resolve_vm_all(mon, req->spec);
        gboolean apart = FALSE;
        for (guint i = 1; i < m->len && !apart; i++) {
            DdmVm *a = g_ptr_array_index(m, 0), *o = g_ptr_array_index(m, i);
            apart = g_strcmp0(a->info.app_name ? a->info.app_name : a->info.package_name,
                              o->info.app_name ? o->info.app_name : o->info.package_name) != 0;
        }
        if (apart) {
            g_autofree char *why = NULL;
            (void)ddm_monitor_resolve_vm_or_error(mon, req->spec, &why);
            ddm_control_send(c, ddm_ctl_error_new(DDM_EXIT_NOT_FOUND, "%s", why));
            return;
        }
    }
    if (req->spec != NULL) {
        ddm_relay_select(relay, req->spec[0] != '\0' ? req->spec : NULL);
        g_message("control: selection set to '%s'", req->spec);
    }
    const char *sel = ddm_relay_selection(relay);
    DdmVm *selected = NULL;
    g_autoptr(GPtrArray) vms = ddm_monitor_list_vms(ddm_daemon_monitor(c->ctl->daemon));
    for (guint i = 0; i < vms->len; i++)
        if (ddm_relay_is_selected(relay, g_ptr_array_index(vms, i)))
            selected = g_ptr_array_index(vms, i);
    JsonBuilder *b = ddm_ctl_ok_begin();
    json_builder_set_member_name(b, "selection");
    if (sel != NULL && *sel != '\0')
        json_builder_add_string_value(b, sel);
    else
        json_builder_add_null_value(b);
    json_builder_set_member_name(b, "port");
    json_builder_add_int_value(b, ddm_daemon_config(c->ctl->daemon)->selected_port);
    json_builder_set_member_name(b, "vm");
    if (selected != NULL) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "key");
        json_builder_add_string_value(b, vm_key(selected));
        json_builder_set_member_name(b, "pid");
        json_builder_add_int_value(b, selected->info.pid);
        if (!selected->info.pid && ddm_vm_pid_note(selected)) {
            json_builder_set_member_name(b, "pid_note");
            json_builder_add_string_value(b, ddm_vm_pid_note(selected));
        }
        json_builder_set_member_name(b, "app");
        if (selected->info.app_name != NULL)
            json_builder_add_string_value(b, selected->info.app_name);
        else
            json_builder_add_null_value(b);
        json_builder_end_object(b);
    } else {
        json_builder_add_null_value(b);
    }
    /* A debugger attached through the selected-VM port stays with the VM it
     * reached: after the selection moved, say which (the CLI tells the user
     * to reattach). */
    g_autoptr(GPtrArray) elsewhere = ddm_relay_selected_port_elsewhere(relay);
    json_builder_set_member_name(b, "attached_elsewhere");
    json_builder_begin_array(b);
    for (guint i = 0; i < elsewhere->len; i++) {
        DdmVm *vm = g_ptr_array_index(elsewhere, i);
        json_builder_begin_object(b);
        add_vm_ident(b, vm);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    ddm_control_send(c, ddm_ctl_ok_end(b));
}

/* --------------------------------------------------------------- table */

static const DdmControlOpFn ops[] = {
    [DDM_CTL_OP_VERSION] = op_version_or_wait,
    [DDM_CTL_OP_VMS] = op_vms,
    [DDM_CTL_OP_PLUGINS] = op_plugins,
    [DDM_CTL_OP_VIEWS] = op_views,
    [DDM_CTL_OP_VIEW] = op_view,
    [DDM_CTL_OP_WATCH] = op_watch,
    [DDM_CTL_OP_COMMAND] = op_command,
    [DDM_CTL_OP_COMMANDS] = op_commands,
    [DDM_CTL_OP_KILL] = op_kill,
    [DDM_CTL_OP_SCAN] = op_scan,
    [DDM_CTL_OP_SELECT] = op_select,
};

DdmControlOpFn ddm_control_op_find(DdmCtlOp op)
{
    return (guint)op < G_N_ELEMENTS(ops) ? ops[op] : NULL;
}

/* ------------------------------------------------------------ lifetime */

void ddm_control_ops_init(DdmControl *ctl)
{
    ctl->started_us = g_get_monotonic_time();
    ctl->interest = ddm_view_interest_new(ddm_daemon_views(ctl->daemon), INTEREST_SECONDS,
                                          MAX_INTERESTS);
}

void ddm_control_ops_free(DdmControl *ctl)
{
    g_clear_pointer(&ctl->web_url, g_free);
    ddm_view_interest_free(ctl->interest);
    for (GList *l = ctl->delayed_replies; l != NULL; l = l->next) {
        PendingCmd *pc = l->data;
        ddm_timer_cancel(&pc->delay_timer);
        if (pc->client != NULL)
            pc->client->cmd = NULL;
        ddm_ctl_request_clear(&pc->delayed_req);
        g_free(pc);
    }
    g_list_free(ctl->delayed_replies);
}
