/* SPDX-License-Identifier: Apache-2.0
 *
 * The control protocol's wire format, shared by the server (server/control.c) and
 * the client (client.c): newline-delimited JSON, one object per line.
 * This file owns framing (a line splitter with a hard cap), request
 * parsing and validation, and the small response helpers. It does no I/O
 * and knows nothing of the monitor, so it is unit-tested on its own
 * (tests/unit/server/test-control.c).
 *
 * Requests:  {"op":"vms"} {"op":"vms","jq":true} {"op":"view","name":"threads","vm":"1234"}
 *            {"op":"views"} {"op":"plugins"} {"op":"watch","name":null}
 *            {"op":"command","argv":["gc","1234"]} {"op":"commands"}
 *            {"op":"kill"} {"op":"version"} {"op":"scan","spec":"local"}
 *            {"op":"select","spec":"APP"} (spec "" clears, absent/null asks)
 * Responses: {"ok":true,...} or {"ok":false,"error":"...","code":N}
 * Events (after a watch): {"event":"added|changed|removed","view":{...}}
 *
 * Invariants: no line longer than the framer's cap is ever buffered in
 * full; a request nested deeper than DDM_CTL_MAX_DEPTH is refused before
 * json-glib (a recursive parser) sees it.
 */
#ifndef DDM_CTLPROTO_H
#define DDM_CTLPROTO_H

#include <glib.h>
#include <json-glib/json-glib.h>

/* Exit codes of every client command; `code` in error responses. They
 * match ddm_cmd_status for 0..3. */
#define DDM_EXIT_OK 0
#define DDM_EXIT_FAILED 1     /* the command ran and failed */
#define DDM_EXIT_USAGE 2      /* bad arguments or request */
#define DDM_EXIT_NOT_FOUND 3  /* VM or view unknown */
#define DDM_EXIT_NO_SERVER 4  /* no server and none could be started */

#define DDM_CTL_MAX_REQUEST (1024 * 1024)        /* request line cap (server) */
#define DDM_CTL_MAX_RESPONSE (512 * 1024 * 1024) /* response line cap (client) */
#define DDM_CTL_MAX_DEPTH 64                     /* JSON nesting cap */
#define DDM_CTL_MAX_ARGS 256                     /* argv entries of a command */
#define DDM_CTL_MAX_STRING 4096                  /* name, vm, spec, each argv entry */

#define DDM_CTL_ERROR (ddm_ctl_error_quark())
GQuark ddm_ctl_error_quark(void);
/* Error codes are the exit codes above. */

typedef enum {
    DDM_CTL_OP_VERSION = 0,
    DDM_CTL_OP_VMS,
    DDM_CTL_OP_VIEW,
    DDM_CTL_OP_VIEWS,
    DDM_CTL_OP_PLUGINS,
    DDM_CTL_OP_WATCH,
    DDM_CTL_OP_COMMAND,
    DDM_CTL_OP_COMMANDS,
    DDM_CTL_OP_KILL,
    DDM_CTL_OP_SCAN,
    DDM_CTL_OP_SELECT
} DdmCtlOp;

typedef struct DdmCtlRequest {
    DdmCtlOp op;
    char *name;     /* view name (view: required; watch: NULL = all) */
    char *vm;       /* VM spec: pid, key or app name; NULL = all */
    char **argv;    /* command: argv, argv[0] the command name (NULL-terminated) */
    char *spec;     /* scan: "local,adb"; select: PID or app name */
    gboolean blobs; /* include blob data (base64) in views */
    gboolean jq;    /* vms: answer {"ok":true,"doc":D}, D the document `ddmon --json vms`
                     * prints (the VM list with headline figures, doc/json.md) */
    char *cwd;      /* command: the client's working directory (absolute), for relative paths */
    char *out_dir;  /* command: where files go (ddmon --out-dir DIR, absolute), or NULL */
} DdmCtlRequest;

/* ------------------------------------------------------------- framing */

typedef struct DdmLineFramer DdmLineFramer;

/** A line splitter refusing lines longer than @max_line bytes. (transfer full) */
DdmLineFramer *ddm_line_framer_new(gsize max_line);
void ddm_line_framer_free(DdmLineFramer *f);
/** Append received bytes. */
void ddm_line_framer_push(DdmLineFramer *f, const void *data, gsize len);
/** The next complete line, without its "\n" (and a "\r" before it),
 *  NUL-terminated; empty lines are skipped. NULL when no complete line is
 *  buffered, or when the current line exceeds the cap: then *@overflow is
 *  set and stays set (the stream cannot be resynchronised; close it).
 *  (transfer full) */
char *ddm_line_framer_next(DdmLineFramer *f, gsize *len, gboolean *overflow);
/** Bytes buffered (not yet returned as lines). */
gsize ddm_line_framer_pending(const DdmLineFramer *f);

/* ------------------------------------------------------------ requests */

/** TRUE if @s (JSON text) nests arrays/objects at most @max_depth deep.
 *  Strings (with escapes) are skipped correctly; garbage is not judged. */
gboolean ddm_ctl_json_depth_ok(const char *s, gsize len, guint max_depth);
/** Parse one line as a JSON object, refusing deep nesting. (transfer full) */
JsonNode *ddm_ctl_parse_object(const char *line, gsize len, GError **error);
/** Parse and validate a request line into @req (cleared first). On error
 *  @req is left cleared and @error (DDM_CTL_ERROR, DDM_EXIT_USAGE) says why. */
gboolean ddm_ctl_request_parse(const char *line, gsize len, DdmCtlRequest *req, GError **error);
void ddm_ctl_request_clear(DdmCtlRequest *req);
const char *ddm_ctl_op_name(DdmCtlOp op);
/** The request as a JSON object (what a client sends). (transfer full) */
JsonNode *ddm_ctl_request_to_json(const DdmCtlRequest *req);

/* ----------------------------------------------------------- responses */

/** One line of JSON, "\n"-terminated: json-glib's generator, with the
 *  0x1f it leaves raw in strings escaped as \u001f and without the ".0"
 *  it appends to a double with an exponent (1e+17.0 -> 1e+17). (transfer full) */
char *ddm_ctl_encode(JsonNode *node, gsize *len);
/** {"ok":false,"error":MESSAGE,"code":CODE} (transfer full) */
JsonNode *ddm_ctl_error_new(int code, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/** {"ok":true} as an object builder ready for more members: finish with
 *  ddm_ctl_ok_end. */
JsonBuilder *ddm_ctl_ok_begin(void);
JsonNode *ddm_ctl_ok_end(JsonBuilder *b);

/* --------------------------------------------- client failures (--json) */

/* With --json a failing client command prints one object
 * {"ok":false,"error":MESSAGE,"code":STATUS,"kind":KIND} on stdout (and its
 * message on stderr, as without --json). */
#define DDM_EXIT_INTERRUPTED 130 /* snapshot: SIGINT/SIGTERM before it printed */

/** The stable name of an exit status for scripts: "ok" (0), "failed" (1),
 *  "usage" (2), "not-found" (3), "no-server" (4), "interrupted" (130);
 *  "failed" for any other status. (transfer none: a static string) */
const char *ddm_ctl_exit_kind(int code);
/** Make @o a failure: set "ok":false, "error", "code" and "kind" (members
 *  of those names are replaced, others kept). @message NULL: a generic
 *  one. @code 0 counts as DDM_EXIT_FAILED (a failure is never "ok"). */
void ddm_ctl_failure_set(JsonObject *o, int code, const char *message);
/** {"ok":false,"error":...,"code":...,"kind":...} (transfer full) */
JsonNode *ddm_ctl_failure_new(int code, const char *message);
/** The message of a line the client printed on stderr, "ddmon: MESSAGE
 *  (try 'ddmon help')\n": MESSAGE without the prefix, the hint or trailing
 *  newlines. NULL when @line does not start with "ddmon: " (progress lines
 *  such as "* ddmon server not running; ... *"). (transfer full) */
char *ddm_ctl_failure_message(const char *line);
/** TRUE if @argv (NULL-terminated, argv[0] the program) holds "--json"
 *  before any "--", i.e. where the option parser would take it. For
 *  failures of the option parser itself. */
gboolean ddm_ctl_argv_wants_json(char *const *argv);

/** Member helpers tolerant of missing or mistyped members. ddm_json_get_int
 *  takes an integer, or a double holding an exact int64 (3.0, 1e18); any
 *  other number (a fraction, beyond the int64 range, NaN, infinite) is
 *  mistyped and gives @fallback. */
const char *ddm_json_get_string(JsonObject *o, const char *member);
gint64 ddm_json_get_int(JsonObject *o, const char *member, gint64 fallback);
gboolean ddm_json_get_bool(JsonObject *o, const char *member, gboolean fallback);
/** Member @member of @o if it is an array, else NULL (@o may be NULL).
 *  (transfer none) */
JsonArray *ddm_json_get_array(JsonObject *o, const char *member);
/** @n's object if @n (may be NULL) holds one, else NULL. (transfer none) */
JsonObject *ddm_json_node_object(JsonNode *n);
/** A copy of member @name of @from set in @to as @as (@as NULL: as @name);
 *  nothing when @from has no such member. */
void ddm_json_copy_member(JsonObject *to, JsonObject *from, const char *name, const char *as);
/** A node holding @o; takes the caller's reference of @o. (transfer full) */
JsonNode *ddm_json_object_node(JsonObject *o);

#endif /* DDM_CTLPROTO_H */
