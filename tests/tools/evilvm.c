/* SPDX-License-Identifier: Apache-2.0
 *
 * evilvm: a scriptable hostile VM for the hostile-peer tests and
 * bench/hostile.sh. It listens like a VM (a JDWP port the local scan or
 * --connect finds), and on each connection ddmon makes it plays the steps
 * given on the command line, in order, then closes (and plays them again
 * on the next connection, unless --once). Between steps, and while a step
 * waits, it answers what ddmon asks the way a Dalvik VM would
 * (VirtualMachine.Version says Dalvik, HELO names --pid and --app, FEAT
 * lists nothing, other DDM requests get an empty reply, unless `reply` set
 * an answer), so the attack lands on a VM ddmon took as READY. Blocking
 * I/O: this is a test tool, not ddmon.
 *
 *   evilvm [--port P] [--port-file FILE] [--pid N] [--app NAME] [--once] STEP...
 *
 * --port 0 (the default) lets the kernel choose; FILE gets one line
 * "PID PORT APP evil" (the layout of ddmon-simvm's port file) once it listens.
 * One line per step on stdout, "conn C step I NAME ok|gone", flushed, so
 * a test can wait for an attack to have been sent.
 *
 * Steps (sizes take a K or M suffix: KiB, MiB):
 *   handshake           read "JDWP-Handshake" and echo it
 *   greet               handshake, then answer until HELO and FEAT were answered
 *   helo-huge           from now on the HELO reply claims 0x7FFFFFFF UTF-16
 *                       units for the VM ident and the app name
 *   serve MS            answer requests for MS milliseconds
 *   hold                answer requests until ddmon closes the connection
 *   silent MS           read nothing, answer nothing, for MS
 *   send TYPE GEN...    a DDM event (0xC7/1 from the VM) with one TYPE chunk
 *   zsend TYPE GEN...   the same chunk inside a ZLIB chunk
 *   reply TYPE GEN...   answer DDM requests of TYPE with this payload from now on
 *   header LEN [N]      a JDWP command header claiming LEN bytes (any u4:
 *                       0xFFFFFFFF, 0, 11...), then N zero bytes (default 0;
 *                       N < LEN - 11 is a claim never completed)
 *   overrun             a DDM packet whose chunk claims 4096 bytes more than
 *                       the packet holds
 *   zbomb-size          a ZLIB chunk whose inner header declares 4 GiB - 1
 *                       bytes of HPIF (a small deflate stream follows)
 *   zbomb-lie SIZE      a ZLIB chunk declaring 16 bytes of THST whose stream
 *                       inflates to SIZE zero bytes
 *   flood N             N small DDM events (chunk EVIL, 8 bytes) back to back
 *   apnm-flood N LEN    N APNM renames, each name LEN characters and distinct
 *   half                half of a DDM packet, then close
 *   close               close the connection (ends this connection's script)
 * Payload generators (GEN):
 *   ff LEN              LEN bytes of 0xFF: every count and length at its maximum
 *   hex HEX             these bytes
 *   feat N              a FEAT reply of N empty names (4 + 4N bytes); N above
 *                       1,073,741,818 (no longer one JDWP packet) is refused
 *   zero LEN            LEN zero bytes
 *   thst N [asc|desc]   a valid THST (real form, 18-byte entries) of N threads,
 *                       ids N..1 (desc, default) or 1..N (asc); status and
 *                       CPU ticks change with every table sent
 *   nhgt SIZE [KEYS]    a valid v2 NHGT (8-byte pointers, 4 frames, 48-byte
 *                       records) of about SIZE bytes; records cycle through
 *                       KEYS distinct sizes and backtraces (default 1)
 *   apnm LEN            an APNM renaming the app to LEN 'x' characters
 *   thcr ID LEN         THCR (thread ID named by LEN 'T' characters)
 *   version-bad         (reply 1/1 only) a VirtualMachine.Version reply
 *                       whose first string claims 0xFFFFFFF0 bytes
 * Exit status: 0 when the listener worked (a connection that went away is
 * not an error: ddmon closing a bad VM is what the tests expect), 1 on a
 * usage or listener error.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <glib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/wire/ddm.h"
#include "rawio.h"

#define HANDSHAKE "JDWP-Handshake"
#define HLEN 14
#define EVIL_MAX_KEEP (1u << 20) /* request bodies past this are skipped, not kept */

typedef struct {
    uint32_t type;
    GBytes *payload; /* NULL: an empty reply */
} Answer;

static int fd = -1;
static uint32_t next_id = 0x40000000u;
static unsigned conn_no;
static int helo_huge;
static unsigned pid_opt;
static const char *app_opt = "evil";
static GArray *answers; /* Answer */
static GBytes *version_answer;
static unsigned serial; /* changes THST contents from one table to the next */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void put_u1(GByteArray *b, uint8_t v) { g_byte_array_append(b, &v, 1); }
static void put_u2(GByteArray *b, uint16_t v)
{
    uint8_t p[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    g_byte_array_append(b, p, 2);
}
static void put_u4(GByteArray *b, uint32_t v)
{
    uint8_t p[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    g_byte_array_append(b, p, 4);
}
static void put_le(GByteArray *b, uint64_t v, unsigned w)
{
    uint8_t p[8];
    unsigned i;
    for (i = 0; i < w; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    g_byte_array_append(b, p, w);
}
/* u4 units then UTF-16BE of ASCII @s repeated to @units characters. */
static void put_str16_fill(GByteArray *b, char c, uint32_t units)
{
    uint32_t i;
    for (i = 0; i < units; i++) {
        put_u1(b, 0);
        put_u1(b, (uint8_t)c);
    }
}
static void put_str16(GByteArray *b, const char *s)
{
    for (; *s; s++) {
        put_u1(b, 0);
        put_u1(b, (uint8_t)*s);
    }
}

static int send_packet(uint32_t id, uint8_t flags, uint8_t a, uint8_t b, const void *data,
                       size_t len)
{
    uint8_t h[11];
    uint32_t total = (uint32_t)(11 + len);
    h[0] = (uint8_t)(total >> 24); h[1] = (uint8_t)(total >> 16);
    h[2] = (uint8_t)(total >> 8); h[3] = (uint8_t)total;
    h[4] = (uint8_t)(id >> 24); h[5] = (uint8_t)(id >> 16); h[6] = (uint8_t)(id >> 8); h[7] = (uint8_t)id;
    h[8] = flags; h[9] = a; h[10] = b; /* a reply's error code is a, b */
    if (raw_write_all(fd, h, sizeof h) < 0)
        return -1;
    return len ? raw_write_all(fd, data, len) : 0;
}

static int send_reply(uint32_t id, const void *data, size_t len)
{
    return send_packet(id, 0x80, 0, 0, data, len);
}

/* A reply carrying one chunk @type (none when @payload is NULL). */
static int send_chunk_reply(uint32_t id, uint32_t type, const void *payload, size_t len)
{
    GByteArray *b = g_byte_array_new();
    int r;
    if (payload) {
        put_u4(b, type);
        put_u4(b, (uint32_t)len);
        g_byte_array_append(b, payload, (guint)len);
    }
    r = send_reply(id, b->data, b->len);
    g_byte_array_unref(b);
    return r;
}

static int send_event(uint32_t type, const void *payload, size_t len)
{
    GByteArray *b = g_byte_array_sized_new((guint)(len + 8));
    int r;
    put_u4(b, type);
    put_u4(b, (uint32_t)len);
    g_byte_array_append(b, payload, (guint)len);
    r = send_packet(next_id++, 0, 0xC7, 1, b->data, b->len);
    g_byte_array_unref(b);
    return r;
}

static int send_helo(uint32_t id)
{
    GByteArray *b = g_byte_array_new();
    const char *ident = "Dalvik v1.6.0 (evil)";
    int r;
    put_u4(b, 1);
    put_u4(b, pid_opt);
    put_u4(b, helo_huge ? 0x7FFFFFFFu : (uint32_t)strlen(ident));
    put_u4(b, helo_huge ? 0x7FFFFFFFu : (uint32_t)strlen(app_opt));
    put_str16(b, ident);
    put_str16(b, app_opt);
    r = send_chunk_reply(id, DDM_CHUNK('H', 'E', 'L', 'O'), b->data, b->len);
    g_byte_array_unref(b);
    return r;
}

static int send_version(uint32_t id)
{
    GByteArray *b;
    static const char *const s[] = {"Dalvik (evil)", "1.6.0", "Dalvik"};
    int r;
    if (version_answer)
        return send_reply(id, g_bytes_get_data(version_answer, NULL),
                          g_bytes_get_size(version_answer));
    b = g_byte_array_new();
    put_u4(b, (uint32_t)strlen(s[0]));
    g_byte_array_append(b, (const guint8 *)s[0], (guint)strlen(s[0]));
    put_u4(b, 1);
    put_u4(b, 6);
    put_u4(b, (uint32_t)strlen(s[1]));
    g_byte_array_append(b, (const guint8 *)s[1], (guint)strlen(s[1]));
    put_u4(b, (uint32_t)strlen(s[2]));
    g_byte_array_append(b, (const guint8 *)s[2], (guint)strlen(s[2]));
    r = send_reply(id, b->data, b->len);
    g_byte_array_unref(b);
    return r;
}

/* Answer one command from ddmon. *@got gets the DDM type asked (0 if none). */
static int answer(uint32_t id, uint8_t cmdset, uint8_t cmd, const uint8_t *body, size_t len,
                  uint32_t *got)
{
    guint i;
    uint32_t type;
    *got = 0;
    if (cmdset == 1 && cmd == 1)
        return send_version(id);
    if (cmdset != 0xC7 || cmd != 1)
        return send_reply(id, NULL, 0);
    if (len < 8)
        return send_chunk_reply(id, 0, NULL, 0);
    type = ((uint32_t)body[0] << 24) | ((uint32_t)body[1] << 16) | ((uint32_t)body[2] << 8) | body[3];
    *got = type;
    if (type == DDM_CHUNK('H', 'E', 'L', 'O'))
        return send_helo(id);
    for (i = 0; i < answers->len; i++) {
        Answer *a = &g_array_index(answers, Answer, i);
        if (a->type == type) {
            size_t n = 0;
            const void *p = g_bytes_get_data(a->payload, &n);
            return send_chunk_reply(id, type, p ? p : "", n);
        }
    }
    if (type == DDM_CHUNK('F', 'E', 'A', 'T')) { /* unless `reply FEAT` set another */
        uint8_t zero[4] = {0};
        return send_chunk_reply(id, type, zero, 4);
    }
    return send_chunk_reply(id, 0, NULL, 0);
}

/* Answer commands until @deadline_ms (monotonic) or, when @want_helo, until
 * HELO and FEAT were answered. 0, or -1 when the peer went away. */
static int serve_until(uint64_t deadline_ms, int want_helo)
{
    int helo = 0, feat = 0;
    uint8_t *body = g_malloc(EVIL_MAX_KEEP);
    int rc = 0;
    for (;;) {
        uint8_t h[11];
        uint64_t now = now_ms();
        uint32_t len, id, got;
        size_t blen, keep;
        int r;
        if (want_helo && helo && feat)
            break;
        if (now >= deadline_ms)
            break;
        r = raw_read_all(fd, h, 1, (int)(deadline_ms - now));
        if (r == -2)
            break;
        if (r == 0)
            r = raw_read_all(fd, h + 1, 10, 10000);
        if (r) {
            rc = -1;
            break;
        }
        len = ((uint32_t)h[0] << 24) | ((uint32_t)h[1] << 16) | ((uint32_t)h[2] << 8) | h[3];
        id = ((uint32_t)h[4] << 24) | ((uint32_t)h[5] << 16) | ((uint32_t)h[6] << 8) | h[7];
        blen = len > 11 ? len - 11 : 0;
        keep = blen < EVIL_MAX_KEEP ? blen : EVIL_MAX_KEEP;
        if (raw_read_all(fd, body, keep, 10000)) {
            rc = -1;
            break;
        }
        for (size_t left = blen - keep; left;) { /* skip the rest */
            uint8_t sink[65536];
            size_t n = left < sizeof sink ? left : sizeof sink;
            if (raw_read_all(fd, sink, n, 10000)) {
                rc = -1;
                goto out;
            }
            left -= n;
        }
        if (h[8] & 0x80)
            continue; /* a reply from ddmon */
        if (answer(id, h[9], h[10], body, keep, &got) < 0) {
            rc = -1;
            break;
        }
        if (got == DDM_CHUNK('H', 'E', 'L', 'O'))
            helo = 1;
        if (got == DDM_CHUNK('F', 'E', 'A', 'T'))
            feat = 1;
    }
out:
    g_free(body);
    return rc;
}

static int do_handshake(void)
{
    char hs[HLEN];
    if (raw_read_all(fd, hs, HLEN, 10000) || memcmp(hs, HANDSHAKE, HLEN))
        return -1;
    return raw_write_all(fd, HANDSHAKE, HLEN);
}

static uint64_t parse_size(const char *s)
{
    char *end;
    uint64_t v = g_ascii_strtoull(s, &end, 0); /* G_MAXUINT64 when too large */
    unsigned shift = (*end == 'K' || *end == 'k') ? 10 : (*end == 'M' || *end == 'm') ? 20 : 0;
    return v > (G_MAXUINT64 >> shift) ? G_MAXUINT64 : v << shift; /* saturates, never wraps */
}

static uint32_t parse_type(const char *s)
{
    if (strlen(s) != 4) {
        fprintf(stderr, "evilvm: chunk type '%s' is not 4 characters\n", s);
        exit(1);
    }
    return DDM_CHUNK(s[0], s[1], s[2], s[3]);
}

static GBytes *gen_thst(uint32_t n, int desc)
{
    GByteArray *b = g_byte_array_sized_new(4 + 18 * n);
    uint32_t i;
    serial++;
    put_u1(b, 4);
    put_u1(b, 18);
    put_u2(b, (uint16_t)n);
    for (i = 0; i < n; i++) {
        uint32_t id = desc ? n - i : i + 1;
        put_u4(b, id);
        put_u1(b, (uint8_t)(1 + (id + serial) % 5));
        put_u4(b, 1000 + id);
        put_u4(b, serial * 3 + id % 7);
        put_u4(b, serial + id % 3);
        put_u1(b, id % 2);
    }
    return g_byte_array_free_to_bytes(b);
}

static GBytes *gen_nhgt(uint64_t size, uint64_t keys)
{
    const unsigned w = 8, frames = 4, stride = (2 + frames) * w;
    const size_t header = 8 + 5 * w;
    uint64_t n = size > header ? (size - header) / stride : 0, i;
    GByteArray *b = g_byte_array_sized_new((guint)(header + n * stride));
    if (!keys)
        keys = 1;
    put_le(b, 0x812345DDu, 4);
    put_le(b, 2, 2);
    put_le(b, w, 2);
    put_le(b, 0, w);          /* mapSize */
    put_le(b, n * stride, w); /* allocSize */
    put_le(b, stride, w);     /* allocInfoSize */
    put_le(b, n * 64, w);     /* totalMemory */
    put_le(b, frames, w);     /* backtraceSize */
    for (i = 0; i < n; i++) {
        uint64_t k = i % keys, f;
        put_le(b, 16 + 16 * k, w);
        put_le(b, 1, w);
        for (f = 0; f < frames; f++)
            put_le(b, 0x7000000000ull + 0x1000 * f + k, w);
    }
    return g_byte_array_free_to_bytes(b);
}

static GBytes *gen_apnm(uint32_t len)
{
    GByteArray *b = g_byte_array_sized_new(len * 2 + 16);
    static unsigned n;
    char tag[16];
    int t = snprintf(tag, sizeof tag, "%u", n++);
    put_u4(b, len);
    put_str16(b, tag);
    put_str16_fill(b, 'x', len > (uint32_t)t ? len - (uint32_t)t : 0);
    put_u4(b, 0);
    put_u4(b, 0); /* no package name */
    return g_byte_array_free_to_bytes(b);
}

/* The most names `feat N` makes: 4 + 4N payload bytes, a chunk header (8)
 * and a JDWP header (11) within a u4 packet length. */
#define FEAT_NAMES_MAX ((UINT32_MAX - 11u - 8u - 4u) / 4u)

/* A payload from argv[*i...]; advances *i past what it used. */
static GBytes *gen(char **argv, int argc, int *i)
{
    const char *g = *i < argc ? argv[(*i)++] : "";
#define ARG(def) (*i < argc ? argv[(*i)++] : (def))
    if (!strcmp(g, "ff") || !strcmp(g, "zero")) {
        uint64_t n = parse_size(ARG("64"));
        uint8_t *p = g_malloc((gsize)n ? (gsize)n : 1);
        memset(p, g[0] == 'f' ? 0xFF : 0, (size_t)n);
        return g_bytes_new_take(p, (gsize)n);
    }
    if (!strcmp(g, "feat")) { /* u4 N, then N empty lstrs */
        const char *arg = ARG("1000");
        uint64_t n = parse_size(arg);
        size_t len;
        if (n > FEAT_NAMES_MAX) { /* N's count is a u4, and the reply one JDWP packet */
            fprintf(stderr,
                    "evilvm: feat %s: at most %u names (4 + 4N bytes must fit one JDWP "
                    "packet, whose length is a u4)\n",
                    arg, (unsigned)FEAT_NAMES_MAX);
            exit(1);
        }
        len = 4 + (size_t)n * 4;
        uint8_t *p = g_malloc0(len);
        p[0] = (uint8_t)(n >> 24);
        p[1] = (uint8_t)(n >> 16);
        p[2] = (uint8_t)(n >> 8);
        p[3] = (uint8_t)n;
        return g_bytes_new_take(p, len);
    }
    if (!strcmp(g, "hex")) {
        const char *h = ARG("");
        size_t n = strlen(h) / 2, k;
        uint8_t *p = g_malloc(n ? n : 1);
        for (k = 0; k < n; k++)
            p[k] = (uint8_t)(g_ascii_xdigit_value(h[2 * k]) << 4 | g_ascii_xdigit_value(h[2 * k + 1]));
        return g_bytes_new_take(p, n);
    }
    if (!strcmp(g, "thst")) {
        uint32_t n = (uint32_t)parse_size(ARG("100"));
        const char *order = (*i < argc && (!strcmp(argv[*i], "asc") || !strcmp(argv[*i], "desc")))
                                ? argv[(*i)++] : "desc";
        return gen_thst(n > 65535 ? 65535 : n, strcmp(order, "asc") != 0);
    }
    if (!strcmp(g, "nhgt")) {
        uint64_t size = parse_size(ARG("1M"));
        uint64_t keys = (*i < argc && g_ascii_isdigit(argv[*i][0])) ? parse_size(argv[(*i)++]) : 1;
        return gen_nhgt(size, keys);
    }
    if (!strcmp(g, "apnm"))
        return gen_apnm((uint32_t)parse_size(ARG("16")));
    if (!strcmp(g, "thcr")) {
        uint32_t id = (uint32_t)parse_size(ARG("1"));
        uint32_t len = (uint32_t)parse_size(ARG("8"));
        GByteArray *b = g_byte_array_new();
        put_u4(b, id);
        put_u4(b, len);
        put_str16_fill(b, 'T', len);
        return g_byte_array_free_to_bytes(b);
    }
    if (!strcmp(g, "version-bad")) {
        GByteArray *b = g_byte_array_new();
        put_u4(b, 0xFFFFFFF0u);
        g_byte_array_append(b, (const guint8 *)"Dalvik", 6);
        return g_byte_array_free_to_bytes(b);
    }
#undef ARG
    fprintf(stderr, "evilvm: unknown payload generator '%s'\n", g);
    exit(1);
}

/* ZLIB chunk payload around @type/@data (the outer chunk is built by send_event). */
static GBytes *zlib_wrap(uint32_t type, GBytes *inner)
{
    size_t n = 0, zn = 0;
    const void *p = g_bytes_get_data(inner, &n);
    uint8_t *z = ddm_zlib_deflate(type, p ? p : "", n, &zn);
    if (!z) {
        fprintf(stderr, "evilvm: deflate failed\n");
        exit(1);
    }
    return g_bytes_new_take(z, zn);
}

/* Play one step; *@i points past it afterwards. 0 ok, -1 peer gone, 1 closed on purpose. */
static int step(char **argv, int argc, int *i)
{
    const char *s = argv[(*i)++];
#define NEXT(def) (*i < argc ? argv[(*i)++] : (def))
    if (!strcmp(s, "handshake"))
        return do_handshake();
    if (!strcmp(s, "greet"))
        return do_handshake() < 0 ? -1 : serve_until(now_ms() + 10000, 1);
    if (!strcmp(s, "helo-huge")) {
        helo_huge = 1;
        return 0;
    }
    if (!strcmp(s, "serve"))
        return serve_until(now_ms() + parse_size(NEXT("1000")), 0);
    if (!strcmp(s, "hold")) {
        while (serve_until(now_ms() + 1000000, 0) == 0)
            ;
        return -1;
    }
    if (!strcmp(s, "silent")) {
        usleep((useconds_t)(parse_size(NEXT("1000")) * 1000));
        return 0;
    }
    if (!strcmp(s, "send") || !strcmp(s, "zsend")) {
        uint32_t type = parse_type(NEXT("EVIL"));
        GBytes *p = gen(argv, argc, i);
        size_t n;
        const void *d;
        int r;
        if (s[0] == 'z') {
            GBytes *z = zlib_wrap(type, p);
            g_bytes_unref(p);
            p = z;
            type = DDM_CHUNK_ZLIB;
        }
        d = g_bytes_get_data(p, &n);
        r = send_event(type, d ? d : "", n);
        g_bytes_unref(p);
        return r;
    }
    if (!strcmp(s, "reply")) {
        const char *t = NEXT("EVIL");
        if (!strcmp(t, "version")) {
            if (version_answer)
                g_bytes_unref(version_answer);
            version_answer = gen(argv, argc, i);
        } else {
            Answer a = {parse_type(t), NULL};
            a.payload = gen(argv, argc, i);
            g_array_prepend_val(answers, a);
        }
        return 0;
    }
    if (!strcmp(s, "header")) {
        uint32_t len = (uint32_t)parse_size(NEXT("0"));
        uint64_t body = parse_size(*i < argc && g_ascii_isdigit(argv[*i][0]) ? argv[(*i)++] : "0");
        uint8_t h[11] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len,
                         0, 0, 0, 7, 0, 0xC7, 1};
        uint8_t zero[65536] = {0};
        if (raw_write_all(fd, h, sizeof h) < 0)
            return -1;
        while (body) {
            size_t n = body < sizeof zero ? (size_t)body : sizeof zero;
            if (raw_write_all(fd, zero, n) < 0)
                return -1;
            body -= n;
        }
        return 0;
    }
    if (!strcmp(s, "overrun")) {
        GByteArray *b = g_byte_array_new();
        int r;
        put_u4(b, DDM_CHUNK('H', 'P', 'I', 'F'));
        put_u4(b, 4 + 4096);
        put_u4(b, 1);
        r = send_packet(next_id++, 0, 0xC7, 1, b->data, b->len);
        g_byte_array_unref(b);
        return r;
    }
    if (!strcmp(s, "zbomb-size") || !strcmp(s, "zbomb-lie")) {
        int lie = s[6] == 'l';
        uint64_t size = lie ? parse_size(NEXT("64M")) : 1024;
        uint8_t *zeros = g_malloc0((gsize)size);
        size_t zn = 0;
        uint8_t *z = ddm_zlib_deflate(lie ? DDM_CHUNK('T', 'H', 'S', 'T') : DDM_CHUNK('H', 'P', 'I', 'F'),
                                      zeros, (size_t)size, &zn);
        int r;
        g_free(zeros);
        /* the inner header's declared size: 4 GiB - 1, or a lying 16 */
        z[4] = lie ? 0 : 0xFF; z[5] = lie ? 0 : 0xFF; z[6] = lie ? 0 : 0xFF; z[7] = lie ? 16 : 0xFF;
        r = send_event(DDM_CHUNK_ZLIB, z, zn);
        g_free(z);
        return r;
    }
    if (!strcmp(s, "flood")) {
        uint64_t n = parse_size(NEXT("10000")), k;
        uint8_t pay[8] = {0};
        for (k = 0; k < n; k++)
            if (send_event(DDM_CHUNK('E', 'V', 'I', 'L'), pay, sizeof pay) < 0)
                return -1;
        return 0;
    }
    if (!strcmp(s, "apnm-flood")) {
        uint64_t n = parse_size(NEXT("100")), k;
        uint32_t len = (uint32_t)parse_size(NEXT("64"));
        for (k = 0; k < n; k++) {
            GBytes *p = gen_apnm(len);
            size_t pn;
            const void *d = g_bytes_get_data(p, &pn);
            int r = send_event(DDM_CHUNK('A', 'P', 'N', 'M'), d, pn);
            g_bytes_unref(p);
            if (r < 0)
                return -1;
        }
        return 0;
    }
    if (!strcmp(s, "half")) {
        uint8_t h[11 + 8] = {0, 0, 0, 11 + 8 + 64, 0, 0, 0, 9, 0, 0xC7, 1, 'T', 'H', 'S', 'T', 0, 0, 0, 64};
        raw_write_all(fd, h, 11 + 4); /* ends inside the chunk header */
        return 1;
    }
    if (!strcmp(s, "close"))
        return 1;
#undef NEXT
    fprintf(stderr, "evilvm: unknown step '%s'\n", s);
    exit(1);
}

/* Check the script before listening: unknown names fail at once. */
static void usage(void)
{
    fprintf(stderr, "usage: evilvm [--port P] [--port-file FILE] [--pid N] [--app NAME] [--once] STEP...\n");
    exit(1);
}

int main(int argc, char **argv)
{
    unsigned port = 0;
    const char *port_file = NULL;
    int once = 0, first, ls;
    struct sockaddr_in a = {0};
    socklen_t alen = sizeof a;
    int one = 1;

    signal(SIGPIPE, SIG_IGN);
    pid_opt = (unsigned)getpid();
    for (first = 1; first < argc && !strncmp(argv[first], "--", 2); first++) {
        const char *o = argv[first];
        if (!strcmp(o, "--once"))
            once = 1;
        else if (first + 1 >= argc)
            usage();
        else if (!strcmp(o, "--port"))
            port = (unsigned)atoi(argv[++first]);
        else if (!strcmp(o, "--port-file"))
            port_file = argv[++first];
        else if (!strcmp(o, "--pid"))
            pid_opt = (unsigned)atoi(argv[++first]);
        else if (!strcmp(o, "--app"))
            app_opt = argv[++first];
        else
            usage();
    }
    answers = g_array_new(FALSE, FALSE, sizeof(Answer));

    ls = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 4) ||
        getsockname(ls, (struct sockaddr *)&a, &alen)) {
        fprintf(stderr, "evilvm: cannot listen on port %u: %s\n", port, strerror(errno));
        return 1;
    }
    if (port_file) {
        char *tmp = g_strdup_printf("%s.tmp", port_file);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%u %u %s evil\n", pid_opt, ntohs(a.sin_port), app_opt) < 0 ||
            fclose(f) || rename(tmp, port_file)) {
            fprintf(stderr, "evilvm: cannot write %s\n", port_file);
            return 1;
        }
        g_free(tmp);
    }
    printf("listening %u\n", ntohs(a.sin_port));
    fflush(stdout);
    for (;;) {
        int i = first, r = 0, k = 0;
        fd = accept(ls, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "evilvm: accept: %s\n", strerror(errno));
            return 1;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn_no++;
        helo_huge = 0; /* the script sets its answers anew on each connection */
        for (guint n = 0; n < answers->len; n++)
            g_bytes_unref(g_array_index(answers, Answer, n).payload);
        g_array_set_size(answers, 0);
        g_clear_pointer(&version_answer, g_bytes_unref);
        while (i < argc && r == 0) {
            const char *name = argv[i];
            r = step(argv, argc, &i);
            printf("conn %u step %d %s %s\n", conn_no, ++k, name, r < 0 ? "gone" : "ok");
            fflush(stdout);
        }
        close(fd);
        fd = -1;
        if (once)
            break;
    }
    return 0;
}
