/* SPDX-License-Identifier: Apache-2.0
 *
 * The adb transport (adb_target.h): a target whose connect asks the adb server for
 * host:transport:SERIAL then jdwp:PID on a fresh socket. After the second
 * OKAY the socket is that VM's raw JDWP stream, handed to the session like
 * a TCP fd. A FAIL (the VM is held by another tool, or gone) becomes the
 * connect error, with adb's reason. done() runs exactly once, never from
 * inside connect, also when cancelled.
 * Memory (issue 16: one target a VM, 1,000 VMs through adb): a target is
 * one block, the DdmTarget, the adb part and its strings (key, then the
 * serial, which is also t->device); the origin is the static "adb" and
 * the server address's strings are interned (one address a process), so
 * a target costs one allocation, not seven.
 */
#include "core/transport/adb_target.h"

#include <string.h>
#include <unistd.h>

#include "core/loop/timer.h"
#include "core/transport/adb_conn.h"

/* The one block of an adb target: t.priv points at `at`; t.key at
 * strings[0] ("adb:SERIAL:PID"), t.device at the serial after it, t.origin
 * at the static "adb". The address's host and unix_path are interned
 * (g_intern_string: they live as long as the process), so the block owns
 * no other memory. */
typedef struct {
    const char *host;      /* interned, or NULL */
    const char *unix_path; /* interned, or NULL */
    guint16 port;
    gboolean abstract;
    guint32 pid;
} AdbTarget;

typedef struct {
    DdmTarget t;
    AdbTarget at;
    char strings[]; /* "adb:SERIAL:PID\0SERIAL\0" */
} AdbTargetBlock;

typedef struct {
    DdmTarget *target;      /* reference held until done */
    DdmAdbConn *conn;
    DdmTargetConnectedFn done;
    gpointer ud;
    DdmConnectCancel *cancel; /* caller's (kept until done), armed: arms `cancelled` */
    DdmTimer cancelled;     /* zero-delay: reports the cancellation outside ddm_connect_cancel */
} AdbConnect;

static void adb_connect_finish(AdbConnect *ac, int fd, const GError *error)
{
    ddm_timer_cancel(&ac->cancelled);
    if (ac->cancel) /* never from inside the handler: `cancelled` runs later */
        ddm_connect_cancel_disarm(ac->cancel);
    ac->done(ac->target, fd, error, ac->ud);
    ddm_target_unref(ac->target);
    g_free(ac);
}

static void adb_conn_done(int fd, GBytes *extra, const GError *error, gpointer ud)
{
    AdbConnect *ac = ud;
    ac->conn = NULL;
    if (fd >= 0 && extra && g_bytes_get_size(extra) > 0) {
        /* A VM speaks only after our handshake: bytes here are a protocol error. */
        close(fd);
        GError *e = g_error_new(G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                                "%s: unexpected data after jdwp OKAY", ac->target->key);
        adb_connect_finish(ac, -1, e);
        g_error_free(e);
        return;
    }
    if (fd < 0) {
        GError *e = g_error_new(G_IO_ERROR, g_error_matches(error, DDM_ADB_ERROR, DDM_ADB_ERROR_TIMEOUT)
                                                ? G_IO_ERROR_TIMED_OUT : G_IO_ERROR_FAILED,
                                "%s: %s", ac->target->key, error->message);
        adb_connect_finish(ac, -1, e);
        g_error_free(e);
        return;
    }
    adb_connect_finish(ac, fd, NULL); /* adb_conn.c made and tuned it (target.h) */
}

static void adb_cancelled(DdmTimer *t, gpointer ud)
{
    AdbConnect *ac = ud;
    (void)t;
    ddm_adb_conn_cancel(ac->conn);
    ac->conn = NULL;
    GError *e = g_error_new(G_IO_ERROR, G_IO_ERROR_CANCELLED, "%s: connect cancelled", ac->target->key);
    adb_connect_finish(ac, -1, e);
    g_error_free(e);
}

/* From inside ddm_connect_cancel(): report at the next iteration. */
static void adb_cancel_requested(gpointer ud)
{
    AdbConnect *ac = ud;
    ddm_timer_arm(&ac->cancelled, 0);
}

static void adb_target_connect(DdmTarget *t, unsigned timeout_ms, DdmConnectCancel *cancel,
                               DdmTargetConnectedFn done, gpointer ud)
{
    AdbTarget *at = t->priv;
    /* Borrowed for the call: ddm_adb_conn_open copies what it keeps. */
    DdmAdbServerAddr addr = {(char *)at->host, at->port, (char *)at->unix_path, at->abstract};
    AdbConnect *ac = g_new0(AdbConnect, 1);
    ac->target = ddm_target_ref(t);
    ac->done = done;
    ac->ud = ud;
    g_autofree char *transport = g_strdup_printf("host:transport:%s", t->device);
    g_autofree char *jdwp = g_strdup_printf("jdwp:%u", at->pid);
    const char *requests[] = {transport, jdwp, NULL};
    ac->conn = ddm_adb_conn_open(&addr, requests, timeout_ms, adb_conn_done, ac);
    ddm_timer_init(&ac->cancelled, adb_cancelled, ac);
    if (cancel) {
        ac->cancel = cancel;
        ddm_connect_cancel_arm(cancel, adb_cancel_requested, ac);
    }
}

/* Everything is in the block ddm_target_unref frees last (g_free(t)): its
 * strings are cleared here so that unref's g_free of key, device and
 * origin (target.c, after this) skip them. */
static void adb_target_destroy(DdmTarget *t)
{
    t->key = NULL;
    t->device = NULL;
    t->origin = NULL;
    t->priv = NULL;
}

static const DdmTargetOps adb_ops = {
    .transport = "adb",
    .connect = adb_target_connect,
    .destroy = adb_target_destroy,
};

char *ddm_adb_vm_key(const char *serial, guint32 pid)
{
    return g_strdup_printf("adb:%s:%u", serial, pid);
}

DdmTarget *ddm_target_adb_new(const DdmAdbServerAddr *addr, const char *serial, guint32 pid)
{
    char pid_s[16];
    gsize serial_len = strlen(serial);
    gsize pid_len = (gsize)g_snprintf(pid_s, sizeof pid_s, "%u", pid);
    gsize key_len = 4 + serial_len + 1 + pid_len; /* "adb:" SERIAL ":" PID */
    AdbTargetBlock *b = g_malloc0(sizeof *b + key_len + 1 + serial_len + 1);
    char *key = b->strings, *dev = key + key_len + 1;
    memcpy(key, "adb:", 4);
    memcpy(key + 4, serial, serial_len);
    key[4 + serial_len] = ':';
    memcpy(key + 5 + serial_len, pid_s, pid_len + 1);
    memcpy(dev, serial, serial_len + 1);
    b->at.host = g_intern_string(addr->host);
    b->at.port = addr->port;
    b->at.unix_path = g_intern_string(addr->unix_path);
    b->at.abstract = addr->abstract;
    b->at.pid = pid;
    DdmTarget *t = &b->t;
    t->ops = &adb_ops;
    t->ref_count = 1;
    t->key = key;
    t->device = dev;
    t->pid_hint = pid;
    t->origin = (char *)"adb";
    t->priv = &b->at;
    return t;
}
