/* SPDX-License-Identifier: Apache-2.0
 *
 * Control socket client and background server start. See client.h.
 */
#include <build-config.h>

#include "cli/client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gio.h>

#include "core/config/config.h"
#include "server/server.h"
#include "server/log.h"

struct DdmClient {
    int fd;
    DdmLineFramer *in;
    gboolean eof;
    DdmClientProgressFn progress; /* progress lines of a command, or NULL */
    gpointer progress_ud;
    /* Answers still owed to requests this client gave up on (a first
     * exchange that timed out): the server answers a connection's requests
     * in order, so the next answers read are theirs, dropped unseen rather
     * than taken for a later command's answer. */
    guint owed_answers;
};

static DdmClient *connect_once(const char *socket_path, GError **error)
{
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    if (strlen(socket_path) >= sizeof(addr.sun_path)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FILENAME_TOO_LONG, "socket path too long: %s",
                    socket_path);
        return NULL;
    }
    strcpy(addr.sun_path, socket_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "socket: %s", g_strerror(e));
        return NULL;
    }
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        int e = errno;
        close(fd);
        GIOErrorEnum code = (e == ENOENT) ? G_IO_ERROR_NOT_FOUND
                            : (e == ECONNREFUSED) ? G_IO_ERROR_CONNECTION_REFUSED
                                                  : g_io_error_from_errno(e);
        g_set_error(error, G_IO_ERROR, code, "cannot connect to %s: %s", socket_path,
                    g_strerror(e));
        return NULL;
    }
    DdmClient *c = g_new0(DdmClient, 1);
    c->fd = fd;
    c->in = ddm_line_framer_new(DDM_CTL_MAX_RESPONSE);
    return c;
}

DdmClient *ddm_client_connect(const char *socket_path, GError **error)
{
    g_autofree char *dir = g_path_get_dirname(socket_path);
    GError *local = NULL;
    if (!ddm_server_check_dir(dir, FALSE, &local)) {
        if (!g_error_matches(local, G_IO_ERROR, G_IO_ERROR_NOT_FOUND)) {
            g_propagate_error(error, local);
            return NULL;
        }
        g_clear_error(&local);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no server: %s does not exist",
                    dir);
        return NULL;
    }
    return connect_once(socket_path, error);
}

void ddm_client_free(DdmClient *c)
{
    if (c == NULL)
        return;
    if (c->fd >= 0)
        close(c->fd);
    ddm_line_framer_free(c->in);
    g_free(c);
}

int ddm_client_fd(const DdmClient *c)
{
    return c->fd;
}

/* ------------------------------------------------------- server start */

typedef struct ChildFds {
    int log_fd, null_fd;
} ChildFds;

/* Runs in the child between fork and exec: async-signal-safe calls only. */
static void child_setup(gpointer data)
{
    ChildFds *fds = data;
    setsid();
    if (fds->null_fd >= 0)
        dup2(fds->null_fd, 0);
    if (fds->log_fd >= 0) {
        dup2(fds->log_fd, 1);
        dup2(fds->log_fd, 2);
    }
}

/* The last lines of @path, indented, for an error message. (transfer full) */
static char *log_tail(const char *path, int max_lines)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &text, &len, NULL) || len == 0)
        return g_strdup("");
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    int n = (int)g_strv_length(lines);
    while (n > 0 && lines[n - 1][0] == '\0')
        n--;
    GString *s = g_string_new(NULL);
    for (int i = MAX(0, n - max_lines); i < n; i++)
        if (lines[i][0] != '\0')
            g_string_append_printf(s, "\n  %s", lines[i]);
    return g_string_free(s, FALSE);
}

/* The warnings a server we started logged while starting (a misspelled
 * --plugin-opt, an unsafe plugin directory, a port in use), from byte @from
 * of its log on: in the background they would reach nobody. At most 20. */
static void show_startup_warnings(const char *log_path, off_t from)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (from < 0 || !g_file_get_contents(log_path, &text, &len, NULL) || (gsize)from >= len)
        return;
    g_auto(GStrv) lines = g_strsplit(text + from, "\n", -1);
    guint shown = 0;
    for (char **l = lines; *l != NULL && shown < 20; l++) {
        const char *w = ddm_log_line_warning_message(*l);
        if (w == NULL)
            continue;
        g_printerr("* ddmon server warning: %s *\n", w);
        shown++;
    }
}

gboolean ddm_client_wait_stopping_server(const char *socket_path, gboolean say, GError **error)
{
    gboolean stopping = FALSE;
    int pid = ddm_server_lock_holder(socket_path, &stopping);
    if (pid == 0 || !stopping)
        return TRUE;
    if (say)
        g_printerr("* ddmon server (pid %d) is stopping; waiting for it to exit *\n", pid);
    gint64 deadline = g_get_monotonic_time() + (gint64)DDM_CLIENT_STOPPING_WAIT_MS * 1000;
    while ((pid = ddm_server_lock_holder(socket_path, &stopping)) != 0 && stopping) {
        if (g_get_monotonic_time() >= deadline) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_BUSY,
                        "the ddmon server on %s (pid %d) is still stopping after %g s; "
                        "retry once it has exited",
                        socket_path, pid, DDM_CLIENT_STOPPING_WAIT_MS / 1000.0);
            return FALSE;
        }
        g_usleep(20 * 1000); /* a client process, not the server's loop */
    }
    return TRUE;
}

gboolean ddm_client_start_server(const char *socket_path, char **server_args, const char *announce,
                                 GError **error)
{
    gboolean quiet = announce == NULL;
    g_autofree char *dir = g_path_get_dirname(socket_path);
    if (!ddm_server_check_dir(dir, TRUE, error))
        return FALSE;
    /* A stopping server still holds the lock: one started now would exit
     * at once ("already running"). */
    if (!ddm_client_wait_stopping_server(socket_path, !quiet, error))
        return FALSE;
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (exe == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    "cannot find my own executable (/proc/self/exe)");
        return FALSE;
    }
    g_autofree char *log_path = ddm_server_log_path(socket_path);
    ChildFds fds;
    /* Appended to (several clients may start servers at once; the losers'
     * lines must not clobber the winner's), rotated once it is large. */
    struct stat st;
    if (lstat(log_path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > DDM_CLIENT_LOG_ROTATE) {
        g_autofree char *old = g_strdup_printf("%s.old", log_path);
        (void)rename(log_path, old);
    }
    fds.log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fds.log_fd < 0) {
        int e = errno;
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot open %s: %s", log_path,
                    g_strerror(e));
        return FALSE;
    }
    off_t log_start = lseek(fds.log_fd, 0, SEEK_END);
    fds.null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

    g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(argv, g_strdup(exe));
    g_ptr_array_add(argv, g_strdup("server"));
    g_ptr_array_add(argv, g_strdup("--foreground"));
    for (char **a = server_args; a != NULL && *a != NULL; a++)
        if (!g_str_has_prefix(*a, "--socket="))
            g_ptr_array_add(argv, g_strdup(*a));
    g_ptr_array_add(argv, g_strdup_printf("--socket=%s", socket_path));
    g_ptr_array_add(argv, NULL);

    if (!quiet)
        g_printerr("* %s *\n", announce);
    GPid pid = 0;
    gboolean ok = g_spawn_async(NULL, (char **)argv->pdata, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                child_setup, &fds, &pid, error);
    close(fds.log_fd);
    if (fds.null_fd >= 0)
        close(fds.null_fd);
    if (!ok)
        return FALSE;

    gint64 deadline = g_get_monotonic_time() + (gint64)DDM_CLIENT_START_TIMEOUT_MS * 1000;
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            /* Another client may have started a server at the same moment:
             * ours lost the lock and left; theirs is just as good. */
            gint64 grace = g_get_monotonic_time() + G_USEC_PER_SEC;
            while (ddm_server_running_pid(socket_path) != 0) {
                DdmClient *other = connect_once(socket_path, NULL);
                if (other != NULL) {
                    ddm_client_free(other);
                    if (!quiet)
                        g_printerr("* ddmon server started successfully *\n");
                    return TRUE;
                }
                if (g_get_monotonic_time() >= grace)
                    break;
                g_usleep(20 * 1000);
            }
            g_autofree char *tail = log_tail(log_path, 8);
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                        "the server exited at once (status %d); its log %s says:%s",
                        WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                        log_path, tail);
            return FALSE;
        }
        DdmClient *c = connect_once(socket_path, NULL);
        if (c != NULL) {
            ddm_client_free(c);
            if (!quiet) {
                g_printerr("* ddmon server started successfully *\n");
                show_startup_warnings(log_path, log_start);
            }
            return TRUE;
        }
        if (g_get_monotonic_time() >= deadline)
            break;
        g_usleep(50 * 1000); /* a client process, not the server's loop */
    }
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                "the server (pid %d) did not answer on %s within %d ms; see %s", (int)pid,
                socket_path, DDM_CLIENT_START_TIMEOUT_MS, log_path);
    return FALSE;
}

/* Did a call that got no answer fail because the connection ended (EOF,
 * reset, broken pipe), rather than by a timeout (a busy server), garbage
 * or a line past the cap? */
static gboolean connection_lost(const GError *e)
{
    return e != NULL && !g_error_matches(e, G_IO_ERROR, G_IO_ERROR_TIMED_OUT) &&
           !g_error_matches(e, G_IO_ERROR, G_IO_ERROR_INVALID_DATA) &&
           !g_error_matches(e, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE);
}

/* The server's version (NULL if it did not say) and, in *@options, the
 * server options it was started with (NULL if it did not say: an older
 * server). NULL with @error when it answered with an error: it refused this
 * connection (too many clients). *@lost: the connection ended (EOF, reset)
 * before any answer, as when a stopping server closed its listener with us
 * in its backlog. */
static char *server_version(DdmClient *c, GStrv *options, gboolean *lost, GError **error)
{
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_VERSION;
    *options = NULL;
    *lost = FALSE;
    g_autoptr(GError) call_error = NULL;
    g_autoptr(JsonNode) resp = ddm_client_call(c, &req, 5000, &call_error);
    if (resp == NULL) {
        *lost = connection_lost(call_error);
        /* A server too busy to answer in 5 s still answers later, before
         * the command's answer: that one is dropped, not read as it. */
        if (g_error_matches(call_error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
            c->owed_answers++;
        return NULL;
    }
    JsonObject *o = json_node_get_object(resp);
    if (!ddm_json_get_bool(o, "ok", TRUE)) {
        const char *msg = ddm_json_get_string(o, "error");
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_BUSY,
                            msg != NULL ? msg : "the server refused the connection");
        return NULL;
    }
    JsonNode *opts = json_object_get_member(o, "options");
    if (opts != NULL && JSON_NODE_HOLDS_ARRAY(opts)) {
        JsonArray *a = json_node_get_array(opts);
        GPtrArray *v = g_ptr_array_new();
        for (guint i = 0; i < json_array_get_length(a); i++) {
            JsonNode *e = json_array_get_element(a, i);
            if (JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_STRING)
                g_ptr_array_add(v, g_strdup(json_node_get_string(e)));
        }
        g_ptr_array_add(v, NULL);
        *options = (GStrv)g_ptr_array_free(v, FALSE);
    }
    return g_strdup(ddm_json_get_string(o, "version"));
}

gboolean ddm_client_error_no_server(const GError *error)
{
    return g_error_matches(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND) ||
           g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED);
}

/* How long a client looks for the socket of a server that holds the lock
 * and is not stopping (one that replaced the server whose connection we
 * lost, still between its lock and its listen), at most. */
#define RECONNECT_WAIT_MS 1000

/* Connect to a live server that holds the lock and is not stopping, after
 * losing a connection: its socket may not listen yet (it takes the lock
 * first), so a refused or missing socket is tried again, 20 ms apart, for
 * at most RECONNECT_WAIT_MS while such a server holds the lock. */
static DdmClient *reconnect(const char *socket_path, GError **error)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)RECONNECT_WAIT_MS * 1000;
    for (;;) {
        GError *local = NULL;
        DdmClient *c = ddm_client_connect(socket_path, &local);
        gboolean stopping = FALSE;
        if (c != NULL || !ddm_client_error_no_server(local) ||
            ddm_server_lock_holder(socket_path, &stopping) == 0 || stopping ||
            g_get_monotonic_time() >= deadline) {
            if (local != NULL)
                g_propagate_error(error, local);
            return c;
        }
        g_clear_error(&local);
        g_usleep(20 * 1000); /* a client process, not the server's loop */
    }
}

/* Connect and make the first exchange (the version op: *@version and
 * *@options as server_version gives them). A connection lost before that
 * answer is one a stopping server reset (its listener closed with us in
 * its backlog) or one a server that has since been replaced reset: with
 * no server holding the lock any more, or one that says it is stopping,
 * NULL with G_IO_ERROR_CONNECTION_REFUSED (as if refused: no server to
 * talk to); with a live server holding it, connected once more (bounded:
 * reconnect()), and a second loss is an error. Other errors as
 * ddm_client_connect and server_version give them. (transfer full) */
static DdmClient *connect_first_exchange(const char *socket_path, char **version, GStrv *options,
                                         GError **error)
{
    *version = NULL;
    *options = NULL;
    DdmClient *c = ddm_client_connect(socket_path, error);
    for (int attempt = 0; c != NULL; attempt++) {
        gboolean lost = FALSE;
        GError *local = NULL;
        *version = server_version(c, options, &lost, &local);
        if (local != NULL) {
            ddm_client_free(c);
            g_propagate_error(error, local);
            return NULL;
        }
        if (!lost)
            return c;
        ddm_client_free(c);
        gboolean stopping = FALSE;
        int pid = ddm_server_lock_holder(socket_path, &stopping);
        if (pid == 0 || stopping) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED,
                        "the ddmon server on %s stopped before it answered", socket_path);
            return NULL;
        }
        if (attempt > 0) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                        "the ddmon server on %s (pid %d) closed the connection before it "
                        "answered, twice",
                        socket_path, pid);
            return NULL;
        }
        c = reconnect(socket_path, error);
    }
    return NULL;
}

DdmClient *ddm_client_connect_answered(const char *socket_path, GError **error)
{
    g_autofree char *version = NULL;
    g_auto(GStrv) options = NULL;
    return connect_first_exchange(socket_path, &version, &options, error);
}

/* "--name" of "--name=value". (transfer full) */
static char *option_name(const char *arg)
{
    const char *eq = strchr(arg, '=');
    return eq != NULL ? g_strndup(arg, (gsize)(eq - arg)) : g_strdup(arg);
}

/* The values @args gives option @name, in order, joined by "\n". */
static char *option_values(char **args, const char *name)
{
    GString *s = g_string_new(NULL);
    for (char **a = args; a != NULL && *a != NULL; a++) {
        g_autofree char *n = option_name(*a);
        if (strcmp(n, name) == 0) {
            g_string_append(s, *a);
            g_string_append_c(s, '\n');
        }
    }
    return g_string_free(s, FALSE);
}

char *ddm_client_options_differ(char **mine, char **theirs)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    for (char **a = mine; a != NULL && *a != NULL; a++) {
        char *n = option_name(*a);
        /* --verbose is also the client's own switch (its debug log). */
        gboolean skip = strcmp(n, "--verbose") == 0;
        for (guint i = 0; !skip && i < names->len; i++)
            skip = strcmp(names->pdata[i], n) == 0;
        if (skip) {
            g_free(n);
            continue;
        }
        g_autofree char *v1 = option_values(mine, n);
        g_autofree char *v2 = option_values(theirs, n);
        if (strcmp(v1, v2) != 0)
            g_ptr_array_add(names, n);
        else
            g_free(n);
    }
    if (names->len == 0)
        return NULL;
    g_ptr_array_add(names, NULL);
    return g_strjoinv(", ", (char **)names->pdata);
}

/* The command that applies @args to the server on @socket_path. (transfer full) */
static char *replace_command(const char *socket_path, char **args)
{
    GString *s = g_string_new("ddmon");
    g_autofree char *def = ddm_config_default_socket_path();
    if (strcmp(def, socket_path) != 0) {
        g_autofree char *arg = g_strdup_printf("--socket=%s", socket_path);
        g_autofree char *q = g_shell_quote(arg);
        g_string_append_printf(s, " %s", strpbrk(arg, " \t\n'\"\\$`*?[]{}()<>|&;#~!") ? q : arg);
    }
    g_string_append(s, " server --replace");
    for (char **a = args; a != NULL && *a != NULL; a++) {
        g_autofree char *q = g_shell_quote(*a);
        g_string_append_printf(s, " %s", strpbrk(*a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") ? q : *a);
    }
    return g_string_free(s, FALSE);
}

DdmClient *ddm_client_connect_or_start(const char *socket_path, char **server_args,
                                       gboolean autostart, gboolean *started, GError **error)
{
    if (started != NULL)
        *started = FALSE;
    GError *local = NULL;
    gboolean have_args = server_args != NULL && server_args[0] != NULL;
    g_autofree char *version = NULL;
    g_auto(GStrv) options = NULL;
    /* The first exchange always, so that a connection a stopping server
     * reset before any answer reads as "stopping", never as a command's
     * "lost the server". */
    DdmClient *c = connect_first_exchange(socket_path, &version, &options, &local);
    if (c != NULL) {
        if (version == NULL || strcmp(version, PACKAGE_VERSION) == 0 || !autostart) {
            /* Server options do not reach a running server: say so, once,
             * and how to apply them, instead of ignoring them silently. */
            g_autofree char *differ =
                have_args && options != NULL ? ddm_client_options_differ(server_args, options) : NULL;
            if (differ != NULL) {
                g_autofree char *cmd = replace_command(socket_path, server_args);
                g_printerr("* ddmon server (started with other options) ignores %s; to apply them: "
                           "%s *\n",
                           differ, cmd);
            }
            return c;
        }
        ddm_client_free(c);
        c = NULL;
        g_printerr("* ddmon server version (%s) doesn't match this client (%s); killing... *\n",
                   version, PACKAGE_VERSION);
        if (!ddm_client_kill_server(socket_path, NULL, error))
            return NULL;
        local = g_error_new(G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "replaced");
    }
    gboolean absent = ddm_client_error_no_server(local);
    if (!absent || !autostart) {
        gboolean stopping = FALSE;
        int pid = absent ? ddm_server_lock_holder(socket_path, &stopping) : 0;
        if (absent && pid != 0 && stopping) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                        "the ddmon server on %s (pid %d) is stopping (and --no-autostart given)",
                        socket_path, pid);
            g_clear_error(&local);
        } else if (absent) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                        "no ddmon server running on %s (and --no-autostart given)",
                        socket_path);
            g_clear_error(&local);
        } else {
            g_propagate_error(error, local);
        }
        return NULL;
    }
    g_clear_error(&local);
    if (!ddm_client_start_server(socket_path, server_args, DDM_CLIENT_STARTING, error)) {
        g_prefix_error(error, "cannot start a server: ");
        return NULL;
    }
    if (started != NULL)
        *started = TRUE;
    return ddm_client_connect(socket_path, error);
}

/* No connection, or one lost before the kill's answer: a server stopping
 * already (a signal, another kill) is waited for until it is gone (TRUE,
 * *@was_running TRUE); with none holding the lock, TRUE. FALSE when a live
 * server holds the lock and does not say it stops. */
static gboolean kill_gone_or_stopping(const char *socket_path, gboolean *was_running,
                                      gboolean *done, GError **error)
{
    gboolean stopping = FALSE;
    *done = TRUE;
    if (ddm_server_lock_holder(socket_path, &stopping) == 0)
        return TRUE;
    if (stopping) {
        if (was_running != NULL)
            *was_running = TRUE;
        return ddm_client_wait_stopping_server(socket_path, FALSE, error);
    }
    *done = FALSE;
    return FALSE;
}

gboolean ddm_client_kill_server(const char *socket_path, gboolean *was_running, GError **error)
{
    if (was_running != NULL)
        *was_running = FALSE;
    GError *local = NULL;
    DdmClient *c = ddm_client_connect(socket_path, &local);
    gboolean done = FALSE;
    if (c == NULL) {
        if (ddm_client_error_no_server(local)) {
            g_error_free(local);
            gboolean ok = kill_gone_or_stopping(socket_path, was_running, &done, error);
            return done ? ok : TRUE; /* a live one that refused: as before, none */
        }
        g_propagate_error(error, local);
        return FALSE;
    }
    if (was_running != NULL)
        *was_running = TRUE;
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_KILL;
    JsonNode *resp = NULL;
    for (int attempt = 0; resp == NULL; attempt++) {
        resp = ddm_client_call(c, &req, 5000, &local);
        if (resp != NULL)
            break;
        ddm_client_free(c);
        c = NULL;
        if (!connection_lost(local)) {
            g_propagate_error(error, local);
            return FALSE;
        }
        /* Reset before the answer: in a stopping server's backlog as its
         * listener closed (it is stopping, or gone: that is what we
         * asked for), or in the one a live server replaced (once more). */
        gboolean ok = kill_gone_or_stopping(socket_path, was_running, &done, error);
        if (done) {
            g_clear_error(&local);
            return ok;
        }
        if (attempt > 0 || (c = reconnect(socket_path, NULL)) == NULL) {
            g_propagate_error(error, local);
            return FALSE;
        }
        g_clear_error(&local);
    }
    json_node_unref(resp);
    /* Until the server closes the connection (it stops serving), then until
     * it released the lock (socket gone, monitor freed). */
    JsonNode *more;
    while ((more = ddm_client_receive(c, 5000, NULL)) != NULL)
        json_node_unref(more);
    ddm_client_free(c);
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    while (ddm_server_running_pid(socket_path) != 0) {
        if (g_get_monotonic_time() >= deadline) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                        "the server (pid %d) is still stopping after 5 s",
                        ddm_server_running_pid(socket_path));
            return FALSE;
        }
        g_usleep(20000);
    }
    return TRUE;
}

/* ------------------------------------------------------------ messages */

gboolean ddm_client_send(DdmClient *c, const DdmCtlRequest *req, GError **error)
{
    g_autoptr(JsonNode) node = ddm_ctl_request_to_json(req);
    gsize len = 0;
    g_autofree char *line = ddm_ctl_encode(node, &len);
    gsize off = 0;
    while (off < len) {
        ssize_t n = send(c->fd, line + off, len - off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            /* A server that refused us (too many clients) wrote one error
             * line and closed before we asked: that line is the answer,
             * left for ddm_client_receive, not the broken pipe. */
            if (e == EPIPE || e == ECONNRESET) {
                (void)ddm_client_read_some(c, NULL);
                if (ddm_line_framer_pending(c->in) > 0)
                    return TRUE;
            }
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e),
                        "lost the server: %s", g_strerror(e));
            return FALSE;
        }
        off += (gsize)n;
    }
    return TRUE;
}

/* Is @line (one answer line) a progress line of a long command? */
static gboolean is_progress_line(const char *line, gsize len)
{
    g_autoptr(JsonNode) node = ddm_ctl_parse_object(line, len, NULL);
    JsonNode *p = node != NULL ? json_object_get_member(json_node_get_object(node), "progress")
                               : NULL;
    return p != NULL && JSON_NODE_HOLDS_OBJECT(p);
}

/* The next buffered line, past the answers owed to abandoned requests
 * (and their progress lines) (transfer full); NULL when none is complete
 * or, with @error, past the cap. */
static char *next_line(DdmClient *c, gsize *len, GError **error)
{
    for (;;) {
        gboolean overflow = FALSE;
        char *line = ddm_line_framer_next(c->in, len, &overflow);
        if (overflow) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                        "the server sent a line longer than %d bytes", DDM_CTL_MAX_RESPONSE);
            return NULL;
        }
        if (line == NULL || c->owed_answers == 0)
            return line;
        if (!is_progress_line(line, *len))
            c->owed_answers--;
        g_free(line);
    }
}

static JsonNode *parse_line(char *line, gsize len, GError **error)
{
    GError *local = NULL;
    JsonNode *node = ddm_ctl_parse_object(line, len, &local);
    if (node == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "the server sent garbage: %s", local->message);
        g_error_free(local);
    }
    return node;
}

JsonNode *ddm_client_next(DdmClient *c, GError **error)
{
    gsize len = 0;
    g_autofree char *line = next_line(c, &len, error);
    return line != NULL ? parse_line(line, len, error) : NULL;
}

gboolean ddm_client_read_some(DdmClient *c, GError **error)
{
    if (c->eof) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_CLOSED, "the server closed the connection");
        return FALSE;
    }
    guint8 buf[65536];
    for (;;) {
        ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n > 0) {
            ddm_line_framer_push(c->in, buf, (gsize)n);
            if ((gsize)n < sizeof(buf))
                return TRUE;
            continue;
        }
        if (n == 0) {
            c->eof = TRUE;
            /* Complete lines may still be buffered: the end is reported
             * by the next call, once they are taken. */
            if (ddm_line_framer_pending(c->in) > 0)
                return TRUE;
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_CLOSED, "the server closed the connection");
            return FALSE;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return TRUE;
        int e = errno;
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "lost the server: %s",
                    g_strerror(e));
        return FALSE;
    }
}

char *ddm_client_receive_line(DdmClient *c, int timeout_ms, gsize *len, GError **error)
{
    gint64 deadline = timeout_ms < 0 ? -1 : g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    for (;;) {
        GError *local = NULL;
        char *node = next_line(c, len, &local);
        if (node != NULL)
            return node;
        if (local != NULL) {
            g_propagate_error(error, local);
            return NULL;
        }
        if (c->eof) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_CLOSED, "the server closed the connection");
            return NULL;
        }
        int wait_ms = -1;
        if (deadline >= 0) {
            gint64 left = deadline - g_get_monotonic_time();
            if (left <= 0) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                            "the server did not answer in time");
                return NULL;
            }
            wait_ms = (int)MIN(left / 1000 + 1, G_MAXINT);
        }
        struct pollfd pfd = {c->fd, POLLIN, 0};
        int r = poll(&pfd, 1, wait_ms);
        if (r < 0 && errno != EINTR) {
            int e = errno;
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "poll: %s", g_strerror(e));
            return NULL;
        }
        if (r > 0 && !ddm_client_read_some(c, &local)) {
            /* maybe complete lines are still there */
            char *last = next_line(c, len, NULL);
            if (last != NULL) {
                g_clear_error(&local);
                return last;
            }
            g_propagate_error(error, local);
            return NULL;
        }
    }
}

JsonNode *ddm_client_receive(DdmClient *c, int timeout_ms, GError **error)
{
    gsize len = 0;
    g_autofree char *line = ddm_client_receive_line(c, timeout_ms, &len, error);
    return line != NULL ? parse_line(line, len, error) : NULL;
}

void ddm_client_on_progress(DdmClient *c, DdmClientProgressFn fn, gpointer ud)
{
    c->progress = fn;
    c->progress_ud = ud;
}

JsonNode *ddm_client_call(DdmClient *c, const DdmCtlRequest *req, int timeout_ms,
                          GError **error)
{
    if (!ddm_client_send(c, req, error))
        return NULL;
    for (;;) {
        JsonNode *resp = ddm_client_receive(c, timeout_ms, error);
        JsonObject *o = resp != NULL && JSON_NODE_HOLDS_OBJECT(resp) ? json_node_get_object(resp)
                                                                      : NULL;
        JsonNode *p = o != NULL ? json_object_get_member(o, "progress") : NULL;
        if (p == NULL || !JSON_NODE_HOLDS_OBJECT(p))
            return resp;
        /* A long command's progress line: show it, wait on for the answer
         * (the timeout starts again: the server is at work). */
        if (c->progress != NULL) {
            JsonObject *po = json_node_get_object(p);
            c->progress((guint64)MAX(ddm_json_get_int(po, "done", 0), 0),
                        (guint64)MAX(ddm_json_get_int(po, "total", 0), 0),
                        ddm_json_get_string(po, "unit"), c->progress_ud);
        }
        json_node_unref(resp);
    }
}
