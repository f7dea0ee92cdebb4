/* SPDX-License-Identifier: Apache-2.0
 *
 * <ddmon/testkit.h>: the plugin test kit (libddmon-plugin-test). A complete,
 * in-memory `ddm_host` for unit tests of a plugin: no ddmon, no sockets, no
 * glib, no main loop, no real time. The test drives the host by hand (VMs
 * come and go, chunks arrive, requests are answered, timers fire, commands
 * run) and inspects what the plugin did (views, headlines, requests, log).
 * Failures are reported through cmocka (fail_msg), so tests are cmocka
 * programs. The ddmon tree runs one set of contract scenarios against this
 * kit and against the real core (tests/unit/pluginhost/contract.c), so the
 * two behave alike where a plugin can tell.
 *
 * Out of tree (pkg-config module ddmon-plugin-test-1: the SDK, cmocka and
 * this library; see sdk/examples/hello/Makefile, target check):
 *
 *     cc $(pkg-config --cflags ddmon-plugin-test-1) -o test-x test-x.c x.c \
 *        $(pkg-config --libs ddmon-plugin-test-1)
 *
 * compiles the plugin's own sources into the test program; then
 *
 *     extern const ddm_plugin_desc ddm_plugin_descriptor;  // from x.c
 *     fake_host *fh = fake_host_new();
 *     fake_host_set_config(fh, "x.interval", "500");      // optional
 *     assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
 *     ddm_vm *vm = fake_host_add_vm(fh, &(ddm_vm_info){ .pid = 42, .app_name = "app", .ddm = 1 });
 *     fake_host_vm_event(fh, vm, DDM_VM_READY);   // listeners run; requests allowed
 *     fake_host_deliver(fh, vm, DDM_CHUNK('T','H','C','R'), DDM_ORIGIN_EVENT, bytes, n);
 *     ddm_view *v = fake_view_find(fh, vm, "threads");
 *     assert_int_equal(fake_view_n_rows(v), 1);
 *     assert_string_equal(fake_view_cell_str(v, 0, "name"), "main");
 *     fake_host_free(fh);   // VMs go (GONE), fini, everything freed, checks run
 *
 * In the ddmon tree the plugin tests link sdk/testkit/libddmon-plugin-test.la
 * (DDM_FAKEHOST_* in tests/local.mk). Set FAKE_HOST_VERBOSE=1 to see the
 * plugin's log on stderr.
 *
 * Older cores: fake_host_set_abi_minor(fh, 0) before fake_host_load makes the
 * table look like a 1.0 core's (size and abi_minor; newer members NULL), to
 * test a plugin built with DDM_ABI_MINOR_REQUIRED 0 and its DDM_HOST_HAS()
 * fallbacks; fake_host_set_abi_minor(fh, 1) hides 1.2's
 * register_chunk_stream, cmd_progress, cmd_out_dir, vm_headline_figures,
 * register_plain_vm_listener, foreach_plain_vm, jdwp_request and
 * cmd_find_vm the same way, fake_host_set_abi_minor(fh, 2) hides 1.3's
 * register_metric and vm_metric, and fake_host_set_abi_minor(fh, 4) hides
 * 1.5's timer_wake_on_watch (ddm_tick_wake_on_watch then says -ENOSYS and
 * the tick comes at its interval only); fake_host_set_abi_minor(fh, 7)
 * hides 1.8's register_stopping. A plugin whose descriptor wants a newer minor than the host
 * provides is refused by fake_host_load (-ENOEXEC), as the core refuses it.
 *
 * What it models (each member of struct ddm_host is implemented):
 *  - registration: chunk owners (one per type, -EEXIST otherwise), taps,
 *    VM listeners, commands; register_* outside init() is refused (-EPERM,
 *    logged) as the contract says. A failed register call frees the ud.
 *  - chunks: fake_host_deliver() copies the payload into an exact-size heap
 *    buffer (so ASan sees any over-read), runs the taps, then the owner.
 *    A stream owner (1.2) gets a whole chunk as the core hands it over:
 *    begin(declared = len); unless begin refused (negative), one data call
 *    with all the bytes (none if len is 0), then end(data's error or 0,
 *    len).
 *  - streams (1.2): register_chunk_stream follows register_chunk's rules
 *    (only in init, -EPERM after; one owner per type, plain or stream,
 *    -EEXIST either way and the plugin is refused; every op set and type
 *    not 0, else -EINVAL). fake_host_stream() plays a DDM event that the
 *    core streams (see there): taps do not see it, as in the core.
 *  - cmd_progress (1.2): every call on an unfinished command is recorded
 *    (the last figures, the unit as the core passes it on: "B" or "", and
 *    a count); the core's rate limit is not modelled (no clock). After
 *    cmd_finish it returns -EINVAL.
 *  - cmd_out_dir (1.2): what the test set (fake_host_set_client_out_dir),
 *    NULL by default.
 *  - requests: recorded in order (index 0, 1, ...) with a copy of the
 *    payload; the test completes each with any ddm_reply. Completing twice
 *    fails the test (exactly-once). A request with fn NULL whose completion
 *    carries a chunk is delivered to the type's owner as DDM_ORIGIN_REPLY.
 *    Requests fail with -ENOTCONN before DDM_VM_READY / after GONE, -EPERM
 *    when the type is disabled, -ENOSPC past DDM_REQUEST_MAX_PENDING
 *    pending on one VM, -EMSGSIZE past DDM_REQUEST_MAX_PACKET, or with the
 *    error the test forces.
 *    Request payloads and fake reply payloads live in exact-size buffers.
 *  - VMs: fake_host_add_vm() deep-copies a ddm_vm_info template (size is
 *    set for you). DDM_VM_GONE completes that VM's pending requests with
 *    DDM_REPLY_VM_GONE, runs the listeners, frees the plugin's per-VM data,
 *    then destroys the VM's views; the VM struct itself stays allocated (for
 *    the test) until fake_host_free, but find_vm no longer finds it.
 *    vm_set_name updates the info and runs the listeners with
 *    DDM_VM_CHANGED synchronously (set fake_host_set_sync_changed(fh, 0) to
 *    only count the calls).
 *  - find_vm: "PID", "SERIAL:PID", the VM key, or the app name (1.2: else
 *    a unique ".SUFFIX" of an app name); NULL when none or ambiguous.
 *  - cmd_find_vm (1.2): find_vm, and on failure finishes the command with
 *    DDM_CMD_NOT_FOUND and the core's message ("no VM matches 'X' (try
 *    'ddmon vms')", or "'X' matches N VMs; ...").
 *  - metrics (1.3): register_metric with the core's rules (the SDK's
 *    ddm_metric_family_check; only in init, -EPERM after; a name declared
 *    twice -EEXIST; -ENOSPC past DDM_METRIC_FAMILIES_MAX); vm_metric
 *    replaces a family's samples for a VM whole (-ENOENT undeclared,
 *    -E2BIG past DDM_METRIC_SAMPLES_MAX, -EINVAL a repeated or missing
 *    label value, or more than one sample without a label); label values
 *    cut at DDM_METRIC_LABEL_VALUE_MAX; a VM's samples go with it.
 *    fake_host_metric(), fake_host_metric_samples(),
 *    fake_host_metric_family() read them.
 *  - vm_headline: the core's limits (DDM_HEADLINE_LABEL_MAX,
 *    DDM_HEADLINE_TEXT_MAX: -EMSGSIZE; an empty label -EINVAL; a new
 *    label past DDM_HEADLINE_LABELS_MAX on the VM -ENOSPC, and the same
 *    cap, separately, for vm_headline_figures' labels).
 *  - foreach_vm (1.1): the DDM VMs whose DDM_VM_READY was delivered and
 *    whose DDM_VM_GONE has not begun, in the order they were added.
 *  - plain JVMs (1.2): fake_host_add_plain_vm(); register_plain_vm_listener
 *    (only in init, as the other listeners) hears only plain JVMs,
 *    register_vm_listener only DDM VMs; foreach_plain_vm walks the plain
 *    JVMs whose READY was delivered and whose GONE has not begun.
 *    fake_host_set_debugger() plays a debugger attaching or leaving.
 *  - jdwp_request (1.2), checked in the core's order: fn NULL -EINVAL; off
 *    the SDK's allow-list (ddm_jdwp_command_allowed, the core's very list)
 *    -EPERM; not a ready plain JVM -ENOTCONN; a Suspend while a thread is
 *    held -EBUSY; a Resume of anything but the held thread -EPERM; any
 *    other command while a debugger is attached -EBUSY; -EMSGSIZE past
 *    DDM_REQUEST_MAX_PACKET (11 header bytes); -ENOSPC past
 *    DDM_REQUEST_MAX_PENDING pending on one VM. An accepted Suspend holds
 *    its thread (fake_host_jdwp_held) until its Resume is accepted, the
 *    Suspend's reply is a JDWP error, or the VM goes. Requests are recorded
 *    (fake_host_jdwp_request) and completed by the test, each exactly once.
 *  - views: tables (typed columns; cell type must match the column, except
 *    that an int in a double column is converted, as the core does; a NULL
 *    string is a null cell in any column), records (ordered typed fields,
 *    replace by key), blobs. begin/commit semantics: queries see committed
 *    content only. Misuse (wrong type, too many/few cells, no begin) returns
 *    -EINVAL/-EPROTO and is counted; fake_host_free fails the test if any
 *    happened, unless fake_host_expect_view_errors(fh) was called. The
 *    core's caps hold (DDM_VIEW_MAX_*, <ddmon/plugin.h>): strings cut at a
 *    UTF-8 boundary and rows or fields past a cap dropped, with -E2BIG;
 *    bigger blobs refused with -EFBIG; these are not misuse.
 *    view_watchers returns what the test set (fake_view_set_watchers, or a
 *    default for every view with fake_host_set_default_watchers).
 *  - vm_view_declare (1.6): a declared view is made (the plugin's make
 *    callback) when the test looks for it (fake_view_find, fake_host_n_views
 *    of its VM), when default watchers are set above 0 (every ready DDM
 *    VM's), and for a VM that becomes ready while they are; as in the core,
 *    one name per plugin (-EEXIST), only in init (-EPERM).
 *  - timers: recorded, fired only by fake_host_fire_timers() (or, for those
 *    that opted in with timer_wake_on_watch, fake_host_watch_begins()); a callback
 *    returning 0 or calling timer_remove stops its timer (ud_free runs
 *    after the callback returns). An interval of 0 is taken as 1 ms.
 *    One returning DDM_TIMER_SLEEP (1.7) sleeps: fake_host_fire_timers
 *    skips it until a watch change, fake_host_watch_begins or
 *    host->timer_wake wakes it (fake_host_timer_sleeping).
 *  - register_stopping (1.8): only in init (-EPERM), a NULL fn -EINVAL;
 *    fake_host_stopping() plays the server stopping: every hook runs once,
 *    in registration order, while the VMs are still there and requests
 *    may be sent (recorded as any); the test then completes them, or
 *    fake_host_free ends them with DDM_REPLY_VM_GONE as the core's closes
 *    do. fake_host_free does not run the hooks itself.
 *  - config_get: from fake_host_set_config(); as the core, the plugin's
 *    config_get("interval") finds the option "<plugin name>.interval".
 *  - chunk_enabled: every type, unless the test disables some
 *    (fake_host_disable_chunk) or sets an allow-list (fake_host_only_chunks).
 *  - log: every line (cut at DDM_LOG_MESSAGE_MAX bytes) captured as
 *    "<level>: <text>" (level = warning,
 *    message, info, debug); also printed to stderr when FAKE_HOST_VERBOSE
 *    is set in the environment.
 *  - commands: names as the core takes them (DDM_COMMAND_NAME_MAX; -EINVAL)
 *    and not the core's own ("help", "vms", ...; -EEXIST).
 *    fake_host_run_command() builds a ddm_cmd, calls the handler;
 *    the cmd's status/message/result view stay readable until
 *    fake_host_free. Finishing twice fails the test. A handler returning a
 *    negative errno without finishing is finished as DDM_CMD_FAILED.
 *
 * Ownership: everything returned by fake_* query functions is borrowed
 * from the fake host and valid until the object it came from goes away
 * (views: VM gone / view_free / fake_host_free). Strings returned for
 * cells are formatted on demand and cached in the cell.
 *
 * Non-goals: several plugins in one fake host (one plugin per host; make
 * two hosts), main loop, real time, JSON.
 */
#ifndef DDMON_TESTKIT_H
#define DDMON_TESTKIT_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fake_host fake_host;

/* ------------------------------------------------------------ lifecycle */

/** A fresh host with no plugin. (transfer full) */
fake_host *fake_host_new(void);
/** Take every live VM through DDM_VM_GONE, run fini, free all; runs the
 *  end-of-test checks (view errors). */
void fake_host_free(fake_host *fh);
/** Run @desc->init with the fake plugin and this host (only once per host).
 *  Returns init's result; on failure the registrations are undone. */
int fake_host_load(fake_host *fh, const ddm_plugin_desc *desc);
/** The host table handed to init (for calling members directly). */
const ddm_host *fake_host_table(fake_host *fh);
/** The plugin handle handed to init. */
ddm_plugin *fake_host_plugin(fake_host *fh);
/** Look like a core of ABI MAJOR.@minor (before fake_host_load): the
 *  table's size and abi_minor say so and members newer than @minor are
 *  NULL. @minor must not be newer than the SDK's DDM_ABI_MINOR. */
void fake_host_set_abi_minor(fake_host *fh, unsigned minor);

/* --------------------------------------------------------------- config */

/** Set option @key (e.g. "threads.interval") to @value (copied); NULL unsets. */
void fake_host_set_config(fake_host *fh, const char *key, const char *value);
/** Disable one chunk type for chunk_enabled() and request(). */
void fake_host_disable_chunk(fake_host *fh, uint32_t type);
/** Enable exactly these types (n == 0: none). Replaces earlier filters. */
void fake_host_only_chunks(fake_host *fh, const uint32_t *types, size_t n);

/* ------------------------------------------------------------------ VMs */

/** Add a VM described by @info (deep-copied; NULL = all defaults: pid 0,
 *  user_id -1, native_debuggable -1, ddm 1). Not ready until
 *  fake_host_vm_event(DDM_VM_READY). Owned by @fh. */
ddm_vm *fake_host_add_vm(fake_host *fh, const ddm_vm_info *info);
/** Replace what vm_info() returns (deep copy). Fires no event. */
void fake_host_set_vm_info(fake_host *fh, ddm_vm *vm, const ddm_vm_info *info);
/** Run the VM listeners with @event (READY marks the VM ready for requests;
 *  GONE does the teardown described above; a gone VM gets no more events). */
void fake_host_vm_event(fake_host *fh, ddm_vm *vm, ddm_vm_event event);
/** What vm_info() returns now (borrowed). */
const ddm_vm_info *fake_vm_info(ddm_vm *vm);
/** 1 once DDM_VM_GONE was delivered. */
int fake_vm_gone(ddm_vm *vm);
/** How many times the plugin called vm_set_name for @vm. */
int fake_vm_set_name_calls(ddm_vm *vm);
/** Add a plain JVM (1.2; no DDM): @info as fake_host_add_vm (NULL: defaults),
 *  with ddm forced to 0. Only plain listeners (register_plain_vm_listener)
 *  hear its events: fake_host_vm_event(READY) makes it known (foreach_plain_vm
 *  visits it, jdwp_request may go to it), GONE ends its pending JDWP requests
 *  with DDM_REPLY_VM_GONE before the listeners run. request() to it gives
 *  -ENOTCONN, foreach_vm skips it, DDM listeners never hear of it. */
ddm_vm *fake_host_add_plain_vm(fake_host *fh, const ddm_vm_info *info);
/** A debugger attaches (@attached 1) or leaves (0) through ddmon: sets
 *  ddm_vm_info.debugger and, if the VM is ready, runs its listeners (plain
 *  or DDM) with DDM_VM_CHANGED. While attached, jdwp_request gives -EBUSY
 *  (except the Resume of the thread the plugin holds). */
void fake_host_set_debugger(fake_host *fh, ddm_vm *vm, int attached);
/** Whether DDM_VM_CHANGED runs synchronously from vm_set_name (default 1). */
void fake_host_set_sync_changed(fake_host *fh, int on);
/** The headline text the plugin set under @label, or NULL. */
const char *fake_host_headline(fake_host *fh, ddm_vm *vm, const char *label);
/** 1 and *@value if the VM has headline figure @key ("LABEL_NAME", set with
 *  host->vm_headline_figures, 1.2), else 0. */
int fake_host_headline_figure(fake_host *fh, ddm_vm *vm, const char *key, double *value);
/** 1 if the plugin declared metric family @name (host->register_metric,
 *  1.3), with its fields in *@out (may be NULL; strings borrowed until
 *  fake_host_free), else 0. */
int fake_host_metric_family(fake_host *fh, const char *name, ddm_metric_family *out);
/** 1 and *@value (may be NULL) if VM @vm has a sample of family @name
 *  whose label value is @label (NULL: the family has no label), as the
 *  plugin last set it with host->vm_metric (1.3), else 0. */
int fake_host_metric(fake_host *fh, ddm_vm *vm, const char *name, const char *label, double *value);
/** How many samples of family @name VM @vm has now (1.3). */
size_t fake_host_metric_samples(fake_host *fh, ddm_vm *vm, const char *name);

/* --------------------------------------------------------------- chunks */

/** Hand a chunk to the taps and the owner of @type. Returns the owner's
 *  result, or DDM_DECLINED when nobody owns @type. For a stream owner
 *  (begin, one data, end; see above): DDM_DECLINED if begin refused it,
 *  data's negative errno, else DDM_OK. */
int fake_host_deliver(fake_host *fh, ddm_vm *vm, uint32_t type, ddm_chunk_origin origin,
                      const void *data, size_t len);
/** 1 if the plugin owns @type (as a plain or a stream owner). */
int fake_host_owns(fake_host *fh, uint32_t type);
/** 1 if the plugin owns @type as a stream (register_chunk_stream). */
int fake_host_owns_stream(fake_host *fh, uint32_t type);
/**
 * A DDM event of @type from @vm that the core streams (1.2): one large
 * chunk of @len bytes (@data) arriving in pieces, as core/session hands it
 * to the type's stream owner. Each piece is copied to an exact-size buffer.
 *  - begin(declared = @len) first; a negative result refuses the stream:
 *    nothing more is called and that result is returned.
 *  - @end_status 0: the bytes go to data in pieces of @piece bytes (0: one
 *    piece; the last may be shorter), then end(0, @len). Returns 0.
 *  - @end_status -EFBIG (past the user's --max-stream): end(-EFBIG, 0) at
 *    once, no data call. Returns -EFBIG.
 *  - any other negative @end_status (-EPROTO: the packet ended before the
 *    declared length; -EPIPE: the VM went away mid-stream; -ETIMEDOUT: the
 *    VM sent nothing mid-stream for the request timeout): only the
 *    first @len / 2 bytes arrive, in pieces of @piece, then
 *    end(@end_status, @len / 2). Returns @end_status. For -EPIPE and
 *    -ETIMEDOUT the test then takes the VM through DDM_VM_GONE itself, as
 *    the core does after.
 *  - data returning a negative errno stops the stream: end(that error,
 *    bytes handed over including that piece) follows at once and the
 *    error is returned.
 * Returns DDM_DECLINED, calling nothing, when @type has no stream owner
 * or is disabled (fake_host_disable_chunk): the core streams only to
 * stream owners; use fake_host_deliver for chunks that arrive whole.
 */
int fake_host_stream(fake_host *fh, ddm_vm *vm, uint32_t type, const void *data, size_t len,
                     size_t piece, int end_status);
/** Number of taps registered for @type (0 = the "every type" taps). */
int fake_host_n_taps(fake_host *fh, uint32_t type);
/** Number of VM listeners registered. */
int fake_host_n_vm_listeners(fake_host *fh);
/** Number of plain VM listeners registered (1.2). */
int fake_host_n_plain_vm_listeners(fake_host *fh);

/* ------------------------------------------------------------- requests */

/** A recorded request (borrowed; valid until fake_host_free). */
typedef struct fake_request {
    ddm_vm *vm;
    uint32_t type;
    uint8_t *data; /* copy of the payload, exactly len bytes (NULL if 0) */
    size_t len;
    unsigned timeout_ms;
    ddm_reply_fn fn;
    void *ud;
    uint32_t packet_id;
    int completed; /* 1 once the reply fn ran (or would have, fn NULL) */
} fake_request;

/** Requests accepted so far (completed or not). */
size_t fake_host_n_requests(fake_host *fh);
/** Request @idx (0-based, in send order), or NULL. */
const fake_request *fake_host_request(fake_host *fh, size_t idx);
/** Index of the first request of @type to @vm (NULL = any VM) at or after
 *  @from, or -1. */
int fake_host_find_request(fake_host *fh, ddm_vm *vm, uint32_t type, size_t from);
/** Number of requests of @type (0 = any) to @vm (NULL = any) not yet completed. */
int fake_host_n_pending(fake_host *fh, ddm_vm *vm, uint32_t type);
/** Complete request @idx with @reply (data copied to an exact-size buffer;
 *  for type FAIL the test fills fail_code/fail_msg itself, or use
 *  fake_host_complete_fail). Fails the test if already completed. */
void fake_host_complete_request(fake_host *fh, size_t idx, const ddm_reply *reply);
/** Shorthands: complete with a chunk of @type, empty, JDWP error, timeout, FAIL. */
void fake_host_complete_chunk(fake_host *fh, size_t idx, uint32_t type, const void *data,
                              size_t len);
void fake_host_complete_status(fake_host *fh, size_t idx, ddm_reply_status status);
void fake_host_complete_fail(fake_host *fh, size_t idx, uint32_t code, const char *msg);
/** Make the next request() calls fail with @err (negative errno; 0 = normal). */
void fake_host_set_request_error(fake_host *fh, int err);
/** The same, for requests of chunk type @type only. */
void fake_host_set_request_error_for(fake_host *fh, uint32_t type, int err);
/* --------------------------------------------- JDWP to plain JVMs (1.2) */

/** A recorded jdwp_request (borrowed; valid until fake_host_free). */
typedef struct fake_jdwp_request {
    ddm_vm *vm;
    uint8_t cmdset, cmd;
    uint8_t *data; /* copy of the command's data, exactly len bytes (NULL if 0) */
    size_t len;
    unsigned timeout_ms;
    ddm_jdwp_reply_fn fn;
    void *ud;
    uint32_t packet_id;
    int completed; /* 1 once fn ran */
} fake_jdwp_request;

/** jdwp_request calls accepted so far (completed or not). */
size_t fake_host_n_jdwp_requests(fake_host *fh);
/** JDWP request @idx (0-based, in send order), or NULL. */
const fake_jdwp_request *fake_host_jdwp_request(fake_host *fh, size_t idx);
/** Index of the first JDWP request @cmdset/@cmd to @vm (NULL = any VM) at or
 *  after @from, or -1. */
int fake_host_find_jdwp_request(fake_host *fh, ddm_vm *vm, uint8_t cmdset, uint8_t cmd,
                                size_t from);
/** JDWP requests to @vm (NULL = any) not yet completed. */
int fake_host_n_jdwp_pending(fake_host *fh, ddm_vm *vm);
/** The VM answers JDWP request @idx: @error 0 is a reply carrying @data/@len
 *  (copied to an exact-size buffer; status DDM_REPLY_CHUNK), else a JDWP
 *  error reply (DDM_REPLY_ERROR, jdwp_error @error, no data; a failed
 *  Suspend holds no thread). Fails the test if already completed. */
void fake_host_complete_jdwp(fake_host *fh, size_t idx, uint16_t error, const void *data,
                             size_t len);
/** Complete JDWP request @idx with DDM_REPLY_TIMEOUT or DDM_REPLY_VM_GONE
 *  (DDM_REPLY_ERROR: jdwp_error 99, as fake_host_complete_status). */
void fake_host_complete_jdwp_status(fake_host *fh, size_t idx, ddm_reply_status status);
/** The thread id the plugin holds suspended on @vm (the data of its
 *  accepted ThreadReference.Suspend; *@len its length), or NULL if none. */
const uint8_t *fake_host_jdwp_held(fake_host *fh, ddm_vm *vm, size_t *len);

/** What host->cmd_cwd returns for commands run from now on (NULL = unknown). */
void fake_host_set_client_cwd(fake_host *fh, const char *dir);
/** What host->cmd_out_dir (1.2) returns for commands from now on: the
 *  client's --out-dir, absolute (NULL = none given, the default). */
void fake_host_set_client_out_dir(fake_host *fh, const char *dir);

/* --------------------------------------------------------------- timers */

/** Timers currently active. */
int fake_host_n_timers(fake_host *fh);
/** Interval of the @idx-th active timer (0-based), 0 if none. */
unsigned fake_host_timer_interval(fake_host *fh, int idx);
/** Call every active timer that does not sleep once (in creation order).
 *  Returns how many ran. */
int fake_host_fire_timers(fake_host *fh);
/** ABI 1.7: 1 if timer @id sleeps (its callback returned DDM_TIMER_SLEEP
 *  and nothing woke it since: a move of the watch generation that may
 *  count for a watch (fake_view_set_watchers, fake_host_set_vm_list_watchers,
 *  fake_host_set_default_watchers, a new view while any of those is set),
 *  fake_host_watch_begins, host->timer_wake), 0 if not, -1 if no such
 *  active timer. Since kit interface 6. */
int fake_host_timer_sleeping(fake_host *fh, uint32_t id);
/** ABI 1.7: how many active timers sleep. Since kit interface 6. */
int fake_host_n_timers_sleeping(fake_host *fh);
/* ------------------------------------------------------- stopping (1.8) */

/** Play the server stopping (ABI 1.8): run every stopping hook the plugin
 *  registered (register_stopping) once, in registration order, with the
 *  VMs still there (requests the hooks send are recorded as any). Later
 *  calls run nothing, as in the core. Returns how many hooks ran. Since
 *  kit interface 7. */
int fake_host_stopping(fake_host *fh);
/** How many stopping hooks the plugin registered. Since kit interface 7. */
int fake_host_n_stopping_hooks(fake_host *fh);

/** A frontend begins to watch (ABI 1.5): the watch generation grows and the
 *  active timers that opted in with timer_wake_on_watch run once, as the
 *  core runs them at the next loop iteration. Returns how many ran. */
int fake_host_watch_begins(fake_host *fh);

/* ------------------------------------------------------------------ log */

/** 1 if any captured log line contains @substr. */
int fake_host_log_contains(fake_host *fh, const char *substr);
/** Number of captured lines at @level (0 = all). */
int fake_host_log_count(fake_host *fh, ddm_log_level level);
/** The whole captured log, one line each (borrowed). */
const char *fake_host_log_text(fake_host *fh);
/** Forget the captured log. */
void fake_host_log_clear(fake_host *fh);

/* ------------------------------------------------------------- commands */

typedef struct ddm_cmd fake_cmd;

/** 1 if the plugin registered command @name. */
int fake_host_has_command(fake_host *fh, const char *name);
/** Run command argv[0] with @argc/@argv; NULL if no such command. The cmd
 *  stays readable until fake_host_free. */
ddm_cmd *fake_host_run_command(fake_host *fh, int argc, const char *const *argv);
int fake_cmd_finished(ddm_cmd *cmd);
ddm_cmd_status fake_cmd_status(ddm_cmd *cmd);
/** The finish message (borrowed), or NULL. */
const char *fake_cmd_message(ddm_cmd *cmd);
/** The result view, or NULL if the plugin made none. */
ddm_view *fake_cmd_result(ddm_cmd *cmd);
/** 1 and the last figures the plugin gave cmd_progress (1.2), or 0 (and
 *  *@done = *@total = 0) if it never did. Either pointer may be NULL. */
int fake_cmd_progress(ddm_cmd *cmd, uint64_t *done, uint64_t *total);
/** The client that gave @cmd went away: host->cmd_cancelled (1.2) says 1 from now on. */
void fake_cmd_cancel(ddm_cmd *cmd);
/** How many cmd_progress calls were accepted for @cmd. */
int fake_cmd_progress_count(ddm_cmd *cmd);
/** The last progress unit as the core passes it on: "B" or "" (borrowed). */
const char *fake_cmd_progress_unit(ddm_cmd *cmd);

/* ---------------------------------------------------------------- views */

/** The view @name of @vm (NULL = global), or NULL. */
ddm_view *fake_view_find(fake_host *fh, ddm_vm *vm, const char *name);
/** Number of live views of @vm (NULL = global ones). Like a frontend
 *  listing the VM's views, it first makes the views the plugin declared
 *  (vm_view_declare, 1.6) and has not made; fake_view_find makes the one
 *  asked for the same way. */
int fake_host_n_views(fake_host *fh, ddm_vm *vm);
/** As fake_view_find and fake_host_n_views, without making declared views:
 *  what the plugin made itself (1.6). Since: interface 5 */
ddm_view *fake_view_find_made(fake_host *fh, ddm_vm *vm, const char *name);
int fake_host_n_views_made(fake_host *fh, ddm_vm *vm);
ddm_view_kind fake_view_kind(ddm_view *v);
const char *fake_view_title(ddm_view *v);
/** Number of commits so far. */
unsigned fake_view_version(ddm_view *v);
void fake_view_set_watchers(ddm_view *v, int n);
/** How many times the plugin called view_watchers so far: a tick that must
 *  not look at unwatched VMs (ABI 1.4, <ddmon/ticklist.h>) is tested by it.
 *  Since: interface 3 */
unsigned long fake_host_watcher_queries(fake_host *fh);
/** Watchers for every view, present and future, unless set per view. */
void fake_host_set_default_watchers(fake_host *fh, int n);
/** What vm_list_watchers (1.6) answers: the frontends watching the core's
 *  VM list (0 at first; a change counts as a watch change). Since: interface 5 */
void fake_host_set_vm_list_watchers(fake_host *fh, int n);
/** As the core when a declared view's linger ends (vm_view_unmake, 1.6):
 *  every view of a ready VM whose name has an unmake and that has no
 *  watcher now gets it, however it was made (a declaration's make, a
 *  look, default watchers, or the plugin itself when data came); one the
 *  plugin keeps is asked again at the next call (the core asks again
 *  2, 4 ... at most 32 lingers later, for as long as the view lives). How
 *  many unmakes ran. Since: interface 5 (before 5:1:5, an unreleased
 *  revision, only views a make made, once each) */
int fake_host_unmake_unwatched(fake_host *fh);
/** Tolerate view builder misuse (tests of bad input that expect it). */
void fake_host_expect_view_errors(fake_host *fh);
/** Count of view builder misuses so far. */
int fake_host_view_errors(fake_host *fh);

/* The readers below (and fake_view_kind, _title, _version,
 * _set_watchers) fail the test when handed NULL, saying which reader, which
 * column or field, and what the last fake_view_find, fake_view_find_made
 * or fake_cmd_result that gave NULL was asked for: "no view 'demo.table'
 * of VM fake:1 (pid 42); that VM has 'demo'" (since 6:1:6; before, a bare
 * "Failure!"). */

/* tables (committed content) */
int fake_view_n_rows(ddm_view *v);
int fake_view_n_cols(ddm_view *v);
/** Column index by name, or -1. */
int fake_view_col(ddm_view *v, const char *name);
/** The column's unit (borrowed) or NULL. */
const char *fake_view_col_unit(ddm_view *v, const char *name);
ddm_value_type fake_view_col_type(ddm_view *v, const char *name);
/** 1 if the cell is null (or does not exist). */
int fake_view_cell_is_null(ddm_view *v, int row, const char *col);
/** Any cell as text ("12", "1.5", "true"); NULL if null or absent. */
const char *fake_view_cell_str(ddm_view *v, int row, const char *col);
/** Int or bool cell as integer (0 if null/absent; fails the test on a
 *  str/double cell). */
int64_t fake_view_cell_int(ddm_view *v, int row, const char *col);
/** Double cell (int cells converted); 0 if null. */
double fake_view_cell_double(ddm_view *v, int row, const char *col);
/** First row whose cell @col reads as @text, or -1. */
int fake_view_find_row(ddm_view *v, const char *col, const char *text);

/* records (committed content) */
int fake_view_n_fields(ddm_view *v);
int fake_view_has_field(ddm_view *v, const char *key);
/** Field as text, NULL if absent or null. */
const char *fake_view_field_str(ddm_view *v, const char *key);
int64_t fake_view_field_int(ddm_view *v, const char *key);
double fake_view_field_double(ddm_view *v, const char *key);
ddm_value_type fake_view_field_type(ddm_view *v, const char *key);

/* blobs (committed content) */
/** The blob bytes (borrowed) and their count/media type; NULL if none. */
const uint8_t *fake_view_blob(ddm_view *v, size_t *len, const char **media_type);

#ifdef __cplusplus
}
#endif

#endif /* DDMON_TESTKIT_H */
