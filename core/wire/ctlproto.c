/* SPDX-License-Identifier: Apache-2.0
 *
 * Control protocol wire format: line framing with a cap, request parsing
 * and validation, response helpers. Pure: no I/O, no monitor. See
 * ctlproto.h for the message shapes.
 */
#include "core/wire/ctlproto.h"

#include <string.h>

G_DEFINE_QUARK(ddm-ctl-error-quark, ddm_ctl_error)

/* ------------------------------------------------------------- framing */

struct DdmLineFramer {
    GByteArray *buf;
    gsize start;     /* first byte not yet returned */
    gsize scanned;   /* bytes from start already known to hold no '\n' */
    gsize max_line;
    gboolean overflow;
};

DdmLineFramer *ddm_line_framer_new(gsize max_line)
{
    DdmLineFramer *f = g_new0(DdmLineFramer, 1);
    f->buf = g_byte_array_new();
    f->max_line = max_line > 0 ? max_line : DDM_CTL_MAX_REQUEST;
    return f;
}

void ddm_line_framer_free(DdmLineFramer *f)
{
    if (f == NULL)
        return;
    g_byte_array_unref(f->buf);
    g_free(f);
}

static void compact(DdmLineFramer *f)
{
    if (f->start == 0)
        return;
    g_byte_array_remove_range(f->buf, 0, (guint)f->start);
    f->start = 0;
}

void ddm_line_framer_push(DdmLineFramer *f, const void *data, gsize len)
{
    g_return_if_fail(f != NULL);
    if (f->overflow || len == 0)
        return;
    /* Reclaim returned lines before growing. */
    if (f->start > 0 && (f->start >= 65536 || f->start == f->buf->len))
        compact(f);
    /* Never hold more than one over-long line's worth: the overflow is
     * detected by ddm_line_framer_next, but cap memory here too. */
    gsize held = f->buf->len - f->start;
    if (held > f->max_line + 1 && memchr(f->buf->data + f->start, '\n', held) == NULL) {
        f->overflow = TRUE;
        return;
    }
    g_byte_array_append(f->buf, data, (guint)len);
}

char *ddm_line_framer_next(DdmLineFramer *f, gsize *len, gboolean *overflow)
{
    g_return_val_if_fail(f != NULL, NULL);
    if (overflow != NULL)
        *overflow = f->overflow;
    if (f->overflow)
        return NULL;
    for (;;) {
        gsize avail = f->buf->len - f->start;
        const guint8 *base = f->buf->data + f->start;
        const guint8 *nl = avail > f->scanned ? memchr(base + f->scanned, '\n', avail - f->scanned)
                                              : NULL;
        if (nl == NULL) {
            f->scanned = avail;
            if (avail > f->max_line) {
                f->overflow = TRUE;
                if (overflow != NULL)
                    *overflow = TRUE;
                g_byte_array_set_size(f->buf, 0);
                f->start = f->scanned = 0;
            }
            return NULL;
        }
        gsize line_len = (gsize)(nl - base);
        gsize consumed = line_len + 1;
        if (line_len > 0 && base[line_len - 1] == '\r')
            line_len--;
        if (line_len > f->max_line) {
            f->overflow = TRUE;
            if (overflow != NULL)
                *overflow = TRUE;
            g_byte_array_set_size(f->buf, 0);
            f->start = f->scanned = 0;
            return NULL;
        }
        char *line = NULL;
        if (line_len > 0) {
            line = g_malloc(line_len + 1);
            memcpy(line, base, line_len);
            line[line_len] = '\0';
        }
        f->start += consumed;
        f->scanned = 0;
        if (f->start == f->buf->len) {
            g_byte_array_set_size(f->buf, 0);
            f->start = 0;
        }
        if (line != NULL) {
            if (len != NULL)
                *len = line_len;
            return line;
        }
        /* empty line: skip */
    }
}

gsize ddm_line_framer_pending(const DdmLineFramer *f)
{
    return f->buf->len - f->start;
}

/* ------------------------------------------------------------ requests */

gboolean ddm_ctl_json_depth_ok(const char *s, gsize len, guint max_depth)
{
    guint depth = 0;
    gboolean in_string = FALSE, escaped = FALSE;
    for (gsize i = 0; i < len; i++) {
        char c = s[i];
        if (in_string) {
            if (escaped)
                escaped = FALSE;
            else if (c == '\\')
                escaped = TRUE;
            else if (c == '"')
                in_string = FALSE;
            continue;
        }
        switch (c) {
        case '"':
            in_string = TRUE;
            break;
        case '[':
        case '{':
            if (++depth > max_depth)
                return FALSE;
            break;
        case ']':
        case '}':
            if (depth > 0)
                depth--;
            break;
        default:
            break;
        }
    }
    return TRUE;
}

JsonNode *ddm_ctl_parse_object(const char *line, gsize len, GError **error)
{
    if (len > G_MAXSSIZE || memchr(line, '\0', len) != NULL) {
        g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "not JSON: contains a NUL byte");
        return NULL;
    }
    if (!ddm_ctl_json_depth_ok(line, len, DDM_CTL_MAX_DEPTH)) {
        g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "JSON nested deeper than %d levels",
                    DDM_CTL_MAX_DEPTH);
        return NULL;
    }
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    g_autoptr(GError) local = NULL;
    if (!json_parser_load_from_data(parser, line, (gssize)len, &local)) {
        g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "not JSON: %s", local->message);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
        g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "expected a JSON object");
        return NULL;
    }
    return json_node_copy(root);
}

static const struct {
    const char *name;
    DdmCtlOp op;
} ops[] = {
    {"version", DDM_CTL_OP_VERSION}, {"vms", DDM_CTL_OP_VMS},
    {"view", DDM_CTL_OP_VIEW},       {"views", DDM_CTL_OP_VIEWS},
    {"plugins", DDM_CTL_OP_PLUGINS}, {"watch", DDM_CTL_OP_WATCH},
    {"command", DDM_CTL_OP_COMMAND}, {"commands", DDM_CTL_OP_COMMANDS},
    {"kill", DDM_CTL_OP_KILL},       {"scan", DDM_CTL_OP_SCAN},
    {"select", DDM_CTL_OP_SELECT},
};

const char *ddm_ctl_op_name(DdmCtlOp op)
{
    for (gsize i = 0; i < G_N_ELEMENTS(ops); i++)
        if (ops[i].op == op)
            return ops[i].name;
    return "?";
}

void ddm_ctl_request_clear(DdmCtlRequest *req)
{
    g_free(req->name);
    g_free(req->vm);
    g_free(req->spec);
    g_strfreev(req->argv);
    g_free(req->cwd);
    g_free(req->out_dir);
    memset(req, 0, sizeof(*req));
}

/* A string member: absent or null -> *out NULL; a string (bounded, valid
 * UTF-8, no control characters needed) -> copy; an integer is accepted for
 * @allow_int (a pid). Anything else is an error. */
static gboolean get_opt_string(JsonObject *o, const char *member, gboolean allow_int, char **out,
                               GError **error)
{
    *out = NULL;
    JsonNode *n = json_object_get_member(o, member);
    if (n == NULL || JSON_NODE_HOLDS_NULL(n))
        return TRUE;
    if (JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING) {
        const char *s = json_node_get_string(n);
        if (strlen(s) > DDM_CTL_MAX_STRING) {
            g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "\"%s\" is too long (max %d bytes)",
                        member, DDM_CTL_MAX_STRING);
            return FALSE;
        }
        *out = g_strdup(s);
        return TRUE;
    }
    if (allow_int && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_INT64) {
        *out = g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(n));
        return TRUE;
    }
    g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "\"%s\" must be a string%s", member,
                allow_int ? " or an integer" : "");
    return FALSE;
}

static gboolean get_argv(JsonObject *o, char ***out, GError **error)
{
    *out = NULL;
    JsonNode *n = json_object_get_member(o, "argv");
    if (n == NULL || !JSON_NODE_HOLDS_ARRAY(n)) {
        g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE,
                    "\"argv\" must be an array of strings");
        return FALSE;
    }
    JsonArray *a = json_node_get_array(n);
    guint count = json_array_get_length(a);
    if (count == 0 || count > DDM_CTL_MAX_ARGS) {
        g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "\"argv\" needs 1 to %d strings",
                    DDM_CTL_MAX_ARGS);
        return FALSE;
    }
    char **argv = g_new0(char *, count + 1);
    for (guint i = 0; i < count; i++) {
        JsonNode *e = json_array_get_element(a, i);
        if (!JSON_NODE_HOLDS_VALUE(e) || json_node_get_value_type(e) != G_TYPE_STRING ||
            strlen(json_node_get_string(e)) > DDM_CTL_MAX_STRING) {
            g_strfreev(argv);
            g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE,
                        "\"argv\"[%u] must be a string of at most %d bytes", i,
                        DDM_CTL_MAX_STRING);
            return FALSE;
        }
        argv[i] = g_strdup(json_node_get_string(e));
    }
    if (argv[0][0] == '\0') {
        g_strfreev(argv);
        g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "empty command name");
        return FALSE;
    }
    *out = argv;
    return TRUE;
}

gboolean ddm_ctl_request_parse(const char *line, gsize len, DdmCtlRequest *req, GError **error)
{
    memset(req, 0, sizeof(*req));
    g_autoptr(JsonNode) root = ddm_ctl_parse_object(line, len, error);
    if (root == NULL)
        return FALSE;
    JsonObject *o = json_node_get_object(root);
    JsonNode *opn = json_object_get_member(o, "op");
    if (opn == NULL || !JSON_NODE_HOLDS_VALUE(opn) ||
        json_node_get_value_type(opn) != G_TYPE_STRING) {
        g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "request without a string \"op\"");
        return FALSE;
    }
    const char *op = json_node_get_string(opn);
    gboolean found = FALSE;
    for (gsize i = 0; i < G_N_ELEMENTS(ops); i++) {
        if (strcmp(ops[i].name, op) == 0) {
            req->op = ops[i].op;
            found = TRUE;
            break;
        }
    }
    if (!found) {
        g_autofree char *shown = g_strndup(op, 64);
        g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "unknown op \"%s\"", shown);
        return FALSE;
    }
    if (!get_opt_string(o, "name", FALSE, &req->name, error) ||
        !get_opt_string(o, "vm", TRUE, &req->vm, error) ||
        !get_opt_string(o, "spec", FALSE, &req->spec, error))
        goto fail;
    JsonNode *bn = json_object_get_member(o, "blobs");
    if (bn != NULL && !JSON_NODE_HOLDS_NULL(bn)) {
        if (!JSON_NODE_HOLDS_VALUE(bn) || json_node_get_value_type(bn) != G_TYPE_BOOLEAN) {
            g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "\"blobs\" must be a boolean");
            goto fail;
        }
        req->blobs = json_node_get_boolean(bn);
    }
    JsonNode *jn = json_object_get_member(o, "jq");
    if (jn != NULL && !JSON_NODE_HOLDS_NULL(jn)) {
        if (!JSON_NODE_HOLDS_VALUE(jn) || json_node_get_value_type(jn) != G_TYPE_BOOLEAN) {
            g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "\"jq\" must be a boolean");
            goto fail;
        }
        req->jq = json_node_get_boolean(jn);
    }
    switch (req->op) {
    case DDM_CTL_OP_VIEW:
        if (req->name == NULL || req->name[0] == '\0') {
            g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "op \"view\" needs a \"name\"");
            goto fail;
        }
        break;
    case DDM_CTL_OP_COMMAND:
        if (!get_argv(o, &req->argv, error) || !get_opt_string(o, "cwd", FALSE, &req->cwd, error))
            goto fail;
        if (req->cwd != NULL && !g_path_is_absolute(req->cwd)) {
            g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "\"cwd\" must be an absolute path");
            goto fail;
        }
        if (!get_opt_string(o, "out_dir", FALSE, &req->out_dir, error))
            goto fail;
        if (req->out_dir != NULL && !g_path_is_absolute(req->out_dir)) {
            g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE,
                        "\"out_dir\" must be an absolute path");
            goto fail;
        }
        break;
    case DDM_CTL_OP_SCAN:
        if (req->spec == NULL) {
            g_set_error(error, DDM_CTL_ERROR, DDM_EXIT_USAGE, "op \"scan\" needs a \"spec\"");
            goto fail;
        }
        break;
    default:
        break;
    }
    return TRUE;
fail:
    ddm_ctl_request_clear(req);
    return FALSE;
}

JsonNode *ddm_ctl_request_to_json(const DdmCtlRequest *req)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "op");
    json_builder_add_string_value(b, ddm_ctl_op_name(req->op));
    if (req->name != NULL) {
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, req->name);
    }
    if (req->vm != NULL) {
        json_builder_set_member_name(b, "vm");
        json_builder_add_string_value(b, req->vm);
    }
    if (req->spec != NULL) {
        json_builder_set_member_name(b, "spec");
        json_builder_add_string_value(b, req->spec);
    }
    if (req->argv != NULL) {
        json_builder_set_member_name(b, "argv");
        json_builder_begin_array(b);
        for (char **a = req->argv; *a != NULL; a++)
            json_builder_add_string_value(b, *a);
        json_builder_end_array(b);
    }
    if (req->cwd != NULL) {
        json_builder_set_member_name(b, "cwd");
        json_builder_add_string_value(b, req->cwd);
    }
    if (req->out_dir != NULL) {
        json_builder_set_member_name(b, "out_dir");
        json_builder_add_string_value(b, req->out_dir);
    }
    if (req->blobs) {
        json_builder_set_member_name(b, "blobs");
        json_builder_add_boolean_value(b, TRUE);
    }
    if (req->jq) {
        json_builder_set_member_name(b, "jq");
        json_builder_add_boolean_value(b, TRUE);
    }
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

/* ----------------------------------------------------------- responses */

/* Does the text from @text to @at end with an exponent: digits, after a
 * sign or not, after an 'e' after a digit? */
static gboolean ends_with_exponent(const char *text, const char *at)
{
    const char *p = at;
    while (p > text && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p == at)
        return FALSE;
    if (p > text && (p[-1] == '+' || p[-1] == '-'))
        p--;
    return p - 1 > text && (p[-1] == 'e' || p[-1] == 'E') && p[-2] >= '0' && p[-2] <= '9';
}

/* json-glib 1.6 writes a double with an exponent and no '.' (1e17) as
 * "1e+17.0", which is no JSON number: is the ".0" at @dot (@dot[1] is
 * '0') such a suffix, with @before to @prefix_end the text before it? */
static gboolean exponent_dot_zero(const char *before, const char *prefix_end, const char *dot,
                                  const char *end)
{
    if (dot + 2 < end && dot[2] >= '0' && dot[2] <= '9')
        return FALSE;
    return ends_with_exponent(before, prefix_end);
}

/* Drop json-glib's ".0" after exponents (exponent_dot_zero) outside
 * strings, in place; the new length. Only called when a candidate was
 * seen: the pass follows strings to leave their text alone. It looks back
 * over the output written so far (text[0..o)), never over input bytes
 * that compaction may have overwritten. */
static gsize drop_exponent_dot_zero(char *text, gsize n)
{
    gsize o = 0;
    gboolean in_string = FALSE;
    for (gsize i = 0; i < n; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\' && i + 1 < n) {
                text[o++] = c;
                c = text[++i];
            } else if (c == '"')
                in_string = FALSE;
        } else if (c == '"')
            in_string = TRUE;
        else if (c == '.' && i + 1 < n && text[i + 1] == '0' && exponent_dot_zero(text, text + o, text + i, text + n)) {
            i++;
            continue;
        }
        text[o++] = c;
    }
    return o;
}

char *ddm_ctl_encode(JsonNode *node, gsize *len)
{
    g_autoptr(JsonGenerator) gen = json_generator_new();
    json_generator_set_pretty(gen, FALSE);
    json_generator_set_root(gen, node);
    gsize n = 0;
    g_autofree char *text = json_generator_to_data(gen, &n);
    for (const char *p = text; (p = memchr(p, '.', n - (gsize)(p - text))) != NULL; p++) {
        if (p + 1 < text + n && p[1] == '0' && exponent_dot_zero(text, p, p, text + n)) {
            n = drop_exponent_dot_zero(text, n);
            break;
        }
    }
    /* json-glib 1.6 writes a string's 0x1f as it is (RFC 8259 wants every
     * byte below 0x20 escaped, and python's json refuses it): the byte is
     * in no other place of its text, so each one becomes \u001f. */
    gsize n1f = 0;
    for (const char *p = memchr(text, 0x1f, n); p != NULL; p = memchr(p + 1, 0x1f, n - (gsize)(p + 1 - text)))
        n1f++;
    char *line = g_malloc(n + 5 * n1f + 2);
    gsize o = 0;
    for (const char *from = text, *end = text + n; from < end;) { /* a run, then \u001f */
        const char *us = n1f > 0 ? memchr(from, 0x1f, (gsize)(end - from)) : NULL;
        gsize run = (gsize)((us != NULL ? us : end) - from);
        memcpy(line + o, from, run);
        o += run;
        from += run;
        if (us != NULL) {
            memcpy(line + o, "\\u001f", 6);
            o += 6;
            from++;
        }
    }
    line[o] = '\n';
    line[o + 1] = '\0';
    if (len != NULL)
        *len = o + 1;
    return line;
}

JsonNode *ddm_ctl_error_new(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "ok");
    json_builder_add_boolean_value(b, FALSE);
    json_builder_set_member_name(b, "error");
    json_builder_add_string_value(b, msg);
    json_builder_set_member_name(b, "code");
    json_builder_add_int_value(b, code);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

JsonBuilder *ddm_ctl_ok_begin(void)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "ok");
    json_builder_add_boolean_value(b, TRUE);
    return b;
}

JsonNode *ddm_ctl_ok_end(JsonBuilder *b)
{
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    g_object_unref(b);
    return root;
}

/* --------------------------------------------- client failures (--json) */

#define FAILURE_PREFIX "ddmon: "
#define FAILURE_HINT " (try 'ddmon help')"

const char *ddm_ctl_exit_kind(int code)
{
    switch (code) {
    case DDM_EXIT_OK:
        return "ok";
    case DDM_EXIT_USAGE:
        return "usage";
    case DDM_EXIT_NOT_FOUND:
        return "not-found";
    case DDM_EXIT_NO_SERVER:
        return "no-server";
    case DDM_EXIT_INTERRUPTED:
        return "interrupted";
    default:
        return "failed";
    }
}

void ddm_ctl_failure_set(JsonObject *o, int code, const char *message)
{
    if (code == DDM_EXIT_OK)
        code = DDM_EXIT_FAILED;
    if (message == NULL || *message == '\0')
        message = code == DDM_EXIT_INTERRUPTED ? "interrupted" : "the command failed";
    json_object_set_boolean_member(o, "ok", FALSE);
    json_object_set_string_member(o, "error", message);
    json_object_set_int_member(o, "code", code);
    json_object_set_string_member(o, "kind", ddm_ctl_exit_kind(code));
}

JsonNode *ddm_ctl_failure_new(int code, const char *message)
{
    JsonObject *o = json_object_new();
    ddm_ctl_failure_set(o, code, message);
    JsonNode *root = json_node_init_object(json_node_alloc(), o);
    json_object_unref(o);
    return root;
}

char *ddm_ctl_failure_message(const char *line)
{
    if (line == NULL || !g_str_has_prefix(line, FAILURE_PREFIX))
        return NULL;
    const char *msg = line + strlen(FAILURE_PREFIX);
    gsize n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        n--;
    gsize hint = strlen(FAILURE_HINT);
    if (n >= hint && memcmp(msg + n - hint, FAILURE_HINT, hint) == 0)
        n -= hint;
    return g_strndup(msg, n);
}

gboolean ddm_ctl_argv_wants_json(char *const *argv)
{
    if (argv == NULL || argv[0] == NULL)
        return FALSE;
    for (char *const *a = argv + 1; *a != NULL; a++) {
        if (strcmp(*a, "--") == 0)
            return FALSE;
        if (strcmp(*a, "--json") == 0)
            return TRUE;
    }
    return FALSE;
}

const char *ddm_json_get_string(JsonObject *o, const char *member)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, member) : NULL;
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING)
        return NULL;
    return json_node_get_string(n);
}

gint64 ddm_json_get_int(JsonObject *o, const char *member, gint64 fallback)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, member) : NULL;
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n))
        return fallback;
    GType t = json_node_get_value_type(n);
    if (t == G_TYPE_INT64)
        return json_node_get_int(n);
    if (t == G_TYPE_DOUBLE) {
        /* Only an exact int64: converting a double outside the range (or NaN)
         * is undefined behaviour, and a fraction is no more an integer than a
         * string is. -2^63 and 2^63 are exact doubles; the range is half-open. */
        double d = json_node_get_double(n);
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
            return fallback;
        gint64 v = (gint64)d; /* in range: defined, truncates */
        return (double)v == d ? v : fallback;
    }
    return fallback;
}

gboolean ddm_json_get_bool(JsonObject *o, const char *member, gboolean fallback)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, member) : NULL;
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_BOOLEAN)
        return fallback;
    return json_node_get_boolean(n);
}

JsonArray *ddm_json_get_array(JsonObject *o, const char *member)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, member) : NULL;
    return n != NULL && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
}

JsonObject *ddm_json_node_object(JsonNode *n)
{
    return n != NULL && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

void ddm_json_copy_member(JsonObject *to, JsonObject *from, const char *name, const char *as)
{
    JsonNode *n = json_object_get_member(from, name);
    if (n != NULL)
        json_object_set_member(to, as != NULL ? as : name, json_node_copy(n));
}

JsonNode *ddm_json_object_node(JsonObject *o)
{
    JsonNode *n = json_node_init_object(json_node_alloc(), o);
    json_object_unref(o);
    return n;
}
