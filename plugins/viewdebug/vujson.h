/* SPDX-License-Identifier: Apache-2.0
 *
 * The view tree (vudecode.h) as the JSON document `ui VM dump` returns
 * (an application/json result: ddmon shows it as an indented outline and
 * embeds it in --json; doc/viewdebug.md has the shape):
 *   {"schema":1,"window":W,"views":N,"properties":BOOL,"root":VIEW|null}
 *   VIEW: {"class","hash","id" (null without properties),
 *          "bounds":{"left","top","right","bottom"} (null without them),
 *          "properties":{NAME:VALUE} (with properties only),
 *          "children":[VIEW...] (in the dump's order)}
 * A property value is a JSON true/false for "true"/"false", a number for
 * a plain decimal integer that fits 64 bits or a plain decimal fraction
 * ("1.0"), else the string as sent; a name sent twice keeps its first
 * value. Strings are escaped for JSON; bytes that are not UTF-8 become
 * U+FFFD, so the document is always valid UTF-8 JSON.
 *
 * A pure function (no host calls): linear in the tree plus an
 * O(p log p) sort of each view's p properties (for the duplicates).
 */
#ifndef VIEWDEBUG_VUJSON_H
#define VIEWDEBUG_VUJSON_H

#include <stddef.h>

#include "vudecode.h"

/** The result's media type: ddmon embeds such a blob as parsed JSON. */
#define VD_JSON_MEDIA_TYPE "application/json"
/** The format's version, the document's "schema". */
#define VD_JSON_SCHEMA 1

/** @t (of window @window, a UTF-8 string) as a JSON document, with the
 *  properties when @properties. Returns a malloc'ed buffer of *@len bytes
 *  (NUL-terminated, the NUL not counted; the caller frees it), or NULL
 *  with errno ENOMEM, or EFBIG when it would pass @max bytes. */
char *vd_tree_json(const vd_tree *t, const char *window, int properties, size_t max, size_t *len);

#endif /* VIEWDEBUG_VUJSON_H */
