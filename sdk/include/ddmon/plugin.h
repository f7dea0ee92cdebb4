/* SPDX-License-Identifier: Apache-2.0
 *
 * The ddmon plugin SDK: everything a plugin may see of the core.
 *
 * A plugin is a shared object that exports exactly one data symbol,
 * `ddm_plugin_descriptor` (write DDM_PLUGIN_DEFINE(...) once). The core
 * checks the descriptor's frozen prefix (magic, ABI major/minor, size)
 * before calling any plugin function, then calls init(), in which the plugin
 * registers chunk handlers, taps, VM listeners, commands and timers through
 * the ddm_host function table. Plugins link against nothing of the core.
 * Plugins must have no ELF constructors: loading a file (dlopen) would run
 * them before any check. `ddmon --check-plugin` does not load the file: it
 * reads the descriptor from the ELF bytes and runs no plugin code at all.
 *
 * ABI rules (full text and changelog: doc/plugin-abi.md):
 *  - DDM_ABI_MINOR grows when a member is appended to ddm_host, ddm_vm_info
 *    or ddm_plugin_desc, or an enum gains a value old plugins can ignore.
 *  - DDM_ABI_MAJOR grows (minor back to 0) when anything is removed,
 *    reordered, retyped or changes meaning.
 *  - A plugin loads iff magic matches, its major equals the core's, its
 *    minor is <= the core's, and desc_size >= the 1.0 descriptor size.
 *  - Members newer than 1.0 must be tested with DDM_HOST_HAS() first.
 *
 * Memory rules:
 *  1. Chunk payloads handed to a plugin are borrowed, valid only during the
 *     call; copy what you keep.
 *  2. Memory is never freed on the other side of the boundary: views are
 *     built through the host's builder calls, which copy.
 *  3. A `ud` with a `ud_free` passed to any register_* call belongs to the
 *     core from the call on, including when the call fails (the core then
 *     calls ud_free at once).
 *  4. Strings returned by the host are borrowed ("transfer none"), valid
 *     until the owning VM or plugin goes away, or the next change of the
 *     same value, whichever is first.
 *  5. Per-VM plugin data is freed by the core when the VM goes away, after
 *     the plugin's DDM_VM_GONE listener has run.
 *
 * Threads: every callback runs on the core's main-loop thread and must not
 * block. Host functions may be called only from that thread.
 *
 * ABI changelog, one line per minor (what was added; the dated long form is
 * in doc/plugin-abi.md):
 *  1.0  the descriptor; ddm_host log .. cmd_cwd; ddm_vm_info .. boot_stage.
 *  1.1  ddm_host.foreach_vm (ddm_vm_visit_fn); the host's limits as constants
 *       (DDM_VIEW_MAX_*, DDM_HEADLINE_*_MAX, DDM_COMMAND_NAME_MAX,
 *       DDM_LOG_MESSAGE_MAX, DDM_REQUEST_*); DDM_ABI_MINOR_REQUIRED.
 *  1.2  streamed chunks: ddm_host.register_chunk_stream (ddm_stream_ops,
 *       DDM_STREAM_MAX); ddm_host.cmd_progress, ddm_host.cmd_out_dir;
 *       ddm_host.vm_headline_figures (ddm_headline_figure,
 *       DDM_HEADLINE_FIGURES_MAX, DDM_HEADLINE_FIGURE_NAME_MAX);
 *       ddm_host.cmd_find_vm (the core's VM resolution and message for a
 *       command); find_vm also takes a unique suffix of an app name;
 *       plain JVMs over standard JDWP: ddm_host.register_plain_vm_listener,
 *       foreach_plain_vm, jdwp_request (ddm_jdwp_reply, ddm_jdwp_reply_fn);
 *       ddm_reply_describe (header-only); ddm_host.cmd_cancelled.
 *  1.3  metrics: ddm_host.register_metric (ddm_metric_family,
 *       ddm_metric_type), ddm_host.vm_metric (ddm_metric_sample),
 *       DDM_METRIC_*_MAX: figures a plugin declares for GET /metrics;
 *       ddm_vm_metric_logged (header-only).
 *  1.4  ddm_host.watch_generation: ticks that touch only watched VMs.
 *  1.5  ddm_host.timer_wake_on_watch: a poll tick runs as soon as a watch
 *       begins; ddm_tick_wake_on_watch (header-only); DDM_HEADLINE_LABELS_MAX,
 *       the per-VM cap on headline and figure labels.
 *  1.6  ddm_host.vm_view_declare (ddm_view_make_fn): a VM's view made only
 *       when somebody asks for it or watches it.
 *       ddm_host.vm_list_watchers: whether the VM list is watched.
 *       ddm_host.vm_view_unmake (ddm_view_unmake_fn): a view of a declared
 *       name, however made, unwatched for a while is taken back.
 *  1.7  timers that sleep: a ddm_timer_fn may return DDM_TIMER_SLEEP (the
 *       timer stays, unarmed, until the watches change, a watch begins or
 *       ddm_host.timer_wake); DDM_TIMER_STOP, DDM_TIMER_KEEP. On an older
 *       core DDM_TIMER_SLEEP is "keep" (the timer just keeps ticking).
 *       ddm_timer_wake and ddm_tick_list_set_timer (<ddmon/ticklist.h>).
 *  1.8  ddm_host.register_stopping (ddm_stopping_fn): last requests to the
 *       VMs when the server stops, sent before their connections close,
 *       and their answers waited for; DDM_STOPPING_FLUSH_MS,
 *       DDM_STOPPING_WAIT_MS.
 */
#ifndef DDMON_PLUGIN_H
#define DDMON_PLUGIN_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/abi.h>
#include <ddmon/chunk.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DDM_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define DDM_EXPORT __attribute__((visibility("default")))
#else
#define DDM_PRINTF(fmt, args)
#define DDM_EXPORT
#endif

/**
 * The oldest core minor this plugin runs on: the minor DDM_PLUGIN_DEFINE
 * records. Defaults to the SDK's own minor. Define it (e.g. to 0) before
 * including this header to build with this SDK a plugin that also loads
 * into older cores of the same major; it must then test every host member
 * newer than that minor with DDM_HOST_HAS() before calling it. Since: 1.1
 */
#ifndef DDM_ABI_MINOR_REQUIRED
#define DDM_ABI_MINOR_REQUIRED DDM_ABI_MINOR
#endif
#if DDM_ABI_MINOR_REQUIRED > DDM_ABI_MINOR
#error "DDM_ABI_MINOR_REQUIRED is newer than this SDK"
#endif

/* ------------------------------------------------------------------ limits */

/*
 * The host's limits: what a plugin can hit, defined here once (the core
 * uses these very macros). Since: 1.1 (the values held in 1.0 too).
 *
 * Views (view_* builders). Past a cap the call says so and the content
 * stays consistent: a longer string is cut at a UTF-8 character boundary
 * and kept (-E2BIG); a row past the row or cell cap, or a field past the
 * field cap, is dropped (-E2BIG); a longer blob is refused (-EFBIG); more
 * columns are refused (-EINVAL).
 */
#define DDM_VIEW_MAX_ROWS 1000000u                        /**< rows per table */
#define DDM_VIEW_MAX_COLUMNS 256u                         /**< columns per table */
#define DDM_VIEW_MAX_CELLS (16u * 1024u * 1024u)          /**< rows x columns per table */
#define DDM_VIEW_MAX_FIELDS 65536u                        /**< fields per record */
#define DDM_VIEW_MAX_STRING (64u * 1024u)                 /**< bytes per cell, field or key */
#define DDM_VIEW_MAX_STRING_BYTES (256u * 1024u * 1024u)  /**< string bytes per content */
#define DDM_VIEW_MAX_BLOB ((size_t)256u * 1024u * 1024u)  /**< bytes per blob */

/** vm_headline: a label of 1..32 bytes and a text of up to 128 bytes; longer
 *  ones get -EMSGSIZE (an empty label -EINVAL). */
#define DDM_HEADLINE_LABEL_MAX 32u
#define DDM_HEADLINE_TEXT_MAX 128u
/** vm_headline, vm_headline_figures: labels a VM holds, all plugins together
 *  (headline labels and figure labels counted apart); a new label past them
 *  is -ENOSPC (cores from 1.5 on; before, no cap). Changing a label's text
 *  or figures, or removing it, is never refused for the cap. */
#define DDM_HEADLINE_LABELS_MAX 32u
/** vm_headline_figures (1.2): figures per label, and a figure name's length. */
#define DDM_HEADLINE_FIGURES_MAX 16u
#define DDM_HEADLINE_FIGURE_NAME_MAX 32u
/** register_command: a name is 1..32 of [A-Za-z0-9._-], starting with a letter
 *  or digit, else -EINVAL. */
#define DDM_COMMAND_NAME_MAX 32u
/** register_metric (1.3): a family name is 1..64 of [a-z0-9_] starting with
 *  a letter (-EINVAL), a help text at most 256 bytes (-EMSGSIZE), at most
 *  64 families per plugin (-ENOSPC). vm_metric: at most 64 samples per
 *  family and VM (-E2BIG); a longer label value is cut to 128 bytes at a
 *  UTF-8 boundary. */
#define DDM_METRIC_NAME_MAX 64u
#define DDM_METRIC_HELP_MAX 256u
#define DDM_METRIC_FAMILIES_MAX 64u
#define DDM_METRIC_SAMPLES_MAX 64u
#define DDM_METRIC_LABEL_VALUE_MAX 128u
/** log: a longer message is cut to this many bytes. */
#define DDM_LOG_MESSAGE_MAX 4096u

/** request: what timeout_ms 0 means, unless the user chose another default
 *  (ddmon --request-timeout MS). */
#define DDM_REQUEST_TIMEOUT_DEFAULT_MS 10000u
/** The longest default the user may choose; a bound for plugin options that
 *  hold a request timeout. */
#define DDM_REQUEST_TIMEOUT_MAX_MS 3600000u
/** request: pending requests per VM (all plugins together) before -ENOSPC. */
#define DDM_REQUEST_MAX_PENDING 1024u
/** request: the default cap on a JDWP packet (ddmon --max-packet); a payload
 *  that does not fit with its 19 header bytes gets -EMSGSIZE. */
#define DDM_REQUEST_MAX_PACKET ((size_t)256u * 1024u * 1024u)

/** Opaque handles, owned by the core. Since: 1.0 */
typedef struct ddm_plugin ddm_plugin; /**< one per loaded plugin */
typedef struct ddm_vm ddm_vm;         /**< one per connected VM */
typedef struct ddm_view ddm_view;     /**< a published view or a command result */
typedef struct ddm_cmd ddm_cmd;       /**< a user command in flight */
typedef struct ddm_host ddm_host;

/** Handler results. Errors are negative errno values. Since: 1.0 */
#define DDM_OK 0
#define DDM_DECLINED 1 /**< not mine: the core logs it as unhandled */

/** Log levels for ddm_host.log. Since: 1.0 */
typedef enum ddm_log_level {
    DDM_LOG_WARNING = 1, /**< the operator should act (a VM misbehaves, a file cannot be written) */
    DDM_LOG_MESSAGE = 2, /**< lifecycle */
    DDM_LOG_INFO = 3,
    DDM_LOG_DEBUG = 4    /**< per packet */
} ddm_log_level;

/* ------------------------------------------------------------------ chunks */

/** Where a chunk came from. Since: 1.0 */
typedef enum ddm_chunk_origin {
    DDM_ORIGIN_EVENT = 0,   /**< VM-initiated (JDWP command packet from the VM) */
    DDM_ORIGIN_REPLY = 1,   /**< reply to a request sent by ddmon or a plugin */
    DDM_ORIGIN_REQUEST = 2  /**< a request going to the VM (seen by taps only; the
                                 core's HELO and FEAT may go with the JDWP
                                 handshake, to a peer not yet known as a VM) */
} ddm_chunk_origin;

/** What the core knows about a chunk besides its bytes. Since: 1.0 */
typedef struct ddm_chunk_info {
    uint32_t type;           /**< chunk type, see DDM_CHUNK() */
    uint32_t packet_id;      /**< JDWP packet id of the carrying packet */
    ddm_chunk_origin origin;
    uint32_t request_type;   /**< for replies: the type of the request, else 0 */
} ddm_chunk_info;

/**
 * A chunk handler (owner of a type) or tap (read-only observer).
 * @data/@len: the chunk payload after the 8-byte header, borrowed.
 * Return DDM_OK, DDM_DECLINED, or a negative errno (logged). Taps' results
 * are ignored. Since: 1.0
 */
typedef int (*ddm_chunk_fn)(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci,
                            const uint8_t *data, size_t len, void *ud);

/**
 * Streamed chunks (register_chunk_stream): a chunk too large to hold, such
 * as a heap dump of gigabytes in one JDWP packet, handed over in pieces as
 * its bytes arrive, never held whole by the core. For one VM, one stream
 * runs at a time, so per-VM state (vm_set_data) can hold the stream's.
 *
 * begin: a chunk of the type starts; @declared payload bytes are to come
 *   (up to DDM_STREAM_MAX, less if the user set --max-stream). Return 0 to
 *   take it; a negative errno skips its bytes (no further call).
 * data: the next @len bytes (borrowed for the call; pieces of any size,
 *   at most @declared in all). A negative errno stops: end follows at once
 *   with that status and the rest is skipped.
 * end: exactly once after a begin that returned 0. @status 0: all
 *   @declared bytes arrived. -EPROTO: the VM's packet ended before the
 *   declared length. -EPIPE: the VM went away mid-stream. -ETIMEDOUT: the
 *   VM sent nothing for the request timeout mid-stream (the core then drops
 *   the connection: nothing else can come on it). -EFBIG: past the
 *   user's cap (no data call came). Or data's own error. @received: the
 *   bytes handed to data.
 *
 * Chunks of the type that arrive whole (small ones, and replies nobody
 * waits for) come the same way: begin, one data, end. Taps do not see
 * streamed chunks. Since: 1.2
 */
typedef struct ddm_stream_ops {
    int (*begin)(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, uint64_t declared,
                 void *ud);
    int (*data)(ddm_plugin *self, ddm_vm *vm, const uint8_t *data, size_t len, void *ud);
    void (*end)(ddm_plugin *self, ddm_vm *vm, int status, uint64_t received, void *ud);
} ddm_stream_ops;

/** The longest streamed chunk: what a JDWP packet's u4 length leaves. Since: 1.2 */
#define DDM_STREAM_MAX ((uint64_t)0xFFFFFFFFu - 19u)

/** How a request ended. Since: 1.0 */
typedef enum ddm_reply_status {
    DDM_REPLY_CHUNK = 0,   /**< the reply carried a chunk (type may be FAIL) */
    DDM_REPLY_EMPTY = 1,   /**< success without data (Dalvik's "nothing to say") */
    DDM_REPLY_ERROR = 2,   /**< JDWP error reply: see jdwp_error */
    DDM_REPLY_TIMEOUT = 3, /**< no answer in time: normal on ART for some requests */
    DDM_REPLY_VM_GONE = 4, /**< the VM went away while the request was pending */
    DDM_REPLY_BAD = 5      /**< the reply could not be parsed (logged by the core) */
} ddm_reply_status;

/** The outcome of a request, borrowed for the duration of the callback. Since: 1.0 */
typedef struct ddm_reply {
    ddm_reply_status status;
    uint16_t jdwp_error;  /**< with DDM_REPLY_ERROR */
    uint32_t type;        /**< with DDM_REPLY_CHUNK: the reply chunk type */
    const uint8_t *data;  /**< with DDM_REPLY_CHUNK: payload, borrowed */
    size_t len;
    uint32_t fail_code;   /**< type == FAIL: the VM's error code */
    const char *fail_msg; /**< type == FAIL: its message as UTF-8, or NULL */
} ddm_reply;

/**
 * Why a reply carried no usable answer, as a phrase for a user message:
 * "the VM said: MSG (code N)" for FAIL, "JDWP error N", "no reply from the
 * VM in time (timeout)",
 * "the VM went away", ... Returns @buf or a constant string. Header-only:
 * calls nothing of the host. Since: 1.2
 */
static inline const char *ddm_reply_describe(const ddm_reply *reply, char *buf, size_t n)
{
    switch (reply->status) {
    case DDM_REPLY_CHUNK:
        if (reply->type == DDM_CHUNK_FAIL) {
            snprintf(buf, n, "the VM said: %s (code %lu)",
                     reply->fail_msg && *reply->fail_msg ? reply->fail_msg : "no message",
                     (unsigned long)reply->fail_code);
            return buf;
        }
        return "the VM answered with another chunk type";
    case DDM_REPLY_EMPTY: return "the VM sent an empty reply";
    case DDM_REPLY_ERROR:
        snprintf(buf, n, "JDWP error %u", (unsigned)reply->jdwp_error);
        return buf;
    case DDM_REPLY_TIMEOUT: return "no reply from the VM in time (timeout)";
    case DDM_REPLY_VM_GONE: return "the VM went away";
    default: return "the reply was malformed";
    }
}

/**
 * Called exactly once per accepted request: with the reply, the JDWP error,
 * on timeout, or when the VM goes away. @ud is the caller's; free it here.
 * Since: 1.0
 */
typedef void (*ddm_reply_fn)(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud);

/**
 * The outcome of a jdwp_request, borrowed for the duration of the callback.
 * @status: DDM_REPLY_CHUNK for a successful reply (@data/@len: the reply's
 * data, the JDWP command's reply layout, possibly 0 bytes; it is not a DDM
 * chunk), DDM_REPLY_ERROR (@jdwp_error), DDM_REPLY_TIMEOUT or
 * DDM_REPLY_VM_GONE. Since: 1.2
 */
typedef struct ddm_jdwp_reply {
    ddm_reply_status status;
    uint16_t jdwp_error;
    const uint8_t *data;
    size_t len;
} ddm_jdwp_reply;

/** Called exactly once per accepted jdwp_request. Since: 1.2 */
typedef void (*ddm_jdwp_reply_fn)(ddm_plugin *self, ddm_vm *vm, const ddm_jdwp_reply *reply,
                                  void *ud);

/* --------------------------------------------------------------------- VMs */

/** VM lifecycle events. Since: 1.0 */
typedef enum ddm_vm_event {
    DDM_VM_READY = 1,   /**< a DDM-aware VM answered HELO: requests may be sent */
    DDM_VM_CHANGED = 2, /**< its identity (name, features, ...) changed */
    DDM_VM_GONE = 3     /**< last call for this VM; per-VM data is freed right after */
} ddm_vm_event;

/** Lifecycle listener. Plain JVMs (no DDM) never produce events for listeners
 *  registered with register_vm_listener; since 1.2 a plugin hears of them
 *  through register_plain_vm_listener (with ddm_vm_info.ddm 0). Since: 1.0 */
typedef void (*ddm_vm_fn)(ddm_plugin *self, ddm_vm *vm, ddm_vm_event event, void *ud);

/**
 * The server is stopping (`ddmon kill-server`, SIGTERM or SIGINT, a
 * `--replace`): called once, on the loop's thread, after the loop ended
 * and before any VM is closed, while every ready VM's connection is still
 * open (ddm_host.register_stopping). Send here, with request, the last
 * requests that undo what the plugin turned on in a VM and would have
 * turned off when done (a trace running: its stop). The core gives all
 * VMs together at most DDM_STOPPING_FLUSH_MS to take the bytes their
 * sockets do not take at once, then runs the loop for at most
 * DDM_STOPPING_WAIT_MS more while the VMs that had requests in flight
 * answer them: replies, events and streams reach the plugins as usual (a
 * stopped trace comes back and can be saved, its command answered), and
 * timers run. Then each VM is closed so that what was written reaches it
 * (a FIN after the last byte, never a reset that would discard it): every
 * request still pending then gets DDM_REPLY_VM_GONE, a stream cut short
 * ends with -EPIPE, and the listeners hear DDM_VM_GONE as before. A
 * request sent without a callback is fire and forget, as always. Must not
 * block. foreach_vm visits the VMs as usual.
 * Since: 1.8
 */
typedef void (*ddm_stopping_fn)(ddm_plugin *self, void *ud);

/** The longest the core waits, all VMs together, for their sockets to take
 *  the last requests (ddm_stopping_fn) when the server stops, in ms; a VM
 *  whose socket takes nothing for that long is closed with them unsent.
 *  Since: 1.8 */
#define DDM_STOPPING_FLUSH_MS 250u

/** The longest the core then runs the loop, all VMs together, for the
 *  answers to the requests in flight (ddm_stopping_fn), in ms; a VM that
 *  has not answered by then is closed without its answer (DDM_REPLY_VM_GONE).
 *  Since: 1.8 */
#define DDM_STOPPING_WAIT_MS 2000u

/** Visitor for ddm_host.foreach_vm: return 0 to go on, non-zero to stop. Since: 1.1 */
typedef int (*ddm_vm_visit_fn)(ddm_plugin *self, ddm_vm *vm, void *ud);

/**
 * What the core knows about a VM. All strings are UTF-8, borrowed (rule 4),
 * NULL when the VM did not say. Fields are appended only; read a field
 * added after 1.0 only if `size` covers it. Since: 1.0
 */
typedef struct ddm_vm_info {
    uint32_t size;              /**< sizeof(ddm_vm_info) in the core */
    const char *key;            /**< stable id of this VM connection, e.g. "127.0.0.1:8000" */
    const char *transport;      /**< "tcp", "adb", ... */
    const char *device;         /**< device serial, or NULL for local VMs */
    uint32_t pid;               /**< 0 until known */
    int ddm;                    /**< 1 DDM-aware, 0 plain JVM */
    uint32_t protocol_version;  /**< the VM's DDM protocol version from HELO */
    const char *vm_ident;       /**< e.g. "Dalvik v1.6.0" */
    const char *app_name;       /**< current process name ("" or "<pre-initialized>" early) */
    int32_t user_id;            /**< -1 if not sent */
    const char *abi;            /**< e.g. "64-bit (arm64)" */
    const char *jvm_flags;      /**< e.g. "CheckJNI=false" */
    int native_debuggable;      /**< 1/0, -1 if not sent */
    const char *package_name;
    size_t n_features;          /**< from FEAT */
    const char *const *features;
    int debugger;               /**< 1 while a debugger is attached through ddmon; changes
                                     come with DDM_VM_CHANGED */
    uint32_t boot_stage;        /**< HELO's boot-stage tail (API 34, four characters as
                                     DDM_CHUNK), 0 if not sent */
} ddm_vm_info;

/* ------------------------------------------------------------------- views */

/** View shapes. Since: 1.0 */
typedef enum ddm_view_kind {
    DDM_VIEW_TABLE = 1,  /**< typed columns, rows of cells */
    DDM_VIEW_RECORD = 2, /**< ordered key/value fields */
    DDM_VIEW_BLOB = 3    /**< bytes with a media type (e.g. image/png) */
} ddm_view_kind;

/** Cell and field types. Since: 1.0 */
typedef enum ddm_value_type {
    DDM_VAL_STR = 1,
    DDM_VAL_INT = 2,    /**< int64_t */
    DDM_VAL_DOUBLE = 3,
    DDM_VAL_BOOL = 4
} ddm_value_type;

/** A table column: name, type and an optional unit ("B", "ms", "%"). A
 *  DDM_VAL_STR column with unit "list" holds comma-separated names, which
 *  --json and the web API give as an array of strings (doc/json.md). A
 *  DDM_VAL_INT column with unit "epoch_ms" holds points in time (ms since
 *  the Unix epoch, UTC), which the text table, the terminal UI and the web
 *  page show as local dates and times, and --json as the integer ("ms" is
 *  a duration). Since: 1.0; "epoch_ms" since 1.8 (an older core shows
 *  the number) */
typedef struct ddm_column {
    const char *name;
    ddm_value_type type;
    const char *unit;
} ddm_column;

/**
 * One typed headline figure (ddm_host.vm_headline_figures): the numbers
 * behind a headline's text, for scripts (`ddmon vms --json`). @name is
 * 1..DDM_HEADLINE_FIGURE_NAME_MAX of [a-z0-9_] and says its unit
 * ("used_bytes", "used_percent", "count"); @type is DDM_VAL_INT (@i) or
 * DDM_VAL_DOUBLE (@d). Since: 1.2
 */
typedef struct ddm_headline_figure {
    const char *name;
    ddm_value_type type;
    int64_t i;
    double d;
} ddm_headline_figure;

/** A metric family's type (register_metric). Since: 1.3 */
typedef enum ddm_metric_type {
    DDM_METRIC_GAUGE = 1,  /**< a value that goes up and down (bytes in use, threads) */
    DDM_METRIC_COUNTER = 2 /**< a total that only grows while the VM is connected */
} ddm_metric_type;

/**
 * A metric family a plugin reports for each VM (ddm_host.register_metric),
 * served by GET /metrics as "ddmon_NAME" with the labels key, serial, pid
 * and app of the VM (the core adds them) and @label, if any. Follow the
 * Prometheus naming rules: the base unit as the name's suffix ("_bytes",
 * "_seconds"; never KiB or ms), "_total" last for a counter.
 *  - @name: 1..DDM_METRIC_NAME_MAX of [a-z0-9_], starting with a letter,
 *    not "vms" nor starting with "vm_" or "build_" (the core's own
 *    families), ending in "_total"
 *    iff @type is DDM_METRIC_COUNTER, and else not in "_count", "_sum",
 *    "_bucket", "_created" or "_info";
 *  - @unit: NULL or [a-z]+ ("bytes", "seconds"), the suffix of the name
 *    before any "_total";
 *  - @help: one line for humans (required), at most DDM_METRIC_HELP_MAX;
 *  - @label: NULL or the name of the family's one label of its own
 *    ([a-z][a-z0-9_]*, not key, serial, pid or app), e.g. "heap", "state";
 *  - @view: NULL or the name of the per-VM view whose data the family
 *    reports. While someone scrapes /metrics, the core counts a look at
 *    that view (view_watchers), so a plugin that polls only while its
 *    view is watched polls for its metrics too.
 * Since: 1.3
 */
typedef struct ddm_metric_family {
    const char *name;
    ddm_metric_type type;
    const char *unit;
    const char *help;
    const char *label;
    const char *view;
} ddm_metric_family;

/** One sample of a family for one VM (ddm_host.vm_metric): the value of
 *  the family's label (NULL when it has none) and the value. Since: 1.3 */
typedef struct ddm_metric_sample {
    const char *label;
    double value;
} ddm_metric_sample;

/* ---------------------------------------------------------------- commands */

/** Results for ddm_host.cmd_finish; also the client's exit status. Since: 1.0 */
typedef enum ddm_cmd_status {
    DDM_CMD_OK = 0,
    DDM_CMD_FAILED = 1,     /**< the command ran and failed (the VM said no, a file error) */
    DDM_CMD_USAGE = 2,      /**< bad arguments */
    DDM_CMD_NOT_FOUND = 3   /**< the VM (or thread, heap, ...) named does not exist */
} ddm_cmd_status;

/**
 * A user command ("ddmon gc PID"). @argv[0] is the command name. Finish it
 * with cmd_finish, now or later (e.g. from a reply callback); @cmd stays
 * valid until then. Return 0, or a negative errno to have the core finish
 * it as failed. Since: 1.0
 */
typedef int (*ddm_command_fn)(ddm_plugin *self, ddm_cmd *cmd, int argc,
                              const char *const *argv, void *ud);

/**
 * Make view @name of @vm now (vm_view_declare): somebody asks for it or
 * begins to watch it, and this plugin has not made it. Make it with
 * view_new (@vm, @name) and fill it as it would be had it been made when
 * the VM became ready: the same columns, the same content. Making nothing
 * is allowed (the view then does not exist). Called only for a DDM VM
 * that is ready and whose DDM_VM_GONE has not begun, possibly just before
 * its DDM_VM_READY reaches this plugin's listener (a VM that becomes ready
 * while a watch would count the view), so make the per-VM state there if
 * it is not there yet. Never from inside a host call of this plugin's.
 * Since: 1.6
 */
typedef void (*ddm_view_make_fn)(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud);

/**
 * Take back VM @vm's view @name (vm_view_unmake): it was made (by the
 * declaration's make, or by the plugin itself when data came) and nobody
 * has watched it since for the core's linger (DDM_VIEW_UNMAKE_LINGER_MS).
 * Free it with view_free, and any state kept only for it, so the VM costs
 * what it did before anybody asked; the next ask makes it again with make.
 * The core does not fill a view made again: the plugin's make should fill
 * it from what it still holds (in-tree, heap and nativeheap.segments do;
 * the alloc and nativeheap NHGT views come back empty until the next
 * reply). Not freeing it is allowed: the core asks again 2, 4 ... at most
 * 32 lingers later, for as long as the view lives, and a linger after a
 * watch of it ends. @ud is the declaration's. Called
 * only for a VM that is still there, from the core's loop, never from
 * inside a host call of this plugin's. Since: 1.6
 */
typedef void (*ddm_view_unmake_fn)(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud);

/** How long a declared view made on demand stays unwatched before the core
 *  calls its unmake (vm_view_unmake), in ms. Since: 1.6 */
#define DDM_VIEW_UNMAKE_LINGER_MS 10000

/** What a ddm_timer_fn returns. Before 1.7 any non-zero value keeps the
 *  timer. Since: 1.7 (0 and 1 since 1.0) */
#define DDM_TIMER_STOP 0  /**< the timer goes (its ud_free runs) */
#define DDM_TIMER_KEEP 1  /**< run again after its interval */
/** The timer stays (same id) but is not armed again: it runs again one
 *  interval after something wakes it: a change of the watches (a watch
 *  begins or ends, a view is made while watches exist: what moves
 *  watch_generation; the VM list's watchers too), at once when a watch
 *  begins if it opted in with timer_wake_on_watch, or
 *  ddm_host.timer_wake. For a tick that has provably nothing to do
 *  until then: an idle tick costs a wake-up of the whole process even
 *  when it touches no VM (issue 16). On a core older than 1.7 it is
 *  "keep". A 1.7 core honours it whatever DDM_ABI_MINOR_REQUIRED the
 *  plugin was built with (before 1.7 the documented values were 0 and 1;
 *  keep with DDM_TIMER_KEEP). Since: 1.7 */
#define DDM_TIMER_SLEEP 2

/** Timer callback: return DDM_TIMER_KEEP (1) to keep the timer,
 *  DDM_TIMER_STOP (0) to stop it, DDM_TIMER_SLEEP (1.7) to keep it
 *  unarmed until woken. Since: 1.0 */
typedef int (*ddm_timer_fn)(ddm_plugin *self, void *ud);

/** Frees a ud or data pointer handed to the core. Since: 1.0 */
typedef void (*ddm_free_fn)(void *p);

/* -------------------------------------------------------------------- host */

/**
 * The core's services, built by the core and passed to init(). Append-only
 * within a major version; test members newer than 1.0 with DDM_HOST_HAS().
 * Every function returning int returns 0 or a negative errno unless said.
 */
struct ddm_host {
    uint32_t size;       /**< sizeof(ddm_host) in the core */
    uint16_t abi_major;  /**< the core's ABI */
    uint16_t abi_minor;

    /* --- logging ---------------------------------------------------- 1.0 */
    /** Log under the plugin's name (domain "ddmon-plugin-NAME"). */
    void (*log)(ddm_plugin *self, ddm_log_level level, const char *fmt, ...) DDM_PRINTF(3, 4);

    /* --- plugin state ----------------------------------------------- 1.0 */
    /** Attach plugin-wide state, freed with @data_free after fini. Replaces (and frees) the old. */
    void (*set_data)(ddm_plugin *self, void *data, ddm_free_fn data_free);
    void *(*get_data)(ddm_plugin *self);
    /** Option "NAME.KEY=VALUE" from --plugin-opt or the config; NULL if unset. Transfer none. */
    const char *(*config_get)(ddm_plugin *self, const char *key);

    /* --- registration (only inside init) ---------------------------- 1.0 */
    /** Own chunk type @type: VM events of that type (and replies nobody waits for) go to @fn.
     *  One owner per type: -EEXIST if already owned, with a log naming both plugins. */
    int (*register_chunk)(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud, ddm_free_fn ud_free);
    /** Observe chunks read-only: @type, or every type with 0; both directions. */
    int (*register_tap)(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud, ddm_free_fn ud_free);
    /** Be told when DDM VMs become ready, change, or go away. */
    int (*register_vm_listener)(ddm_plugin *self, ddm_vm_fn fn, void *ud, ddm_free_fn ud_free);
    /** Add a client command "ddmon NAME ...". -EEXIST if the name is taken. */
    int (*register_command)(ddm_plugin *self, const char *name, const char *usage,
                            const char *summary, ddm_command_fn fn, void *ud, ddm_free_fn ud_free);

    /** 1 if the user left chunk type @type enabled (--chunks), else 0. A plugin sends no
     *  enabling request (THEN, HPIF, ...) for a disabled type. */
    int (*chunk_enabled)(ddm_plugin *self, uint32_t type);

    /* --- talking to VMs --------------------------------------------- 1.0 */
    /**
     * Send chunk @type with payload @data/@len (copied) to @vm as a JDWP
     * command on 0xC7/1 with a fresh packet id. On success (0) @fn, if not
     * NULL, is called exactly once later, never from inside this call;
     * @timeout_ms 0 means the core's default. On error @fn is never called
     * and @ud stays the caller's: -ENOTCONN (VM not ready or not DDM),
     * -EPERM (type disabled by the user), -ENOSPC (too many pending),
     * -EMSGSIZE. With @fn NULL a reply goes to the type's owner as a
     * DDM_ORIGIN_REPLY chunk. @id_out, if not NULL, receives the packet id.
     */
    int (*request)(ddm_plugin *self, ddm_vm *vm, uint32_t type, const void *data, size_t len,
                   unsigned timeout_ms, ddm_reply_fn fn, void *ud, uint32_t *id_out);
    /** What the core knows of @vm. Transfer none; valid until the next DDM_VM_CHANGED. */
    const ddm_vm_info *(*vm_info)(ddm_vm *vm);
    /** Update the VM's name as a plugin learned it (APNM). NULL leaves a field unchanged,
     *  user_id < 0 too. The core updates its VM list and sends DDM_VM_CHANGED. */
    int (*vm_set_name)(ddm_plugin *self, ddm_vm *vm, const char *app_name,
                       const char *package_name, int32_t user_id);
    /** Attach per-VM data for this plugin (replaces and frees the old); freed at VM gone.
     *  The old data's @data_free is not called when @data is the same pointer.
     *  @data NULL removes the entry (the core then holds nothing for this
     *  plugin and VM; vm_get_data returns NULL). @data may point at
     *  memory the plugin owns and never frees (e.g. a static marker that
     *  says what an idle VM answered) when @data_free is NULL. */
    int (*vm_set_data)(ddm_plugin *self, ddm_vm *vm, void *data, ddm_free_fn data_free);
    void *(*vm_get_data)(ddm_plugin *self, ddm_vm *vm);
    /** Find a VM by "PID", "SERIAL:PID", its key, an app or package name, or
     *  (since 1.2) a unique suffix of one ("notes" for com.example.notes);
     *  NULL if none (or ambiguous). A command should use cmd_find_vm. */
    ddm_vm *(*find_vm)(ddm_plugin *self, const char *spec);
    /** A short headline figure shown in the VM list and `ddmon watch`, e.g. label
     *  "threads" text "23". NULL @text removes it. Copied. A VM holds at most
     *  DDM_HEADLINE_LABELS_MAX (32) labels (all plugins together): a new one
     *  past them is -ENOSPC (cores from 1.5 on; before, no cap). */
    int (*vm_headline)(ddm_plugin *self, ddm_vm *vm, const char *label, const char *text);

    /* --- timers ----------------------------------------------------- 1.0 */
    /** Call @fn every @interval_ms. Returns a timer id > 0, or 0 on error (ud_free called). */
    uint32_t (*timer_add)(ddm_plugin *self, unsigned interval_ms, ddm_timer_fn fn,
                          void *ud, ddm_free_fn ud_free);
    /** Stop a timer (its ud_free runs). Unknown ids are ignored. */
    void (*timer_remove)(ddm_plugin *self, uint32_t id);

    /* --- views ------------------------------------------------------ 1.0 */
    /**
     * Create a view named @name ("threads", "heap.summary"), per VM or
     * global (@vm NULL), with a human title. It is published, empty, at
     * once; it goes away with its VM, with the plugin, or by view_free.
     * NULL if the name is taken for that scope.
     */
    ddm_view *(*view_new)(ddm_plugin *self, ddm_vm *vm, const char *name, ddm_view_kind kind,
                          const char *title);
    /** Set a table's columns (copied). Changing them clears the rows. */
    int (*view_set_columns)(ddm_view *view, const ddm_column *cols, size_t n_cols);
    /** Start new content; frontends keep seeing the old content until view_commit. */
    int (*view_begin)(ddm_view *view);
    /** Table: start the next row; then one cell call per column, in column order. */
    int (*view_row)(ddm_view *view);
    int (*view_str)(ddm_view *view, const char *value); /**< NULL = null cell */
    int (*view_int)(ddm_view *view, int64_t value);
    int (*view_double)(ddm_view *view, double value);
    int (*view_bool)(ddm_view *view, int value);
    /** Record: append (or replace) field @key. */
    int (*view_field_str)(ddm_view *view, const char *key, const char *value);
    int (*view_field_int)(ddm_view *view, const char *key, int64_t value);
    int (*view_field_double)(ddm_view *view, const char *key, double value);
    int (*view_field_bool)(ddm_view *view, const char *key, int value);
    /** Blob: set the bytes (copied) and their media type. */
    int (*view_blob)(ddm_view *view, const char *media_type, const void *data, size_t len);
    /** Publish what was built since view_begin; frontends are told it changed. */
    int (*view_commit)(ddm_view *view);
    /** Unpublish and free the view now. */
    void (*view_free)(ddm_view *view);
    /** How many frontends watch this view now (a snapshot counts). Poll only when > 0. */
    int (*view_watchers)(ddm_view *view);

    /* --- commands --------------------------------------------------- 1.0 */
    /** The command's result view (created on first call, sent to the client at finish). */
    ddm_view *(*cmd_result)(ddm_cmd *cmd, ddm_view_kind kind, const char *title);
    /** Finish @cmd with a status and a one-line message (may be NULL); @cmd is invalid after. */
    void (*cmd_finish)(ddm_cmd *cmd, ddm_cmd_status status, const char *message);
    /** The working directory of the client that gave @cmd (absolute), or NULL if unknown:
     *  resolve relative paths the user typed against it, never against the server's.
     *  Transfer none, valid until cmd_finish. */
    const char *(*cmd_cwd)(ddm_cmd *cmd);

    /* --- VMs -------------------------------------------------------- 1.1 */
    /**
     * Call @fn(self, vm, @ud) for each VM requests can go to: every DDM VM
     * whose DDM_VM_READY has been delivered (or is being delivered) and
     * whose DDM_VM_GONE has not begun. Plain JVMs and VMs still connecting
     * are not visited: plugins get no events for them. Order unspecified.
     * Returns how many calls were made; stops early when @fn returns
     * non-zero. Allowed any time, from init on.
     * Ownership and VMs going away: the core takes a snapshot of its VMs
     * and holds a reference on each until the walk ends, then calls @fn only
     * for those still ready at their turn, so a VM that goes away during the
     * walk (even because of something @fn did) is skipped, never handed
     * over dangling. A VM that becomes ready during the walk is not visited.
     * @vm is borrowed, as in a listener: valid until its DDM_VM_GONE; keep
     * nothing else. Nothing to free. Since: 1.1; test DDM_HOST_HAS(host,
     * foreach_vm) if the plugin also loads into a 1.0 core.
     */
    size_t (*foreach_vm)(ddm_plugin *self, ddm_vm_visit_fn fn, void *ud);

    /* --- streamed chunks and progress ------------------------------- 1.2 */
    /**
     * Own chunk type @type as a stream (see ddm_stream_ops): its events go
     * to @ops in pieces as they arrive, never held whole and not capped by
     * --max-packet. Only inside init. @ops is copied; every member must be
     * set (else -EINVAL). One owner per type, as register_chunk (-EEXIST).
     * Since: 1.2; test DDM_HOST_HAS(host, register_chunk_stream).
     */
    int (*register_chunk_stream)(ddm_plugin *self, uint32_t type, const ddm_stream_ops *ops,
                                 void *ud, ddm_free_fn ud_free);
    /**
     * Tell the client that gave @cmd how far it got: @done of @total units
     * (@total 0 = unknown), @unit "B" for bytes (the client shows sizes and
     * a rate) or NULL for plain counts. Call as often as you like: the core
     * passes on at most a few per second, and always the last one before
     * cmd_finish. -EINVAL for a finished command. Since: 1.2
     */
    int (*cmd_progress)(ddm_cmd *cmd, uint64_t done, uint64_t total, const char *unit);
    /**
     * The directory the user asked files to go to (ddmon --out-dir DIR),
     * absolute, or NULL if none was given. Put files a command writes
     * there unless the command's own arguments say otherwise. Transfer
     * none, valid until cmd_finish. Since: 1.2
     */
    const char *(*cmd_out_dir)(ddm_cmd *cmd);
    /**
     * The figures behind headline @label of @vm (see vm_headline, which
     * keeps the text for terminals): each becomes the field "LABEL_NAME"
     * of the VM's record view "headline" (owner "ddmon"), and a member of
     * the VM's row and object in `--json` output. Replaces the label's
     * figures; @n 0 removes them. At most DDM_HEADLINE_FIGURES_MAX; a bad
     * name or type -EINVAL, a long label -EMSGSIZE, a new label past the
     * VM's DDM_HEADLINE_LABELS_MAX (32) -ENOSPC (cores from 1.5 on). Copied. Since: 1.2;
     * test DDM_HOST_HAS(host, vm_headline_figures).
     */
    int (*vm_headline_figures)(ddm_plugin *self, ddm_vm *vm, const char *label,
                               const ddm_headline_figure *figs, size_t n);

    /* --- plain JVMs over standard JDWP ------------------------------ 1.2 */
    /**
     * Be told of plain JVMs (HotSpot, OpenJ9: no DDM): DDM_VM_READY once one
     * is known (pid and main class filled in where ddmon could see them),
     * DDM_VM_CHANGED (a debugger attached or left: ddm_vm_info.debugger),
     * DDM_VM_GONE (last call; per-VM data freed right after). Only inside
     * init. A plugin that registers nothing here never sees a plain JVM, as
     * in 1.0. If a plain JVM later answers HELO after all, its plain
     * listeners hear DDM_VM_GONE before the DDM listeners' DDM_VM_READY.
     * Since: 1.2
     */
    int (*register_plain_vm_listener)(ddm_plugin *self, ddm_vm_fn fn, void *ud,
                                      ddm_free_fn ud_free);
    /** foreach_vm for plain JVMs: those whose plain DDM_VM_READY was delivered
     *  and whose DDM_VM_GONE has not begun; the same snapshot rules. Since: 1.2 */
    size_t (*foreach_plain_vm)(ddm_plugin *self, ddm_vm_visit_fn fn, void *ud);
    /**
     * Send the standard JDWP command @cmdset/@cmd with @data/@len (copied)
     * to plain JVM @vm, on ddmon's own packet ids (never a debugger's).
     * Only read-only commands the core allows (doc/protocol.md, "Plain
     * JVMs"): VirtualMachine Version, AllThreads, IDSizes, Capabilities,
     * ClassPaths, CapabilitiesNew; ReferenceType Signature, Methods,
     * SourceFile; Method LineTable; ThreadReference Name, Status,
     * ThreadGroup, Frames, FrameCount; ThreadGroupReference Name; and
     * ThreadReference Suspend and Resume of one thread at a time (a second
     * Suspend while one is held: -EBUSY; the core resumes a thread a
     * plugin left suspended when it unloads). Anything else -EPERM: no
     * vendor command set ever. -ENOTCONN: @vm is not a plain JVM; -EBUSY:
     * a debugger is attached (ddmon leaves the VM to it); -ENOSPC,
     * -EMSGSIZE as request. @fn is required and called exactly once,
     * never from inside this call. Since: 1.2
     */
    int (*jdwp_request)(ddm_plugin *self, ddm_vm *vm, uint8_t cmdset, uint8_t cmd,
                        const void *data, size_t len, unsigned timeout_ms, ddm_jdwp_reply_fn fn,
                        void *ud);

    /**
     * Resolve @spec for command @cmd as find_vm does; when no VM or
     * several match, finish @cmd with DDM_CMD_NOT_FOUND and ddmon's own
     * message (the one its core commands give: "no VM matches 'X' (try
     * 'ddmon vms')", or the matching VMs listed) and return NULL. Since:
     * 1.2; test DDM_HOST_HAS(host, cmd_find_vm).
     */
    ddm_vm *(*cmd_find_vm)(ddm_cmd *cmd, const char *spec);

    /**
     * 1 once nobody waits for @cmd's answer any more (the client that gave
     * it went away: its process was killed, or the user pressed Ctrl-C),
     * else 0. A long command (a heap dump) checks it as it goes, stops its
     * work and finishes; the core still expects the one cmd_finish. Since:
     * 1.2; test DDM_HOST_HAS(host, cmd_cancelled).
     */
    int (*cmd_cancelled)(ddm_cmd *cmd);

    /* --- metrics ---------------------------------------------------- 1.3 */
    /**
     * Declare metric family @family (see ddm_metric_family; the strings are
     * copied). Only inside init. Two plugins may declare the same name only
     * with the same type, unit and label (as the threads and jvm plugins
     * share "threads"); else -EEXIST. -EINVAL for a bad name, type, unit or
     * label, -EMSGSIZE for a long help, -ENOSPC past DDM_METRIC_FAMILIES_MAX.
     * The families are listed in the global view "metrics.families" (owner
     * "ddmon"); they go when the plugin unloads. Since: 1.3; test
     * DDM_HOST_HAS(host, register_metric).
     */
    int (*register_metric)(ddm_plugin *self, const ddm_metric_family *family);
    /**
     * Replace @vm's samples of family @name (declared by this plugin) with
     * @samples (@n of them, copied; @n 0 removes them): all the family's
     * series for that VM at once, so a label value not given again (a
     * thread state no thread is in) is gone. Distinct label values
     * (-EINVAL if one repeats, or if a family with a label gets a NULL
     * one); at most DDM_METRIC_SAMPLES_MAX (-E2BIG); -ENOENT for a name
     * this plugin did not declare. The samples live in @vm's table view
     * "metrics" (owner "ddmon": name, label, value) and go with the VM
     * (or the plugin). Cheap to call on every update: an unchanged set
     * publishes nothing. Each plugin's samples are its own: when two
     * plugins sharing a family both set it on one VM, neither replaces the
     * other's; the view has the union, and where both give the same label
     * value (or both none) the plugin whose name sorts first is shown.
     * A failure changes nothing: log it (once per VM is enough). Since: 1.3
     */
    int (*vm_metric)(ddm_plugin *self, ddm_vm *vm, const char *name, const ddm_metric_sample *samples,
                     size_t n);

    /**
     * A number that changes whenever view_watchers may answer otherwise
     * for some view: a frontend's watch began or ended (a snapshot, a
     * one-shot view, a /metrics scrape count), or a view was created while
     * watches exist. A periodic tick that polls only watched views walks
     * every VM (foreach_vm) when it changed, and else only the VMs it left
     * something running on, so an idle tick costs nothing per VM. Since:
     * 1.4; test DDM_HOST_HAS(host, watch_generation).
     */
    uint64_t (*watch_generation)(ddm_plugin *self);

    /* --- polls when a watch begins ---------------------------------- 1.5 */
    /**
     * With @on 1, run this plugin's timer @id (from timer_add) at the next
     * loop iteration whenever a frontend begins to watch or ask for views
     * nobody watched (`ddmon snapshot`, `ddmon view`, `ddmon watch`), then
     * on its interval again; @on 0 stops that. Meant for the tick that asks
     * a VM for what a view shows only while the view is watched: the first
     * look at such a view then waits for that poll and the requests it sent
     * (answered, timed out or the VM gone), not for the next tick. The core
     * wakes only the timers that opted in: O(those timers) per watch, none
     * per VM. -ENOENT unless @id is a live timer of this plugin. Since: 1.5;
     * test DDM_HOST_HAS(host, timer_wake_on_watch), or call
     * ddm_tick_wake_on_watch (<ddmon/ticklist.h>), which does.
     */
    int (*timer_wake_on_watch)(ddm_plugin *self, uint32_t id, int on);

    /* --- views made when asked -------------------------------------- 1.6 */
    /**
     * Declare the per-VM view @name (1..DDM_VIEW_MAX_STRING bytes) that
     * this plugin makes for DDM VMs, so that a VM nobody looks at holds
     * none: the core calls @make for a VM when a frontend asks for or
     * begins to watch that view of it (`ddmon view`, `ddmon snapshot`,
     * `ddmon watch`, the TUI, the web, a /metrics scrape counting a
     * family's view), or lists every view, and the plugin has not made
     * it. The plugin still makes it itself with view_new whenever it has
     * something to show (and must, before it publishes), and a view it
     * has made is never asked for again until it is freed. Until it is
     * made, the plugin holds no handle and has no watcher to poll for.
     * Only inside init. -EINVAL for a bad name or a NULL @make, -EEXIST if
     * this plugin declared @name already. @ud/@ud_free as for every
     * register_* call. Since: 1.6; on an older core (test
     * DDM_HOST_HAS(host, vm_view_declare)) make the views at
     * DDM_VM_READY as before.
     */
    int (*vm_view_declare)(ddm_plugin *self, const char *name, ddm_view_make_fn make, void *ud,
                           ddm_free_fn ud_free);

    /**
     * How many frontends watch the VM list now (the core's global "vms"
     * view): a live view or the TUI, the web dashboard, a snapshot, and for
     * a while after a one-shot `ddmon vms` (its interest). A plugin that
     * keeps a figure of the VM list (a headline) fresh only while someone
     * looks asks this, O(1), from a tick or a timer that a watch wakes.
     * Since: 1.6; test DDM_HOST_HAS(host, vm_list_watchers).
     */
    int (*vm_list_watchers)(ddm_plugin *self);

    /**
     * Let the core take back the views @name (declared by this plugin with
     * vm_view_declare): every view of that name, made by the
     * declaration's make or by the plugin itself (view_new when it had
     * something to show), unwatched for DDM_VIEW_UNMAKE_LINGER_MS gets
     * @unmake (ddm_view_unmake_fn); one the plugin keeps is asked again
     * (ddm_view_unmake_fn). The core keeps these views in a queue by
     * deadline: no walk over every view. Only inside init, after
     * vm_view_declare of @name.
     * -EINVAL (NULL @unmake, @name not declared by this plugin), -EEXIST
     * (set already). Since: 1.6; test DDM_HOST_HAS(host, vm_view_unmake);
     * without it a view stays until the VM goes.
     */
    int (*vm_view_unmake)(ddm_plugin *self, const char *name, ddm_view_unmake_fn unmake);

    /* --- timers that sleep ------------------------------------------ 1.7 */
    /**
     * Wake this plugin's timer @id if it sleeps (its callback returned
     * DDM_TIMER_SLEEP): it runs again after its interval, as if it had
     * kept ticking. Called while the timer's own callback runs, that run's
     * DDM_TIMER_SLEEP keeps it armed instead. A plugin calls it where its
     * own state gives the timer work (a VM put on the tick list, a linger
     * begun, a deadline to check); the core wakes sleeping timers itself
     * when the watches change. O(1). 0 (also for a timer that does not
     * sleep), -ENOENT unless @id is a live timer of this plugin. Since:
     * 1.7; test DDM_HOST_HAS(host, timer_wake), or call ddm_timer_wake
     * (<ddmon/ticklist.h>), which does.
     */
    int (*timer_wake)(ddm_plugin *self, uint32_t id);

    /* --- the server stopping ---------------------------------------- 1.8 */
    /**
     * Call @fn (ddm_stopping_fn) once when the server stops, before the
     * VMs' connections close: where a plugin sends the requests that undo
     * what it left running in a VM (the profile plugin stops a trace of
     * its own, the alloc plugin turns off the allocation tracking its
     * command turned on). Hooks run in load order, then registration
     * order. Not called when only the plugin unloads (a failed init) nor
     * when a VM goes away on its own (DDM_VM_GONE: its connection is
     * closed then). Only inside init. -EINVAL for a NULL @fn; @ud/@ud_free
     * as for every register_* call (@ud_free runs at unload). Since: 1.8;
     * test DDM_HOST_HAS(host, register_stopping): an older core closes the
     * VMs with nothing sent.
     */
    int (*register_stopping)(ddm_plugin *self, ddm_stopping_fn fn, void *ud, ddm_free_fn ud_free);

    /* ABI 1.9 and later: new members go here, never above. */
};

/** True if the core's host table has member @m (for members added after 1.0). Since: 1.0 */
#define DDM_HOST_HAS(host, m) \
    (offsetof(ddm_host, m) + sizeof(((const ddm_host *)0)->m) <= (host)->size)

/**
 * Read the plugin's option @key (host->config_get: --plugin-opt NAME.KEY=VALUE)
 * as an unsigned decimal number in [@min, @max]. Unset: @def. Anything else
 * (not a number, out of range): a warning naming the option, and @def.
 * Header-only: calls only host functions. Since: 1.0
 */
static inline unsigned long ddm_config_uint(const ddm_host *host, ddm_plugin *self, const char *key,
                                            unsigned long min, unsigned long max, unsigned long def)
{
    const char *v = host->config_get(self, key);
    char *end;
    unsigned long n;
    if (!v)
        return def;
    errno = 0;
    n = strtoul(v, &end, 10);
    if (errno || end == v || *end || v[0] == '-' || n < min || n > max) {
        host->log(self, DDM_LOG_WARNING, "option %s=%s is not a number in %lu..%lu; using %lu", key, v,
                  min, max, def);
        return def;
    }
    return n;
}

/**
 * 1 if jdwp_request accepts the standard JDWP command @cmdset/@cmd, 0 if
 * it refuses it with -EPERM whatever the VM: the core's read-only
 * allow-list (doc/protocol.md, "Plain JVMs"), the one definition the core
 * and the test kit both use. VirtualMachine (1): Version 1, AllThreads 4,
 * IDSizes 7, Capabilities 12, ClassPaths 13, CapabilitiesNew 17;
 * ReferenceType (2): Signature 1, Methods 5, SourceFile 7; Method (6):
 * LineTable 1; ThreadReference (11): Name 1, Suspend 2, Resume 3, Status
 * 4, ThreadGroup 5, Frames 6, FrameCount 7; ThreadGroupReference (12):
 * Name 1. Suspend and Resume are on it but further bound (one held thread
 * per VM, see jdwp_request). Never a vendor set (128-255). Header-only.
 * Since: 1.2
 */
static inline int ddm_jdwp_command_allowed(uint8_t cmdset, uint8_t cmd)
{
    switch (cmdset) {
    case 1: /* VirtualMachine */
        return cmd == 1 || cmd == 4 || cmd == 7 || cmd == 12 || cmd == 13 || cmd == 17;
    case 2: /* ReferenceType */
        return cmd == 1 || cmd == 5 || cmd == 7;
    case 6: /* Method */
        return cmd == 1;
    case 11: /* ThreadReference */
        return cmd >= 1 && cmd <= 7;
    case 12: /* ThreadGroupReference */
        return cmd == 1;
    default:
        return 0;
    }
}

/* Helpers of ddm_metric_family_check. */
static inline int ddm_metric_word_ok_(const char *s, int more, size_t max)
{
    size_t n = 0;
    if (s == NULL || *s < 'a' || *s > 'z')
        return 0;
    for (; *s; s++, n++)
        if (!((*s >= 'a' && *s <= 'z') || (more && ((*s >= '0' && *s <= '9') || *s == '_'))))
            return 0;
    return n <= max;
}
static inline int ddm_metric_ends_with_(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n > k && memcmp(s + n - k, suffix, k) == 0;
}

/**
 * 0 if register_metric accepts @f's fields, else the error it returns:
 * -EINVAL for a bad name, type, unit, label, view or an empty help,
 * -EMSGSIZE for a help past DDM_METRIC_HELP_MAX (the rules are those of
 * ddm_metric_family). The one definition the core and the test kit both
 * use. Header-only. Since: 1.3
 */
static inline int ddm_metric_family_check(const ddm_metric_family *f)
{
    static const char *const not_gauge[] = {"_total", "_count", "_sum", "_bucket", "_created", "_info"};
    static const char *const vm_labels[] = {"key", "serial", "pid", "app"};
    size_t n, i;
    if (f == NULL || (f->type != DDM_METRIC_GAUGE && f->type != DDM_METRIC_COUNTER) ||
        !ddm_metric_word_ok_(f->name, 1, DDM_METRIC_NAME_MAX))
        return -EINVAL;
    n = strlen(f->name);
    if (strcmp(f->name, "vms") == 0 || strncmp(f->name, "vm_", 3) == 0 ||
        strncmp(f->name, "build_", 6) == 0 || f->name[n - 1] == '_')
        return -EINVAL;
    if (f->type == DDM_METRIC_COUNTER) {
        if (!ddm_metric_ends_with_(f->name, n, "_total"))
            return -EINVAL;
        n -= strlen("_total"); /* the unit comes before it */
    } else {
        for (i = 0; i < sizeof not_gauge / sizeof not_gauge[0]; i++)
            if (ddm_metric_ends_with_(f->name, n, not_gauge[i]))
                return -EINVAL;
    }
    if (f->unit != NULL) {
        size_t k = strlen(f->unit);
        if (!ddm_metric_word_ok_(f->unit, 0, DDM_METRIC_NAME_MAX) || n <= k + 1 ||
            f->name[n - k - 1] != '_' || memcmp(f->name + n - k, f->unit, k) != 0)
            return -EINVAL;
    }
    if (f->label != NULL) {
        if (!ddm_metric_word_ok_(f->label, 1, DDM_METRIC_NAME_MAX))
            return -EINVAL;
        for (i = 0; i < sizeof vm_labels / sizeof vm_labels[0]; i++)
            if (strcmp(f->label, vm_labels[i]) == 0)
                return -EINVAL;
    }
    if (f->view != NULL && (*f->view == '\0' || strlen(f->view) > DDM_VIEW_MAX_STRING))
        return -EINVAL;
    if (f->help == NULL || *f->help == '\0' || strchr(f->help, '\n') != NULL)
        return -EINVAL;
    return strlen(f->help) > DDM_METRIC_HELP_MAX ? -EMSGSIZE : 0;
}

/**
 * @host->vm_metric(@self, @vm, @name, @samples, @n), and when it fails one
 * warning naming the VM, the family and the error: at most one per
 * *@logged, a flag the plugin keeps per VM (0 at first, set here), so a
 * VM whose figures keep failing logs once, not at every update. Returns
 * vm_metric's result. The caller checks DDM_HOST_HAS(host, vm_metric).
 * Header-only. Since: 1.3
 */
static inline int ddm_vm_metric_logged(const ddm_host *host, ddm_plugin *self, ddm_vm *vm,
                                       const char *name, const ddm_metric_sample *samples,
                                       size_t n, int *logged)
{
    int rc = host->vm_metric(self, vm, name, samples, n);
    if (rc < 0 && !*logged) {
        const ddm_vm_info *info = host->vm_info(vm);
        host->log(self, DDM_LOG_WARNING, "VM %s: metric %s not set (%lu samples): %s",
                  info != NULL && info->key != NULL ? info->key : "?", name, (unsigned long)n,
                  strerror(-rc));
        *logged = 1;
    }
    return rc;
}

/* -------------------------------------------------------------- descriptor */

/** "DDMP": the descriptor's magic. Since: 1.0 */
#define DDM_PLUGIN_MAGIC 0x44444D50u

/**
 * The one symbol a plugin exports. The first four fields are frozen across
 * all ABI versions so that any core can read them. Since: 1.0
 */
typedef struct ddm_plugin_desc {
    uint32_t magic;      /**< DDM_PLUGIN_MAGIC */
    uint16_t abi_major;  /**< DDM_ABI_MAJOR the plugin was built with */
    uint16_t abi_minor;  /**< DDM_ABI_MINOR the plugin was built with */
    uint32_t desc_size;  /**< sizeof(ddm_plugin_desc) the plugin was built with */
    /* end of the frozen prefix */
    const char *name;    /**< must equal the file's basename without ".so" */
    const char *version;
    const char *license; /**< SPDX identifier */
    const char *summary;
    /** Register everything here and nothing later. Return 0, or a negative
     *  errno: the core then undoes every registration of this plugin. */
    int (*init)(ddm_plugin *self, const ddm_host *host);
    /** Optional: called before unload (not after a failed init). */
    void (*fini)(ddm_plugin *self);
} ddm_plugin_desc;

/** Name of the exported descriptor symbol. Since: 1.0 */
#define DDM_PLUGIN_SYMBOL "ddm_plugin_descriptor"

#ifdef __cplusplus
#define DDM_EXTERN_C extern "C"
#else
#define DDM_EXTERN_C
#endif

/**
 * Define the plugin's descriptor; write it once, at file scope:
 *   DDM_PLUGIN_DEFINE("threads", "1.0", "Apache-2.0", "thread table", my_init, my_fini);
 * It records DDM_ABI_MINOR_REQUIRED as the plugin's minor (since 1.1; in 1.0
 * it was always DDM_ABI_MINOR, the default). Since: 1.0
 */
#define DDM_PLUGIN_DEFINE(name_, version_, license_, summary_, init_, fini_)         \
    DDM_EXTERN_C DDM_EXPORT const ddm_plugin_desc ddm_plugin_descriptor;               \
    DDM_EXTERN_C DDM_EXPORT const ddm_plugin_desc ddm_plugin_descriptor = {            \
        DDM_PLUGIN_MAGIC, DDM_ABI_MAJOR, DDM_ABI_MINOR_REQUIRED, (uint32_t)sizeof(ddm_plugin_desc), \
        name_, version_, license_, summary_, init_, fini_}

#ifdef __cplusplus
}
#endif

#endif /* DDMON_PLUGIN_H */
