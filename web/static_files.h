/* SPDX-License-Identifier: Apache-2.0
 *
 * The dashboard's static files (web/static/: index.html, app.js,
 * app.css), served from disk: "/" is index.html, "/static/NAME" a file of
 * the directory. Only plain names of regular files (no "/", no leading
 * dot), at most DDM_WEB_STATIC_MAX_FILE bytes, with a media type from a
 * short list of extensions. The directory is the installed one
 * ($(pkgdatadir)/web) unless DDMON_WEB_DIR names another (tests and
 * `tools/dev run` use the source tree's web/static).
 */
#ifndef DDM_WEB_STATIC_FILES_H
#define DDM_WEB_STATIC_FILES_H

#include "web/http_server.h"

#define DDM_WEB_STATIC_MAX_FILE (1024 * 1024)

typedef struct DdmWebStatic DdmWebStatic;

/** The directory the files come from: $DDMON_WEB_DIR or the installed
 *  one. (transfer full) */
char *ddm_web_static_dir(void);
/** Serve @dir's files on @srv ("/" and "/static/"). (transfer full) */
DdmWebStatic *ddm_web_static_new(DdmHttpServer *srv, const char *dir);
void ddm_web_static_free(DdmWebStatic *st);

#endif /* DDM_WEB_STATIC_FILES_H */
