/* SPDX-License-Identifier: Apache-2.0
 *
 * A view's JSON for people with jq (doc/json.md, "A view"): columns and
 * fields keyed by snake_case names, rows as objects, a "schema" version.
 * The CLI's --json (cli/jsonout.h builds the VM list, groups and events
 * on top of it) and the web API (web/) both use it.
 */
#ifndef DDM_VIEWS_JQ_H
#define DDM_VIEWS_JQ_H

#include <glib.h>
#include <json-glib/json-glib.h>

/* The version of the shapes in doc/json.md; grows when one changes in a
 * way a script could notice (a member removed, renamed or retyped). */
#define DDM_JSON_SCHEMA 1

/** @name as a snake_case key: ASCII letters lower-cased, a capital after a
 *  small letter or digit starts a word ("heapSize" -> "heap_size"), "%"
 *  is the word "percent", every other run of characters one "_", none at
 *  either end ("debug port" -> "debug_port", "CPU %" -> "cpu_percent");
 *  "_" first when it would start with a digit; "value" when nothing is
 *  left. (transfer full) */
char *ddm_jq_key(const char *name);
/** ddm_jq_key() of each of @names[0..@n), unique: a key already given
 *  gets "_2" ("_3", ...) appended, skipping keys taken. (transfer full,
 *  NULL-terminated) */
char **ddm_jq_keys(const char *const *names, guint n);

/** @view (the server's form) for scripts; @schema: with "schema" (a
 *  document of its own). Anything that is no view object is copied. A
 *  JSON blob (json_blob.h) that came with its data gets the document
 *  parsed as "data" instead of "data_base64", or "data": null and a
 *  one-line "data_error" when it cannot be read. (transfer full) */
JsonNode *ddm_jq_view(JsonNode *view, gboolean schema);
#endif /* DDM_VIEWS_JQ_H */
