/* SPDX-License-Identifier: Apache-2.0
 *
 * The process at the other end of a local TCP connection (local_proc.h):
 * /proc/net/tcp{,6} gives the peer socket's inode and uid, /proc/PID/fd
 * the process holding that inode, /proc/PID/cmdline its main class.
 * The same files say whether anybody is connected to a local port
 * (ddm_local_port_connected: a VM held by another debugger).
 * Invariants: the parsers never read past their input; the walk reads
 * only what the user may read (another user's fds are EACCES: reported as
 * DDM_PEER_OTHER_USER, never guessed).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "core/transport/local_proc.h"

/* ------------------------------------------------------------- parsers */

static gboolean parse_hex(const char **pp, unsigned digits, guint64 *out)
{
    const char *p = *pp;
    guint64 v = 0;
    for (unsigned i = 0; i < digits; i++) {
        int d = g_ascii_xdigit_value(p[i]);
        if (d < 0)
            return FALSE;
        v = v << 4 | (guint64)d;
    }
    *pp = p + digits;
    *out = v;
    return TRUE;
}

/* "0100007F:1F52" (v4) or 32 hex digits ":" port (v6): the kernel prints each
 * 32-bit word of the address as the host-order value of its network bytes. */
static gboolean parse_endpoint(const char **pp, gboolean v6, uint8_t addr[16], uint16_t *port)
{
    guint64 w, pv;
    unsigned words = v6 ? 4 : 1;
    uint8_t raw[16];

    for (unsigned i = 0; i < words; i++) {
        uint32_t u;
        if (!parse_hex(pp, 8, &w))
            return FALSE;
        u = (uint32_t)w;
        memcpy(raw + 4 * i, &u, 4); /* host order back to the kernel's bytes */
    }
    if (**pp != ':')
        return FALSE;
    (*pp)++;
    if (!parse_hex(pp, 4, &pv))
        return FALSE;
    if (v6) {
        memcpy(addr, raw, 16);
    } else {
        memset(addr, 0, 10);
        addr[10] = addr[11] = 0xff;
        memcpy(addr + 12, raw, 4);
    }
    *port = (uint16_t)pv;
    return TRUE;
}

static void skip_spaces(const char **pp)
{
    while (**pp == ' ' || **pp == '\t')
        (*pp)++;
}

/* The next space-separated field as a number (base 10 or 16). */
static gboolean next_number(const char **pp, int base, guint64 *out)
{
    char *end;
    skip_spaces(pp);
    if (!g_ascii_isxdigit(**pp))
        return FALSE;
    errno = 0;
    *out = g_ascii_strtoull(*pp, &end, (guint)base);
    if (errno || end == *pp)
        return FALSE;
    *pp = end;
    return TRUE;
}

static gboolean skip_field(const char **pp)
{
    skip_spaces(pp);
    if (!**pp)
        return FALSE;
    while (**pp && **pp != ' ' && **pp != '\t')
        (*pp)++;
    return TRUE;
}

gboolean ddm_procnet_parse_line(const char *line, gboolean v6, DdmProcNetEntry *out)
{
    const char *p = line;
    guint64 st, uid, inode, sl;
    char *end;

    g_return_val_if_fail(line != NULL && out != NULL, FALSE);
    memset(out, 0, sizeof *out);
    skip_spaces(&p);
    /* "sl:" */
    sl = g_ascii_strtoull(p, &end, 10);
    (void)sl;
    if (end == p || *end != ':')
        return FALSE;
    p = end + 1;
    skip_spaces(&p);
    if (!parse_endpoint(&p, v6, out->local_addr, &out->local_port))
        return FALSE;
    skip_spaces(&p);
    if (!parse_endpoint(&p, v6, out->remote_addr, &out->remote_port))
        return FALSE;
    if (!next_number(&p, 16, &st) || st > 0xff)
        return FALSE;
    /* tx_queue:rx_queue, tr:tm->when, retrnsmt */
    if (!skip_field(&p) || !skip_field(&p) || !skip_field(&p))
        return FALSE;
    if (!next_number(&p, 10, &uid) || uid > G_MAXUINT32)
        return FALSE;
    if (!skip_field(&p)) /* timeout */
        return FALSE;
    if (!next_number(&p, 10, &inode))
        return FALSE;
    out->state = (unsigned)st;
    out->uid = (uint32_t)uid;
    out->inode = inode;
    return TRUE;
}

uint64_t ddm_proc_socket_inode(const char *link)
{
    const char *p;
    char *end;
    guint64 v;

    if (!link || !g_str_has_prefix(link, "socket:["))
        return 0;
    p = link + 8;
    if (!g_ascii_isdigit(*p))
        return 0;
    v = g_ascii_strtoull(p, &end, 10);
    if (end[0] != ']' || end[1] != '\0')
        return 0;
    return v;
}

/* java launcher options that take the next argument as their value. */
static gboolean option_takes_value(const char *a)
{
    static const char *const with_value[] = {
        "-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path",
        "--add-modules", "--limit-modules", "--add-reads", "--add-exports", "--add-opens",
        "--patch-module", "--enable-native-access", "--source", "-d", "--describe-module",
        "--illegal-access", NULL};
    for (unsigned i = 0; with_value[i]; i++)
        if (strcmp(a, with_value[i]) == 0)
            return TRUE;
    return FALSE;
}

char *ddm_proc_cmdline_main(const char *cmdline, size_t len)
{
    GPtrArray *argv;
    char *result = NULL;
    size_t i = 0;

    if (!cmdline || len == 0)
        return NULL;
    argv = g_ptr_array_new();
    while (i < len) {
        size_t n = strnlen(cmdline + i, len - i);
        g_ptr_array_add(argv, g_strndup(cmdline + i, n));
        i += n + 1;
    }
    g_ptr_array_add(argv, NULL);
    char **a = (char **)argv->pdata;
    if (a[0] && *a[0]) {
        char *base = g_path_get_basename(a[0]);
        if (!g_str_has_prefix(base, "java")) {
            /* Not the java launcher (an embedding program): its name is all we know. */
            result = g_steal_pointer(&base);
        } else {
            for (unsigned k = 1; a[k]; k++) {
                const char *s = a[k];
                if (strcmp(s, "-jar") == 0 || strcmp(s, "-m") == 0 || strcmp(s, "--module") == 0) {
                    if (a[k + 1] && *a[k + 1])
                        result = g_strdup(a[k + 1]);
                    break;
                }
                if (g_str_has_prefix(s, "--module=")) {
                    result = g_strdup(s + 9);
                    break;
                }
                if (option_takes_value(s)) {
                    if (!a[k + 1])
                        break;
                    k++;
                    continue;
                }
                if (s[0] == '-' || s[0] == '@' || s[0] == '\0')
                    continue; /* -Dx=y, -Xmx1g, -agentlib:..., --x=y, @argfile */
                result = g_strdup(s);
                break;
            }
        }
        g_free(base);
    }
    g_strfreev((char **)g_ptr_array_free(argv, FALSE));
    if (result && !g_utf8_validate(result, -1, NULL)) {
        char *valid = g_utf8_make_valid(result, -1);
        g_free(result);
        result = valid;
    }
    return result;
}

/* ---------------------------------------------------------------- walk */

static gboolean addr_equal(const uint8_t a[16], const uint8_t b[16])
{
    return memcmp(a, b, 16) == 0;
}

/* Find in @file the socket whose local end is @peer and remote end @self. */
static gboolean find_in_file(const char *path, gboolean v6, const uint8_t peer[16], uint16_t pport,
                             const uint8_t self[16], uint16_t sport, DdmProcNetEntry *out)
{
    char *text = NULL;
    gboolean found = FALSE;

    if (!g_file_get_contents(path, &text, NULL, NULL))
        return FALSE;
    char **lines = g_strsplit(text, "\n", -1);
    for (unsigned i = 1; lines[i] && !found; i++) {
        DdmProcNetEntry e;
        if (!ddm_procnet_parse_line(lines[i], v6, &e))
            continue;
        if (e.local_port == pport && e.remote_port == sport && addr_equal(e.local_addr, peer) &&
            addr_equal(e.remote_addr, self)) {
            *out = e;
            found = TRUE;
        }
    }
    g_strfreev(lines);
    g_free(text);
    return found;
}

/* The pid of the process with an fd on socket @inode, or 0. */
static uint32_t pid_of_inode(const char *proc_root, uint64_t inode)
{
    DIR *d = opendir(proc_root);
    struct dirent *de;
    uint32_t found = 0;

    if (!d)
        return 0;
    while (!found && (de = readdir(d))) {
        char *end;
        guint64 pid;
        if (!g_ascii_isdigit(de->d_name[0]))
            continue;
        pid = g_ascii_strtoull(de->d_name, &end, 10);
        if (*end || pid == 0 || pid > G_MAXUINT32)
            continue;
        char *fddir = g_strdup_printf("%s/%s/fd", proc_root, de->d_name);
        DIR *fd = opendir(fddir); /* EACCES for another user's process */
        if (fd) {
            struct dirent *fe;
            while ((fe = readdir(fd))) {
                char link[64];
                char *lp;
                ssize_t n;
                if (fe->d_name[0] == '.')
                    continue;
                lp = g_strdup_printf("%s/%s", fddir, fe->d_name);
                n = readlink(lp, link, sizeof link - 1);
                g_free(lp);
                if (n <= 0)
                    continue;
                link[n] = '\0';
                if (ddm_proc_socket_inode(link) == inode) {
                    found = (uint32_t)pid;
                    break;
                }
            }
            closedir(fd);
        }
        g_free(fddir);
    }
    closedir(d);
    return found;
}

void ddm_local_peer_find_addr(const uint8_t peer_addr[16], uint16_t peer_port,
                              const uint8_t self_addr[16], uint16_t self_port,
                              const char *proc_root, DdmLocalPeer *out)
{
    DdmProcNetEntry e;
    gboolean hit;

    memset(out, 0, sizeof *out);
    out->who = DDM_PEER_UNKNOWN;
    if (!proc_root)
        proc_root = "/proc";
    char *tcp4 = g_strdup_printf("%s/net/tcp", proc_root);
    char *tcp6 = g_strdup_printf("%s/net/tcp6", proc_root);
    gboolean have = g_file_test(tcp4, G_FILE_TEST_EXISTS) || g_file_test(tcp6, G_FILE_TEST_EXISTS);
    hit = find_in_file(tcp4, FALSE, peer_addr, peer_port, self_addr, self_port, &e) ||
          find_in_file(tcp6, TRUE, peer_addr, peer_port, self_addr, self_port, &e);
    g_free(tcp4);
    g_free(tcp6);
    if (!have)
        return;
    if (!hit || e.inode == 0) {
        out->who = DDM_PEER_NOT_LOCAL;
        return;
    }
    out->uid = e.uid;
    out->pid = pid_of_inode(proc_root, e.inode);
    if (!out->pid) {
        out->who = DDM_PEER_OTHER_USER;
        return;
    }
    out->who = DDM_PEER_FOUND;
    char *path = g_strdup_printf("%s/%u/cmdline", proc_root, out->pid);
    char *cmd = NULL;
    gsize n = 0;
    if (g_file_get_contents(path, &cmd, &n, NULL))
        out->main_class = ddm_proc_cmdline_main(cmd, n);
    g_free(cmd);
    g_free(path);
}

/* A sockaddr as an IPv4-mapped or IPv6 address and a port; FALSE if not IP. */
static gboolean sockaddr_to16(const struct sockaddr_storage *ss, uint8_t addr[16], uint16_t *port)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        memset(addr, 0, 10);
        addr[10] = addr[11] = 0xff;
        memcpy(addr + 12, &in->sin_addr, 4);
        *port = ntohs(in->sin_port);
        return TRUE;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        memcpy(addr, &in6->sin6_addr, 16);
        *port = ntohs(in6->sin6_port);
        return TRUE;
    }
    return FALSE;
}

/* ::1, 127.0.0.0/8 (IPv4-mapped), or :: and 0.0.0.0 (a connect to those
 * reaches loopback). */
static gboolean addr_is_loopback(const uint8_t a[16])
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const uint8_t zero[16] = {0};
    if (memcmp(a, mapped, 12) == 0)
        return a[12] == 127 || memcmp(a + 12, zero, 4) == 0;
    return memcmp(a, zero, 15) == 0 && (a[15] == 1 || a[15] == 0);
}

/* Whether @path (/proc/net/tcp or tcp6) lists an established connection
 * whose local end is @addr (or any loopback address, @addr being one):@port.
 * Read a line at a time, up to the first match: the memory is one line's,
 * whatever the number of sockets (tens of thousands make megabytes). */
static gboolean connected_in_file(const char *path, gboolean v6, const uint8_t addr[16],
                                  uint16_t port)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return FALSE;
    gboolean found = FALSE, loopback = addr_is_loopback(addr), header = TRUE;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while (!found && (len = getline(&line, &cap, f)) >= 0) {
        DdmProcNetEntry e;
        if (header) { /* the column names */
            header = FALSE;
            continue;
        }
        if (len > 0 && line[len - 1] == '\n')
            line[len - 1] = '\0';
        if (!ddm_procnet_parse_line(line, v6, &e) || e.state != DDM_TCP_ESTABLISHED ||
            e.local_port != port)
            continue;
        found = addr_equal(e.local_addr, addr) || (loopback && addr_is_loopback(e.local_addr));
    }
    free(line);
    fclose(f);
    return found;
}

gboolean ddm_local_port_connected(const uint8_t addr[16], uint16_t port, const char *proc_root)
{
    g_autofree char *p4 = g_build_filename(proc_root, "net", "tcp", NULL);
    g_autofree char *p6 = g_build_filename(proc_root, "net", "tcp6", NULL);
    return connected_in_file(p4, FALSE, addr, port) || connected_in_file(p6, TRUE, addr, port);
}

gboolean ddm_local_host_port_connected(const char *host, uint16_t port, const char *proc_root)
{
    uint8_t addr[16] = {0};
    if (host == NULL)
        return FALSE;
    if (g_ascii_strcasecmp(host, "localhost") == 0) {
        addr[15] = 1;
    } else if (inet_pton(AF_INET, host, addr + 12) == 1) {
        addr[10] = addr[11] = 0xff;
    } else if (inet_pton(AF_INET6, host, addr) != 1) {
        return FALSE;
    }
    return ddm_local_port_connected(addr, port, proc_root);
}

void ddm_local_peer_find(int fd, const char *proc_root, DdmLocalPeer *out)
{
    struct sockaddr_storage me, peer;
    socklen_t ml = sizeof me, pl = sizeof peer;
    uint8_t ma[16], pa[16];
    uint16_t mp, pp;

    memset(out, 0, sizeof *out);
    out->who = DDM_PEER_UNKNOWN;
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&me, &ml) != 0 ||
        getpeername(fd, (struct sockaddr *)&peer, &pl) != 0 || !sockaddr_to16(&me, ma, &mp) ||
        !sockaddr_to16(&peer, pa, &pp))
        return;
    ddm_local_peer_find_addr(pa, pp, ma, mp, proc_root, out);
}

void ddm_local_peer_clear(DdmLocalPeer *p)
{
    if (p)
        g_clear_pointer(&p->main_class, g_free);
}

char *ddm_local_peer_note(const DdmLocalPeer *p)
{
    switch (p->who) {
    case DDM_PEER_FOUND:
        return NULL;
    case DDM_PEER_OTHER_USER:
        return g_strdup_printf("pid unknown: another user's process (uid %u)", p->uid);
    case DDM_PEER_NOT_LOCAL:
        return g_strdup("pid unknown: not a process on this host");
    case DDM_PEER_UNKNOWN:
    default:
        return g_strdup("pid unknown");
    }
}
