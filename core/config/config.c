/* SPDX-License-Identifier: Apache-2.0
 *
 * Runtime configuration (see config.h): the defaults and the parsers for
 * the option values that have a syntax of their own (port ranges, scan
 * modes, chunk lists, plugin options) or a range (the table of numeric
 * option bounds: intervals, timeouts, ports, packet size), plus the
 * default control socket location.
 *
 * Invariants: parsers either succeed and replace the value, or fail with a
 * G_OPTION_ERROR_BAD_VALUE naming the offending part and leave the config
 * unchanged. Port ranges are 1..65535, first <= last, and at most
 * DDM_CONFIG_MAX_SCAN_PORTS ports in total.
 *
 * Non-goals: command line parsing itself (cli/options.c), config files, creating
 * the socket directory (the server does that, with mode 0700).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ddmon/chunk.h>

#include "core/config/config.h"
#include "core/config/listen_addr.h"

#ifndef DDM_PLUGINDIR
#define DDM_PLUGINDIR "/usr/local/lib/ddmon/plugins-1"
#endif

static GPtrArray *str_array_new(void)
{
    return g_ptr_array_new_with_free_func(g_free);
}

DdmConfig *ddm_config_new(void)
{
    DdmConfig *c = g_new0(DdmConfig, 1);
    DdmPortRange def = {8000, 8040};

    c->scan_local = TRUE;
    c->scan_adb = TRUE;
    c->scan_host = g_strdup("127.0.0.1");
    c->scan_ranges = g_array_new(FALSE, FALSE, sizeof(DdmPortRange));
    g_array_append_val(c->scan_ranges, def);
    c->scan_interval_ms = 2000;
    c->tcp_version_probe = TRUE;
    c->relay = TRUE;
    c->connect = str_array_new();
    c->adb_path = NULL;
    c->adb_start = TRUE;
    c->connect_timeout_ms = DDM_CONFIG_CONNECT_TIMEOUT_DEFAULT_MS;
    c->handshake_timeout_ms = DDM_CONFIG_HANDSHAKE_TIMEOUT_DEFAULT_MS;
    /* What plugins see of the request bounds: the SDK's constants. */
    c->request_timeout_ms = DDM_REQUEST_TIMEOUT_DEFAULT_MS;
    c->max_pending = DDM_REQUEST_MAX_PENDING;
    c->max_packet = DDM_REQUEST_MAX_PACKET;
    c->max_inflate = (gsize)16 * 1024 * 1024; /* inflated in one go on the loop: ~17 ms */
    c->max_stream = G_MAXUINT32;
    c->max_write_queue = (gsize)512 * 1024 * 1024;
    c->max_buffers = DDM_CONFIG_MAX_BUFFERS_DEFAULT;
    c->listen_host = g_strdup("127.0.0.1");
    c->debug_port_base = 8600;
    c->selected_port = 8700;
    c->select = NULL;
    c->plugin_dirs = str_array_new();
    c->use_env_plugin_path = TRUE;
    c->installed_plugin_dir = g_strdup(DDM_PLUGINDIR);
    c->plugins_only = str_array_new();
    c->plugins_disabled = str_array_new();
    c->chunks = NULL;
    c->plugin_opts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    c->socket_path = NULL;
    return c;
}

void ddm_config_free(DdmConfig *c)
{
    if (!c)
        return;
    g_free(c->scan_host);
    if (c->scan_ranges)
        g_array_free(c->scan_ranges, TRUE);
    if (c->connect)
        g_ptr_array_unref(c->connect);
    g_free(c->adb_path);
    g_free(c->listen_host);
    g_free(c->select);
    g_free(c->http_listen);
    g_free(c->metrics_listen);
    g_free(c->port_map_path);
    if (c->plugin_dirs)
        g_ptr_array_unref(c->plugin_dirs);
    g_free(c->installed_plugin_dir);
    if (c->plugins_only)
        g_ptr_array_unref(c->plugins_only);
    if (c->plugins_disabled)
        g_ptr_array_unref(c->plugins_disabled);
    if (c->chunks)
        g_ptr_array_unref(c->chunks);
    if (c->plugin_opts)
        g_hash_table_destroy(c->plugin_opts);
    g_free(c->socket_path);
    if (c->server_args)
        g_ptr_array_unref(c->server_args);
    g_free(c);
}

static gboolean bad_value(GError **error, const char *what, const char *part, const char *why)
{
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: \"%s\": %s", what, part, why);
    return FALSE;
}

/* A port number: decimal digits only, 1..65535. */
static gboolean parse_port(const char *s, guint16 *out)
{
    guint64 v = 0;

    if (!*s || strlen(s) > 5)
        return FALSE;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return FALSE;
        v = v * 10 + (guint64)(*p - '0');
    }
    if (v < 1 || v > 65535)
        return FALSE;
    *out = (guint16)v;
    return TRUE;
}

gboolean ddm_config_set_scan_ranges(DdmConfig *c, const char *spec, GError **error)
{
    const char *what = "port ranges";
    GArray *ranges;
    char **parts;
    guint64 total = 0;

    g_return_val_if_fail(c != NULL, FALSE);
    if (!spec || !*spec)
        return bad_value(error, what, spec ? spec : "", "empty; expected e.g. 8000-8040,9000");
    ranges = g_array_new(FALSE, FALSE, sizeof(DdmPortRange));
    parts = g_strsplit(spec, ",", -1);
    for (char **p = parts; *p; p++) {
        char *part = g_strstrip(*p);
        char *dash = strchr(part, '-');
        DdmPortRange r;
        gboolean ok;

        if (dash) {
            char *lo = g_strstrip(g_strndup(part, (gsize)(dash - part)));
            char *hi = g_strstrip(g_strdup(dash + 1));
            ok = parse_port(lo, &r.first) && parse_port(hi, &r.last);
            g_free(lo);
            g_free(hi);
        } else {
            ok = parse_port(part, &r.first);
            r.last = r.first;
        }
        if (!ok) {
            bad_value(error, what, part, "expected PORT or FIRST-LAST with ports 1..65535");
            goto fail;
        }
        if (r.first > r.last) {
            bad_value(error, what, part, "the first port is after the last");
            goto fail;
        }
        total += (guint64)(r.last - r.first) + 1;
        if (total > DDM_CONFIG_MAX_SCAN_PORTS) {
            bad_value(error, what, part, "too many ports in total (at most 65535)");
            goto fail;
        }
        g_array_append_val(ranges, r);
    }
    if (ranges->len == 0) {
        bad_value(error, what, spec, "no range given");
        goto fail;
    }
    g_strfreev(parts);
    g_array_free(c->scan_ranges, TRUE);
    c->scan_ranges = ranges;
    return TRUE;
fail:
    g_strfreev(parts);
    g_array_free(ranges, TRUE);
    return FALSE;
}

gboolean ddm_config_set_scan(DdmConfig *c, const char *spec, GError **error)
{
    const char *what = "--scan";
    gboolean local = FALSE, adb = FALSE, none = FALSE;
    char **parts;
    gboolean ok = TRUE;

    g_return_val_if_fail(c != NULL, FALSE);
    if (!spec || !*spec)
        return bad_value(error, what, spec ? spec : "", "empty; expected local, adb, local,adb or none");
    parts = g_strsplit(spec, ",", -1);
    for (char **p = parts; *p && ok; p++) {
        char *part = g_strstrip(*p);
        if (strcmp(part, "local") == 0)
            local = TRUE;
        else if (strcmp(part, "adb") == 0)
            adb = TRUE;
        else if (strcmp(part, "none") == 0)
            none = TRUE;
        else
            ok = bad_value(error, what, part, "unknown discovery; expected local, adb or none");
    }
    if (ok && none && (local || adb))
        ok = bad_value(error, what, spec, "\"none\" cannot be combined with other values");
    g_strfreev(parts);
    if (!ok)
        return FALSE;
    c->scan_local = local;
    c->scan_adb = adb;
    return TRUE;
}

gboolean ddm_config_set_chunks(DdmConfig *c, const char *spec, GError **error)
{
    const char *what = "--chunks";
    GPtrArray *names;
    char **parts;

    g_return_val_if_fail(c != NULL, FALSE);
    if (!spec || !*spec)
        return bad_value(error, what, spec ? spec : "", "empty; expected e.g. THCR,THST or all");
    if (strcmp(spec, "all") == 0) {
        if (c->chunks)
            g_ptr_array_unref(c->chunks);
        c->chunks = NULL;
        return TRUE;
    }
    if (strcmp(spec, "none") == 0) {
        /* An empty list means "everything" to the registry (registry.h), so
         * "none" cannot be expressed here; say what to use instead. */
        return bad_value(error, what, spec,
                         "disabling every chunk type is not supported; use --plugins or --disable-plugin");
    }
    names = str_array_new();
    parts = g_strsplit(spec, ",", -1);
    for (char **p = parts; *p; p++) {
        const char *part = *p; /* no stripping: " THC" is not a chunk name */
        gboolean dup = FALSE;

        if (ddm_chunk_from_name(part) == 0) {
            bad_value(error, what, part, "a chunk type is exactly four printable ASCII characters");
            g_strfreev(parts);
            g_ptr_array_unref(names);
            return FALSE;
        }
        for (guint i = 0; i < names->len; i++)
            dup = dup || strcmp(g_ptr_array_index(names, i), part) == 0;
        if (!dup)
            g_ptr_array_add(names, g_strdup(part));
    }
    g_strfreev(parts);
    if (c->chunks)
        g_ptr_array_unref(c->chunks);
    c->chunks = names;
    return TRUE;
}

gboolean ddm_config_add_plugin_opt(DdmConfig *c, const char *spec, GError **error)
{
    const char *what = "--plugin-opt";
    const char *eq, *dot;

    g_return_val_if_fail(c != NULL, FALSE);
    if (!spec || !g_utf8_validate(spec, -1, NULL))
        return bad_value(error, what, "", "expected NAME.KEY=VALUE in UTF-8");
    eq = strchr(spec, '=');
    if (!eq)
        return bad_value(error, what, spec, "expected NAME.KEY=VALUE (no '=')");
    dot = memchr(spec, '.', (size_t)(eq - spec));
    if (!dot || dot == spec || dot + 1 == eq)
        return bad_value(error, what, spec, "expected NAME.KEY=VALUE (plugin name and key must not be empty)");
    for (const char *p = spec; p < eq; p++) {
        if ((guchar)*p <= 0x20 || *p == 0x7f)
            return bad_value(error, what, spec, "NAME.KEY must not contain spaces or control characters");
    }
    g_hash_table_replace(c->plugin_opts, g_strndup(spec, (gsize)(eq - spec)), g_strdup(eq + 1));
    return TRUE;
}

char *ddm_config_default_socket_path(void)
{
    const char *xdg = g_getenv("XDG_RUNTIME_DIR");
    struct stat st;

    if (xdg && g_path_is_absolute(xdg) && stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) &&
        st.st_uid == getuid())
        return g_build_filename(xdg, "ddmon", "ddmon.sock", NULL);
    {
        char dir[64];
        g_snprintf(dir, sizeof dir, "/tmp/ddmon-%u", (unsigned)getuid());
        return g_build_filename(dir, "ddmon.sock", NULL);
    }
}

char *ddm_config_port_map_path(const char *socket_path)
{
    g_autofree char *def = ddm_config_default_socket_path();
    if (strcmp(socket_path, def) == 0) {
        const char *xdg = g_getenv("XDG_STATE_HOME");
        const char *home = g_getenv("HOME");
        if (xdg && g_path_is_absolute(xdg))
            return g_build_filename(xdg, "ddmon", "ports", NULL);
        if (home && g_path_is_absolute(home))
            return g_build_filename(home, ".local", "state", "ddmon", "ports", NULL);
        g_autofree char *dir = g_path_get_dirname(socket_path);
        return g_build_filename(dir, "ports", NULL);
    }
    if (g_str_has_suffix(socket_path, ".sock"))
        return g_strdup_printf("%.*s.ports", (int)(strlen(socket_path) - 5), socket_path);
    return g_strdup_printf("%s.ports", socket_path);
}

/* ------------------------------------------------------ option values */

/* The one table of numeric option ranges (config.h). A below_min message
 * is the whole message; the other failures say "OPTION: 'VALUE' is not a
 * number from 0 to MAX". --wait is the client's (snapshot), checked here
 * all the same so every bound is in one place. */
static const DdmOptionBound option_bounds[] = {
    {"--scan-interval", DDM_CONFIG_SCAN_INTERVAL_MIN_MS, DDM_CONFIG_SCAN_INTERVAL_MAX_MS, FALSE,
     "--scan-interval: at least 100 ms"},
    {"--request-timeout", 1, DDM_CONFIG_REQUEST_TIMEOUT_MAX_MS, FALSE,
     "--request-timeout: must be at least 1 ms"},
    {"--connect-timeout", 1, DDM_CONFIG_TIMEOUT_MAX_MS, FALSE,
     "--connect-timeout: must be at least 1 ms"},
    {"--handshake-timeout", 1, DDM_CONFIG_TIMEOUT_MAX_MS, FALSE,
     "--handshake-timeout: must be at least 1 ms"},
    {"--max-packet", DDM_CONFIG_MIN_PACKET, DDM_CONFIG_MAX_PACKET_LIMIT, TRUE,
     "--max-packet: at least 11 bytes (a JDWP header)"},
    {"--max-stream", 1, G_MAXUINT32, TRUE, "--max-stream: at least 1 byte"},
    {"--max-buffers", DDM_CONFIG_MAX_BUFFERS_MIN, (guint64)G_MAXSIZE, TRUE,
     "--max-buffers: at least 64K (one peer's first buffer)"},
    {"--debug-port-base", 0, 65535, FALSE, NULL},
    {"--selected-port", 0, 65535, FALSE, NULL},
    {"--wait", 0, G_MAXINT, FALSE, "--wait must be 0 or more"},
    {NULL, 0, 0, FALSE, NULL}};

const DdmOptionBound *ddm_config_option_bounds(void)
{
    return option_bounds;
}

const DdmOptionBound *ddm_config_option_bound(const char *option)
{
    for (const DdmOptionBound *b = option_bounds; option != NULL && b->option != NULL; b++)
        if (strcmp(b->option, option) == 0)
            return b;
    return NULL;
}

static gboolean not_a_number(GError **error, const DdmOptionBound *b, const char *value)
{
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s: '%s' is not a number from 0 to %" G_GUINT64_FORMAT, b->option, value, b->max);
    return FALSE;
}

static gboolean below_min(GError **error, const DdmOptionBound *b)
{
    g_set_error_literal(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, b->below_min);
    return FALSE;
}

gboolean ddm_config_parse_bounded(const char *option, const char *value, guint64 *out,
                                  GError **error)
{
    const DdmOptionBound *b = ddm_config_option_bound(option);
    guint64 mult = 1, x = 0;

    g_return_val_if_fail(b != NULL && value != NULL && out != NULL, FALSE);
    g_autofree char *v = g_strstrip(g_strdup(value));
    gsize n = strlen(v);
    if (b->size_suffix && n > 0 && strchr("kKmMgG", v[n - 1]) != NULL) {
        char s = g_ascii_tolower(v[n - 1]);
        mult = s == 'k' ? 1024 : s == 'm' ? 1024 * 1024 : (guint64)1024 * 1024 * 1024;
        v[n - 1] = '\0';
    }
    if (!g_ascii_string_to_unsigned(v, 10, 0, b->max, &x, NULL) || x > b->max / mult)
        return not_a_number(error, b, value);
    x *= mult;
    if (x < b->min)
        return below_min(error, b);
    *out = x;
    return TRUE;
}

gboolean ddm_config_check_bound(const char *option, gint64 value, GError **error)
{
    const DdmOptionBound *b = ddm_config_option_bound(option);

    g_return_val_if_fail(b != NULL, FALSE);
    if (value < 0 || (guint64)value < b->min) {
        if (b->below_min != NULL)
            return below_min(error, b);
    }
    if (value < 0 || (guint64)value > b->max) {
        g_autofree char *text = g_strdup_printf("%" G_GINT64_FORMAT, value);
        return not_a_number(error, b, text);
    }
    return TRUE;
}

gboolean ddm_config_set_scan_interval(DdmConfig *c, const char *value, GError **error)
{
    guint64 n = 0;
    g_return_val_if_fail(c != NULL, FALSE);
    if (!ddm_config_parse_bounded("--scan-interval", value, &n, error))
        return FALSE;
    c->scan_interval_ms = (guint)n;
    return TRUE;
}

gboolean ddm_config_set_request_timeout(DdmConfig *c, const char *value, GError **error)
{
    guint64 n = 0;
    g_return_val_if_fail(c != NULL, FALSE);
    if (!ddm_config_parse_bounded("--request-timeout", value, &n, error))
        return FALSE;
    c->request_timeout_ms = (guint)n;
    return TRUE;
}

gboolean ddm_config_set_connect_timeout(DdmConfig *c, const char *value, GError **error)
{
    guint64 n = 0;
    g_return_val_if_fail(c != NULL, FALSE);
    if (!ddm_config_parse_bounded("--connect-timeout", value, &n, error))
        return FALSE;
    c->connect_timeout_ms = (guint)n;
    return TRUE;
}

gboolean ddm_config_set_handshake_timeout(DdmConfig *c, const char *value, GError **error)
{
    guint64 n = 0;
    g_return_val_if_fail(c != NULL, FALSE);
    if (!ddm_config_parse_bounded("--handshake-timeout", value, &n, error))
        return FALSE;
    c->handshake_timeout_ms = (guint)n;
    return TRUE;
}

gboolean ddm_config_set_max_packet(DdmConfig *c, const char *value, GError **error)
{
    guint64 n = 0;
    g_return_val_if_fail(c != NULL, FALSE);
    if (!ddm_config_parse_bounded("--max-packet", value, &n, error))
        return FALSE;
    c->max_packet = (gsize)n;
    return TRUE;
}

gboolean ddm_config_set_max_stream(DdmConfig *c, const char *value, GError **error)
{
    guint64 n = 0;
    g_return_val_if_fail(c != NULL, FALSE);
    if (!ddm_config_parse_bounded("--max-stream", value, &n, error))
        return FALSE;
    c->max_stream = n;
    return TRUE;
}

gboolean ddm_config_set_max_buffers(DdmConfig *c, const char *value, GError **error)
{
    guint64 n = 0;
    g_return_val_if_fail(c != NULL, FALSE);
    if (!ddm_config_parse_bounded("--max-buffers", value, &n, error))
        return FALSE;
    c->max_buffers = (gsize)n;
    return TRUE;
}

gboolean ddm_config_set_debug_port_base(DdmConfig *c, const char *value, GError **error)
{
    guint64 n = 0;
    g_return_val_if_fail(c != NULL, FALSE);
    if (!ddm_config_parse_bounded("--debug-port-base", value, &n, error))
        return FALSE;
    c->debug_port_base = (guint16)n;
    return TRUE;
}

gboolean ddm_config_set_selected_port(DdmConfig *c, const char *value, GError **error)
{
    guint64 n = 0;
    g_return_val_if_fail(c != NULL, FALSE);
    if (!ddm_config_parse_bounded("--selected-port", value, &n, error))
        return FALSE;
    c->selected_port = (guint16)n;
    return TRUE;
}

gboolean ddm_config_set_http(DdmConfig *c, const char *value, GError **error)
{
    g_return_val_if_fail(c != NULL, FALSE);
    const char *spec = value != NULL ? value : DDM_CONFIG_HTTP_DEFAULT;
    DdmListenAddr addr = {0};
    if (!ddm_listen_addr_parse("--http", spec, &addr, error))
        return FALSE;
    ddm_listen_addr_clear(&addr);
    g_free(c->http_listen);
    c->http_listen = g_strdup(spec);
    return TRUE;
}

gboolean ddm_config_set_metrics(DdmConfig *c, const char *value, GError **error)
{
    g_return_val_if_fail(c != NULL, FALSE);
    const char *spec = value != NULL ? value : DDM_CONFIG_METRICS_DEFAULT;
    DdmListenAddr addr = {0};
    if (!ddm_listen_addr_parse("--metrics", spec, &addr, error))
        return FALSE;
    ddm_listen_addr_clear(&addr);
    g_free(c->metrics_listen);
    c->metrics_listen = g_strdup(spec);
    return TRUE;
}

gboolean ddm_config_add_connect(DdmConfig *c, const char *value, GError **error)
{
    g_return_val_if_fail(c != NULL && value != NULL, FALSE);
    /* Only the shape here; the target parses HOST:PORT[=DEBUGPORT] itself. */
    if (strchr(value, ':') == NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--connect: expected HOST:PORT, got '%s'", value);
        return FALSE;
    }
    g_ptr_array_add(c->connect, g_strdup(value));
    return TRUE;
}

gboolean ddm_config_set_tcp_probe(DdmConfig *c, const char *value, GError **error)
{
    g_return_val_if_fail(c != NULL, FALSE);
    if (g_strcmp0(value, "version") == 0) {
        c->tcp_version_probe = TRUE;
    } else if (g_strcmp0(value, "helo") == 0) {
        c->tcp_version_probe = FALSE;
    } else {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--tcp-probe: 'version' (default) or 'helo', not '%s'", value);
        return FALSE;
    }
    return TRUE;
}
