/* SPDX-License-Identifier: Apache-2.0
 *
 * Who is at the other end of a local TCP connection, without the peer's
 * help: the way `ss -p` and `jps` find it. The kernel lists every TCP
 * socket in /proc/net/tcp and /proc/net/tcp6 (addresses, state, owner uid,
 * inode); the process holding the peer's socket has a /proc/PID/fd entry
 * "socket:[INODE]"; its /proc/PID/cmdline names the main class or jar.
 * A JVM's JDWP agent has no other way to say who it is (a plain JVM
 * answers no HELO), so this is how ddmon shows a pid and a main class for
 * HotSpot and OpenJ9 VMs on this host.
 *
 * The parsers are pure (unit-tested with fixtures); ddm_local_peer_find
 * reads /proc (Linux only; elsewhere it says DDM_PEER_UNKNOWN).
 * Non-goals: other network namespaces, other hosts (reported, not found).
 */
#ifndef DDM_LOCAL_PROC_H
#define DDM_LOCAL_PROC_H

#include <glib.h>
#include <stdint.h>

/** One line of /proc/net/tcp or /proc/net/tcp6. Addresses are in network
 *  byte order, IPv4 as an IPv4-mapped IPv6 address (::ffff:a.b.c.d), so
 *  both files compare alike. */
typedef struct DdmProcNetEntry {
    uint8_t local_addr[16], remote_addr[16];
    uint16_t local_port, remote_port;
    unsigned state; /* 0x01 ESTABLISHED, 0x0A LISTEN */
    uint32_t uid;
    uint64_t inode;
} DdmProcNetEntry;

#define DDM_TCP_ESTABLISHED 0x01u
#define DDM_TCP_LISTEN 0x0Au

/** Parse one data line of /proc/net/tcp (@v6 FALSE) or tcp6 (TRUE). FALSE
 *  for the header line and anything malformed. */
gboolean ddm_procnet_parse_line(const char *line, gboolean v6, DdmProcNetEntry *out);

/** What `jps` shows for a java command line: the main class, "-jar"'s jar
 *  path, or "--module"'s module/class. @cmdline is /proc/PID/cmdline (@len
 *  bytes, NUL-separated, argv[0] first). NULL when none is found (an
 *  embedding launcher, a truncated line). (transfer full) */
char *ddm_proc_cmdline_main(const char *cmdline, size_t len);

/** "socket:[123]" -> 123; 0 for anything else. */
uint64_t ddm_proc_socket_inode(const char *link);

typedef enum {
    DDM_PEER_FOUND = 0,      /* pid (and usually main) known */
    DDM_PEER_OTHER_USER,     /* the socket is local but its process cannot be read (uid) */
    DDM_PEER_NOT_LOCAL,      /* no such socket on this host: a remote VM (or a container) */
    DDM_PEER_UNKNOWN         /* no /proc, not a TCP socket, ... */
} DdmPeerWho;

typedef struct DdmLocalPeer {
    DdmPeerWho who;
    uint32_t pid;       /* DDM_PEER_FOUND */
    uint32_t uid;       /* FOUND and OTHER_USER */
    char *main_class;   /* FOUND, may be NULL; owned */
} DdmLocalPeer;

/** Find the process at the other end of connected TCP socket @fd, reading
 *  /proc under @proc_root ("/proc"; tests pass a fixture tree). */
void ddm_local_peer_find(int fd, const char *proc_root, DdmLocalPeer *out);
/** The same for a known pair of endpoints (IPv4-mapped or IPv6, network
 *  order): the socket whose local end is @peer and remote end @self. */
void ddm_local_peer_find_addr(const uint8_t peer_addr[16], uint16_t peer_port,
                              const uint8_t self_addr[16], uint16_t self_port,
                              const char *proc_root, DdmLocalPeer *out);
void ddm_local_peer_clear(DdmLocalPeer *p);

/** Whether this host (this network namespace) has an established TCP
 *  connection whose local end is @addr:@port (IPv4-mapped or IPv6,
 *  network order; any loopback address, and the unspecified one, match
 *  any loopback address): somebody is connected to that port; for a VM's
 *  JDWP port, the one debugger the VM serves. Reads @proc_root/net/tcp and
 *  tcp6 ("/proc"). FALSE when it cannot tell (no /proc). */
gboolean ddm_local_port_connected(const uint8_t addr[16], uint16_t port, const char *proc_root);
/** The same for @host (a numeric IPv4 or IPv6 address, or "localhost";
 *  FALSE for any other name: it is not resolved) and @port. */
gboolean ddm_local_host_port_connected(const char *host, uint16_t port, const char *proc_root);
/** A sentence for a VM list when the pid is not known ("pid unknown:
 *  another user's process (uid 1001)"); NULL for FOUND. (transfer full) */
char *ddm_local_peer_note(const DdmLocalPeer *p);

#endif /* DDM_LOCAL_PROC_H */
