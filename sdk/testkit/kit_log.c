/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's captured log: the host's log member, the kit's own
 * warnings (fh_logf), and what a test reads back (fake_host_log_*).
 */
#include "kit-private.h"

static const char *level_name(ddm_log_level l)
{
    switch (l) {
    case DDM_LOG_WARNING: return "warning";
    case DDM_LOG_MESSAGE: return "message";
    case DDM_LOG_INFO: return "info";
    case DDM_LOG_DEBUG: return "debug";
    }
    return "unknown";
}

static void log_append(fake_host *fh, ddm_log_level level, const char *text)
{
    size_t need = strlen(level_name(level)) + 2 + strlen(text) + 2;
    if (fh->log_len + need + 1 > fh->log_cap) {
        size_t ncap = fh->log_cap ? fh->log_cap : 1024;
        char *n;
        while (ncap < fh->log_len + need + 1)
            ncap *= 2;
        n = realloc(fh->log, ncap);
        if (!n)
            abort();
        fh->log = n;
        fh->log_cap = ncap;
    }
    fh->log_len += (size_t)snprintf(fh->log + fh->log_len, fh->log_cap - fh->log_len, "%s: %s\n",
                                    level_name(level), text);
    if (level >= 1 && level <= 4)
        fh->log_counts[level]++;
    fh->log_counts[0]++;
    if (getenv("FAKE_HOST_VERBOSE"))
        fprintf(stderr, "[fake-host] %s: %s\n", level_name(level), text);
}

void fh_logf(fake_host *fh, ddm_log_level level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    log_append(fh, level, buf);
}

void fh_log(ddm_plugin *self, ddm_log_level level, const char *fmt, ...)
{
    char buf[DDM_LOG_MESSAGE_MAX + 1]; /* the core cuts at DDM_LOG_MESSAGE_MAX bytes */
    va_list ap;
    assert_non_null(fmt);
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    log_append(host_of(self), level, buf);
}

int fake_host_log_contains(fake_host *fh, const char *substr)
{
    return fh->log && strstr(fh->log, substr) != NULL;
}

int fake_host_log_count(fake_host *fh, ddm_log_level level)
{
    return ((int)level >= 0 && level <= 4) ? fh->log_counts[level] : 0;
}

const char *fake_host_log_text(fake_host *fh)
{
    return fh->log ? fh->log : "";
}

void fake_host_log_clear(fake_host *fh)
{
    fh->log_len = 0;
    if (fh->log)
        fh->log[0] = '\0';
    memset(fh->log_counts, 0, sizeof fh->log_counts);
}
