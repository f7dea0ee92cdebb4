/* SPDX-License-Identifier: Apache-2.0
 *
 * Request paths, as the HTTP listener sees them (still percent-encoded):
 * matching a route pattern and splitting into decoded segments. Pure
 * functions of the path (no libsoup), fuzzed by tests/fuzz/fuzz-web-rules.
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

#endif /* DDM_WEB_PATHS_H */
