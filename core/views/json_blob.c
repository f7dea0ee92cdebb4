/* SPDX-License-Identifier: Apache-2.0
 *
 * JSON blobs: which blobs are structured documents, and reading one within
 * bounds (json_blob.h).
 */
#include <stdarg.h>
#include <string.h>

#include "core/views/json_blob.h"
#include "core/wire/ctlproto.h" /* ddm_ctl_json_depth_ok: one depth scan for requests and blobs */

G_DEFINE_QUARK(ddm-json-blob-error-quark, ddm_json_blob_error)

gboolean ddm_json_blob_type(const char *media_type)
{
    static const char want[] = "application/json";
    const gsize n = sizeof want - 1;
    if (media_type == NULL || g_ascii_strncasecmp(media_type, want, n) != 0)
        return FALSE;
    const char *rest = media_type + n;
    while (*rest == ' ' || *rest == '\t')
        rest++;
    return *rest == '\0' || *rest == ';';
}

static JsonNode *refuse(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static JsonNode *refuse(GError **error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(error, DDM_JSON_BLOB_ERROR, 0, msg);
    return NULL;
}

JsonNode *ddm_json_blob_parse(const void *data, gsize len, GError **error)
{
    const char *text = data != NULL ? data : "";
    if (len > DDM_JSON_BLOB_MAX)
        return refuse(error, "a JSON document of %" G_GSIZE_FORMAT " bytes is larger than the %"
                      G_GSIZE_FORMAT " MiB ddmon reads", len, DDM_JSON_BLOB_MAX >> 20);
    if (!g_utf8_validate_len(text, len, NULL))
        return refuse(error, "not JSON: not valid UTF-8 (or a NUL byte)");
    if (!ddm_ctl_json_depth_ok(text, len, DDM_JSON_BLOB_MAX_DEPTH))
        return refuse(error, "a JSON document nested deeper than the %u levels ddmon reads",
                      DDM_JSON_BLOB_MAX_DEPTH);
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    g_autoptr(GError) local = NULL;
    if (!json_parser_load_from_data(parser, text, (gssize)len, &local))
        return refuse(error, "not JSON: %s", local->message);
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL)
        return refuse(error, "not JSON: empty");
    return json_node_ref(root);
}

JsonNode *ddm_json_blob_of_view(JsonObject *view, GError **error)
{
    if (view == NULL || !ddm_json_blob_type(json_object_get_string_member_with_default(
                            view, "media_type", NULL)))
        return NULL;
    JsonNode *size = json_object_get_member(view, "size");
    if (size != NULL && JSON_NODE_HOLDS_VALUE(size) &&
        json_node_get_value_type(size) == G_TYPE_INT64 && json_node_get_int(size) >= 0 &&
        (guint64)json_node_get_int(size) > DDM_JSON_BLOB_MAX)
        return refuse(error, "a JSON document of %" G_GINT64_FORMAT " bytes is larger than the %"
                      G_GSIZE_FORMAT " MiB ddmon reads (--out-dir writes it to a file)",
                      json_node_get_int(size), DDM_JSON_BLOB_MAX >> 20);
    JsonNode *b64 = json_object_get_member(view, "data_base64");
    if (b64 == NULL || !JSON_NODE_HOLDS_VALUE(b64) ||
        json_node_get_value_type(b64) != G_TYPE_STRING)
        return NULL;
    const char *s = json_node_get_string(b64);
    /* Bounded before decoding: 4 characters for every 3 bytes. */
    if (strlen(s) > (DDM_JSON_BLOB_MAX + 2) / 3 * 4)
        return refuse(error, "a JSON document larger than the %" G_GSIZE_FORMAT " MiB ddmon reads",
                      DDM_JSON_BLOB_MAX >> 20);
    gsize len = 0;
    g_autofree guchar *data = g_base64_decode(s, &len);
    return ddm_json_blob_parse(data, len, error);
}
