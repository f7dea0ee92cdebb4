/* SPDX-License-Identifier: Apache-2.0
 *
 * JSON blobs: a blob view (a command's result, usually) whose media type is
 * application/json holds a structured document, a nested tree a table
 * cannot say (`ddmon ui VM dump`). This file owns the rule that makes such
 * a blob structured data rather than opaque bytes, and reading one:
 *  - which media types count (ddm_json_blob_type);
 *  - the caps: a frontend parses at most DDM_JSON_BLOB_MAX bytes nested at
 *    most DDM_JSON_BLOB_MAX_DEPTH deep (json-glib's parser recurses, so
 *    the depth is checked by a linear scan first); past them, or not
 *    valid UTF-8 JSON, the document is refused with a reason.
 * Where it is used: ddm_view_to_json sends the data of a JSON blob up to
 * the cap even unasked; ddm_jq_view (--json) embeds it parsed as "data";
 * the text renderer prints it as an indented outline. doc/json.md and
 * doc/writing-plugins.md are the users' side.
 */
#ifndef DDM_VIEWS_JSON_BLOB_H
#define DDM_VIEWS_JSON_BLOB_H

#include <glib.h>
#include <json-glib/json-glib.h>

/** Bytes of a JSON blob a frontend parses (a blob may be larger: such a one
 *  is only written out, with --out-dir). Its data goes to clients unasked
 *  in base64 (4/3 of it) on one control line, which must fit a client's
 *  output queue (DDM_CTL_MAX_QUEUE, 64 MiB; server/control.c checks). */
#define DDM_JSON_BLOB_MAX ((gsize)32u * 1024u * 1024u)
/** Nesting of arrays and objects in a JSON blob. */
#define DDM_JSON_BLOB_MAX_DEPTH 2048u

#define DDM_JSON_BLOB_ERROR (ddm_json_blob_error_quark())
GQuark ddm_json_blob_error_quark(void);

/** TRUE if @media_type is application/json, in any case, with or without
 *  parameters ("application/json; charset=utf-8"). NULL is not. */
gboolean ddm_json_blob_type(const char *media_type);

/** Parse @len bytes of JSON (any value at the top). NULL with @error (one
 *  line: too large, too deep, not UTF-8, not JSON and json-glib's reason).
 *  (transfer full) */
JsonNode *ddm_json_blob_parse(const void *data, gsize len, GError **error);

/** The document of @view, a view in the server's form (ddm_view_to_json)
 *  with "data_base64": NULL without @error when @view is no JSON blob or
 *  came without its data; NULL with @error when its data cannot be read
 *  (as ddm_json_blob_parse, or larger than the cap). (transfer full) */
JsonNode *ddm_json_blob_of_view(JsonObject *view, GError **error);

#endif /* DDM_VIEWS_JSON_BLOB_H */
