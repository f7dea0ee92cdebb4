/* SPDX-License-Identifier: Apache-2.0
 *
 * Text that must fit a byte budget (a metric's label value, 128 bytes):
 * made valid UTF-8 and cut at a character boundary, never inside one. The
 * registry keeps label values this way (core/pluginhost/registry_metrics.c)
 * and the metrics text writer prints them so (web/metrics_text.c).
 */
#ifndef DDM_VIEWS_TEXT_CUT_H
#define DDM_VIEWS_TEXT_CUT_H

#include <glib.h>

/** @s (NULL: "") as valid UTF-8, at most @max bytes, cut before the
 *  character that would not fit. (transfer full) */
char *ddm_utf8_cut(const char *s, gsize max);

#endif /* DDM_VIEWS_TEXT_CUT_H */
