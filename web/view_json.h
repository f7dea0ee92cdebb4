/* SPDX-License-Identifier: Apache-2.0
 *
 * A view as the web API shows it (doc/web-api.md): the jq form of
 * doc/json.md (core/views/jq.h), and for a blob, instead of its bytes,
 * "data_url", where a GET fetches them; the server's downloads directory
 * hidden from the strings it holds.
 */
#ifndef DDM_WEB_VIEW_JSON_H
#define DDM_WEB_VIEW_JSON_H

#include <json-glib/json-glib.h>

#include "core/views/views.h"

/** The web API's version of its shapes (doc/web-api.md). */
#define DDM_WEB_API_SCHEMA 1

/** @v as the API shows it; @schema: with "schema" (a document of its
 *  own). (transfer full) */
JsonNode *ddm_web_view_json(ddm_view *v, gboolean schema);
/** Hide @dir (the downloads directory, absolute; NULL: nothing) from
 *  every string of the views' JSON from now on: "DIR/16-trace/t.trace"
 *  shows as "16-trace/t.trace" (the run and the file, as
 *  /api/downloads/ names it). The web shows no path where the server keeps
 *  its files (a view a web command's plugin made, profile.trace's file). */
void ddm_web_view_json_hide_dir(const char *dir);
/** Whether @v's JSON is known to be over @limit bytes without building
 *  it: a JSON-document blob (embedded as parsed data, as large as its
 *  bytes or more) of more than @limit bytes. FALSE says nothing about
 *  other views: measure those. */
gboolean ddm_web_view_json_over(ddm_view *v, gsize limit);
/** "/api/vms/KEY/views/NAME" (or "/api/views/NAME" for a global view),
 *  segments percent-encoded. (transfer full) */
char *ddm_web_view_path(ddm_view *v);

#endif /* DDM_WEB_VIEW_JSON_H */
