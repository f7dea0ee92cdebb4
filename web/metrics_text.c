/* SPDX-License-Identifier: Apache-2.0
 *
 * The exposition writer (metrics_text.h): Prometheus text 0.0.4 and
 * OpenMetrics 1.0, names checked, label values and HELP escaped and capped.
 */
#include "web/metrics_text.h"

#include <math.h>
#include <string.h>

#include "core/views/text_cut.h"

struct DdmMetricsWriter {
    GString *out;             /* borrowed */
    DdmMetricsFormat fmt;
    GHashTable *families;     /* exposed family names written or begun (owned keys) */
    /* the current family; its header is written with its first sample */
    gboolean have_family;
    gboolean header_written;
    char *name;               /* full name as given */
    DdmMetricKind kind;
    char *unit;
    char *help;
    GHashTable *label_sets;   /* "{...}" strings of this family's samples (owned keys) */
    guint samples;
};

const char *ddm_metrics_content_type(DdmMetricsFormat fmt)
{
    return fmt == DDM_METRICS_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                          : "text/plain; version=0.0.4; charset=utf-8";
}

/* One media range of an Accept header: "type/sub; p=v; q=0.5". TRUE if it
 * is OpenMetrics in a version we write with a quality above 0. */
static gboolean range_wants_openmetrics(const char *range)
{
    g_auto(GStrv) parts = g_strsplit(range, ";", -1);
    gboolean version_ok = TRUE;
    double q = 1.0;
    if (parts[0] == NULL || g_ascii_strcasecmp(g_strstrip(parts[0]), "application/openmetrics-text") != 0)
        return FALSE;
    for (guint i = 1; parts[i]; i++) {
        char *p = g_strstrip(parts[i]);
        if (g_ascii_strncasecmp(p, "version=", 8) == 0) {
            const char *v = p + 8;
            version_ok = strcmp(v, "1.0.0") == 0 || strcmp(v, "0.0.1") == 0;
        } else if (g_ascii_strncasecmp(p, "q=", 2) == 0) {
            q = g_ascii_strtod(p + 2, NULL);
        }
    }
    return version_ok && q > 0.0;
}

DdmMetricsFormat ddm_metrics_negotiate(const char *accept)
{
    if (accept == NULL || strlen(accept) > 4096)
        return DDM_METRICS_PROMETHEUS;
    g_auto(GStrv) ranges = g_strsplit(accept, ",", 64);
    for (guint i = 0; ranges[i]; i++)
        if (range_wants_openmetrics(ranges[i]))
            return DDM_METRICS_OPENMETRICS;
    return DDM_METRICS_PROMETHEUS;
}

static gboolean name_ok(const char *name, gboolean colon)
{
    if (name == NULL || *name == '\0' || strlen(name) > 200)
        return FALSE;
    for (const char *p = name; *p; p++) {
        gboolean ok = g_ascii_isalpha(*p) || *p == '_' || (colon && *p == ':') ||
                      (p != name && g_ascii_isdigit(*p));
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

gboolean ddm_metrics_name_ok(const char *name)
{
    return name_ok(name, TRUE);
}

gboolean ddm_metrics_label_name_ok(const char *name)
{
    return name_ok(name, FALSE) && !g_str_has_prefix(name, "__");
}

/* Append @s, made valid UTF-8 and cut to @max bytes at a character
 * boundary, escaping backslash and newline (and '"' when @quote). */
static void append_escaped(GString *out, const char *s, gsize max, gboolean quote)
{
    g_autofree char *valid = ddm_utf8_cut(s, max);
    for (const char *p = valid; *p != '\0'; p++) {
        if (*p == '\\')
            g_string_append(out, "\\\\");
        else if (*p == '\n')
            g_string_append(out, "\\n");
        else if (*p == '"' && quote)
            g_string_append(out, "\\\"");
        else
            g_string_append_c(out, *p);
    }
}

void ddm_metrics_append_label_value(GString *out, const char *value)
{
    append_escaped(out, value, DDM_METRICS_LABEL_VALUE_MAX, TRUE);
}

/* A value that reads back as the same double. */
static void append_value(GString *out, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (isnan(v))
        g_string_append(out, "NaN");
    else if (isinf(v))
        g_string_append(out, v > 0 ? "+Inf" : "-Inf");
    else if (v == rint(v) && fabs(v) < 1e15)
        g_string_append_printf(out, "%.0f", v);
    else {
        /* the shortest of %.15g..%.17g that reads back as @v */
        for (int digits = 15; digits <= 17; digits++) {
            char fmt[8];
            g_snprintf(fmt, sizeof fmt, "%%.%dg", digits);
            g_ascii_formatd(buf, sizeof buf, fmt, v);
            if (g_ascii_strtod(buf, NULL) == v)
                break;
        }
        g_string_append(out, buf);
    }
}

DdmMetricsWriter *ddm_metrics_writer_new(GString *out, DdmMetricsFormat fmt)
{
    DdmMetricsWriter *w = g_new0(DdmMetricsWriter, 1);
    w->out = out;
    w->fmt = fmt;
    w->families = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return w;
}

static void end_family(DdmMetricsWriter *w)
{
    g_clear_pointer(&w->name, g_free);
    g_clear_pointer(&w->unit, g_free);
    g_clear_pointer(&w->help, g_free);
    g_clear_pointer(&w->label_sets, g_hash_table_unref);
    w->have_family = FALSE;
    w->header_written = FALSE;
}

void ddm_metrics_writer_finish(DdmMetricsWriter *w)
{
    if (w == NULL)
        return;
    end_family(w);
    if (w->fmt == DDM_METRICS_OPENMETRICS)
        g_string_append(w->out, "# EOF\n");
    g_hash_table_unref(w->families);
    g_free(w);
}

guint ddm_metrics_writer_samples(const DdmMetricsWriter *w)
{
    return w->samples;
}

/* The family's name in the TYPE/HELP/UNIT lines of the writer's format. */
static char *exposed_family_name(DdmMetricsFormat fmt, const char *name, DdmMetricKind kind)
{
    if (fmt == DDM_METRICS_OPENMETRICS && kind == DDM_METRIC_KIND_COUNTER)
        return g_strndup(name, strlen(name) - strlen("_total"));
    if (fmt == DDM_METRICS_OPENMETRICS && kind == DDM_METRIC_KIND_INFO)
        return g_strndup(name, strlen(name) - strlen("_info"));
    return g_strdup(name);
}

static const char *const reserved_suffixes[] = {"_total", "_created", "_count", "_sum",
                                                "_bucket", "_info"};

gboolean ddm_metrics_family(DdmMetricsWriter *w, const char *name, DdmMetricKind kind,
                            const char *unit, const char *help)
{
    end_family(w);
    if (!ddm_metrics_name_ok(name))
        return FALSE;
    const char *suffix = kind == DDM_METRIC_KIND_COUNTER ? "_total"
                         : kind == DDM_METRIC_KIND_INFO  ? "_info"
                                                         : NULL;
    if (suffix && (!g_str_has_suffix(name, suffix) || strlen(name) == strlen(suffix)))
        return FALSE;
    if (kind == DDM_METRIC_KIND_GAUGE) /* suffixes OpenMetrics keeps for other types */
        for (gsize i = 0; i < G_N_ELEMENTS(reserved_suffixes); i++)
            if (g_str_has_suffix(name, reserved_suffixes[i]))
                return FALSE;
    g_autofree char *base = suffix ? g_strndup(name, strlen(name) - strlen(suffix)) : g_strdup(name);
    if (unit != NULL) {
        g_autofree char *want = g_strconcat("_", unit, NULL);
        if (kind == DDM_METRIC_KIND_INFO || !name_ok(unit, FALSE) || !g_str_has_suffix(base, want) ||
            strlen(base) == strlen(want))
            return FALSE;
    }
    g_autofree char *exposed = exposed_family_name(w->fmt, name, kind);
    if (g_hash_table_contains(w->families, exposed))
        return FALSE;
    g_hash_table_add(w->families, g_steal_pointer(&exposed));
    w->have_family = TRUE;
    w->name = g_strdup(name);
    w->kind = kind;
    w->unit = g_strdup(unit);
    w->help = g_strdup(help);
    w->label_sets = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return TRUE;
}

static void write_header(DdmMetricsWriter *w)
{
    g_autofree char *fam = exposed_family_name(w->fmt, w->name, w->kind);
    gboolean om = w->fmt == DDM_METRICS_OPENMETRICS;
    const char *type = w->kind == DDM_METRIC_KIND_COUNTER ? "counter"
                       : w->kind == DDM_METRIC_KIND_INFO && om ? "info"
                                                               : "gauge";
    if (w->help && *w->help) {
        g_string_append_printf(w->out, "# HELP %s ", fam);
        append_escaped(w->out, w->help, DDM_METRICS_HELP_MAX, om);
        g_string_append_c(w->out, '\n');
    }
    g_string_append_printf(w->out, "# TYPE %s %s\n", fam, type);
    if (om && w->unit)
        g_string_append_printf(w->out, "# UNIT %s %s\n", fam, w->unit);
    w->header_written = TRUE;
}

gboolean ddm_metrics_sample(DdmMetricsWriter *w, const char *const *names,
                            const char *const *values, guint n, double value)
{
    if (!w->have_family || n > DDM_METRICS_LABELS_MAX)
        return FALSE;
    g_autoptr(GString) labels = g_string_new(NULL);
    for (guint i = 0; i < n; i++) {
        if (!ddm_metrics_label_name_ok(names[i]))
            return FALSE;
        for (guint j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return FALSE;
        g_string_append_printf(labels, "%s%s=\"", i ? "," : "{", names[i]);
        ddm_metrics_append_label_value(labels, values[i]);
        g_string_append_c(labels, '"');
    }
    if (n)
        g_string_append_c(labels, '}');
    if (g_hash_table_contains(w->label_sets, labels->str))
        return FALSE;
    if (!w->header_written)
        write_header(w);
    g_string_append(w->out, w->name);
    g_string_append(w->out, labels->str);
    g_string_append_c(w->out, ' ');
    append_value(w->out, w->kind == DDM_METRIC_KIND_INFO ? 1.0 : value);
    g_string_append_c(w->out, '\n');
    g_hash_table_add(w->label_sets, g_string_free(g_steal_pointer(&labels), FALSE));
    w->samples++;
    return TRUE;
}
