/* SPDX-License-Identifier: Apache-2.0
 *
 * ddmon's own resource use, read from /proc/self (metrics_proc.c).
 */
#ifndef DDM_METRICS_PROC_H
#define DDM_METRICS_PROC_H

#include "web/metrics.h"

/** Fill @p with this process's figures; FALSE (and zeros) without /proc. */
gboolean ddm_metrics_process_read(DdmMetricsProcess *p);

#endif /* DDM_METRICS_PROC_H */
