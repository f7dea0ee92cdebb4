/* SPDX-License-Identifier: Apache-2.0
 *
 * The directory where commands run from the web write their files (heap
 * dumps, traces), one subdirectory per run ("3-hprof"), and serving those
 * files back (those in a run's subdirectories too). The directory is private to the server (mode 0700, next to
 * its control socket); the newest DDM_WEB_DOWNLOADS_KEEP runs are kept,
 * older ones deleted, and all of them when the server stops. A file
 * still being written (".part") is never served.
 */
#ifndef DDM_WEB_DOWNLOADS_H
#define DDM_WEB_DOWNLOADS_H

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#define DDM_WEB_DOWNLOADS_KEEP 8

typedef struct DdmWebDownloads DdmWebDownloads;

/** Downloads under @dir (created 0700 if missing; a stale one from an
 *  earlier server is emptied). NULL with @error. (transfer full) */
DdmWebDownloads *ddm_web_downloads_new(const char *dir, GError **error);
/** Delete every run and the directory. */
void ddm_web_downloads_free(DdmWebDownloads *dl);
/** A new run directory for command @name (older runs past the limit
 *  deleted). NULL with @error. @id receives its id. (transfer full: the
 *  path) */
char *ddm_web_downloads_new_run(DdmWebDownloads *dl, const char *name, char **id,
                                GError **error);
/** The finished files of run @id, in its subdirectories too (8 deep, at
 *  most 1000 files; links not followed), keyed by their path in the run:
 *  {"NAME"|"SUB/NAME": {"size_bytes","url"}}, the url
 *  "/api/downloads/ID/SUB/NAME" with each name percent-encoded.
 *  (transfer full) */
JsonNode *ddm_web_downloads_files(DdmWebDownloads *dl, const char *id);
/** Answer @msg with file @path (its names in the run, NULL-terminated:
 *  {"sub", "x.hprof", NULL}) of run @id: 404 when there is none, when a
 *  name is hidden or unfinished, or when a link is on the way. */
void ddm_web_downloads_serve(DdmWebDownloads *dl, SoupServerMessage *msg, const char *id,
                             const char *const *path);

#endif /* DDM_WEB_DOWNLOADS_H */
