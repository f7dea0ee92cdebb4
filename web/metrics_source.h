/* SPDX-License-Identifier: Apache-2.0
 *
 * One running daemon as the source of GET /metrics: a scrape renders the
 * daemon's views (web/metrics.h) with ddmon's own process figures and each
 * VM's packet and byte counters, and counts as a look at the views the
 * declared metric families report on (their "view"), for
 * DDM_METRICS_INTEREST_SECONDS after the last scrape, as a one-shot
 * `ddmon view` counts for 30 s. Plugins that poll only while a view is
 * watched (threads: THST; heap: HPIF at every GC; nativeheap: NHGT) thus
 * poll while Prometheus scrapes, and stop when it stops. The first scrape
 * after a pause may show the figures of before it (or none): the polls it
 * starts answer within seconds. Runs on the default GMainContext.
 */
#ifndef DDM_METRICS_SOURCE_H
#define DDM_METRICS_SOURCE_H

#include <glib.h>

#include "core/daemon/daemon.h"
#include "web/metrics_text.h"

/** A scrape keeps the views watched this long (two scrapes at
 *  Prometheus' default interval of one minute). */
#define DDM_METRICS_INTEREST_SECONDS 120u

typedef struct DdmMetricsSource DdmMetricsSource;

/** A source over @daemon (borrowed; it must outlive the source). */
DdmMetricsSource *ddm_metrics_source_new(DdmDaemon *daemon);
/** Drop the watches and free. */
void ddm_metrics_source_free(DdmMetricsSource *src);

/** One scrape: the exposition in the format @accept asks for (an Accept
 *  header, may be NULL), its length in *@len and its Content-Type in
 *  *@content_type (static). (transfer full) */
char *ddm_metrics_source_scrape(DdmMetricsSource *src, const char *accept, gsize *len,
                                const char **content_type);
/** Scrapes so far. */
guint64 ddm_metrics_source_scrapes(const DdmMetricsSource *src);

#endif /* DDM_METRICS_SOURCE_H */
