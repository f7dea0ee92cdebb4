/* SPDX-License-Identifier: Apache-2.0
 *
 * The server process: file locations, directory checks, the lock, the
 * listening socket, signals and the run loop. See server.h.
 */
#include <build-config.h>

#include "server/server.h"

#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h> /* mallopt, mallinfo2 */
#endif
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>

#include "server/control.h"
#include "server/log.h"
#include "core/daemon/daemon.h"
#include "core/loop/heaptrim.h"
#include "core/loop/watch.h"
#ifdef HAVE_HTTP
#include "server/web_module.h"
#endif

char *ddm_server_socket_path(const DdmConfig *config)
{
    if (config != NULL && config->socket_path != NULL && config->socket_path[0] != '\0')
        return g_strdup(config->socket_path);
    return ddm_config_default_socket_path();
}

char *ddm_server_log_path(const char *socket_path)
{
    if (g_str_has_suffix(socket_path, ".sock"))
        return g_strdup_printf("%.*s.log", (int)(strlen(socket_path) - 5), socket_path);
    return g_strdup_printf("%s.log", socket_path);
}

char *ddm_server_downloads_path(const char *socket_path)
{
    if (g_str_has_suffix(socket_path, ".sock"))
        return g_strdup_printf("%.*s.downloads", (int)(strlen(socket_path) - 5), socket_path);
    return g_strdup_printf("%s.downloads", socket_path);
}

char *ddm_server_lock_path(const char *socket_path)
{
    return g_strdup_printf("%s.lock", socket_path);
}

gboolean ddm_server_check_dir(const char *dir, gboolean create, GError **error)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        int e = errno;
        if (e == ENOENT && create) {
            if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
                e = errno;
                g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e),
                            "cannot create directory %s: %s", dir, g_strerror(e));
                return FALSE;
            }
            if (lstat(dir, &st) != 0) {
                e = errno;
                g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s: %s", dir,
                            g_strerror(e));
                return FALSE;
            }
        } else {
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s: %s", dir,
                        g_strerror(e));
            return FALSE;
        }
    }
    if (!S_ISDIR(st.st_mode)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY,
                    "%s is not a directory (a symlink or a file is refused)", dir);
        return FALSE;
    }
    if (st.st_uid != geteuid()) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                    "%s belongs to uid %u, not to you (uid %u); refusing to use it "
                    "(use --socket=PATH in a directory of yours)",
                    dir, (unsigned)st.st_uid, (unsigned)geteuid());
        return FALSE;
    }
    if ((st.st_mode & 077) != 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                    "%s is accessible to others (mode %03o); refusing to use it "
                    "(chmod 700 %s)",
                    dir, (unsigned)(st.st_mode & 0777), dir);
        return FALSE;
    }
    return TRUE;
}

/* The lock file's pid line; *@stopping (may be NULL): its next line is
 * DDM_SERVER_LOCK_STOPPING (server.h). */
static int read_pid(int fd, gboolean *stopping)
{
    char buf[64];
    if (stopping != NULL)
        *stopping = FALSE;
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *end = NULL;
    gint64 pid = g_ascii_strtoll(buf, &end, 10);
    if (stopping != NULL && end != NULL && *end == '\n')
        *stopping = g_str_has_prefix(end + 1, DDM_SERVER_LOCK_STOPPING "\n");
    return pid > 0 && pid < G_MAXINT ? (int)pid : 0;
}

int ddm_server_lock_holder(const char *socket_path, gboolean *stopping)
{
    g_autofree char *lock = ddm_server_lock_path(socket_path);
    if (stopping != NULL)
        *stopping = FALSE;
    int fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    int pid = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EAGAIN))
        pid = read_pid(fd, stopping); /* someone holds it exclusively: a server runs */
    close(fd);
    return pid;
}

int ddm_server_running_pid(const char *socket_path)
{
    return ddm_server_lock_holder(socket_path, NULL);
}

/* Says in the lock file that this server stops (its pid line, then
 * DDM_SERVER_LOCK_STOPPING): a client that finds the socket refusing then
 * waits for the lock instead of starting a server that cannot take it. */
static void mark_stopping(int lock_fd, const char *lock_path)
{
    g_autofree char *text = g_strdup_printf("%d\n" DDM_SERVER_LOCK_STOPPING "\n", (int)getpid());
    if (pwrite(lock_fd, text, strlen(text), 0) < 0)
        g_warning("cannot write to %s: %s", lock_path, g_strerror(errno));
}

/* A lock @fd could not take exclusively, @pid read from it: is the holder
 * a client's probe (ddm_server_lock_holder holds LOCK_SH for an instant;
 * clients waiting for a stopping server probe every 20 ms) rather than a
 * server? No pid written (a probe of the file a server just created), or
 * only shared holders (a probe of a stale file). */
static gboolean held_by_probe(int fd, int pid)
{
    if (pid == 0)
        return TRUE;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0)
        return FALSE; /* held exclusively: a server */
    (void)flock(fd, LOCK_UN);
    return TRUE;
}

#define TAKE_LOCK_PROBE_RETRIES 5
#define TAKE_LOCK_PROBE_PAUSE_US 1500

int ddm_server_take_lock(const char *socket_path, void (*between)(void *), void *between_data,
                         GError **error)
{
    g_autofree char *path = ddm_server_lock_path(socket_path);
    for (int attempt = 0; attempt < 5; attempt++) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
            int e = errno;
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot open %s: %s", path,
                        g_strerror(e));
            return -1;
        }
        int retries = 0;
        while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            int pid = read_pid(fd, NULL);
            /* A probe lets go within a few ms: try again, a few times
             * (else this server would exit "already running (pid 0)"). */
            if ((e == EWOULDBLOCK || e == EAGAIN) && retries < TAKE_LOCK_PROBE_RETRIES &&
                held_by_probe(fd, pid)) {
                retries++;
                if (between != NULL)
                    between(between_data);
                else
                    g_usleep(TAKE_LOCK_PROBE_PAUSE_US);
                continue;
            }
            close(fd);
            if (e == EWOULDBLOCK || e == EAGAIN) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                            "a ddmon server is already running on %s (pid %d)", socket_path,
                            pid);
            } else {
                g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot lock %s: %s",
                            path, g_strerror(e));
            }
            return -1;
        }
        /* The file we locked must still be the one at @path: a stopping
         * server unlinks it before releasing its lock. */
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino) {
            g_autofree char *pid = g_strdup_printf("%d\n", (int)getpid());
            if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, strlen(pid), 0) < 0)
                g_warning("cannot write the pid to %s: %s", path, g_strerror(errno));
            return fd;
        }
        close(fd);
    }
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_BUSY, "cannot take the lock %s", path);
    return -1;
}

int ddm_server_listen(const char *path, GError **error)
{
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(addr.sun_path)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FILENAME_TOO_LONG,
                    "socket path too long (max %zu bytes): %s", sizeof(addr.sun_path) - 1, path);
        return -1;
    }
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "socket: %s", g_strerror(e));
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            close(fd);
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                        "%s exists and is not a socket; refusing to replace it", path);
            return -1;
        }
        g_debug("server: removing stale socket %s", path);
        unlink(path);
    }
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
    int e = errno;
    umask(old);
    if (rc != 0) {
        close(fd);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot bind %s: %s", path,
                    g_strerror(e));
        return -1;
    }
    if (chmod(path, 0600) != 0 || listen(fd, 64) != 0) {
        e = errno;
        close(fd);
        unlink(path);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot listen on %s: %s", path,
                    g_strerror(e));
        return -1;
    }
    return fd;
}

typedef struct ServerRun {
    GMainLoop *loop;
    const char *why;
    gboolean failed; /* a part did not start: stop at once, exit status 1 */
    DdmDaemon *daemon; /* once made */
    gboolean stopping; /* the main loop returned: the stop is under way */
} ServerRun;

static void stop_requested(gpointer ud)
{
    ServerRun *run = ud;
    run->why = "kill-server";
    g_main_loop_quit(run->loop);
}

/* SIGUSR2: one log line with the heap figures the C library keeps, for
 * people and for bench/vmmem.sh (which divides them by the VMs it runs).
 * "in use" is every byte malloc handed out and not yet freed, its own
 * per-block overhead included (mallinfo2: uordblks + hblkhd); "free" is
 * what it holds for reuse. Kernel socket buffers are not in it. */
static void log_heap_figures(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    g_message("memory: heap in use %zu bytes (%zu in arenas, %zu in %zu mmapped blocks), "
              "%zu bytes free in arenas",
              mi.uordblks + mi.hblkhd, mi.uordblks, mi.hblkhd, mi.hblks, mi.fordblks);
#else
    g_message("memory: heap figures need glibc 2.33 or later (mallinfo2)");
#endif
}

/* The signals the server handles (SIGTERM, SIGINT, SIGHUP: stop; SIGUSR2:
 * the heap figures) reach the loop through one self-pipe watched on the
 * loop's epoll fd (core/loop/watch.h), not as four GLib unix-signal
 * sources: every GSource is prepared and checked on every iteration of
 * the loop, which the relay pays per packet (bench/relay.sh; doc/benchmarks.md).
 *
 * The handler sets the signal's flag in signal_pending[] and writes one
 * wake-up byte (both async-signal-safe); a full pipe (EAGAIN) is ignored,
 * since the loop has a wake-up to read already. The loop drains the pipe,
 * then reads and clears the flags, so a burst of one signal can never
 * crowd out another: each is seen once however often it came, SIGUSR2
 * first, then the first stop signal of handled_signals[].
 *
 * The pipe is made once per process and never closed (both ends are
 * close-on-exec): a handler still running on another thread while the
 * server stops can then never write into an fd number that was reused.
 * Children forked before exec inherit the handler: it does nothing in a
 * process other than the server's. */
static const int handled_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR2};
static const char *const handled_signal_names[] = {"SIGTERM", "SIGINT", "SIGHUP", "SIGUSR2"};

typedef struct {
    DdmWatch *watch;
    struct sigaction old[G_N_ELEMENTS(handled_signals)];
} SignalPipe;

static int signal_pipe_fd[2] = {-1, -1}; /* [0] read by the loop, [1] written by the handler */
static volatile sig_atomic_t signal_pending[G_N_ELEMENTS(handled_signals)];
static pid_t signal_server_pid; /* set before the handler is installed */

static void on_signal(int signo)
{
    if (getpid() != signal_server_pid)
        return; /* a child between fork and exec */
    int saved = errno;
    for (gsize i = 0; i < G_N_ELEMENTS(handled_signals); i++)
        if (handled_signals[i] == signo)
            signal_pending[i] = 1;
    unsigned char b = 0;
    (void)!write(signal_pipe_fd[1], &b, 1); /* EAGAIN: a wake-up is pending already */
    errno = saved;
}

static gboolean on_signal_pipe(gint fd, GIOCondition cond, gpointer ud)
{
    ServerRun *run = ud;
    unsigned char buf[256];
    ssize_t n;
    (void)cond;

    /* Drain first: a signal that comes after the flags are read below
     * writes a new byte, so it wakes the loop again. */
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        ;
    const char *stop = NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(handled_signals); i++) {
        if (!signal_pending[i])
            continue;
        signal_pending[i] = 0;
        if (handled_signals[i] == SIGUSR2)
            log_heap_figures();
        else if (stop == NULL)
            stop = handled_signal_names[i];
    }
    if (stop != NULL && run->stopping) {
        /* asked again (a second SIGTERM, or one after kill-server) while
         * waiting for the VMs' answers: stop now */
        g_message("second signal (%s): not waiting for the VMs' answers", stop);
        if (run->daemon != NULL)
            ddm_daemon_stop_wait_cut(run->daemon);
    } else if (stop != NULL) {
        run->why = stop;
        g_main_loop_quit(run->loop);
    }
    return G_SOURCE_CONTINUE;
}

/* FALSE (and @error) if the pipe cannot be made. */
static gboolean signal_pipe_start(SignalPipe *sp, ServerRun *run, GError **error)
{
    struct sigaction sa;

    G_STATIC_ASSERT(G_N_ELEMENTS(handled_signals) == G_N_ELEMENTS(handled_signal_names));
    if (signal_pipe_fd[0] < 0) {
        int fds[2];
        if (!g_unix_open_pipe(fds, FD_CLOEXEC, error))
            return FALSE;
        if (!g_unix_set_fd_nonblocking(fds[0], TRUE, error) ||
            !g_unix_set_fd_nonblocking(fds[1], TRUE, error)) {
            close(fds[0]);
            close(fds[1]);
            return FALSE;
        }
        signal_pipe_fd[0] = fds[0];
        signal_pipe_fd[1] = fds[1];
    }
    for (gsize i = 0; i < G_N_ELEMENTS(handled_signals); i++)
        signal_pending[i] = 0;
    signal_server_pid = getpid();
    sp->watch = ddm_watch_add(signal_pipe_fd[0], G_IO_IN, on_signal_pipe, run);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (gsize i = 0; i < G_N_ELEMENTS(handled_signals); i++)
        sigaddset(&sa.sa_mask, handled_signals[i]);
    for (gsize i = 0; i < G_N_ELEMENTS(handled_signals); i++)
        sigaction(handled_signals[i], &sa, &sp->old[i]);
    return TRUE;
}

/* Restores the old handlers and stops watching; the pipe stays open (see
 * above) for the next server this process may run. */
static void signal_pipe_stop(SignalPipe *sp)
{
    for (gsize i = 0; i < G_N_ELEMENTS(handled_signals); i++)
        sigaction(handled_signals[i], &sp->old[i], NULL);
    ddm_watch_remove(sp->watch);
    sp->watch = NULL;
}

/* Malloc for a long-lived server with many small objects: one arena (the
 * loop is single-threaded; glib's helper threads would each get an arena
 * of their own that stays resident), and free memory returned to the
 * kernel at a lower threshold than the 128 KiB default. */
static void tune_malloc(void)
{
#ifdef __GLIBC__
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_TRIM_THRESHOLD, 64 * 1024);
#endif
}

int ddm_server_run(DdmConfig *config)
{
    g_autofree char *socket_path = ddm_server_socket_path(config);
    g_autofree char *lock_path = ddm_server_lock_path(socket_path);
    g_autofree char *dir = g_path_get_dirname(socket_path);
    g_autoptr(GError) error = NULL;

    /* One readable line per event in our stderr: the log file of a
     * background server (see log.h). */
    ddm_log_install();
    tune_malloc();

#ifdef HAVE_HTTP
    /* The web part is a module (web/module.h), loaded only when asked for,
     * so a server without --http and --metrics maps none of libsoup; and
     * before anything starts, so a missing module is one clear error. */
    const DdmWebModule *wm = NULL;
    if (config->http_listen != NULL || config->metrics_listen != NULL) {
        wm = ddm_server_web_module_load(&error);
        if (wm == NULL) {
            g_printerr("ddmon: %s needs the web module, which did not load: %s\n",
                       config->http_listen != NULL ? "--http" : "--metrics", error->message);
            ddm_config_free(config);
            return 1;
        }
    }
#else
    /* Before anything starts, as a missing module above. */
    if (config->http_listen != NULL || config->metrics_listen != NULL) {
        g_printerr("ddmon: %s needs a ddmon built with libsoup 3 (not --without-http)\n",
                   config->http_listen != NULL ? "--http" : "--metrics");
        ddm_config_free(config);
        return 1;
    }
#endif

    /* The default directory's parent ($XDG_RUNTIME_DIR or /tmp) exists;
     * we create only the last component. */
    if (!ddm_server_check_dir(dir, TRUE, &error)) {
        g_printerr("ddmon: %s\n", error->message);
        ddm_config_free(config);
        return 1;
    }
    int lock_fd = ddm_server_take_lock(socket_path, NULL, NULL, &error);
    if (lock_fd < 0) {
        g_printerr("ddmon: %s\n", error->message);
        ddm_config_free(config);
        return 1;
    }

    ServerRun run = {g_main_loop_new(NULL, FALSE), NULL, FALSE, NULL, FALSE};
    SignalPipe sig = {0};
    if (!signal_pipe_start(&sig, &run, &error)) {
        g_printerr("ddmon: cannot set up signal handling: %s\n", error->message);
        unlink(lock_path);
        close(lock_fd);
        g_main_loop_unref(run.loop);
        ddm_config_free(config);
        return 1;
    }

    /* The relay remembers each app's debugger port here across restarts. */
    if (config->port_map_path == NULL)
        config->port_map_path = ddm_config_port_map_path(socket_path);
    DdmDaemon *daemon = ddm_daemon_new(config, &error);
    if (daemon == NULL) {
        g_printerr("ddmon: cannot start the server: %s\n", error->message);
        unlink(lock_path);
        close(lock_fd);
        signal_pipe_stop(&sig);
        g_main_loop_unref(run.loop);
        return 1;
    }
    run.daemon = daemon;
    int listen_fd = ddm_server_listen(socket_path, &error);
    if (listen_fd < 0) {
        g_printerr("ddmon: %s\n", error->message);
        ddm_daemon_free(daemon);
        unlink(lock_path);
        close(lock_fd);
        signal_pipe_stop(&sig);
        g_main_loop_unref(run.loop);
        return 1;
    }
    DdmControl *ctl = ddm_control_new(daemon, listen_fd, stop_requested, &run);
#ifdef HAVE_HTTP
    DdmWeb *web = NULL;
    if (wm != NULL && ddm_daemon_config(daemon)->http_listen != NULL) {
        g_autofree char *downloads = ddm_server_downloads_path(socket_path);
        DdmWebOptions wo = {.listen = ddm_daemon_config(daemon)->http_listen,
                            .downloads_dir = downloads};
        web = wm->web_new(daemon, &wo, &error);
        if (web == NULL) {
            g_printerr("ddmon: cannot start the web dashboard: %s\n", error->message);
            g_clear_error(&error);
            run.why = "no web dashboard";
            run.failed = TRUE;
        } else {
            ddm_control_set_web_url(ctl, wm->web_url(web));
        }
    }
#endif
    /* GET /metrics: on the dashboard (its token) and on --metrics (none). */
#ifdef HAVE_HTTP
    DdmMetricsEndpoint *metrics = NULL;
    if (wm != NULL && !run.failed) {
        metrics = wm->metrics_new(daemon, web ? wm->web_http(web) : NULL,
                                  ddm_daemon_config(daemon)->metrics_listen, &error);
        if (metrics == NULL && error != NULL) {
            g_printerr("ddmon: cannot serve metrics: %s\n", error->message);
            g_clear_error(&error);
            run.why = "no metrics listener";
            run.failed = TRUE;
        }
    }
    g_autofree char *metrics_url = wm != NULL ? wm->metrics_url(metrics) : NULL;
#endif
    ddm_daemon_start(daemon);
    g_message("ddmon %s server (pid %d) listening on %s", PACKAGE_VERSION, (int)getpid(),
              socket_path);
#ifdef HAVE_HTTP
    if (web != NULL) /* as Jupyter does: the URL to open, with its token */
        g_message("web dashboard: %s", wm->web_url(web));
    if (metrics_url != NULL)
        g_message("metrics: %s", metrics_url);
#endif

    if (!run.failed)
        g_main_loop_run(run.loop);
    run.stopping = TRUE;
    mark_stopping(lock_fd, lock_path); /* before the control socket stops accepting */
    /* At once: a client connecting now would sit in the backlog through
     * the web's teardown, then be reset; refused, it reads the lock and
     * waits (cli/client.c). The clients connected keep their connection. */
    ddm_control_stop_accepting(ctl);

    g_message("ddmon server stopping (%s)", run.why != NULL ? run.why : "stopped");
#ifdef HAVE_HTTP
    if (wm != NULL) {
        wm->metrics_free(metrics); /* before the dashboard it has a route on */
        wm->web_free(web);
    }
#endif
    /* The plugins stop what they started in the VMs and get the answers
     * (a stopped trace is saved) while the clients of their commands are
     * still connected to hear where it went; no new client meanwhile. */
    ddm_daemon_stop_vms(daemon);
    ddm_control_free(ctl);
    unlink(socket_path);
    run.daemon = NULL;
    ddm_daemon_free(daemon);
    ddm_heap_trim_reset(); /* a trim the last replies or the monitor asked for: not made */
    signal_pipe_stop(&sig);
    unlink(lock_path);
    close(lock_fd);
    g_main_loop_unref(run.loop);
    return run.failed ? 1 : 0;
}
