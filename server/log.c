/* SPDX-License-Identifier: Apache-2.0
 *
 * The server's log lines and the glib writer that prints them. See log.h.
 */
#include <build-config.h>

#include "server/log.h"

#include "core/session/logctx.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

const char *ddm_log_level_word(GLogLevelFlags level)
{
    if (level & G_LOG_LEVEL_ERROR)
        return "error";
    if (level & G_LOG_LEVEL_CRITICAL)
        return "critical";
    if (level & G_LOG_LEVEL_WARNING)
        return "warning";
    if (level & G_LOG_LEVEL_MESSAGE)
        return "message";
    if (level & G_LOG_LEVEL_INFO)
        return "info";
    if (level & G_LOG_LEVEL_DEBUG)
        return "debug";
    return "message";
}

/* "ddmon" is "core", "ddmon-loader" is "loader", another domain ("GLib-GIO")
 * is itself in lower case. */
static void append_component(GString *s, const char *domain)
{
    if (domain == NULL || domain[0] == '\0' || strcmp(domain, "ddmon") == 0) {
        g_string_append(s, "core");
        return;
    }
    if (g_str_has_prefix(domain, "ddmon-") && domain[6] != '\0')
        domain += 6;
    for (const char *p = domain; *p != '\0'; p++)
        g_string_append_c(s, g_ascii_isspace(*p) ? '-' : g_ascii_tolower(*p));
}

char *ddm_log_format_line(GDateTime *time, GLogLevelFlags level, const char *domain,
                          const char *vm, const char *message)
{
    GString *s = g_string_sized_new(128);
    g_string_printf(s, "%04d-%02d-%02dT%02d:%02d:%02d.%03d %s ", g_date_time_get_year(time),
                    g_date_time_get_month(time), g_date_time_get_day_of_month(time),
                    g_date_time_get_hour(time), g_date_time_get_minute(time),
                    g_date_time_get_second(time), g_date_time_get_microsecond(time) / 1000,
                    ddm_log_level_word(level));
    append_component(s, domain);
    if (vm != NULL && vm[0] != '\0') {
        /* the VM the line is about, as a field: " [KEY]" (no spaces in a key) */
        g_string_append(s, " [");
        for (const char *p = vm; *p != '\0'; p++)
            g_string_append_c(s, g_ascii_isspace(*p) || *p == ']' ? '_' : *p);
        g_string_append_c(s, ']');
    }
    g_string_append(s, ": ");
    gsize start = s->len;
    g_string_append(s, message != NULL ? message : "");
    for (gsize i = start; i < s->len; i++)
        if (s->str[i] == '\n' || s->str[i] == '\r')
            s->str[i] = ' ';
    while (s->len > start && s->str[s->len - 1] == ' ')
        g_string_truncate(s, s->len - 1);
    g_string_append_c(s, '\n');
    return g_string_free(s, FALSE);
}

const char *ddm_log_line_warning_message(const char *line)
{
    /* "YYYY-MM-DDTHH:MM:SS.mmm warning COMPONENT: MESSAGE" */
    static const char word[] = " warning ";
    if (strlen(line) < 23 || line[4] != '-' || line[7] != '-' || line[10] != 'T' ||
        line[13] != ':' || line[16] != ':' || line[19] != '.')
        return NULL;
    const char *p = line + 23;
    if (strncmp(p, word, strlen(word)) != 0)
        return NULL;
    p += strlen(word);
    const char *colon = strstr(p, ": ");
    const char *space = colon ? memchr(p, ' ', (gsize)(colon - p)) : NULL;
    if (colon == NULL || colon == p)
        return NULL;
    /* "COMPONENT: " or "COMPONENT [VM]: " */
    if (space != NULL && (space[1] != '[' || colon[-1] != ']' || memchr(space + 1, ' ',
                                                                       (gsize)(colon - space - 1))))
        return NULL;
    return colon + 2;
}

/* A field's value as a string: itself when NUL-terminated (length -1),
 * else a copy kept in *@copy. */
static const char *field_string(const GLogField *f, char **copy)
{
    if (f->length < 0)
        return f->value;
    g_free(*copy);
    *copy = g_strndup(f->value, (gsize)f->length);
    return *copy;
}

static GLogWriterOutput writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                               gpointer user_data)
{
    (void)user_data;
    g_autofree char *domain_copy = NULL, *message_copy = NULL;
    const char *domain = NULL, *message = NULL;
    for (gsize i = 0; i < n_fields; i++) {
        if (strcmp(fields[i].key, "GLIB_DOMAIN") == 0)
            domain = field_string(&fields[i], &domain_copy);
        else if (strcmp(fields[i].key, "MESSAGE") == 0)
            message = field_string(&fields[i], &message_copy);
    }
    if (g_log_writer_default_would_drop(level, domain))
        return G_LOG_WRITER_HANDLED;
    g_autoptr(GDateTime) now = g_date_time_new_now_local();
    g_autofree char *line = ddm_log_format_line(now, level, domain, ddm_logctx_vm(), message);
    gsize len = strlen(line);
    ssize_t n;
    do
        n = write(STDERR_FILENO, line, len); /* one write: lines do not interleave */
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? G_LOG_WRITER_HANDLED : G_LOG_WRITER_UNHANDLED;
}

void ddm_log_install(void)
{
    static gsize installed = 0;
    if (g_once_init_enter(&installed)) {
        g_log_set_writer_func(writer, NULL, NULL);
        g_once_init_leave(&installed, 1);
    }
}
