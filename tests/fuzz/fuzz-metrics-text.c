/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the /metrics exposition writer (web/metrics_text.c), which
 * writes strings that come from VMs (app names, through the views) and
 * from plugins (help, label values), and the Accept header a scraper sends
 * (ddm_metrics_negotiate).
 *
 * Input: u1 selector (bits 0-1 the kind, bit 2 a unit "bytes", bit 3 a
 * label value of 300 bytes), then fields separated by 0x01: the Accept
 * header, a family name, a help text, then label values, two per sample
 * (labels "key" and "app"). Invariants, in both formats: the text is valid
 * UTF-8; every line ends in '\n' and is a comment or "NAME[{...}] VALUE";
 * exactly one line per sample written; no label value longer than twice
 * DDM_METRICS_LABEL_VALUE_MAX escaped; OpenMetrics ends in "# EOF".
 */
#include <glib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "web/metrics_text.h"

/* Check @text written by a writer that wrote @samples samples. */
static void check_text(const char *text, DdmMetricsFormat fmt, guint samples)
{
    guint lines = 0;
    FUZZ_CHECK(g_utf8_validate(text, -1, NULL));
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        FUZZ_CHECK(nl != NULL);
        if (*p != '#') {
            const char *brace = memchr(p, '{', (size_t)(nl - p));
            const char *space = memchr(p, ' ', (size_t)(nl - p));
            FUZZ_CHECK(space != NULL);
            FUZZ_CHECK(g_ascii_isalpha(*p) || *p == '_' || *p == ':');
            if (brace != NULL && brace < space) {
                const char *end = nl;
                while (end > brace && *end != '}')
                    end--;
                FUZZ_CHECK(*end == '}');
                /* two labels, each at most twice the cap escaped, plus names and quotes */
                FUZZ_CHECK((size_t)(end - brace) <= 4 * DDM_METRICS_LABEL_VALUE_MAX + 32);
            }
            lines++;
        }
        p = nl + 1;
    }
    FUZZ_CHECK(lines == samples);
    if (fmt == DDM_METRICS_OPENMETRICS)
        FUZZ_CHECK(g_str_has_suffix(text, "# EOF\n"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    uint8_t sel = fuzz_u8(&in);
    char *buf = g_strndup((const char *)in.p, in.n); /* a NUL ends it early: fine */
    char **f = g_strsplit(buf, "\x01", 64);
    guint n = g_strv_length(f);
    static const DdmMetricKind kinds[] = {DDM_METRIC_KIND_GAUGE, DDM_METRIC_KIND_COUNTER,
                                          DDM_METRIC_KIND_INFO, DDM_METRIC_KIND_GAUGE};
    DdmMetricsFormat asked = ddm_metrics_negotiate(n > 0 ? f[0] : NULL);
    FUZZ_CHECK(asked == DDM_METRICS_PROMETHEUS || asked == DDM_METRICS_OPENMETRICS);
    for (int fmt = DDM_METRICS_PROMETHEUS; fmt <= DDM_METRICS_OPENMETRICS; fmt++) {
        GString *out = g_string_new(NULL);
        DdmMetricsWriter *w = ddm_metrics_writer_new(out, (DdmMetricsFormat)fmt);
        const char *name = n > 1 ? f[1] : "ddmon_x";
        const char *help = n > 2 ? f[2] : NULL;
        if (ddm_metrics_family(w, name, kinds[sel & 3], (sel & 4) ? "bytes" : NULL, help)) {
            static const char *const names[2] = {"key", "app"};
            char big[301];
            memset(big, 'a' + (sel >> 4), 300);
            big[300] = '\0';
            for (guint i = 3; i < n; i += 2) {
                const char *values[2] = {f[i], i + 1 < n ? f[i + 1] : ((sel & 8) ? big : NULL)};
                ddm_metrics_sample(w, names, values, 2, (double)i / 3.0);
            }
            if (n <= 3)
                ddm_metrics_sample(w, NULL, NULL, 0, 1);
        }
        guint samples = ddm_metrics_writer_samples(w);
        ddm_metrics_writer_finish(w);
        check_text(out->str, (DdmMetricsFormat)fmt, samples);
        g_string_free(out, TRUE);
    }
    g_strfreev(f);
    g_free(buf);
    return 0;
}
