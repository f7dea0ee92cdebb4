/* SPDX-License-Identifier: Apache-2.0
 *
 * ddmon's options. Client options set fields of the run (DdmCli); server
 * options go into the DdmConfig through core/config's parsers, which hold
 * every value's syntax and bounds, and are remembered verbatim
 * (DdmCli.server_args) for a server the client starts, so
 * `ddmon --scan-ports=9000-9010 vms` starts a server scanning those ports.
 * Each server option is one row of server_options: its help line and what
 * it sets.
 */
#include <string.h>

#include "cli/cli.h"

char *ddm_cli_absolute(const char *path)
{
    if (g_path_is_absolute(path))
        return g_strdup(path);
    g_autofree char *cwd = g_get_current_dir();
    return g_build_filename(cwd, path, NULL);
}

/* ------------------------------------------------------ server options */

typedef gboolean (*ServerSetter)(DdmConfig *c, const char *value, GError **error);

enum {
    OPT_PATH = 1 << 0,       /* the value is a path, made absolute first */
    OPT_NOT_PASSED = 1 << 1, /* not passed on to a server (the client passes it itself) */
    OPT_BYTES = 1 << 2,      /* taken as bytes (G_OPTION_FLAG_FILENAME: no conversion from the
                                locale's charset, which in the C locale refuses non-ASCII) */
    OPT_UTF8 = 1 << 3        /* and checked as UTF-8 (a name, not a path) */
};

typedef struct ServerOption {
    const char *name;        /* the long name */
    char short_name;
    int arg_flags;           /* GOptionFlags */
    ServerSetter set;
    unsigned flags;          /* OPT_* */
    const char *description, *arg_description;
} ServerOption;

static void add_list(GPtrArray *arr, const char *value)
{
    g_auto(GStrv) parts = g_strsplit(value, ",", -1);
    for (char **p = parts; *p != NULL; p++) {
        g_strstrip(*p);
        if (**p != '\0')
            g_ptr_array_add(arr, g_strdup(*p));
    }
}

static void set_str(char **field, const char *value)
{
    g_free(*field);
    *field = g_strdup(value);
}

static gboolean set_plugin_dir(DdmConfig *c, const char *value, GError **error)
{
    (void)error;
    g_ptr_array_add(c->plugin_dirs, g_strdup(value));
    return TRUE;
}

static gboolean set_plugins(DdmConfig *c, const char *value, GError **error)
{
    (void)error;
    add_list(c->plugins_only, value);
    return TRUE;
}

static gboolean set_disable_plugin(DdmConfig *c, const char *value, GError **error)
{
    (void)error;
    add_list(c->plugins_disabled, value);
    return TRUE;
}

static gboolean set_socket(DdmConfig *c, const char *value, GError **error)
{
    (void)error;
    set_str(&c->socket_path, value);
    return TRUE;
}

static gboolean set_listen(DdmConfig *c, const char *value, GError **error)
{
    (void)error;
    set_str(&c->listen_host, value);
    return TRUE;
}

static gboolean set_select(DdmConfig *c, const char *value, GError **error)
{
    (void)error;
    set_str(&c->select, value);
    return TRUE;
}

static gboolean set_adb(DdmConfig *c, const char *value, GError **error)
{
    (void)error;
    set_str(&c->adb_path, value);
    return TRUE;
}

static gboolean set_no_adb_start(DdmConfig *c, const char *value, GError **error)
{
    (void)value;
    (void)error;
    c->adb_start = FALSE;
    return TRUE;
}

static gboolean set_no_relay(DdmConfig *c, const char *value, GError **error)
{
    (void)value;
    (void)error;
    c->relay = FALSE;
    return TRUE;
}

static gboolean set_verbose(DdmConfig *c, const char *value, GError **error)
{
    (void)c;
    (void)value;
    (void)error;
    g_setenv("G_MESSAGES_DEBUG", "all", FALSE);
    return TRUE;
}

static const ServerOption server_options[] = {
    {"scan", 0, 0, ddm_config_set_scan, 0,
     "Discovery modes: local,adb or none (default local,adb)", "MODES"},
    {"scan-ports", 0, 0, ddm_config_set_scan_ranges, 0, "Local ports to scan (default 8000-8040)",
     "RANGES"},
    {"scan-interval", 0, 0, ddm_config_set_scan_interval, 0,
     "Milliseconds between local scans (default 2000)", "MS"},
    {"connect", 0, 0, ddm_config_add_connect, 0,
     "Connect to a VM at HOST:PORT (repeatable); =DEBUGPORT gives it a fixed "
     "debugger port that waits for the VM",
     "HOST:PORT[=DEBUGPORT]"},
    {"plugin-dir", 0, 0, set_plugin_dir, OPT_PATH, "Look for plugins in DIR first (repeatable)",
     "DIR"},
    {"plugins", 0, 0, set_plugins, 0, "Load only these plugins (and require them)", "A,B"},
    {"disable-plugin", 0, 0, set_disable_plugin, 0, "Do not load plugin NAME (repeatable)", "NAME"},
    {"chunks", 0, 0, ddm_config_set_chunks, 0, "Enable only these chunk types, e.g. THCR,THDE",
     "TYPES"},
    {"plugin-opt", 0, 0, ddm_config_add_plugin_opt, 0, "Plugin option (repeatable)",
     "NAME.KEY=VALUE"},
    {"socket", 0, 0, set_socket, OPT_PATH | OPT_NOT_PASSED,
     "Control socket (default $XDG_RUNTIME_DIR/ddmon/ddmon.sock)", "PATH"},
    {"listen", 0, 0, set_listen, 0, "Address debugger ports bind to (default 127.0.0.1)", "ADDR"},
    {"debug-port-base", 0, 0, ddm_config_set_debug_port_base, 0,
     "First per-VM debugger port (default 8600; 0 = any, the kernel picks)", "PORT"},
    {"selected-port", 0, 0, ddm_config_set_selected_port, 0,
     "Debugger port of the selected VM (default 8700, 0 = off)", "PORT"},
    {"select", 0, 0, set_select, OPT_BYTES | OPT_UTF8, "Select a VM by pid or app name", "PID|APP"},
    {"no-relay", 0, G_OPTION_FLAG_NO_ARG, set_no_relay, 0,
     "No debugger ports at all (no relay): a VM costs one socket instead of two", NULL},
    {"adb", 0, 0, set_adb, OPT_BYTES, "The adb program (default: adb on PATH)", "PATH"},
    {"no-adb-start", 0, G_OPTION_FLAG_NO_ARG, set_no_adb_start, 0, "Never start an adb server",
     NULL},
    {"tcp-probe", 0, 0, ddm_config_set_tcp_probe, 0,
     "TCP VMs: 'version' asks VirtualMachine.Version before any DDM "
     "packet (default; protects OpenJDK, see ddmon(1)), 'helo' sends HELO first",
     "version|helo"},
    {"request-timeout", 0, 0, ddm_config_set_request_timeout, 0,
     "Default DDM request timeout (default 10000)", "MS"},
    {"connect-timeout", 0, 0, ddm_config_set_connect_timeout, 0,
     "Connecting to a VM, over TCP or through adb (default 3000)", "MS"},
    {"handshake-timeout", 0, 0, ddm_config_set_handshake_timeout, 0,
     "The JDWP handshake: a VM's echo, a debugger's on a debugger port (default 5000)", "MS"},
    {"max-packet", 0, 0, ddm_config_set_max_packet, 0, "Largest JDWP packet accepted (default 256M)",
     "BYTES"},
    {"max-stream", 0, 0, ddm_config_set_max_stream, 0,
     "Largest streamed DDM event accepted, e.g. a heap dump (default 4G)", "BYTES"},
    {"max-buffers", 0, 0, ddm_config_set_max_buffers, 0,
     "Memory budget of all peers' packet buffers together (default 256M)", "BYTES"},
    {"http", 0, G_OPTION_FLAG_OPTIONAL_ARG, ddm_config_set_http, 0,
     "Serve the web dashboard at ADDR (default 127.0.0.1:8585; off without --http)",
     "[HOST:]PORT"},
    {"metrics", 0, G_OPTION_FLAG_OPTIONAL_ARG, ddm_config_set_metrics, 0,
     "Serve GET /metrics (Prometheus) at ADDR, no token (default 127.0.0.1:9585)",
     "[HOST:]PORT"},
    {"verbose", 'v', G_OPTION_FLAG_NO_ARG, set_verbose, 0, "Log debug messages", NULL},
};

static const ServerOption *server_option(const char *name)
{
    for (gsize i = 0; i < G_N_ELEMENTS(server_options); i++) {
        const ServerOption *o = &server_options[i];
        if (g_str_has_prefix(name, "--") ? strcmp(name + 2, o->name) == 0
                                         : name[0] == '-' && o->short_name != 0 &&
                                               name[1] == o->short_name && name[2] == '\0')
            return o;
    }
    return NULL;
}

/* Every server option lands here: into the config, and remembered. */
static gboolean on_server_option(const char *name, const char *value, gpointer data,
                                 GError **error)
{
    DdmCli *cli = data;
    const ServerOption *o = server_option(name);
    if (o == NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION, "unknown option %s",
                    name);
        return FALSE;
    }
    if ((o->arg_flags & G_OPTION_FLAG_OPTIONAL_ARG) && value != NULL && *value == '\0')
        value = NULL; /* a bare --http (ddm_cli_options_bare_optional) */
    if ((o->flags & OPT_UTF8) && value != NULL && !g_utf8_validate(value, -1, NULL)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--%s: not UTF-8", o->name);
        return FALSE;
    }
    g_autofree char *abs = value != NULL && (o->flags & OPT_PATH) ? ddm_cli_absolute(value) : NULL;
    if (abs != NULL)
        value = abs;
    if (!o->set(cli->config, value, error))
        return FALSE;
    if (o->flags & OPT_NOT_PASSED)
        return TRUE;
    if (value != NULL)
        g_ptr_array_add(cli->server_args, g_strdup_printf("--%s=%s", o->name, value));
    else
        g_ptr_array_add(cli->server_args, g_strdup_printf("--%s", o->name));
    return TRUE;
}

/* --------------------------------------------------------------- parser */

void ddm_cli_options_bare_optional(char **args, char **hint)
{
    if (hint != NULL)
        *hint = NULL;
    /* GOption gives an optional-argument option the next word when it does
     * not start with '-': `ddmon --http server` would read "server" as the
     * address. A bare --NAME is written --NAME= first, which
     * on_server_option reads as "no value". */
    for (gsize i = 1; args[i] != NULL && strcmp(args[i], "--") != 0; i++) {
        if (!g_str_has_prefix(args[i], "--") || strchr(args[i], '=') != NULL)
            continue;
        const ServerOption *o = server_option(args[i]);
        if (o == NULL || !(o->arg_flags & G_OPTION_FLAG_OPTIONAL_ARG))
            continue;
        /* `--http 99999`: the word is the command, and a likely typo. */
        if (hint != NULL && *hint == NULL && args[i + 1] != NULL && args[i + 1][0] != '-')
            *hint = g_strconcat(args[i], "=", args[i + 1], NULL);
        char *bare = g_strconcat(args[i], "=", NULL);
        g_free(args[i]);
        args[i] = bare;
    }
}

GOptionContext *ddm_cli_options_new(DdmCli *cli)
{
    const GOptionEntry client_entries[] = {
        {"json", 0, 0, G_OPTION_ARG_NONE, &cli->json, "Print JSON (one object, or one per line)",
         NULL},
        {"no-autostart", 0, 0, G_OPTION_ARG_NONE, &cli->no_autostart,
         "Do not start a server when none runs", NULL},
        {"plain", 0, 0, G_OPTION_ARG_NONE, &cli->plain,
         "watch: the plain live view instead of the terminal UI", NULL},
        {"foreground", 0, 0, G_OPTION_ARG_NONE, &cli->foreground,
         "server: run in the foreground", NULL},
        {"replace", 0, 0, G_OPTION_ARG_NONE, &cli->replace,
         "server: stop a running server first (its options differ), then start this one",
         NULL},
        /* (bytes, checked as UTF-8 in main(): STRING would convert from the
         * locale's charset and refuse any non-ASCII name in the C locale) */
        {"vm", 0, 0, G_OPTION_ARG_FILENAME, &cli->vm, "view, views: the VM (pid, key or app name)",
         "VM"},
        {"wait", 0, 0, G_OPTION_ARG_INT, &cli->wait_ms,
         "snapshot: wait at most MS milliseconds for discovery to settle (default 3000)", "MS"},
        {"out-dir", 0, 0, G_OPTION_ARG_FILENAME, &cli->out_dir,
         "snapshot, commands: write blob views (heap bitmaps, dumps) to DIR", "DIR"},
        {"in-process", 0, 0, G_OPTION_ARG_NONE, &cli->in_process,
         "snapshot: never use a running server", NULL},
        {"gc", 0, 0, G_OPTION_ARG_NONE, &cli->gc,
         "snapshot: ask every DDM VM for a GC first (fills the heap segment views)", NULL},
        {"hprof", 0, 0, G_OPTION_ARG_NONE, &cli->hprof,
         "snapshot: dump every DDM VM's heap into --out-dir", NULL},
        {"list-plugins", 0, 0, G_OPTION_ARG_NONE, &cli->list_plugins,
         "List the plugins found, loaded or refused, and exit", NULL},
        {"check-plugin", 0, 0, G_OPTION_ARG_FILENAME, &cli->check_plugin,
         "Check that FILE is a plugin this ddmon can load, and exit", "FILE"},
        {"version", 0, 0, G_OPTION_ARG_NONE, &cli->version, "Print the version and exit", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};

    GOptionEntry *server_entries = g_new0(GOptionEntry, G_N_ELEMENTS(server_options) + 1);
    for (gsize i = 0; i < G_N_ELEMENTS(server_options); i++) {
        const ServerOption *o = &server_options[i];
        /* A path or a name is bytes, whatever the locale: without
         * FILENAME, GLib converts the value from the locale's charset, and
         * in the C locale (no LANG: a service, cron, a container) a
         * non-ASCII directory or app name failed with "Invalid byte
         * sequence in conversion input". Names are checked as UTF-8. */
        gint flags = o->arg_flags | ((o->flags & (OPT_PATH | OPT_BYTES)) ? G_OPTION_FLAG_FILENAME : 0);
        server_entries[i] = (GOptionEntry){o->name, o->short_name, flags,
                                           G_OPTION_ARG_CALLBACK, (gpointer)on_server_option,
                                           o->description, o->arg_description};
    }

    GOptionContext *ctx = g_option_context_new("[COMMAND [ARGS...]]");
    GOptionGroup *main_group = g_option_group_new(NULL, NULL, NULL, cli, NULL);
    g_option_group_add_entries(main_group, client_entries);
    g_option_group_add_entries(main_group, server_entries); /* copied */
    g_free(server_entries);
    g_option_context_set_main_group(ctx, main_group);
    g_option_context_set_summary(ctx, "A debug monitor for Java and Android VMs, the adb way.");
    g_autofree char *commands = ddm_cli_commands_help();
    g_option_context_set_description(ctx, commands);
    /* Plugin commands may have options of their own: keep unknown ones. */
    g_option_context_set_ignore_unknown_options(ctx, TRUE);
    return ctx;
}
