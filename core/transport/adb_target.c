/* SPDX-License-Identifier: Apache-2.0
 *
 * The adb transport (adb_target.h): a target whose connect asks the adb server for
 * host:transport:SERIAL then jdwp:PID on a fresh socket. After the second
 * OKAY the socket is that VM's raw JDWP stream, handed to the session like
 * a TCP fd. A FAIL (the VM is held by another tool, or gone) becomes the
 * connect error, with adb's reason. done() runs exactly once, never from
 * inside connect, also when cancelled.
 */
#include "core/transport/adb_target.h"

#include <unistd.h>

#include "core/loop/timer.h"
#include "core/transport/adb_conn.h"

typedef struct {
    DdmAdbServerAddr addr;
    char *serial;
    guint32 pid;
} AdbTarget;

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
    ddm_socket_tune(fd);
    adb_connect_finish(ac, fd, NULL);
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
    AdbConnect *ac = g_new0(AdbConnect, 1);
    ac->target = ddm_target_ref(t);
    ac->done = done;
    ac->ud = ud;
    g_autofree char *transport = g_strdup_printf("host:transport:%s", at->serial);
    g_autofree char *jdwp = g_strdup_printf("jdwp:%u", at->pid);
    const char *requests[] = {transport, jdwp, NULL};
    ac->conn = ddm_adb_conn_open(&at->addr, requests, timeout_ms, adb_conn_done, ac);
    ddm_timer_init(&ac->cancelled, adb_cancelled, ac);
    if (cancel) {
        ac->cancel = cancel;
        ddm_connect_cancel_arm(cancel, adb_cancel_requested, ac);
    }
}

static void adb_target_destroy(DdmTarget *t)
{
    AdbTarget *at = t->priv;
    ddm_adb_server_addr_clear(&at->addr);
    g_free(at->serial);
    g_free(at);
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
    AdbTarget *at = g_new0(AdbTarget, 1);
    at->addr.host = g_strdup(addr->host);
    at->addr.port = addr->port;
    at->addr.unix_path = g_strdup(addr->unix_path);
    at->addr.abstract = addr->abstract;
    at->serial = g_strdup(serial);
    at->pid = pid;
    DdmTarget *t = g_new0(DdmTarget, 1);
    t->ops = &adb_ops;
    t->ref_count = 1;
    t->key = ddm_adb_vm_key(serial, pid);
    t->device = g_strdup(serial);
    t->pid_hint = pid;
    t->origin = g_strdup("adb");
    t->priv = at;
    return t;
}
