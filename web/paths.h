/* SPDX-License-Identifier: Apache-2.0
 *
 * Request paths, as the HTTP listener sees them (still percent-encoded):
 * matching a route pattern and splitting into decoded segments; and the
 * Content-Disposition that names a download. Pure functions of the path
 * or name (no libsoup), fuzzed by tests/fuzz/fuzz-web-rules.
 */
#ifndef DDM_WEB_PATHS_H
#define DDM_WEB_PATHS_H

#include <glib.h>

/** @path matches @pattern segment by segment, a "*" segment of the
 *  pattern matching any one non-empty segment. */
gboolean ddm_web_path_matches(const char *pattern, const char *path);
/** @path split at "/" and each segment percent-decoded; empty segments
 *  dropped. NULL if a segment does not decode (a bad escape, an encoded
 *  "/" or NUL). (transfer full) */
char **ddm_web_path_segments(const char *path);
/** The Content-Disposition of a download named @name (a file name, any
 *  bytes): `attachment; filename="ASCII"`, where every byte outside
 *  printable ASCII and every '"' and '\\' becomes '_' (one '_' a
 *  character when @name is UTF-8), plus RFC 5987/6266
 *  `filename*=UTF-8''PERCENT-ENCODED` when @name is UTF-8 and the ASCII
 *  name differs. (transfer full) */
char *ddm_web_content_disposition(const char *name);

#endif /* DDM_WEB_PATHS_H */
