/* SPDX-License-Identifier: Apache-2.0
 *
 * simvm-probe: a tiny JDWP/DDM client for smoke tests (no python needed).
 * Connects to HOST:PORT, sends the handshake in one write, waits for the
 * echo (discarding packets that race ahead of it), sends HELO and prints
 * the reply as key=value; optionally FEAT, a GC with segments, or EXIT.
 * Exit status: 0 ok, 1 an expectation failed, 2 usage, 3 I/O or protocol.
 * Blocking I/O with poll() timeouts: this is a test tool, not the monitor.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include <ddmon/bytes.h>

#include "ddm.h"
#include "jdwp.h"

static int timeout_ms = 5000;
static uint32_t next_id = 0x40000000u;

static int read_some(int fd, DdmJdwpReader *r)
{
    struct pollfd p = { fd, POLLIN, 0 };
    size_t avail;
    uint8_t *space;
    ssize_t n;

    if (poll(&p, 1, timeout_ms) <= 0) {
        fprintf(stderr, "simvm-probe: timeout\n");
        return -1;
    }
    space = ddm_jdwp_reader_space(r, 65536, &avail);
    n = read(fd, space, avail);
    if (n <= 0) {
        fprintf(stderr, "simvm-probe: %s\n", n == 0 ? "connection closed" : strerror(errno));
        return -1;
    }
    ddm_jdwp_reader_commit(r, (size_t)n);
    return 0;
}

/* Next packet (borrowed until the next call), or -1. */
static int next_packet(int fd, DdmJdwpReader *r, DdmJdwpPacket *pkt)
{
    for (;;) {
        DdmJdwpResult res = ddm_jdwp_reader_next(r, pkt);
        if (res == DDM_JDWP_PACKET)
            return 0;
        if (res == DDM_JDWP_HANDSHAKE_OK) {
            printf("handshake=ok\n");
            continue;
        }
        if (res == DDM_JDWP_DISCARDED) {
            printf("discarded-before-echo=1\n");
            continue;
        }
        if (res < 0) {
            fprintf(stderr, "simvm-probe: %s\n", ddm_jdwp_result_str(res));
            return -1;
        }
        if (read_some(fd, r) < 0)
            return -1;
    }
}

static int send_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static uint32_t send_chunk(int fd, uint32_t type, const void *data, size_t len)
{
    size_t plen;
    uint32_t id = next_id++;
    uint8_t *pkt = ddm_chunk_build_packet(id, type, data, len, &plen);
    int rc = send_all(fd, pkt, plen);

    g_free(pkt);
    return rc < 0 ? 0 : id;
}

/* The first chunk of a DDM packet, inflating ZLIB. (out: g_free) */
static int first_chunk(const DdmJdwpPacket *pkt, uint32_t *type, uint8_t **data, size_t *len)
{
    DdmChunkIter it;
    DdmChunk c;

    ddm_chunk_iter_init(&it, pkt->data, pkt->data_len);
    if (ddm_chunk_iter_next(&it, &c) != DDM_CHUNK_OK)
        return -1;
    if (c.type == DDM_CHUNK_ZLIB) {
        if (ddm_zlib_inflate(c.data, c.len, 64 << 20, type, data, len) != DDM_ZLIB_OK)
            return -1;
        return 0;
    }
    *type = c.type;
    *data = g_malloc(c.len ? c.len : 1);
    if (c.len)
        memcpy(*data, c.data, c.len);
    *len = c.len;
    return 0;
}

/* Wait for the reply to @id; events in between are counted by type. */
static int wait_reply(int fd, DdmJdwpReader *r, uint32_t id, GHashTable *events, DdmJdwpPacket *out)
{
    DdmJdwpPacket pkt;

    while (next_packet(fd, r, &pkt) == 0) {
        if (ddm_jdwp_is_reply(&pkt.header) && pkt.header.id == id) {
            *out = pkt;
            return 0;
        }
        if (!ddm_jdwp_is_reply(&pkt.header) && events) {
            uint32_t type;
            uint8_t *d;
            size_t l;
            if (first_chunk(&pkt, &type, &d, &l) == 0) {
                char name[5];
                gpointer old = g_hash_table_lookup(events, ddm_chunk_name(type, name));
                g_hash_table_insert(events, g_strdup(name), GINT_TO_POINTER(GPOINTER_TO_INT(old) + 1));
                g_free(d);
            }
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    char *host = NULL, *expect_app = NULL;
    int port = 0, expect_pid = -1, feat = 0, gc_ms = 0, exit_status = -1, rc = 0, fd;
    GOptionEntry entries[] = {
        { "host", 'H', 0, G_OPTION_ARG_STRING, &host, "Host (default 127.0.0.1)", "ADDR" },
        { "port", 'p', 0, G_OPTION_ARG_INT, &port, "Port", "PORT" },
        { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout_ms, "I/O timeout (default 5000)", "MS" },
        { "expect-pid", 0, 0, G_OPTION_ARG_INT, &expect_pid, "Fail unless HELO says this pid", "PID" },
        { "expect-app", 0, 0, G_OPTION_ARG_STRING, &expect_app, "Fail unless HELO says this app", "NAME" },
        { "feat", 0, 0, G_OPTION_ARG_NONE, &feat, "Also ask FEAT", NULL },
        { "gc", 0, 0, G_OPTION_ARG_INT, &gc_ms, "Enable HPIF+HPSG, HPGC, count events for MS", "MS" },
        { "exit", 0, 0, G_OPTION_ARG_INT, &exit_status, "Send EXIT(status) at the end", "STATUS" },
        { NULL, 0, 0, 0, NULL, NULL, NULL }
    };
    GOptionContext *ctx = g_option_context_new("- talk JDWP/DDM to one VM");
    GError *err = NULL;
    struct sockaddr_in sa;
    DdmJdwpReader *r;
    DdmJdwpPacket pkt;
    uint8_t req[4];
    uint32_t id, type;
    uint8_t *d = NULL;
    size_t l;
    DdmHelo helo;

    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err) || port <= 0 || port > 65535) {
        fprintf(stderr, "simvm-probe: %s\n", err ? err->message : "--port is required");
        g_clear_error(&err);
        g_option_context_free(ctx);
        return 2;
    }
    g_option_context_free(ctx);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host ? host : "127.0.0.1", &sa.sin_addr) != 1)
        return 2;
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        fprintf(stderr, "simvm-probe: connect: %s\n", strerror(errno));
        return 3;
    }
    r = ddm_jdwp_reader_new(0);
    ddm_jdwp_reader_expect_handshake(r);
    if (send_all(fd, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN) < 0)
        return 3;
    ddm_helo_request(req, 1);
    id = send_chunk(fd, DDM_CHUNK_HELO, req, 4);
    if (wait_reply(fd, r, id, NULL, &pkt) < 0)
        return 3;
    if (pkt.header.error) {
        printf("helo-error=%u\n", pkt.header.error);
        rc = expect_pid >= 0 || expect_app ? 1 : 0;
        goto out;
    }
    if (first_chunk(&pkt, &type, &d, &l) < 0 || type != DDM_CHUNK_HELO || !ddm_helo_parse(d, l, &helo)) {
        fprintf(stderr, "simvm-probe: bad HELO reply\n");
        return 3;
    }
    printf("pid=%u\napp=%s\nvm=%s\nuser=%d\nabi=%s\npackage=%s\n", helo.pid, helo.app_name, helo.vm_ident,
           helo.user_id, helo.abi ? helo.abi : "", helo.package_name ? helo.package_name : "");
    if (expect_pid >= 0 && helo.pid != (uint32_t)expect_pid) {
        fprintf(stderr, "simvm-probe: pid %u, expected %d\n", helo.pid, expect_pid);
        rc = 1;
    }
    if (expect_app && strcmp(helo.app_name, expect_app) != 0) {
        fprintf(stderr, "simvm-probe: app %s, expected %s\n", helo.app_name, expect_app);
        rc = 1;
    }
    ddm_helo_clear(&helo);
    g_free(d);
    d = NULL;
    if (feat) {
        char **names;
        id = send_chunk(fd, DDM_CHUNK_FEAT, NULL, 0);
        if (wait_reply(fd, r, id, NULL, &pkt) < 0 || first_chunk(&pkt, &type, &d, &l) < 0)
            return 3;
        names = ddm_feat_parse(d, l);
        printf("features=%u\n", names ? g_strv_length(names) : 0);
        g_strfreev(names);
        g_free(d);
        d = NULL;
    }
    if (gc_ms > 0) {
        GHashTable *ev = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        GHashTableIter it;
        gpointer k, v;
        uint8_t when = 3, hpsg[2] = { 1, 0 };
        uint32_t sync;
        send_chunk(fd, DDM_CHUNK('H', 'P', 'I', 'F'), &when, 1);
        send_chunk(fd, DDM_CHUNK('H', 'P', 'S', 'G'), hpsg, 2);
        send_chunk(fd, DDM_CHUNK('H', 'P', 'G', 'C'), NULL, 0);
        /* FEAT is always answered: its reply marks the end of the GC's events */
        sync = send_chunk(fd, DDM_CHUNK_FEAT, NULL, 0);
        if (wait_reply(fd, r, sync, ev, &pkt) < 0)
            return 3;
        g_hash_table_iter_init(&it, ev);
        while (g_hash_table_iter_next(&it, &k, &v))
            printf("event.%s=%d\n", (char *)k, GPOINTER_TO_INT(v));
        g_hash_table_destroy(ev);
    }
    if (exit_status >= 0) {
        uint8_t st[4];
        ddm_put_u4(st, (uint32_t)exit_status);
        send_chunk(fd, DDM_CHUNK('E', 'X', 'I', 'T'), st, 4);
        /* the VM halts: the connection must drop */
        while (next_packet(fd, r, &pkt) == 0)
            ;
        printf("exit=closed\n");
    }
out:
    ddm_jdwp_reader_free(r);
    close(fd);
    g_free(host);
    g_free(expect_app);
    return rc;
}
