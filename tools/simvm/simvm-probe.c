/* SPDX-License-Identifier: Apache-2.0
 *
 * simvm-probe: a tiny JDWP/DDM client for smoke tests (no python needed).
 * Connects to HOST:PORT, sends the handshake in one write, waits for the
 * echo (discarding packets that race ahead of it), sends HELO and prints
 * the reply as key=value; optionally FEAT, any DDM requests (--request
 * TYPE[:HEX], answered or not: a FEAT sent after them marks the end),
 * plain JDWP commands, a GC with segments, a quiet period counting
 * events, or EXIT.
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

#include "core/wire/ddm.h"
#include "core/wire/jdwp.h"

static int timeout_ms = 5000;
static uint32_t next_id = 0x40000000u;
static int expect_close; /* after EXIT: EOF is the expected outcome */

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
        if (!expect_close)
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

static void count_event(GHashTable *events, const DdmJdwpPacket *pkt)
{
    uint32_t type;
    uint8_t *d;
    size_t l;
    char name[5];

    if (first_chunk(pkt, &type, &d, &l) != 0)
        return;
    ddm_chunk_name(type, name);
    g_hash_table_insert(events, g_strdup(name),
                        GINT_TO_POINTER(GPOINTER_TO_INT(g_hash_table_lookup(events, name)) + 1));
    g_free(d);
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
        if (!ddm_jdwp_is_reply(&pkt.header) && events)
            count_event(events, &pkt);
    }
    return -1;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* "TYPE" or "TYPE:HEX" -> type and payload (g_free). */
static int parse_request(const char *spec, uint32_t *type, uint8_t **data, size_t *len)
{
    const char *hex = strchr(spec, ':');
    char name[5] = { 0 };
    size_t i, n;

    if ((hex ? (size_t)(hex - spec) : strlen(spec)) != 4)
        return -1;
    memcpy(name, spec, 4);
    *type = ddm_chunk_from_name(name);
    n = hex ? strlen(hex + 1) : 0;
    if (!*type || n % 2)
        return -1;
    *data = g_malloc(n / 2 + 1);
    for (i = 0; i < n / 2; i++) {
        int hi = hexval(hex[1 + 2 * i]), lo = hexval(hex[2 + 2 * i]);
        if (hi < 0 || lo < 0) {
            g_free(*data);
            return -1;
        }
        (*data)[i] = (uint8_t)(hi << 4 | lo);
    }
    *len = n / 2;
    return 0;
}

/* Print what a reply said: "reply.I.TYPE=..." */
static void print_reply(unsigned i, const char *what, const DdmJdwpPacket *pkt)
{
    uint32_t type, code;
    uint8_t *d;
    size_t l;
    char name[5];
    char *msg;

    if (!pkt) {
        printf("reply.%u.%s=none\n", i, what);
        return;
    }
    if (pkt->header.error) {
        printf("reply.%u.%s=error:%u\n", i, what, pkt->header.error);
        return;
    }
    if (pkt->data_len == 0) {
        printf("reply.%u.%s=empty\n", i, what);
        return;
    }
    if (strncmp(what, "jdwp", 4) == 0) {
        printf("reply.%u.%s=ok:%zu\n", i, what, pkt->data_len);
        return;
    }
    if (first_chunk(pkt, &type, &d, &l) != 0) {
        printf("reply.%u.%s=bytes:%zu\n", i, what, pkt->data_len);
        return;
    }
    ddm_chunk_name(type, name);
    if (type == DDM_CHUNK_FAIL && ddm_fail_parse(d, l, &code, &msg)) {
        printf("reply.%u.%s=FAIL:%u:%s\n", i, what, code, msg);
        g_free(msg);
    } else if (type == DDM_CHUNK('T', 'H', 'S', 'T') && l >= 4) {
        printf("reply.%u.%s=THST:%u\n", i, what, (unsigned)(d[2] << 8 | d[3]));
    } else {
        printf("reply.%u.%s=%s:%zu\n", i, what, name, l);
    }
    g_free(d);
}

int main(int argc, char **argv)
{
    char *host = NULL, *expect_app = NULL;
    int port = 0, expect_pid = -1, feat = 0, gc_ms = 0, exit_status = -1, rc = 0, fd = -1, listen_ms = 0;
    char **requests = NULL, **jdwp = NULL;
    GOptionEntry entries[] = {
        { "host", 'H', 0, G_OPTION_ARG_STRING, &host, "Host (default 127.0.0.1)", "ADDR" },
        { "port", 'p', 0, G_OPTION_ARG_INT, &port, "Port", "PORT" },
        { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout_ms, "I/O timeout (default 5000)", "MS" },
        { "expect-pid", 0, 0, G_OPTION_ARG_INT, &expect_pid, "Fail unless HELO says this pid", "PID" },
        { "expect-app", 0, 0, G_OPTION_ARG_FILENAME, &expect_app, "Fail unless HELO says this app (UTF-8 bytes, whatever the locale)", "NAME" },
        { "feat", 0, 0, G_OPTION_ARG_NONE, &feat, "Also ask FEAT", NULL },
        { "gc", 0, 0, G_OPTION_ARG_INT, &gc_ms, "Enable HPIF+HPSG, HPGC, count events for MS", "MS" },
        { "request", 'r', 0, G_OPTION_ARG_STRING_ARRAY, &requests,
          "Send a DDM request TYPE or TYPE:HEXPAYLOAD (repeatable); prints reply.N.TYPE=...", "SPEC" },
        { "jdwp", 'j', 0, G_OPTION_ARG_STRING_ARRAY, &jdwp, "Send plain JDWP command SET/CMD (repeatable)", "S/C" },
        { "listen", 'l', 0, G_OPTION_ARG_INT, &listen_ms, "Then count events for MS (event.TYPE=n)", "MS" },
        { "exit", 0, 0, G_OPTION_ARG_INT, &exit_status, "Send EXIT(status) at the end", "STATUS" },
        { NULL, 0, 0, 0, NULL, NULL, NULL }
    };
    GOptionContext *ctx = g_option_context_new("- talk JDWP/DDM to one VM");
    GError *err = NULL;
    struct sockaddr_in sa;
    DdmJdwpReader *r = NULL;
    DdmJdwpPacket pkt;
    uint8_t req[4];
    uint32_t id, type;
    uint8_t *d = NULL;
    size_t l;
    DdmHelo helo;
    GHashTable *ev = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GHashTableIter it;
    gpointer k, v;

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
    if (inet_pton(AF_INET, host ? host : "127.0.0.1", &sa.sin_addr) != 1) {
        rc = 2;
        goto out;
    }
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        fprintf(stderr, "simvm-probe: connect: %s\n", strerror(errno));
        rc = 3;
        goto out;
    }
    r = ddm_jdwp_reader_new(0);
    ddm_jdwp_reader_expect_handshake(r);
    if (send_all(fd, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN) < 0) {
        rc = 3;
        goto out;
    }
    ddm_helo_request(req, 1);
    id = send_chunk(fd, DDM_CHUNK_HELO, req, 4);
    if (wait_reply(fd, r, id, ev, &pkt) < 0) {
        rc = 3;
        goto out;
    }
    if (pkt.header.error) {
        printf("helo-error=%u\n", pkt.header.error);
        rc = expect_pid >= 0 || expect_app ? 1 : 0;
        goto out;
    }
    if (first_chunk(&pkt, &type, &d, &l) < 0 || type != DDM_CHUNK_HELO || !ddm_helo_parse(d, l, &helo)) {
        fprintf(stderr, "simvm-probe: bad HELO reply\n");
        rc = 3;
        goto out;
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
        if (wait_reply(fd, r, id, ev, &pkt) < 0 || first_chunk(&pkt, &type, &d, &l) < 0) {
            rc = 3;
            goto out;
        }
        names = ddm_feat_parse(d, l);
        printf("features=%u\n", names ? g_strv_length(names) : 0);
        g_strfreev(names);
        g_free(d);
        d = NULL;
    }
    if (requests || jdwp || listen_ms > 0) {
        guint n = requests ? g_strv_length(requests) : 0, m = jdwp ? g_strv_length(jdwp) : 0, i;
        uint32_t *ids = g_new0(uint32_t, n + m + 1), sync;
        int lost = 0; /* the connection failed before FEAT's reply */

        for (i = 0; i < n; i++) {
            uint8_t *payload;
            size_t plen;
            uint32_t rtype;
            if (parse_request(requests[i], &rtype, &payload, &plen) < 0) {
                fprintf(stderr, "simvm-probe: bad request spec %s\n", requests[i]);
                g_free(ids);
                rc = 2;
                goto out;
            }
            ids[i] = send_chunk(fd, rtype, payload, plen);
            g_free(payload);
        }
        for (i = 0; i < m; i++) {
            unsigned set = 0, cmd = 0;
            size_t plen;
            uint8_t *raw;
            if (sscanf(jdwp[i], "%u/%u", &set, &cmd) != 2 || set > 255 || cmd > 255) {
                g_free(ids);
                rc = 2;
                goto out;
            }
            ids[n + i] = next_id++;
            raw = ddm_jdwp_build_command(ids[n + i], (uint8_t)set, (uint8_t)cmd, NULL, 0, &plen);
            int sent = send_all(fd, raw, plen);
            g_free(raw);
            if (sent < 0) {
                g_free(ids);
                rc = 3;
                goto out;
            }
        }
        /* FEAT is always answered, and in order: its reply ends the wait */
        sync = send_chunk(fd, DDM_CHUNK_FEAT, NULL, 0);
        {
            DdmJdwpPacket *got = g_new0(DdmJdwpPacket, n + m);
            GPtrArray *keep = g_ptr_array_new_with_free_func(g_free);
            gboolean *seen = g_new0(gboolean, n + m + 1);
            for (;;) {
                if (next_packet(fd, r, &pkt) < 0) {
                    lost = 1;
                    break;
                }
                if (!ddm_jdwp_is_reply(&pkt.header)) {
                    count_event(ev, &pkt);
                    continue;
                }
                if (pkt.header.id == sync)
                    break;
                for (i = 0; i < n + m; i++)
                    if (pkt.header.id == ids[i] && !seen[i]) {
                        uint8_t *copy = g_memdup(pkt.bytes, (guint)pkt.len);
                        g_ptr_array_add(keep, copy);
                        got[i] = pkt;
                        got[i].bytes = copy;
                        got[i].data = copy + DDM_JDWP_HEADER_LEN;
                        seen[i] = TRUE;
                    }
            }
            for (i = 0; !lost && i < n + m; i++) {
                char what[16];
                if (i < n)
                    g_snprintf(what, sizeof what, "%.4s", requests[i]);
                else
                    g_snprintf(what, sizeof what, "jdwp%s", jdwp[i - n]);
                g_strdelimit(what, "/", '_');
                print_reply(i + 1, what, seen[i] ? &got[i] : NULL);
            }
            g_free(got);
            g_free(seen);
            g_ptr_array_free(keep, TRUE);
        }
        if (lost) {
            g_free(ids);
            rc = 3;
            goto out;
        }
        if (listen_ms > 0) {
            gint64 end = g_get_monotonic_time() + (gint64)listen_ms * 1000;
            int saved = timeout_ms;
            while (g_get_monotonic_time() < end) {
                timeout_ms = (int)MAX(1, (end - g_get_monotonic_time()) / 1000);
                if (ddm_jdwp_reader_pending(r) == 0) {
                    struct pollfd pf = { fd, POLLIN, 0 };
                    if (poll(&pf, 1, timeout_ms) <= 0)
                        break;
                }
                if (next_packet(fd, r, &pkt) < 0)
                    break;
                if (!ddm_jdwp_is_reply(&pkt.header))
                    count_event(ev, &pkt);
            }
            timeout_ms = saved;
        }
        g_free(ids);
    }
    if (gc_ms > 0) {
        uint8_t when = 3, hpsg[2] = { 1, 0 };
        uint32_t sync;
        send_chunk(fd, DDM_CHUNK('H', 'P', 'I', 'F'), &when, 1);
        send_chunk(fd, DDM_CHUNK('H', 'P', 'S', 'G'), hpsg, 2);
        send_chunk(fd, DDM_CHUNK('H', 'P', 'G', 'C'), NULL, 0);
        /* FEAT is always answered: its reply marks the end of the GC's events */
        sync = send_chunk(fd, DDM_CHUNK_FEAT, NULL, 0);
        if (wait_reply(fd, r, sync, ev, &pkt) < 0) {
            rc = 3;
            goto out;
        }
    }
    g_hash_table_iter_init(&it, ev);
    while (g_hash_table_iter_next(&it, &k, &v))
        printf("event.%s=%d\n", (char *)k, GPOINTER_TO_INT(v));
    if (exit_status >= 0) {
        uint8_t st[4];
        ddm_put_u4(st, (uint32_t)exit_status);
        send_chunk(fd, DDM_CHUNK('E', 'X', 'I', 'T'), st, 4);
        /* the VM halts: the connection must drop */
        expect_close = 1;
        while (next_packet(fd, r, &pkt) == 0)
            ;
        printf("exit=closed\n");
    }
out:
    ddm_jdwp_reader_free(r);
    if (fd >= 0)
        close(fd);
    g_free(d);
    g_free(host);
    g_free(expect_app);
    g_strfreev(requests);
    g_hash_table_destroy(ev);
    g_strfreev(jdwp);
    return rc;
}
