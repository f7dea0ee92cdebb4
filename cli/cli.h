/* SPDX-License-Identifier: Apache-2.0
 *
 * The ddmon program's shared declarations: one run's state (DdmCli), the
 * command table's row (DdmCliCommand), and what the cli/ files give each
 * other. Who owns what:
 *   main.c        main(): options, picking the command, the checks every
 *                 command shares, the failure object at exit
 *   options.c     the options: GOptionEntry tables, server options into the
 *                 DdmConfig (through core/config's parsers) and remembered
 *   commands.c    the command table, lookups, the usage text made from it
 *   output.c      printing: JSON, views as text, usage errors, and the
 *                 record of the first failure for --json
 *   jsonout.c     the --json shapes (doc/json.md) made from the server's
 *                 view JSON, for every --json printer (jsonout.h)
 *   request.c     talking to the server: connect (or start), call, status
 *   cmd-server.c  server, start-server, kill-server
 *   cmd-query.c   the one-request commands: vms, plugins, view, views, scan, select
 *   cmd-watch.c   watch;  cmd-snapshot.c  snapshot
 *   cmd-plugin.c  a plugin's command, run by the server
 *   cmd-local.c   in-process: version, --list-plugins, --check-plugin
 *   help.c        help: the usage text and the plugins' commands
 * client.c, watch.c and snapshot.c are the control-socket client, the live
 * view and the snapshot those commands use.
 */
#ifndef DDM_CLI_H
#define DDM_CLI_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "cli/client.h"
#include "core/config/config.h"
#include "core/wire/ctlproto.h"

/* How long a client waits for the server's answer to one request. */
#define DDM_CLI_CALL_TIMEOUT_MS 60000

typedef struct DdmCliCommand DdmCliCommand;

/* One run of ddmon. */
typedef struct DdmCli {
    DdmConfig *config;        /* owned until handed to a server or monitor */
    GPtrArray *server_args;   /* "--opt=value" as given, for a server we start */
    GOptionContext *ctx;      /* the option parser (help prints its text) */
    const DdmCliCommand *command; /* the command being run */
    gboolean json;
    gboolean plain;           /* watch: the plain live view, not the terminal UI */
    gboolean no_autostart;
    gboolean started_server;  /* ddm_cli_client started the server it connected to */
    gboolean foreground;
    gboolean replace;         /* server --replace: stop a running server first */
    gboolean version;
    gboolean list_plugins;
    gboolean in_process;
    gboolean gc;
    gboolean hprof; /* snapshot --hprof */
    char *check_plugin;
    char *vm;
    gint wait_ms;             /* -1: not given */
    char *out_dir;
    char *bare_hint;          /* "--http=WORD" when `--http WORD` was given */
} DdmCli;

/* ------------------------------------------------------- command table */

/* What a command does with a server. */
typedef enum DdmCliServerUse {
    DDM_CLI_SERVER_NONE,      /* never talks to one */
    DDM_CLI_SERVER_NEEDED,    /* needs one: connects, starting one unless --no-autostart */
    DDM_CLI_SERVER_IF_RUNNING,/* uses one that runs, else works in-process */
    DDM_CLI_SERVER_MANAGES,   /* starts, stops or is the server */
} DdmCliServerUse;

enum {
    DDM_CLI_CMD_DEFAULT = 1 << 0, /* run when no command is given */
    DDM_CLI_CMD_VM = 1 << 1,      /* takes --vm */
    DDM_CLI_CMD_FIRST = 1 << 2,   /* before --check-plugin and --list-plugins, and
                                     without argument checks (version) */
};

typedef int (*DdmCliHandler)(DdmCli *cli, char **args);

struct DdmCliCommand {
    const char *name;      /* the command word; NULL: a plugin's command (the last row) */
    DdmCliHandler run;     /* args: what follows the command word */
    const char *usage;     /* the usage text's left column; NULL: not listed */
    const char *summary;   /* the usage text's right column */
    int min_args, max_args; /* max -1: any number */
    const char *bad_args;  /* the usage error for a wrong count of arguments;
                              NULL: "'NAME' takes no arguments" */
    DdmCliServerUse server;
    unsigned flags;        /* DDM_CLI_CMD_* */
};

/** The table, in the order the usage text lists it; the last row (name
 *  NULL) runs any other word as a plugin's command. */
const DdmCliCommand *ddm_cli_commands(guint *n);
/** The row for @name, NULL if it is none of ddmon's own. */
const DdmCliCommand *ddm_cli_command_find(const char *name);
/** The row run when no command is given (watch). */
const DdmCliCommand *ddm_cli_command_default(void);
/** The row that runs plugins' commands. */
const DdmCliCommand *ddm_cli_command_plugin(void);
/** "'view' and 'views'": the commands that take --vm. (transfer full) */
char *ddm_cli_commands_taking_vm(void);
/** The "Commands:" text of the usage (no final newline). (transfer full) */
char *ddm_cli_commands_help(void);

/* ------------------------------------------------------------- options */

/** The option parser for @cli: client options set @cli's fields, server
 *  options go into cli->config and cli->server_args. */
GOptionContext *ddm_cli_options_new(DdmCli *cli);
/** Before parsing @args (NULL-terminated, owned by the caller): a bare
 *  "--NAME" of an optional-argument server option (--http, --metrics)
 *  becomes "--NAME=", so it never takes the next word as its value.
 *  *@hint: "--NAME=WORD" for the first such option followed by a word that
 *  is no option (a value meant for it, maybe), else NULL. (transfer full) */
void ddm_cli_options_bare_optional(char **args, char **hint);
/** @path made absolute against the current directory. (transfer full) */
char *ddm_cli_absolute(const char *path);

/* -------------------------------------------------------------- output */

/* Failures as JSON. Process-wide because g_printerr's handler has no user
 * data. */
typedef struct DdmCliFailure {
    gboolean capturing;      /* the printerr handler is installed */
    char *message;           /* the first "ddmon: " message (owned) */
    gboolean object_printed; /* a failure object is on stdout already */
} DdmCliFailure;
extern DdmCliFailure ddm_cli_failure;

/** Keep the first "ddmon: " message printed on stderr (for --json). */
void ddm_cli_capture_failures(void);
/** Print one --json document: @node (made jq-friendly by cli/jsonout.h
 *  first) gets "schema" if it is an object without one. */
void ddm_cli_print_json(JsonNode *node);
/** For commands without output: {"ok":true[,MEMBER:VALUE]} with --json. */
int ddm_cli_print_ok_json(const DdmCli *cli, int status, const char *member, gboolean value);
void ddm_cli_print_view_text(JsonNode *view, gboolean title);
/** "ddmon: MESSAGE (try 'ddmon help')"; returns DDM_EXIT_USAGE. */
int ddm_cli_usage_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/* ------------------------------------------------------------- request */

/** The control socket's path. (transfer full) */
char *ddm_cli_socket_path(const DdmCli *cli);
/** A connection to the server, started if need be (unless --no-autostart);
 *  NULL with *status set, reported. */
DdmClient *ddm_cli_client(DdmCli *cli, int *status);
/** An error response: print it, return its exit status. */
int ddm_cli_response_status(JsonNode *resp);
/** Send @req, wait for the answer. NULL with *status set on failure. */
JsonNode *ddm_cli_call(DdmCli *cli, const DdmCtlRequest *req, int timeout_ms, int *status);
/** Send @req and wait for an "ok" answer: DDM_EXIT_OK with the answer in
 *  *@out (transfer full), or the exit status of a failure, already reported. */
int ddm_cli_request_ok(DdmCli *cli, const DdmCtlRequest *req, int timeout_ms, JsonNode **out);

/* ------------------------------------------------------------ commands */

/* cmd-server.c */
int ddm_cli_cmd_server(DdmCli *cli, char **args);
int ddm_cli_cmd_start_server(DdmCli *cli, char **args);
int ddm_cli_cmd_kill_server(DdmCli *cli, char **args);
int ddm_cli_cmd_web_url(DdmCli *cli, char **args);
/* cmd-query.c */
int ddm_cli_cmd_vms(DdmCli *cli, char **args);
int ddm_cli_cmd_plugins(DdmCli *cli, char **args);
int ddm_cli_cmd_view(DdmCli *cli, char **args);
int ddm_cli_cmd_views(DdmCli *cli, char **args);
int ddm_cli_cmd_scan(DdmCli *cli, char **args);
int ddm_cli_cmd_select(DdmCli *cli, char **args);
/* cmd-watch.c */
int ddm_cli_cmd_watch(DdmCli *cli, char **args);
/* cmd-snapshot.c */
int ddm_cli_cmd_snapshot(DdmCli *cli, char **args);
/* cmd-plugin.c */
int ddm_cli_cmd_plugin(DdmCli *cli, char **args);
/* cmd-local.c */
int ddm_cli_cmd_version(DdmCli *cli, char **args);
int ddm_cli_list_plugins(DdmCli *cli);
int ddm_cli_check_plugin(DdmCli *cli);
/* help.c */
int ddm_cli_cmd_help(DdmCli *cli, char **args);

#endif /* DDM_CLI_H */
