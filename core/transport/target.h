/* SPDX-License-Identifier: Apache-2.0
 *
 * Transports: "a connected byte stream to one VM, plus how to reach it
 * again". A DdmTarget knows how to open a connection (TCP connect, or an
 * adb socket with host:transport + jdwp:PID) and ends by handing the
 * session a connected, non-blocking, close-on-exec fd, TCP_NODELAY set
 * where it applies (the session does not set them again: each is a
 * syscall a VM). The session never knows which kind it has. Connecting
 * never blocks the main loop.
 */
#ifndef DDM_TARGET_H
#define DDM_TARGET_H

#include <gio/gio.h>
#include <glib-unix.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct DdmTarget DdmTarget;

/** Result of a connect: @fd >= 0 (ownership passes to the callee) or @error set. */
typedef void (*DdmTargetConnectedFn)(DdmTarget *target, int fd, const GError *error, gpointer ud);

/* What a transport guarantees about the peer it reaches. */
typedef enum {
    /* The peer may be any JVM, not only Android's (a TCP port may be
     * HotSpot or OpenJ9; adb's jdwp:PID reaches only Dalvik and ART).
     * OpenJDK's agent can crash on DDM's vendor command set, so the session
     * asks VirtualMachine.Version before any DDM packet (unless the user
     * turned the probe off, --tcp-probe=helo). */
    DDM_TARGET_CAP_ANY_JVM = 1u << 0,
} DdmTargetCaps;

/* A connect's cancel switch (instead of a GCancellable: GIO's class is
 * ~190 kB of library pages a server otherwise never touches; doc/memory.md).
 * The caller of ops->connect owns it, zeroed, and keeps it until @done has
 * run; the target arms it with a function for the length of the connect
 * and disarms it before it calls @done. ddm_connect_cancel() (the caller's)
 * sets `cancelled` and calls the armed function, at most once; arming an
 * already cancelled switch calls the function at once. The function must
 * not call @done from inside (it schedules the report). */
typedef struct DdmConnectCancel {
    void (*fn)(gpointer ud);
    gpointer ud;
    gboolean cancelled;
} DdmConnectCancel;

static inline void ddm_connect_cancel_arm(DdmConnectCancel *c, void (*fn)(gpointer ud), gpointer ud)
{
    c->fn = fn;
    c->ud = ud;
    if (c->cancelled)
        fn(ud);
}

static inline void ddm_connect_cancel_disarm(DdmConnectCancel *c)
{
    c->fn = NULL;
    c->ud = NULL;
}

static inline void ddm_connect_cancel(DdmConnectCancel *c)
{
    if (c->cancelled)
        return;
    c->cancelled = TRUE;
    if (c->fn)
        c->fn(c->ud);
}

typedef struct DdmTargetOps {
    const char *transport;  /* a name for people: "tcp", "adb" */
    unsigned caps;          /* DdmTargetCaps */
    /* Start connecting; call @done exactly once (never from inside this call)
     * unless @cancel fires first, in which case @done is called with
     * G_IO_ERROR_CANCELLED. */
    void (*connect)(DdmTarget *target, unsigned timeout_ms, DdmConnectCancel *cancel,
                    DdmTargetConnectedFn done, gpointer ud);
    void (*destroy)(DdmTarget *target);  /* free the ops-specific part */
} DdmTargetOps;

struct DdmTarget {
    const DdmTargetOps *ops;
    gint ref_count;
    char *key;          /* unique: "127.0.0.1:8000", "adb:SERIAL:1234" */
    char *device;       /* device serial or NULL */
    uint32_t pid_hint;  /* pid known before HELO (adb), or 0 */
    char *origin;       /* discovery mode that found it: "local", "connect", "adb" */
    gboolean speculative; /* found by probing (a port scan), not named as a VM: a
                             failure there is the normal case, the scan paces
                             retries, and it is not listed before it answers */
    gpointer priv;      /* ops-specific */
};

DdmTarget *ddm_target_ref(DdmTarget *t);
void ddm_target_unref(DdmTarget *t);

/** A TCP target host:port; @origin as above. (transfer full) */
DdmTarget *ddm_target_tcp_new(const char *host, guint16 port, const char *origin);
/** The key a TCP target for @host:@port has (transfer full). */
char *ddm_target_tcp_key(const char *host, guint16 port);
/** Split "HOST:PORT" (the first @len bytes of @spec; "[v6]:PORT" too: the
 *  last colon separates the port, brackets are taken off) into *@host
 *  (transfer full) and *@port (1-65535). FALSE, and *@host untouched,
 *  without a port or with an empty host. The one parser of --connect's
 *  targets, for discovery and for the relay's fixed ports alike. */
gboolean ddm_target_parse_host_port(const char *spec, gsize len, char **host, guint16 *port);
/** A TCP target's host (borrowed, lives as long as @t), NULL for another kind. */
const char *ddm_target_tcp_host(const DdmTarget *t);
/** The TCP port of a tcp target, or 0. */
guint16 ddm_target_tcp_port(const DdmTarget *t);
/** TRUE if @fd is a TCP socket connected to itself (local address and
 *  port equal the peer's): a self-connect, never a peer. @peer: the
 *  address @fd was connected to (@peer_len bytes), which saves asking the
 *  kernel; NULL, or an unspecified address (0.0.0.0, ::: the kernel
 *  connected to loopback instead): asked (getpeername). */
gboolean ddm_socket_is_self_connected(int fd, const struct sockaddr *peer, socklen_t peer_len);
/** Set TCP_NODELAY (harmless failure on a UNIX socket). Every socket
 *  ddmon makes or accepts is made non-blocking and close-on-exec by
 *  socket() or accept4() themselves, so this is all the tuning it needs. */
void ddm_socket_nodelay(int fd);

#endif /* DDM_TARGET_H */
