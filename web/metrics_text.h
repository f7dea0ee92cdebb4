/* SPDX-License-Identifier: Apache-2.0
 *
 * The exposition writer behind GET /metrics: metric families and their
 * samples in as text, in one of the two formats Prometheus scrapes
 * (https://prometheus.io/docs/instrumenting/exposition_formats/):
 *
 *  - the Prometheus text format 0.0.4 (text/plain; version=0.0.4): HELP and
 *    TYPE lines; a counter's family is named with its "_total";
 *  - OpenMetrics 1.0 (application/openmetrics-text; version=1.0.0): HELP,
 *    TYPE and UNIT lines; a counter's family is named without "_total" and
 *    its sample with it; info families ("NAME_info" samples); "# EOF" last.
 *
 * It owns the rules of the text, so nothing else has to know them: metric
 * and label names are checked ([a-zA-Z_:][a-zA-Z0-9_:]*, labels without
 * ':' and not starting "__"), label values and HELP text are escaped
 * (backslash, newline, and a double quote in label values and OpenMetrics
 * HELP), cut to DDM_METRICS_LABEL_VALUE_MAX bytes at a UTF-8 boundary and
 * made valid UTF-8; values are written so they read back exactly (NaN,
 * +Inf, -Inf). A family is written whole or not at all (families never
 * interleave), and a sample whose label set repeats one already written
 * in its family is dropped (both formats forbid it). Pure: no I/O, no
 * clock; the caller owns the GString.
 */
#ifndef DDM_METRICS_TEXT_H
#define DDM_METRICS_TEXT_H

#include <glib.h>

typedef enum {
    DDM_METRICS_PROMETHEUS = 0, /* text/plain; version=0.0.4 */
    DDM_METRICS_OPENMETRICS = 1 /* application/openmetrics-text; version=1.0.0 */
} DdmMetricsFormat;

typedef enum {
    DDM_METRIC_KIND_GAUGE = 0,
    DDM_METRIC_KIND_COUNTER, /* family name ends in "_total" */
    DDM_METRIC_KIND_INFO     /* family name ends in "_info"; samples are 1 */
} DdmMetricKind;

/** Longest label value written, in bytes; longer ones are cut (at a UTF-8
 *  character boundary) so a VM with a huge app name cannot bloat a scrape. */
#define DDM_METRICS_LABEL_VALUE_MAX 128u
/** Longest HELP text written, in bytes (cut likewise). */
#define DDM_METRICS_HELP_MAX 512u
/** Labels per sample. */
#define DDM_METRICS_LABELS_MAX 12u

/** The Content-Type of @fmt. (static string) */
const char *ddm_metrics_content_type(DdmMetricsFormat fmt);
/** The format an Accept header asks for: OpenMetrics when it lists
 *  application/openmetrics-text with a quality above 0 (and a version we
 *  write, or none), else the Prometheus text format (also for NULL). */
DdmMetricsFormat ddm_metrics_negotiate(const char *accept);

/** TRUE if @name is a valid metric name; @label_name: a label name. */
gboolean ddm_metrics_name_ok(const char *name);
gboolean ddm_metrics_label_name_ok(const char *name);

typedef struct DdmMetricsWriter DdmMetricsWriter;

/** A writer appending to @out (borrowed; it must outlive the writer). */
DdmMetricsWriter *ddm_metrics_writer_new(GString *out, DdmMetricsFormat fmt);
/** Write "# EOF" (OpenMetrics) and free the writer. */
void ddm_metrics_writer_finish(DdmMetricsWriter *w);

/** Start family @name (the full name: "ddmon_vm_heap_max_bytes",
 *  "ddmon_process_cpu_seconds_total", "ddmon_vm_info") of @kind with @unit
 *  (NULL or a suffix of the name: "bytes", "seconds") and @help. Nothing is
 *  written until its first sample: a family without samples leaves no
 *  trace. FALSE (and the family's samples are ignored) when the name is
 *  invalid, does not end in "_total" (counter) or "_info" (info) or
 *  "_UNIT" (before "_total"), or was written already, or is a gauge
 *  whose name ends in a suffix OpenMetrics keeps for other types
 *  ("_total", "_created", "_count", "_sum", "_bucket", "_info"). */
gboolean ddm_metrics_family(DdmMetricsWriter *w, const char *name, DdmMetricKind kind,
                            const char *unit, const char *help);
/** One sample of the current family: @n labels (@names[i] = @values[i];
 *  a NULL value is written as ""). FALSE when dropped (no family, a bad
 *  label name, a label set already written, too many labels). */
gboolean ddm_metrics_sample(DdmMetricsWriter *w, const char *const *names,
                            const char *const *values, guint n, double value);
/** Samples written so far (all families). */
guint ddm_metrics_writer_samples(const DdmMetricsWriter *w);

/** Append @value as a label value (escaped, capped, valid UTF-8) to @out. */
void ddm_metrics_append_label_value(GString *out, const char *value);

#endif /* DDM_METRICS_TEXT_H */
