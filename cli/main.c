/* SPDX-License-Identifier: Apache-2.0
 *
 * ddmon's command line: options into a DdmConfig (config.c's parsers),
 * then one command: the server (`server --foreground`), server control
 * (`start-server`, `kill-server`), client commands over the control
 * socket (`vms`, `view`, `views`, `plugins`, `watch`, `scan`, plugin
 * commands such as `gc`), and the in-process ones (`snapshot` without a
 * server, `--list-plugins`, `--check-plugin`, `--version`, `help`).
 *
 * Server options given to a client are remembered verbatim and passed to
 * a server the client starts, so `ddmon --scan-ports=9000-9010 vms` starts
 * a server scanning those ports. Exit codes: ctlproto.h (DDM_EXIT_*),
 * documented in doc/ddmon.1.
 *
 * Failures: every failure is reported on stderr as one "ddmon: MESSAGE"
 * g_printerr call (here, and in watch.c, snapshot.c, server.c). With
 * --json a printerr handler also keeps the first such message, and main()
 * prints one {"ok":false,"error":...,"code":STATUS,"kind":...} object on
 * stdout when the command exits non-zero, unless the command printed its
 * own failure object (plugin commands, --check-plugin, --list-plugins, a
 * snapshot whose blobs could not be written: their object gets the failure
 * members added). --json counts wherever the option parser takes it, and
 * also when the option parser itself fails.
 */
#include <build-config.h>

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "cli/client.h"
#include "core/config/config.h"
#include "core/wire/ctlproto.h"
#include "core/pluginhost/loader.h"
#include "core/daemon/daemon.h"
#include "core/pluginhost/registry.h"
#include "server/server.h"
#include "cli/snapshot.h"
#include "core/views/views.h"
#include "cli/watch.h"

#define CALL_TIMEOUT_MS 60000

typedef struct Cli {
    DdmConfig *config;        /* owned until handed to a server or monitor */
    GPtrArray *server_args;   /* "--opt=value" as given, for a server we start */
    gboolean json;
    gboolean no_autostart;
    gboolean foreground;
    gboolean version;
    gboolean list_plugins;
    gboolean in_process;
    gboolean gc;
    char *check_plugin;
    char *vm;
    gint wait_ms;
    char *out_dir;
} Cli;

/* ------------------------------------------------------------- options */

static char *absolute(const char *path)
{
    if (g_path_is_absolute(path))
        return g_strdup(path);
    g_autofree char *cwd = g_get_current_dir();
    return g_build_filename(cwd, path, NULL);
}

static gboolean parse_uint(const char *opt, const char *value, guint64 max, guint64 *out,
                           GError **error)
{
    guint64 mult = 1;
    g_autofree char *v = g_strstrip(g_strdup(value));
    gsize n = strlen(v);
    if (n > 0 && strchr("kKmMgG", v[n - 1]) != NULL && strcmp(opt, "--max-packet") == 0) {
        char s = g_ascii_tolower(v[n - 1]);
        mult = s == 'k' ? 1024 : s == 'm' ? 1024 * 1024 : (guint64)1024 * 1024 * 1024;
        v[n - 1] = '\0';
    }
    guint64 x = 0;
    if (!g_ascii_string_to_unsigned(v, 10, 0, max, &x, NULL) || x > max / mult) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s: '%s' is not a number from 0 to %" G_GUINT64_FORMAT, opt, value, max);
        return FALSE;
    }
    *out = x * mult;
    return TRUE;
}

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

/* Every server option lands here: into the config, and remembered. */
static gboolean on_server_option(const char *name, const char *value, gpointer data,
                                 GError **error)
{
    Cli *cli = data;
    DdmConfig *c = cli->config;
    guint64 n = 0;
    g_autofree char *abs = NULL;

    if (strcmp(name, "--scan") == 0) {
        if (!ddm_config_set_scan(c, value, error))
            return FALSE;
    } else if (strcmp(name, "--scan-ports") == 0) {
        if (!ddm_config_set_scan_ranges(c, value, error))
            return FALSE;
    } else if (strcmp(name, "--scan-interval") == 0) {
        if (!parse_uint(name, value, 3600000, &n, error))
            return FALSE;
        if (n < 100) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--scan-interval: at least 100 ms");
            return FALSE;
        }
        c->scan_interval_ms = (guint)n;
    } else if (strcmp(name, "--connect") == 0) {
        if (strchr(value, ':') == NULL) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--connect: expected HOST:PORT, got '%s'", value);
            return FALSE;
        }
        g_ptr_array_add(c->connect, g_strdup(value));
    } else if (strcmp(name, "--plugin-dir") == 0) {
        abs = absolute(value);
        g_ptr_array_add(c->plugin_dirs, g_strdup(abs));
        value = abs;
    } else if (strcmp(name, "--plugins") == 0) {
        add_list(c->plugins_only, value);
    } else if (strcmp(name, "--disable-plugin") == 0) {
        add_list(c->plugins_disabled, value);
    } else if (strcmp(name, "--chunks") == 0) {
        if (!ddm_config_set_chunks(c, value, error))
            return FALSE;
    } else if (strcmp(name, "--plugin-opt") == 0) {
        if (!ddm_config_add_plugin_opt(c, value, error))
            return FALSE;
    } else if (strcmp(name, "--socket") == 0) {
        abs = absolute(value);
        set_str(&c->socket_path, abs);
        return TRUE; /* the client passes --socket itself */
    } else if (strcmp(name, "--listen") == 0) {
        set_str(&c->listen_host, value);
    } else if (strcmp(name, "--debug-port-base") == 0) {
        if (!parse_uint(name, value, 65535, &n, error))
            return FALSE;
        c->debug_port_base = (guint16)n;
    } else if (strcmp(name, "--selected-port") == 0) {
        if (!parse_uint(name, value, 65535, &n, error))
            return FALSE;
        c->selected_port = (guint16)n;
    } else if (strcmp(name, "--select") == 0) {
        set_str(&c->select, value);
    } else if (strcmp(name, "--adb") == 0) {
        set_str(&c->adb_path, value);
    } else if (strcmp(name, "--no-adb-start") == 0) {
        c->adb_start = FALSE;
    } else if (strcmp(name, "--tcp-probe") == 0) {
        if (g_strcmp0(value, "version") == 0) {
            c->tcp_version_probe = TRUE;
        } else if (g_strcmp0(value, "helo") == 0) {
            c->tcp_version_probe = FALSE;
        } else {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--tcp-probe: 'version' (default) or 'helo', not '%s'", value);
            return FALSE;
        }
    } else if (strcmp(name, "--request-timeout") == 0) {
        if (!parse_uint(name, value, 3600000, &n, error))
            return FALSE;
        if (n == 0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--request-timeout: must be at least 1 ms");
            return FALSE;
        }
        c->request_timeout_ms = (guint)n;
    } else if (strcmp(name, "--max-packet") == 0) {
        if (!parse_uint(name, value, (guint64)G_MAXUINT32, &n, error))
            return FALSE;
        if (n < 11) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--max-packet: at least 11 bytes (a JDWP header)");
            return FALSE;
        }
        c->max_packet = (gsize)n;
    } else if (strcmp(name, "-v") == 0 || strcmp(name, "--verbose") == 0) {
        g_setenv("G_MESSAGES_DEBUG", "all", FALSE);
        g_ptr_array_add(cli->server_args, g_strdup("--verbose"));
        return TRUE;
    } else {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION, "unknown option %s",
                    name);
        return FALSE;
    }
    if (value != NULL)
        g_ptr_array_add(cli->server_args, g_strdup_printf("%s=%s", name, value));
    else
        g_ptr_array_add(cli->server_args, g_strdup(name));
    return TRUE;
}

#define SRV(long_, short_, flags_, desc_, arg_) \
    {long_, short_, flags_, G_OPTION_ARG_CALLBACK, (gpointer)on_server_option, desc_, arg_}

static const GOptionEntry server_entries[] = {
    SRV("scan", 0, 0, "Discovery modes: local,adb or none (default local,adb)", "MODES"),
    SRV("scan-ports", 0, 0, "Local ports to scan (default 8000-8040)", "RANGES"),
    SRV("scan-interval", 0, 0, "Milliseconds between local scans (default 2000)", "MS"),
    SRV("connect", 0, 0, "Connect to a VM at HOST:PORT (repeatable); =DEBUGPORT gives it a fixed "
        "debugger port that waits for the VM", "HOST:PORT[=DEBUGPORT]"),
    SRV("plugin-dir", 0, 0, "Look for plugins in DIR first (repeatable)", "DIR"),
    SRV("plugins", 0, 0, "Load only these plugins (and require them)", "A,B"),
    SRV("disable-plugin", 0, 0, "Do not load plugin NAME (repeatable)", "NAME"),
    SRV("chunks", 0, 0, "Enable only these chunk types, e.g. THCR,THDE", "TYPES"),
    SRV("plugin-opt", 0, 0, "Plugin option (repeatable)", "NAME.KEY=VALUE"),
    SRV("socket", 0, 0, "Control socket (default $XDG_RUNTIME_DIR/ddmon/ddmon.sock)", "PATH"),
    SRV("listen", 0, 0, "Address debugger ports bind to (default 127.0.0.1)", "ADDR"),
    SRV("debug-port-base", 0, 0, "First per-VM debugger port (default 8600)", "PORT"),
    SRV("selected-port", 0, 0, "Debugger port of the selected VM (default 8700, 0 = off)",
        "PORT"),
    SRV("select", 0, 0, "Select a VM by pid or app name", "PID|APP"),
    SRV("adb", 0, 0, "The adb program (default: adb on PATH)", "PATH"),
    SRV("no-adb-start", 0, G_OPTION_FLAG_NO_ARG, "Never start an adb server", NULL),
    SRV("tcp-probe", 0, 0, "TCP VMs: 'version' asks VirtualMachine.Version before any DDM "
        "packet (default; protects OpenJDK, see ddmon(1)), 'helo' sends HELO first", "version|helo"),
    SRV("request-timeout", 0, 0, "Default DDM request timeout (default 10000)", "MS"),
    SRV("max-packet", 0, 0, "Largest JDWP packet accepted (default 256M)", "BYTES"),
    SRV("verbose", 'v', G_OPTION_FLAG_NO_ARG, "Log debug messages", NULL),
    {NULL, 0, 0, 0, NULL, NULL, NULL}};

static const char commands_help[] =
    "Commands:\n"
    "  watch                  live view of the VMs (the default)\n"
    "  vms                    the VM list\n"
    "  view NAME [--vm VM]    one view (of one VM, or of every VM)\n"
    "  views [--vm VM]        the names of the views, per VM\n"
    "  plugins                the plugin list\n"
    "  snapshot [--wait MS] [--out-dir DIR] [--in-process] [--gc]\n"
    "                         discover, wait until views settle, print all, exit\n"
    "  scan MODES             switch discovery modes of the running server\n"
    "  select [PID|APP|none]  the VM the selected debugger port (8700) reaches\n"
    "  start-server           start a background server if none runs\n"
    "  kill-server            stop the server\n"
    "  server [--foreground]  run the server (in the foreground with --foreground)\n"
    "  help                   this text, with the commands plugins add\n"
    "  COMMAND ARGS...        a command registered by a plugin (e.g. gc PID)\n"
    "Every command takes --json; a failure is then one JSON object too:\n"
    "{\"ok\":false,\"error\":...,\"code\":STATUS,\"kind\":...}. Exit status: 0 ok,\n"
    "1 failed, 2 usage, 3 VM or view not found, 4 no server and none could be\n"
    "started.";

/* ------------------------------------------------- failures as JSON */

/* Process-wide because g_printerr's handler has no user data. */
static struct {
    gboolean capturing;      /* the printerr handler is installed */
    char *message;           /* the first "ddmon: " message (owned) */
    gboolean object_printed; /* a failure object is on stdout already */
} failure;

static void on_printerr(const char *text)
{
    fputs(text, stderr);
    if (failure.message == NULL)
        failure.message = ddm_ctl_failure_message(text);
}

static void capture_failures(void)
{
    if (failure.capturing)
        return;
    /* Unbuffered stderr as before; the handler only adds the record. */
    g_set_printerr_handler(on_printerr);
    failure.capturing = TRUE;
}

/* ---------------------------------------------------------- utilities */

static void print_json(JsonNode *node)
{
    gsize len = 0;
    g_autofree char *line = ddm_ctl_encode(node, &len);
    fwrite(line, 1, len, stdout);
}

/* For commands without output: {"ok":true,...} with --json. */
static int print_ok_json(const Cli *cli, int status, const char *member, gboolean value)
{
    if (!cli->json || status != DDM_EXIT_OK)
        return status;
    JsonBuilder *b = ddm_ctl_ok_begin();
    if (member != NULL) {
        json_builder_set_member_name(b, member);
        json_builder_add_boolean_value(b, value);
    }
    g_autoptr(JsonNode) root = ddm_ctl_ok_end(b);
    print_json(root);
    return status;
}

static void print_view_text(JsonNode *view, gboolean title)
{
    DdmRenderOptions opt = {0, title};
    g_autofree char *text = ddm_view_json_to_text_full(view, &opt);
    fputs(text, stdout);
}

static int usage_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_printerr("ddmon: %s (try 'ddmon help')\n", msg);
    return DDM_EXIT_USAGE;
}

static char *socket_path(const Cli *cli)
{
    return ddm_server_socket_path(cli->config);
}

static DdmClient *client_for(Cli *cli, int *status)
{
    g_autofree char *path = socket_path(cli);
    g_autoptr(GError) error = NULL;
    g_ptr_array_add(cli->server_args, NULL);
    DdmClient *c = ddm_client_connect_or_start(path, (char **)cli->server_args->pdata,
                                               !cli->no_autostart, &error);
    g_ptr_array_remove_index(cli->server_args, cli->server_args->len - 1);
    if (c == NULL) {
        g_printerr("ddmon: %s\n", error->message);
        *status = DDM_EXIT_NO_SERVER;
    }
    return c;
}

/* An error response: print it, return its exit status. */
static int response_status(JsonNode *resp)
{
    JsonObject *o = json_node_get_object(resp);
    if (ddm_json_get_bool(o, "ok", FALSE))
        return DDM_EXIT_OK;
    const char *err = ddm_json_get_string(o, "error");
    g_printerr("ddmon: %s\n", err != NULL ? err : "the server said no");
    gint64 code = ddm_json_get_int(o, "code", DDM_EXIT_FAILED);
    return code >= DDM_EXIT_FAILED && code <= DDM_EXIT_NOT_FOUND ? (int)code : DDM_EXIT_FAILED;
}

/* Send @req, wait for the answer. NULL with *status set on failure. */
static JsonNode *call(Cli *cli, const DdmCtlRequest *req, int timeout_ms, int *status)
{
    DdmClient *c = client_for(cli, status);
    if (c == NULL)
        return NULL;
    g_autoptr(GError) error = NULL;
    JsonNode *resp = ddm_client_call(c, req, timeout_ms, &error);
    ddm_client_free(c);
    if (resp == NULL) {
        g_printerr("ddmon: %s\n", error->message);
        *status = DDM_EXIT_FAILED;
        return NULL;
    }
    return resp;
}

/* Send @req and wait for an "ok" answer: DDM_EXIT_OK with the answer in
 * *@out (transfer full), or the exit status of a failure, already reported. */
static int request_ok(Cli *cli, const DdmCtlRequest *req, int timeout_ms, JsonNode **out)
{
    int status = 0;
    *out = call(cli, req, timeout_ms, &status);
    if (*out == NULL)
        return status;
    if ((status = response_status(*out)) != DDM_EXIT_OK)
        g_clear_pointer(out, json_node_unref);
    return status;
}

/* ----------------------------------------------------------- commands */

static int cmd_core_view(Cli *cli, DdmCtlOp op)
{
    DdmCtlRequest req = {0};
    req.op = op;
    g_autoptr(JsonNode) resp = NULL;
    int status = request_ok(cli, &req, CALL_TIMEOUT_MS, &resp);
    if (status != DDM_EXIT_OK)
        return status;
    JsonNode *view = json_object_get_member(json_node_get_object(resp), "view");
    if (cli->json)
        print_json(view);
    else
        print_view_text(view, FALSE);
    return DDM_EXIT_OK;
}

static int cmd_view(Cli *cli, char **args)
{
    if (args[0] == NULL || args[1] != NULL)
        return usage_error("usage: ddmon view NAME [--vm PID|KEY|APP]");
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_VIEW;
    req.name = args[0];
    req.vm = cli->vm;
    req.blobs = cli->out_dir != NULL; /* blob views' data, to write out */
    g_autoptr(JsonNode) resp = NULL;
    int status = request_ok(cli, &req, CALL_TIMEOUT_MS, &resp);
    if (status != DDM_EXIT_OK)
        return status;
    JsonNode *views = json_object_get_member(json_node_get_object(resp), "views");
    if (views == NULL || !JSON_NODE_HOLDS_ARRAY(views)) {
        g_printerr("ddmon: the server's answer has no views\n");
        return DDM_EXIT_FAILED;
    }
    JsonArray *a = json_node_get_array(views);
    guint n = json_array_get_length(a);
    if (cli->out_dir != NULL) {
        if (g_mkdir_with_parents(cli->out_dir, 0700) != 0) {
            g_printerr("ddmon: cannot create %s: %s\n", cli->out_dir, g_strerror(errno));
            return DDM_EXIT_FAILED;
        }
        for (guint i = 0; i < n; i++) {
            JsonNode *v = json_array_get_element(a, i);
            if (JSON_NODE_HOLDS_OBJECT(v) && !ddm_snapshot_write_blob(json_node_get_object(v), cli->out_dir)) {
                json_object_remove_member(json_node_get_object(v), "data_base64"); /* not written */
                status = DDM_EXIT_FAILED;
            }
        }
    }
    if (cli->json) {
        JsonNode *root;
        if (n == 1 && cli->vm != NULL) {
            root = json_node_copy(json_array_get_element(a, 0));
        } else {
            JsonObject *o = json_object_new();
            json_object_set_member(o, "views", json_node_copy(views));
            root = json_node_init_object(json_node_alloc(), o);
            json_object_unref(o);
        }
        if (status != DDM_EXIT_OK && JSON_NODE_HOLDS_OBJECT(root)) {
            /* A blob could not be written: still one object, the views
             * with the failure members every --json failure has. */
            ddm_ctl_failure_set(json_node_get_object(root), status, failure.message);
            failure.object_printed = TRUE;
        }
        print_json(root);
        json_node_unref(root);
        return status;
    }
    for (guint i = 0; i < n; i++) {
        if (i > 0)
            putchar('\n');
        print_view_text(json_array_get_element(a, i), n > 1);
    }
    return status;
}

static int cmd_views(Cli *cli)
{
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_VIEWS;
    req.vm = cli->vm;
    g_autoptr(JsonNode) resp = NULL;
    int status = request_ok(cli, &req, CALL_TIMEOUT_MS, &resp);
    if (status != DDM_EXIT_OK)
        return status;
    JsonObject *o = json_node_get_object(resp);
    if (cli->json) {
        json_object_remove_member(o, "ok");
        print_json(resp);
        return DDM_EXIT_OK;
    }
    /* Labels for VM keys. */
    g_autoptr(GHashTable) labels = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    JsonNode *vms = json_object_get_member(o, "vms");
    if (vms != NULL && JSON_NODE_HOLDS_ARRAY(vms)) {
        JsonArray *va = json_node_get_array(vms);
        for (guint i = 0; i < json_array_get_length(va); i++) {
            JsonObject *vo = json_array_get_object_element(va, i);
            const char *key = ddm_json_get_string(vo, "key");
            const char *app = ddm_json_get_string(vo, "app");
            gint64 pid = ddm_json_get_int(vo, "pid", 0);
            if (key == NULL)
                continue;
            char *label = pid > 0 ? g_strdup_printf("%s (pid %" G_GINT64_FORMAT "%s%s)", key, pid,
                                                    app != NULL && *app ? ", " : "",
                                                    app != NULL ? app : "")
                                  : g_strdup(key);
            g_hash_table_replace(labels, (gpointer)key, label);
        }
    }
    JsonNode *views = json_object_get_member(o, "views");
    if (views == NULL || !JSON_NODE_HOLDS_ARRAY(views)) {
        g_printerr("ddmon: the server's answer has no views\n");
        return DDM_EXIT_FAILED;
    }
    JsonArray *a = json_node_get_array(views);
    const char *current = NULL;
    gboolean first = TRUE, started = FALSE;
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *vo = json_array_get_object_element(a, i);
        const char *vm = ddm_json_get_string(vo, "vm");
        const char *name = ddm_json_get_string(vo, "name");
        if (first || g_strcmp0(vm, current) != 0) {
            if (started)
                putchar('\n');
            const char *label = vm != NULL ? g_hash_table_lookup(labels, vm) : NULL;
            printf("%s: ", vm == NULL ? "global" : label != NULL ? label : vm);
            current = vm;
            first = FALSE;
            started = TRUE;
        } else {
            fputs(", ", stdout);
        }
        fputs(name != NULL ? name : "?", stdout);
    }
    if (started)
        putchar('\n');
    return DDM_EXIT_OK;
}

static int cmd_plugin_command(Cli *cli, char **args)
{
    for (char **a = args; *a != NULL; a++)
        if (strlen(*a) > DDM_CTL_MAX_STRING)
            return usage_error("argument too long");
    if (g_strv_length(args) > DDM_CTL_MAX_ARGS)
        return usage_error("too many arguments");
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_COMMAND;
    req.argv = args;
    req.blobs = cli->out_dir != NULL;
    /* Paths the user typed (heap-bitmap FILE) are relative to here, not
     * to the server's directory. */
    g_autofree char *cwd = g_get_current_dir();
    req.cwd = strlen(cwd) <= DDM_CTL_MAX_STRING ? cwd : NULL;
    int status = 0;
    g_autoptr(JsonNode) resp = call(cli, &req, -1, &status);
    if (resp == NULL)
        return status;
    JsonObject *o = json_node_get_object(resp);
    gboolean ok = ddm_json_get_bool(o, "ok", FALSE);
    gint64 st = ddm_json_get_int(o, "status", ddm_json_get_int(o, "code", DDM_EXIT_FAILED));
    int code = ok ? DDM_EXIT_OK
                  : (st >= DDM_EXIT_FAILED && st <= DDM_EXIT_NOT_FOUND ? (int)st : DDM_EXIT_FAILED);
    if (cli->json) {
        if (!ok) {
            const char *err = ddm_json_get_string(o, "error");
            g_autofree char *line =
                g_strdup_printf("ddmon: %s\n", err != NULL ? err : "command failed");
            g_printerr("%s", line);
            /* The server's object (status, message, result) with the
             * failure members every --json failure has. */
            g_autofree char *msg = ddm_ctl_failure_message(line);
            ddm_ctl_failure_set(o, code, msg);
            failure.object_printed = TRUE;
        }
        print_json(resp);
        return code;
    }
    if (!ok) {
        const char *err = ddm_json_get_string(o, "error");
        g_printerr("ddmon: %s\n", err != NULL ? err : "command failed");
    } else {
        const char *msg = ddm_json_get_string(o, "message");
        if (msg != NULL && *msg != '\0')
            printf("%s\n", msg);
    }
    JsonNode *result = json_object_get_member(o, "result");
    if (result != NULL && JSON_NODE_HOLDS_OBJECT(result)) {
        JsonObject *ro = json_node_get_object(result);
        const char *b64 = ddm_json_get_string(ro, "data_base64");
        if (b64 != NULL && cli->out_dir != NULL) {
            g_autofree char *name = ddm_snapshot_blob_filename(
                ddm_json_get_string(ro, "vm"), ddm_json_get_string(ro, "name"),
                ddm_json_get_string(ro, "media_type"));
            g_autofree char *path = g_build_filename(cli->out_dir, name, NULL);
            gsize len = 0;
            g_autofree guchar *data = g_base64_decode(b64, &len);
            g_autoptr(GError) error = NULL;
            if (g_mkdir_with_parents(cli->out_dir, 0700) != 0 ||
                !g_file_set_contents(path, (const char *)data, (gssize)len, &error)) {
                g_printerr("ddmon: cannot write %s: %s\n", path,
                           error != NULL ? error->message : g_strerror(errno));
                code = DDM_EXIT_FAILED;
            } else {
                printf("written to %s\n", path);
            }
        }
        print_view_text(result, FALSE);
    }
    return code;
}

static int cmd_kill_server(Cli *cli)
{
    g_autofree char *path = socket_path(cli);
    g_autoptr(GError) error = NULL;
    gboolean was_running = FALSE;
    if (!ddm_client_kill_server(path, &was_running, &error)) {
        g_printerr("ddmon: %s\n", error->message);
        return DDM_EXIT_FAILED;
    }
    return print_ok_json(cli, DDM_EXIT_OK, "was_running", was_running);
}

static int cmd_start_server(Cli *cli)
{
    g_autofree char *path = socket_path(cli);
    DdmClient *c = ddm_client_connect(path, NULL);
    if (c != NULL) {
        ddm_client_free(c);
        return print_ok_json(cli, DDM_EXIT_OK, "started", FALSE);
    }
    g_autoptr(GError) error = NULL;
    g_ptr_array_add(cli->server_args, NULL);
    gboolean ok = ddm_client_start_server(path, (char **)cli->server_args->pdata, FALSE, &error);
    g_ptr_array_remove_index(cli->server_args, cli->server_args->len - 1);
    if (!ok) {
        g_printerr("ddmon: cannot start a server: %s\n", error->message);
        return DDM_EXIT_NO_SERVER;
    }
    return print_ok_json(cli, DDM_EXIT_OK, "started", TRUE);
}

static int cmd_scan(Cli *cli, char **args)
{
    if (args[0] == NULL || args[1] != NULL)
        return usage_error("usage: ddmon scan local,adb|local|adb|none");
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_SCAN;
    req.spec = args[0];
    int status = 0;
    g_autoptr(JsonNode) resp = call(cli, &req, CALL_TIMEOUT_MS, &status);
    if (resp == NULL)
        return status;
    return print_ok_json(cli, response_status(resp), NULL, FALSE);
}

static int cmd_select(Cli *cli, char **args)
{
    if (args[0] != NULL && args[1] != NULL)
        return usage_error("usage: ddmon select [PID|APP|none]");
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_SELECT;
    if (args[0] != NULL)
        req.spec = strcmp(args[0], "none") == 0 ? (char *)"" : args[0];
    g_autoptr(JsonNode) resp = NULL;
    int status = request_ok(cli, &req, CALL_TIMEOUT_MS, &resp);
    if (status != DDM_EXIT_OK)
        return status;
    JsonObject *o = json_node_get_object(resp);
    if (cli->json) {
        json_object_remove_member(o, "ok");
        print_json(resp);
        return DDM_EXIT_OK;
    }
    const char *sel = ddm_json_get_string(o, "selection");
    gint64 port = ddm_json_get_int(o, "port", 0);
    JsonNode *vmn = json_object_get_member(o, "vm");
    if (sel == NULL) {
        printf("nothing selected\n");
    } else if (vmn != NULL && JSON_NODE_HOLDS_OBJECT(vmn)) {
        JsonObject *vo = json_node_get_object(vmn);
        const char *app = ddm_json_get_string(vo, "app");
        if (port != 0)
            printf("selected %s: %s (pid %" G_GINT64_FORMAT "%s%s) on port %" G_GINT64_FORMAT "\n",
                   sel, ddm_json_get_string(vo, "key"), ddm_json_get_int(vo, "pid", 0),
                   app != NULL ? ", " : "", app != NULL ? app : "", port);
        else
            printf("selected %s: %s (pid %" G_GINT64_FORMAT "%s%s); the selected-VM port is off "
                   "(--selected-port 0)\n",
                   sel, ddm_json_get_string(vo, "key"), ddm_json_get_int(vo, "pid", 0),
                   app != NULL ? ", " : "", app != NULL ? app : "");
    } else if (port == 0) {
        printf("selected %s: no VM matches now (the selected-VM port is off: --selected-port 0)\n", sel);
    } else {
        printf("selected %s: no VM matches now; port %" G_GINT64_FORMAT
               " will reach it when one does\n",
               sel, port);
    }
    return DDM_EXIT_OK;
}

static int cmd_watch(Cli *cli)
{
    int status = 0;
    DdmClient *c = client_for(cli, &status);
    if (c == NULL)
        return status;
    status = ddm_watch_run(c, cli->json);
    ddm_client_free(c);
    return status;
}

static int run_snapshot(Cli *cli)
{
    DdmSnapshotOptions opt = {
        cli->wait_ms >= 0 ? (guint)cli->wait_ms : DDM_SNAPSHOT_DEFAULT_WAIT_MS,
        DDM_SNAPSHOT_SETTLE_MS, DDM_SNAPSHOT_MAX_MS, cli->json, cli->out_dir, cli->gc};
    if (opt.max_ms < opt.wait_ms + opt.settle_ms)
        opt.max_ms = opt.wait_ms + opt.settle_ms;
    if (!cli->in_process) {
        g_autofree char *path = socket_path(cli);
        DdmClient *c = ddm_client_connect(path, NULL);
        if (c != NULL) {
            opt.socket_path = path; /* --gc's commands use connections of their own */
            int status = ddm_snapshot_run_client(c, &opt);
            ddm_client_free(c);
            return status;
        }
    }
    DdmConfig *config = cli->config;
    cli->config = NULL;
    return ddm_snapshot_run_local(config, &opt);
}

/* Everything written to @fd from its start. (transfer full) */
static GByteArray *read_back(int fd)
{
    GByteArray *data = g_byte_array_new();
    if (lseek(fd, 0, SEEK_SET) != 0)
        return data;
    guint8 buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        g_byte_array_append(data, buf, (guint)n);
    }
    return data;
}

/* A snapshot prints its object before it knows whether every blob could
 * be written. With --json its stdout goes to a temporary file first, so
 * that a failure is still one object: the snapshot's, with the failure
 * members added. */
static int cmd_snapshot(Cli *cli)
{
    if (!cli->json)
        return run_snapshot(cli);
    fflush(stdout);
    FILE *tmp = tmpfile();
    int saved = tmp != NULL ? fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3) : -1;
    if (saved < 0 || dup2(fileno(tmp), STDOUT_FILENO) < 0) {
        if (saved >= 0)
            close(saved);
        if (tmp != NULL)
            fclose(tmp);
        return run_snapshot(cli); /* not captured: a late failure adds a second object */
    }
    int status = run_snapshot(cli);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    g_autoptr(GByteArray) out = read_back(fileno(tmp));
    fclose(tmp);
    if (status != DDM_EXIT_OK && out->len > 0) {
        g_autoptr(JsonNode) doc = ddm_ctl_parse_object((const char *)out->data, out->len, NULL);
        if (doc != NULL) {
            ddm_ctl_failure_set(json_node_get_object(doc), status, failure.message);
            failure.object_printed = TRUE;
            print_json(doc);
            return status;
        }
    }
    if (out->len > 0 && fwrite(out->data, 1, out->len, stdout) != out->len) {
        g_printerr("ddmon: cannot write the snapshot: %s\n", g_strerror(errno));
        if (status == DDM_EXIT_OK)
            status = DDM_EXIT_FAILED;
    }
    return status;
}

/* ------------------------------------------------- in-process commands */

static int cmd_list_plugins(Cli *cli)
{
    g_autoptr(GError) error = NULL;
    JsonNode *list = NULL;
    gboolean ok = ddm_loader_list_plugins(cli->config, &list, &error);
    if (list != NULL) {
        if (cli->json) {
            JsonObject *o = json_object_new();
            json_object_set_member(o, "plugins", list);
            g_auto(GStrv) path = ddm_loader_search_path(cli->config);
            JsonArray *dirs = json_array_new();
            for (char **d = path; d != NULL && *d != NULL; d++)
                json_array_add_string_element(dirs, *d);
            json_object_set_array_member(o, "search_path", dirs);
            if (!ok) {
                ddm_ctl_failure_set(o, DDM_EXIT_FAILED, error->message);
                failure.object_printed = TRUE;
            }
            JsonNode *root = json_node_init_object(json_node_alloc(), o);
            print_json(root);
            json_node_unref(root);
            json_object_unref(o);
        } else {
            if (JSON_NODE_HOLDS_ARRAY(list) && json_array_get_length(json_node_get_array(list)) == 0) {
                g_auto(GStrv) path = ddm_loader_search_path(cli->config);
                g_autofree char *joined = g_strjoinv(" ", path);
                printf("no plugins found; searched: %s\n", joined);
            } else {
                g_autofree char *text = ddm_registry_plugins_json_to_text(list);
                fputs(text, stdout);
            }
            json_node_unref(list);
        }
    }
    if (!ok) {
        g_printerr("ddmon: %s\n", error->message);
        return DDM_EXIT_FAILED;
    }
    return DDM_EXIT_OK;
}

static int cmd_check_plugin(Cli *cli)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GString) report = g_string_new(NULL);
    gboolean ok = ddm_loader_check_file(cli->check_plugin, report, &error);
    if (cli->json) {
        JsonObject *o = json_object_new();
        json_object_set_boolean_member(o, "ok", ok);
        json_object_set_string_member(o, "file", cli->check_plugin);
        if (!ok) {
            ddm_ctl_failure_set(o, DDM_EXIT_FAILED, error->message);
            failure.object_printed = TRUE;
        }
        json_object_set_string_member(o, "report", report->str);
        JsonNode *root = json_node_init_object(json_node_alloc(), o);
        print_json(root);
        json_node_unref(root);
        json_object_unref(o);
    } else {
        fputs(report->str, stdout);
        if (report->len > 0 && report->str[report->len - 1] != '\n')
            putchar('\n');
    }
    if (!ok) {
        g_printerr("ddmon: %s: refused: %s\n", cli->check_plugin, error->message);
        return DDM_EXIT_FAILED;
    }
    return DDM_EXIT_OK;
}

static void add_command_json(JsonArray *arr, const char *name, const char *usage,
                             const char *summary, const char *plugin)
{
    JsonObject *o = json_object_new();
    json_object_set_string_member(o, "name", name != NULL ? name : "?");
    /* Plugins write usage with or without the command's name: show it with. */
    g_autofree char *full = usage == NULL                        ? g_strdup(name)
                            : name != NULL && g_str_has_prefix(usage, name) ? g_strdup(usage)
                                                                 : g_strdup_printf("%s %s", name, usage);
    json_object_set_string_member(o, "usage", full != NULL ? full : "");
    json_object_set_string_member(o, "summary", summary != NULL ? summary : "");
    if (plugin != NULL)
        json_object_set_string_member(o, "plugin", plugin);
    else
        json_object_set_null_member(o, "plugin");
    json_array_add_object_element(arr, o);
}

static int cmd_help(Cli *cli, GOptionContext *ctx)
{
    /* Plugin commands: from the running server, else from the plugins here. */
    JsonArray *cmds = json_array_new();
    g_autofree char *path = socket_path(cli);
    DdmClient *c = ddm_client_connect(path, NULL);
    g_autoptr(JsonNode) resp = NULL;
    if (c != NULL) {
        DdmCtlRequest req = {0};
        req.op = DDM_CTL_OP_COMMANDS;
        resp = ddm_client_call(c, &req, CALL_TIMEOUT_MS, NULL);
        ddm_client_free(c);
    }
    JsonNode *list = resp != NULL ? json_object_get_member(json_node_get_object(resp), "commands")
                                  : NULL;
    if (list != NULL && JSON_NODE_HOLDS_ARRAY(list)) {
        JsonArray *a = json_node_get_array(list);
        for (guint i = 0; i < json_array_get_length(a); i++) {
            JsonObject *o = json_array_get_object_element(a, i);
            add_command_json(cmds, ddm_json_get_string(o, "name"), ddm_json_get_string(o, "usage"),
                             ddm_json_get_string(o, "summary"), ddm_json_get_string(o, "plugin"));
        }
    } else if (cli->config != NULL) {
        DdmConfig *config = cli->config;
        cli->config = NULL;
        /* Only to list the plugins' commands: no debugger ports, no discovery. */
        config->relay = FALSE;
        config->scan_local = FALSE;
        config->scan_adb = FALSE;
        DdmDaemon *daemon = ddm_daemon_new(config, NULL);
        if (daemon != NULL) {
            g_autoptr(GArray) infos = ddm_registry_commands(ddm_daemon_registry(daemon));
            for (guint i = 0; infos != NULL && i < infos->len; i++) {
                const DdmCommandInfo *ci = &g_array_index(infos, DdmCommandInfo, i);
                add_command_json(cmds, ci->name, ci->usage, ci->summary, ci->plugin);
            }
            ddm_daemon_free(daemon);
        }
    }
    if (cli->json) {
        JsonObject *o = json_object_new();
        json_object_set_array_member(o, "commands", cmds);
        JsonNode *root = json_node_init_object(json_node_alloc(), o);
        print_json(root);
        json_node_unref(root);
        json_object_unref(o);
        return DDM_EXIT_OK;
    }
    g_autofree char *help = g_option_context_get_help(ctx, FALSE, NULL);
    fputs(help, stdout);
    if (json_array_get_length(cmds) > 0)
        printf("\nCommands from plugins:\n");
    for (guint i = 0; i < json_array_get_length(cmds); i++) {
        JsonObject *o = json_array_get_object_element(cmds, i);
        const char *plugin = ddm_json_get_string(o, "plugin");
        printf("  %-30s %s [%s]\n", ddm_json_get_string(o, "usage"),
               ddm_json_get_string(o, "summary"), plugin != NULL ? plugin : "?");
    }
    json_array_unref(cmds);
    printf("\nSee ddmon(1) for details.\n");
    return DDM_EXIT_OK;
}

/* --------------------------------------------------------------- main */

static gboolean is_builtin(const char *cmd)
{
    static const char *const builtins[] = {
        "watch", "vms", "view", "views", "plugins", "snapshot", "scan", "start-server",
        "kill-server", "server", "help", "version", "select"};
    for (gsize i = 0; i < G_N_ELEMENTS(builtins); i++)
        if (strcmp(cmd, builtins[i]) == 0)
            return TRUE;
    return FALSE;
}

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    signal(SIGPIPE, SIG_IGN);
#if GLIB_CHECK_VERSION(2, 68, 0)
    /* Logs go to stderr at every level: glib's default sends info and
     * debug to stdout, where they would mix with tables and --json. */
    g_log_writer_default_set_use_stderr(TRUE);
#endif

    /* Before the option parser, which may fail before it saw --json. */
    gboolean json_early = ddm_ctl_argv_wants_json(argv);
    if (json_early)
        capture_failures();

    Cli cli = {0};
    cli.config = ddm_config_new();
    cli.server_args = g_ptr_array_new_with_free_func(g_free);
    cli.wait_ms = -1;

    const GOptionEntry client_entries[] = {
        {"json", 0, 0, G_OPTION_ARG_NONE, &cli.json, "Print JSON (one object, or one per line)",
         NULL},
        {"no-autostart", 0, 0, G_OPTION_ARG_NONE, &cli.no_autostart,
         "Do not start a server when none runs", NULL},
        {"foreground", 0, 0, G_OPTION_ARG_NONE, &cli.foreground,
         "server: run in the foreground", NULL},
        {"vm", 0, 0, G_OPTION_ARG_STRING, &cli.vm, "view, views: the VM (pid, key or app name)",
         "VM"},
        {"wait", 0, 0, G_OPTION_ARG_INT, &cli.wait_ms,
         "snapshot: discover for at least MS milliseconds (default 3000)", "MS"},
        {"out-dir", 0, 0, G_OPTION_ARG_FILENAME, &cli.out_dir,
         "snapshot, commands: write blob views (heap bitmaps, dumps) to DIR", "DIR"},
        {"in-process", 0, 0, G_OPTION_ARG_NONE, &cli.in_process,
         "snapshot: never use a running server", NULL},
        {"gc", 0, 0, G_OPTION_ARG_NONE, &cli.gc,
         "snapshot: ask every DDM VM for a GC first (fills the heap segment views)", NULL},
        {"list-plugins", 0, 0, G_OPTION_ARG_NONE, &cli.list_plugins,
         "List the plugins found, loaded or refused, and exit", NULL},
        {"check-plugin", 0, 0, G_OPTION_ARG_FILENAME, &cli.check_plugin,
         "Check that FILE is a plugin this ddmon can load, and exit", "FILE"},
        {"version", 0, 0, G_OPTION_ARG_NONE, &cli.version, "Print the version and exit", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};

    GOptionContext *ctx = g_option_context_new("[COMMAND [ARGS...]]");
    GOptionGroup *main_group = g_option_group_new(NULL, NULL, NULL, &cli, NULL);
    g_option_group_add_entries(main_group, client_entries);
    g_option_group_add_entries(main_group, server_entries);
    g_option_context_set_main_group(ctx, main_group);
    g_option_context_set_summary(ctx, "A debug monitor for Java and Android VMs, the adb way.");
    g_option_context_set_description(ctx, commands_help);
    /* Plugin commands may have options of their own: keep unknown ones. */
    g_option_context_set_ignore_unknown_options(ctx, TRUE);

    int status = DDM_EXIT_OK;
    g_autoptr(GError) error = NULL;
    char **args = g_new0(char *, (gsize)argc + 1);
    for (int i = 0; i < argc; i++)
        args[i] = g_strdup(argv[i]);
    if (!g_option_context_parse_strv(ctx, &args, &error)) {
        cli.json = json_early;
        status = usage_error("%s", error->message);
        goto out;
    }
    if (cli.json)
        capture_failures();
    if (cli.out_dir != NULL) {
        char *abs = absolute(cli.out_dir);
        g_free(cli.out_dir);
        cli.out_dir = abs;
    }

    /* args[0] is the program; args[1] the command. A "--" separator may stay. */
    char **rest = args + 1;
    if (*rest != NULL && strcmp(*rest, "--") == 0)
        rest++;
    if (*rest != NULL && (*rest)[0] == '-' && (*rest)[1] != '\0') {
        status = usage_error("unknown option %s", *rest);
        goto out;
    }
    const char *cmd = *rest != NULL ? *rest : NULL;
    char **cmd_args = cmd != NULL ? rest + 1 : rest;

    if (cli.version || g_strcmp0(cmd, "version") == 0) {
        g_autofree char *abi = g_strdup_printf("%d.%d", DDM_CORE_ABI_MAJOR, DDM_CORE_ABI_MINOR);
        if (cli.json) {
            JsonBuilder *b = ddm_ctl_ok_begin();
            json_builder_set_member_name(b, "version");
            json_builder_add_string_value(b, PACKAGE_VERSION);
            json_builder_set_member_name(b, "abi");
            json_builder_add_string_value(b, abi);
            g_autoptr(JsonNode) root = ddm_ctl_ok_end(b);
            print_json(root);
        } else {
            printf("ddmon %s (plugin ABI %s)\n", PACKAGE_VERSION, abi);
        }
        goto out;
    }
    if (cli.check_plugin != NULL) {
        status = cmd_check_plugin(&cli);
        goto out;
    }
    if (cli.list_plugins) {
        status = cmd_list_plugins(&cli);
        goto out;
    }
    if (cmd == NULL)
        cmd = "watch";
    if (is_builtin(cmd)) {
        for (char **a = cmd_args; *a != NULL; a++) {
            if ((*a)[0] == '-' && (*a)[1] != '\0') {
                status = usage_error("unknown option %s for '%s'", *a, cmd);
                goto out;
            }
        }
        if (cli.vm != NULL && strcmp(cmd, "view") != 0 && strcmp(cmd, "views") != 0) {
            status = usage_error("--vm applies to 'view' and 'views' only");
            goto out;
        }
    }
    if (cli.wait_ms < -1) {
        status = usage_error("--wait must be 0 or more");
        goto out;
    }

    if (strcmp(cmd, "server") == 0) {
        if (*cmd_args != NULL) {
            status = usage_error("'server' takes no arguments");
        } else if (cli.foreground) {
            DdmConfig *config = cli.config;
            cli.config = NULL;
            status = ddm_server_run(config);
        } else {
            status = cmd_start_server(&cli);
        }
    } else if (strcmp(cmd, "start-server") == 0) {
        status = *cmd_args != NULL ? usage_error("'start-server' takes no arguments")
                                   : cmd_start_server(&cli);
    } else if (strcmp(cmd, "kill-server") == 0) {
        status = *cmd_args != NULL ? usage_error("'kill-server' takes no arguments")
                                   : cmd_kill_server(&cli);
    } else if (strcmp(cmd, "help") == 0) {
        status = cmd_help(&cli, ctx);
    } else if (strcmp(cmd, "vms") == 0 || strcmp(cmd, "plugins") == 0) {
        status = *cmd_args != NULL ? usage_error("'%s' takes no arguments", cmd)
                                   : cmd_core_view(&cli, strcmp(cmd, "vms") == 0
                                                             ? DDM_CTL_OP_VMS
                                                             : DDM_CTL_OP_PLUGINS);
    } else if (strcmp(cmd, "view") == 0) {
        status = cmd_view(&cli, cmd_args);
    } else if (strcmp(cmd, "views") == 0) {
        status = *cmd_args != NULL ? usage_error("'views' takes no arguments") : cmd_views(&cli);
    } else if (strcmp(cmd, "watch") == 0) {
        status = *cmd_args != NULL ? usage_error("'watch' takes no arguments") : cmd_watch(&cli);
    } else if (strcmp(cmd, "snapshot") == 0) {
        status = *cmd_args != NULL ? usage_error("'snapshot' takes no arguments")
                                   : cmd_snapshot(&cli);
    } else if (strcmp(cmd, "scan") == 0) {
        status = cmd_scan(&cli, cmd_args);
    } else if (strcmp(cmd, "select") == 0) {
        status = cmd_select(&cli, cmd_args);
    } else {
        status = cmd_plugin_command(&cli, rest);
    }

out:
    if (cli.json && status != DDM_EXIT_OK && !failure.object_printed) {
        g_autoptr(JsonNode) fail = ddm_ctl_failure_new(status, failure.message);
        fflush(stdout);
        print_json(fail);
    }
    fflush(stdout);
    g_clear_pointer(&failure.message, g_free);
    g_strfreev(args);
    g_option_context_free(ctx);
    if (cli.config != NULL)
        ddm_config_free(cli.config);
    g_ptr_array_unref(cli.server_args);
    g_free(cli.check_plugin);
    g_free(cli.vm);
    g_free(cli.out_dir);
    return status;
}
