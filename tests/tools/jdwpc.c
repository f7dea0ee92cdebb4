/* SPDX-License-Identifier: Apache-2.0
 *
 * jdwpc: a scriptable raw-JDWP client for the relay tests and benchmarks.
 * It plays a debugger: handshake, then the steps given on the command line,
 * in order, printing one line per reply or event so shell tests can check
 * them. Blocking I/O is fine here: this is a test tool, not ddmon.
 *
 *   jdwpc HOST:PORT STEP...
 *   id=N              the next command uses packet id N (default: 1, 2, ...)
 *   version           VirtualMachine.Version (1/1): prints "version ID NAME"
 *   idsizes           VirtualMachine.IDSizes (1/7): prints "idsizes ID a b c d e"
 *   ddm TYPE          a DDM request (0xC7/1) with an empty TYPE chunk: prints
 *                     "ddm ID TYPE|empty|error N"
 *   hpds [FILE]       a DDM HPDS request (heap dump, streamed): the VM's HPDS
 *                     event is read in 64 KiB pieces (never held) into FILE
 *                     (default: discarded), then its reply: prints
 *                     "hpds ID BYTES MB_per_s" (time from request to reply;
 *                     the baseline of bench/hprof.sh)
 *   bigstring N       CreateString (1/11) of N bytes, then StringReference.Value
 *                     (10/1) of it: prints "bigstring ID N ok" if it comes back intact
 *   pipeline N        N Version commands written at once, then N replies read
 *   mixed N           one write of N Version commands (11 bytes each; N >= 2)
 *                     with a DDM HELO request (0xC7/1) after the first N/2
 *                     and a Dispose (1/6) last, then every reply read: the
 *                     Versions' and the Dispose's in order, each with its
 *                     own id, the DDM one anywhere (ddmon answers a plain
 *                     JVM's vendor commands itself, at once; JDWP matches
 *                     replies by id): prints "mixed N ddm E dispose E" (E:
 *                     the reply's error code)
 *   events N [MS]     wait for N VM-originated commands (default 5000 ms): "event CMDSET CMD"
 *   noevents MS       fail if any VM-originated command arrives within MS
 *   suspend / resume  VirtualMachine.Suspend (1/8) / Resume (1/9)
 *   dispose           VirtualMachine.Dispose (1/6)
 *   garbage           write bytes that are not a JDWP packet
 *   half              write half of a packet, then close
 *   cut N SIZE        the header of a command (1/1) declaring SIZE payload bytes,
 *                     its first N payload bytes, then close (a debugger that
 *                     leaves in the middle of a long command): "cut N SIZE sent"
 *   sleep MS
 *   waitfile PATH     send nothing until PATH exists (the test creates it
 *                     when it has checked what it wanted; 60 s at most, then
 *                     fail): lets a test look at the "attached, nothing
 *                     sent yet" state without racing a timer
 *   close             close without Dispose
 *   rtt N             N sequential Version round trips; prints "rtt p50_us p99_us"
 *   bulk N SIZE       CreateString (1/11) of SIZE bytes kept from GC (9/7), one
 *                     untimed StringReference.Value (10/1), then N timed reads:
 *                     prints "bulk N SIZE MB_per_s" (reply bytes incl. headers)
 *   storm SECONDS [CLASS]
 *                     EventRequest.Set (15/1) MethodEntry (40), suspendPolicy
 *                     NONE, ClassMatch (modKind 5) CLASS (default "Storm"; an
 *                     argument starting with an upper-case letter or '*'); from
 *                     the first event on, count Event.Composite packets and the
 *                     events in them for SECONDS; then EventRequest.Clear (15/2)
 *                     (events still arriving are discarded): prints
 *                     "storm SECONDS EVENTS_per_s PACKETS_per_s"
 *   stall MS|PATH     the next storm reads nothing for MS after its request is
 *                     set (a debugger that stops reading while events pour in);
 *                     the next bigstring reads the string's value only MS
 *                     after asking for it (a long reply that waits unread).
 *                     With a PATH (not all digits): until PATH exists (60 s
 *                     at most, then fail), so that a test ends the stall when
 *                     it has seen what it waits for, not after a time a
 *                     loaded machine may need more of
 *   blast N SIZE      N commands VirtualMachine.Version (1/1) carrying SIZE
 *                     payload bytes each (byte k of command j = (j + k) % 251),
 *                     written back to back; no reply is read: "blast N SIZE sent"
 * Exit status: 0 when every step succeeded, 1 otherwise (with a message).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rawio.h"

#define HANDSHAKE "JDWP-Handshake"

static int fd = -1;
static uint32_t next_id = 1;
static int forced_id = -1;
static unsigned id_size = 8;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "jdwpc: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void put4(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static uint32_t get4(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void write_all(const void *buf, size_t n)
{
    if (raw_write_all(fd, buf, n) < 0)
        die("write: %s", strerror(errno));
}

typedef struct {
    uint32_t len, id;
    uint8_t flags, cmdset, cmd;
    uint16_t error;
    uint8_t *data;
    size_t data_len;
} Packet;

static int read_packet(Packet *pk, int timeout_ms)
{
    uint8_t h[11];
    int r = raw_read_all(fd, h, 11, timeout_ms);
    if (r)
        return r;
    pk->len = get4(h);
    pk->id = get4(h + 4);
    pk->flags = h[8];
    pk->cmdset = h[9];
    pk->cmd = h[10];
    pk->error = (uint16_t)((h[9] << 8) | h[10]);
    if (pk->len < 11 || pk->len > (512u << 20))
        die("bad packet length from peer");
    pk->data_len = pk->len - 11;
    pk->data = malloc(pk->data_len ? pk->data_len : 1);
    if (raw_read_all(fd, pk->data, pk->data_len, 30000))
        die("short packet from peer");
    return 0;
}

static uint32_t send_cmd(uint8_t cmdset, uint8_t cmd, const void *data, size_t len)
{
    uint32_t id = forced_id >= 0 ? (uint32_t)forced_id : next_id++;
    forced_id = -1;
    uint8_t *pkt = malloc(11 + len);
    put4(pkt, (uint32_t)(11 + len));
    put4(pkt + 4, id);
    pkt[8] = 0;
    pkt[9] = cmdset;
    pkt[10] = cmd;
    if (len)
        memcpy(pkt + 11, data, len);
    write_all(pkt, 11 + len);
    free(pkt);
    return id;
}

static int quiet_events; /* wait_reply discards events instead of printing them */

/* Wait for the reply to @id; events that arrive first are printed. */
static Packet wait_reply(uint32_t id)
{
    for (;;) {
        Packet pk;
        int r = read_packet(&pk, 15000);
        if (r == -2)
            die("no reply within 15 s");
        if (r)
            die("connection closed while waiting for a reply");
        if (pk.flags & 0x80) {
            if (pk.id != id) {
                fprintf(stderr, "jdwpc: reply id %u, expected %u\n", pk.id, id);
                exit(1);
            }
            return pk;
        }
        if (pk.cmdset == 0xC7)
            die("a DDM packet from the VM reached the debugger");
        if (!quiet_events)
            printf("event %u %u\n", pk.cmdset, pk.cmd);
        free(pk.data);
    }
}

/* Ask IDSizes once if no step did: object ids are id_size bytes. */
static void ensure_idsizes(void)
{
    static int known;
    if (known)
        return;
    uint32_t id = send_cmd(1, 7, NULL, 0);
    Packet pk = wait_reply(id);
    if (pk.error || pk.data_len < 20)
        die("IDSizes failed");
    id_size = get4(pk.data + 12);
    if (id_size == 0 || id_size > 8)
        die("unsupported object id size %u", id_size);
    free(pk.data);
    known = 1;
}

/* bulk N SIZE: MB/s of N StringReference.Value replies of a SIZE-byte string. */
static void step_bulk(unsigned n, size_t size)
{
    ensure_idsizes();
    uint8_t *buf = malloc(4 + size);
    if (!buf)
        die("out of memory");
    put4(buf, (uint32_t)size);
    for (size_t k = 0; k < size; k++)
        buf[4 + k] = (uint8_t)('a' + k % 26);
    Packet pk = wait_reply(send_cmd(1, 11, buf, 4 + size));
    free(buf);
    if (pk.error || pk.data_len < id_size)
        die("CreateString failed (error %u)", pk.error);
    uint8_t obj[8];
    memcpy(obj, pk.data, id_size);
    free(pk.data);
    pk = wait_reply(send_cmd(9, 7, obj, id_size)); /* ObjectReference.DisableCollection */
    free(pk.data);
    uint64_t bytes = 0, t0 = 0;
    for (unsigned k = 0; k <= n; k++) {
        if (k == 1)
            t0 = now_us();
        pk = wait_reply(send_cmd(10, 1, obj, id_size));
        if (pk.error || pk.data_len != 4 + size)
            die("StringReference.Value failed (error %u, %zu bytes)", pk.error, pk.data_len);
        if (k)
            bytes += pk.len;
        free(pk.data);
    }
    uint64_t dt = now_us() - t0;
    pk = wait_reply(send_cmd(9, 8, obj, id_size)); /* EnableCollection */
    free(pk.data);
    printf("bulk %u %zu %.1f MB/s\n", n, size, dt ? (double)bytes / (double)dt : 0.0);
}

/* "stall MS|PATH": the next storm stops reading this long (or until PATH
 * exists), or the next bigstring reads its string's reply only after it
 * (whichever comes first takes it). */
static unsigned next_stall_ms;
static const char *next_stall_path;

static void wait_for_file(const char *what, const char *path)
{
    int waited_ms = 0;
    while (access(path, F_OK) != 0) {
        if (waited_ms >= 60000)
            die("%s: %s did not appear within 60 s", what, path);
        usleep(10000);
        waited_ms += 10;
    }
}

static void stall_now(void)
{
    if (next_stall_path)
        wait_for_file("stall", next_stall_path);
    else if (next_stall_ms)
        usleep((useconds_t)next_stall_ms * 1000u);
    next_stall_ms = 0;
    next_stall_path = NULL;
}

/* storm SECONDS CLASS: MethodEntry events per second (see the header). */

static void step_storm(double seconds, const char *cls)
{
    size_t cl = strlen(cls);
    uint8_t *req = malloc(11 + cl);
    req[0] = 40;          /* MethodEntry */
    req[1] = 0;           /* SuspendPolicy NONE */
    put4(req + 2, 1);     /* one modifier */
    req[6] = 5;           /* ClassMatch */
    put4(req + 7, (uint32_t)cl);
    memcpy(req + 11, cls, cl);
    Packet pk = wait_reply(send_cmd(15, 1, req, 11 + cl));
    free(req);
    if (pk.error || pk.data_len < 4)
        die("EventRequest.Set failed (error %u)", pk.error);
    uint32_t request_id = get4(pk.data);
    free(pk.data);
    stall_now();
    uint64_t events = 0, packets = 0, t0 = 0, span = (uint64_t)(seconds * 1e6);
    for (;;) {
        int timeout = 10000;
        if (t0) {
            uint64_t now = now_us();
            if (now - t0 >= span)
                break;
            timeout = (int)((t0 + span - now) / 1000u) + 1;
        }
        int r = read_packet(&pk, timeout);
        if (r == -2 && !t0)
            die("no MethodEntry event from class %s within 10 s", cls);
        if (r == -2)
            break;
        if (r)
            die("connection closed during the event storm");
        if (pk.flags & 0x80)
            die("unexpected reply id %u during the event storm", pk.id);
        if (pk.cmdset == 0xC7)
            die("a DDM packet from the VM reached the debugger");
        if (pk.cmdset == 64 && pk.cmd == 100 && pk.data_len >= 5) {
            if (!t0)
                t0 = now_us();
            packets++;
            events += get4(pk.data + 1);
        }
        free(pk.data);
    }
    uint64_t dt = now_us() - t0;
    uint8_t clr[5] = {40};
    put4(clr + 1, request_id);
    quiet_events = 1;
    pk = wait_reply(send_cmd(15, 2, clr, 5));
    quiet_events = 0;
    free(pk.data);
    printf("storm %g %.0f events/s %.0f packets/s\n", seconds, dt ? events * 1e6 / (double)dt : 0.0,
           dt ? packets * 1e6 / (double)dt : 0.0);
}

static void connect_to(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof(host))
        die("bad address %s", hostport);
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = 0;
    struct addrinfo hints = {0}, *res;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &res))
        die("cannot resolve %s", hostport);
    fd = socket(res->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) < 0)
        die("connect: %s", strerror(errno));
    freeaddrinfo(res);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    write_all(HANDSHAKE, 14);
    char echo[14];
    if (raw_read_all(fd, echo, 14, 15000) || memcmp(echo, HANDSHAKE, 14))
        die("no handshake echo from %s", hostport);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        die("usage: jdwpc HOST:PORT STEP...");
    setvbuf(stdout, NULL, _IOLBF, 0);
    connect_to(argv[1]);
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        const char *arg = i + 1 < argc ? argv[i + 1] : "0";
        if (!strncmp(s, "id=", 3)) {
            forced_id = (int)strtoul(s + 3, NULL, 0);
        } else if (!strcmp(s, "version")) {
            uint32_t id = send_cmd(1, 1, NULL, 0);
            Packet pk = wait_reply(id);
            if (pk.error)
                die("Version failed");
            uint32_t n = pk.data_len >= 4 ? get4(pk.data) : 0;
            printf("version %u %.*s\n", id, (int)(n < pk.data_len - 4 ? n : pk.data_len - 4), pk.data + 4);
            free(pk.data);
        } else if (!strcmp(s, "idsizes")) {
            uint32_t id = send_cmd(1, 7, NULL, 0);
            Packet pk = wait_reply(id);
            if (pk.error || pk.data_len < 20)
                die("IDSizes failed");
            id_size = get4(pk.data + 12);
            printf("idsizes %u %u %u %u %u %u\n", id, get4(pk.data), get4(pk.data + 4), get4(pk.data + 8),
                   get4(pk.data + 12), get4(pk.data + 16));
            free(pk.data);
        } else if (!strcmp(s, "ddm")) {
            uint8_t chunk[8];
            memcpy(chunk, arg, 4);
            put4(chunk + 4, 0);
            uint32_t id = send_cmd(0xC7, 1, chunk, 8);
            Packet pk = wait_reply(id);
            if (pk.error)
                printf("ddm %u error %u\n", id, pk.error);
            else if (pk.data_len >= 8)
                printf("ddm %u %.4s\n", id, pk.data);
            else
                printf("ddm %u empty\n", id);
            free(pk.data);
            i++;
        } else if (!strcmp(s, "hpds")) {
            uint8_t chunk[8], h[19], *buf = malloc(1 << 16);
            int out = -1;
            if (arg && arg[0] == '/') {
                out = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                if (out < 0)
                    die("hpds: cannot create %s: %s", arg, strerror(errno));
                i++;
            }
            memcpy(chunk, "HPDS", 4);
            put4(chunk + 4, 0);
            uint64_t t0 = now_us();
            uint32_t id = send_cmd(0xC7, 1, chunk, 8);
            if (raw_read_all(fd, h, 19, 60000))
                die("hpds: no event");
            if (h[8] != 0 || h[9] != 0xC7 || memcmp(h + 11, "HPDS", 4) != 0)
                die("hpds: the first packet is not an HPDS event");
            uint64_t left = (uint64_t)get4(h) - 19, total = left;
            while (left > 0) {
                size_t n = left < (1u << 16) ? (size_t)left : (1u << 16);
                if (raw_read_all(fd, buf, n, 30000))
                    die("hpds: the event ended early");
                if (out >= 0 && write(out, buf, n) != (ssize_t)n)
                    die("hpds: write: %s", strerror(errno));
                left -= n;
            }
            Packet pk = wait_reply(id);
            double secs = (double)(now_us() - t0) / 1e6;
            printf("hpds %u %llu %.1f\n", id, (unsigned long long)total,
                   (double)total / 1e6 / (secs > 0 ? secs : 1e-9));
            free(pk.data);
            free(buf);
            if (out >= 0)
                close(out);
        } else if (!strcmp(s, "bigstring")) {
            size_t n = strtoul(arg, NULL, 0);
            uint8_t *buf = malloc(4 + n);
            put4(buf, (uint32_t)n);
            for (size_t k = 0; k < n; k++)
                buf[4 + k] = (uint8_t)('a' + k % 26);
            uint32_t id = send_cmd(1, 11, buf, 4 + n);
            Packet pk = wait_reply(id);
            if (pk.error || pk.data_len < id_size)
                die("CreateString failed");
            uint32_t id2 = send_cmd(10, 1, pk.data, id_size);
            free(pk.data);
            stall_now(); /* "stall MS bigstring N": the reply waits unread */
            Packet back = wait_reply(id2);
            int ok = !back.error && back.data_len == 4 + n && get4(back.data) == n &&
                     memcmp(back.data + 4, buf + 4, n) == 0;
            printf("bigstring %u %zu %s\n", id, n, ok ? "ok" : "CORRUPT");
            free(back.data);
            free(buf);
            if (!ok)
                return 1;
            i++;
        } else if (!strcmp(s, "pipeline")) {
            unsigned n = (unsigned)strtoul(arg, NULL, 0);
            uint32_t first = next_id;
            uint8_t *all = malloc((size_t)n * 11);
            for (unsigned k = 0; k < n; k++) {
                put4(all + 11 * k, 11);
                put4(all + 11 * k + 4, next_id++);
                all[11 * k + 8] = 0;
                all[11 * k + 9] = 1;
                all[11 * k + 10] = 1;
            }
            uint64_t t0 = now_us();
            write_all(all, (size_t)n * 11);
            for (unsigned k = 0; k < n; k++) {
                Packet pk = wait_reply(first + k);
                free(pk.data);
            }
            uint64_t dt = now_us() - t0;
            printf("pipeline %u %.0f packets/s\n", n, dt ? n * 1e6 / (double)dt : 0.0);
            free(all);
            i++;
        } else if (!strcmp(s, "mixed")) {
            unsigned n = (unsigned)strtoul(arg, NULL, 0);
            if (n < 2)
                die("mixed: N >= 2");
            size_t total = (size_t)n * 11 + 19 + 11;
            uint8_t *all = malloc(total), *q = all;
            uint32_t first = next_id, ddm_id = 0;
            for (unsigned k = 0; k <= n; k++) {
                if (k == n / 2) { /* the DDM request: header and an empty HELO chunk */
                    ddm_id = next_id;
                    put4(q, 19);
                    put4(q + 4, next_id++);
                    q[8] = 0, q[9] = 0xC7, q[10] = 1;
                    memcpy(q + 11, "HELO", 4);
                    put4(q + 15, 0);
                    q += 19;
                }
                if (k < n) {
                    put4(q, 11);
                    put4(q + 4, next_id++);
                    q[8] = 0, q[9] = 1, q[10] = 1;
                    q += 11;
                }
            }
            uint32_t dispose_id = next_id++;
            put4(q, 11);
            put4(q + 4, dispose_id);
            q[8] = 0, q[9] = 1, q[10] = 6;
            write_all(all, total);
            unsigned ddm_error = 0, dispose_error = 0;
            int ddm_seen = 0;
            uint32_t expect = first == ddm_id ? first + 1 : first;
            while (expect <= dispose_id || !ddm_seen) {
                Packet pk;
                int r = read_packet(&pk, 15000);
                if (r)
                    die("mixed: %s", r == -2 ? "no reply within 15 s" : "connection closed");
                if (!(pk.flags & 0x80)) {
                    if (pk.cmdset == 0xC7)
                        die("a DDM packet from the VM reached the debugger");
                } else if (pk.id == ddm_id && !ddm_seen) {
                    ddm_seen = 1;
                    ddm_error = pk.error;
                } else if (pk.id != expect) {
                    die("mixed: reply id %u, expected %u", pk.id, expect);
                } else if (pk.id == dispose_id) {
                    dispose_error = pk.error;
                    expect++;
                } else {
                    if (pk.error)
                        die("mixed: Version %u failed: error %u", pk.id, pk.error);
                    expect = expect + 1 == ddm_id ? expect + 2 : expect + 1;
                }
                free(pk.data);
            }
            printf("mixed %u ddm %u dispose %u\n", n, ddm_error, dispose_error);
            free(all);
            i++;
        } else if (!strcmp(s, "events") || !strcmp(s, "noevents")) {
            int want = !strcmp(s, "events") ? atoi(arg) : 0;
            int ms = !strcmp(s, "events") ? (i + 2 < argc && atoi(argv[i + 2]) > 0 ? atoi(argv[i + 2]) : 5000) : atoi(arg);
            if (!strcmp(s, "events") && i + 2 < argc && atoi(argv[i + 2]) > 0)
                i++;
            uint64_t deadline = now_us() + (uint64_t)ms * 1000u;
            int got = 0;
            while (want == 0 || got < want) {
                uint64_t now = now_us();
                if (now >= deadline)
                    break;
                Packet pk;
                int r = read_packet(&pk, (int)((deadline - now) / 1000u) + 1);
                if (r == -2)
                    break;
                if (r)
                    die("connection closed while waiting for events");
                if (pk.cmdset == 0xC7 && !(pk.flags & 0x80))
                    die("a DDM packet from the VM reached the debugger");
                printf("%s %u %u\n", pk.flags & 0x80 ? "reply" : "event", pk.cmdset, pk.cmd);
                free(pk.data);
                got++;
                if (want == 0)
                    die("unexpected packet within the quiet period");
            }
            if (want && got < want)
                die("fewer events than expected");
            i++;
        } else if (!strcmp(s, "suspend") || !strcmp(s, "resume") || !strcmp(s, "dispose")) {
            uint8_t cmd = !strcmp(s, "suspend") ? 8 : !strcmp(s, "resume") ? 9 : 6;
            uint32_t id = send_cmd(1, cmd, NULL, 0);
            Packet pk = wait_reply(id);
            printf("%s %u %s\n", s, id, pk.error ? "error" : "ok");
            free(pk.data);
        } else if (!strcmp(s, "garbage")) {
            write_all("\x00\x00\x00\x03garbage!", 12);
        } else if (!strcmp(s, "half")) {
            uint8_t pkt[11];
            put4(pkt, 1000);
            put4(pkt + 4, next_id++);
            pkt[8] = 0; pkt[9] = 1; pkt[10] = 1;
            write_all(pkt, 11);
            close(fd);
            return 0;
        } else if (!strcmp(s, "stall")) {
            if (arg[0] && strspn(arg, "0123456789") == strlen(arg)) {
                next_stall_ms = (unsigned)atoi(arg);
                next_stall_path = NULL;
            } else {
                next_stall_path = arg;
                next_stall_ms = 0;
            }
            i++;
        } else if (!strcmp(s, "blast")) {
            if (i + 2 >= argc)
                die("blast N SIZE");
            unsigned n = (unsigned)strtoul(arg, NULL, 0);
            size_t size = strtoul(argv[i + 2], NULL, 0);
            if (size > (64u << 20))
                die("blast: SIZE over 64 MiB");
            uint8_t *buf = malloc(size ? size : 1);
            for (unsigned j = 0; j < n; j++) {
                for (size_t k = 0; k < size; k++)
                    buf[k] = (uint8_t)((j + k) % 251);
                send_cmd(1, 1, buf, size);
            }
            free(buf);
            printf("blast %u %zu sent\n", n, size);
            fflush(stdout);
            i += 2;
        } else if (!strcmp(s, "cut")) {
            if (i + 2 >= argc)
                die("cut N SIZE");
            size_t n = strtoul(arg, NULL, 0), size = strtoul(argv[i + 2], NULL, 0);
            if (size > (64u << 20) || n > size)
                die("cut: N over SIZE, or SIZE over 64 MiB");
            uint8_t pkt[11];
            put4(pkt, (uint32_t)(size + 11));
            put4(pkt + 4, next_id++);
            pkt[8] = 0; pkt[9] = 1; pkt[10] = 1;
            write_all(pkt, 11);
            uint8_t *buf = calloc(1, n ? n : 1);
            write_all(buf, n);
            free(buf);
            printf("cut %zu %zu sent\n", n, size);
            fflush(stdout);
            close(fd);
            return 0;
        } else if (!strcmp(s, "sleep")) {
            usleep((useconds_t)atoi(arg) * 1000u);
            i++;
        } else if (!strcmp(s, "waitfile")) {
            wait_for_file("waitfile", arg);
            i++;
        } else if (!strcmp(s, "close")) {
            close(fd);
            return 0;
        } else if (!strcmp(s, "rtt")) {
            unsigned n = (unsigned)strtoul(arg, NULL, 0);
            uint64_t *t = malloc(sizeof(uint64_t) * (n ? n : 1));
            for (unsigned k = 0; k < n; k++) {
                uint64_t t0 = now_us();
                uint32_t id = send_cmd(1, 1, NULL, 0);
                Packet pk = wait_reply(id);
                free(pk.data);
                t[k] = now_us() - t0;
            }
            qsort(t, n, sizeof(*t), cmp_u64);
            printf("rtt %llu %llu\n", n ? (unsigned long long)t[n / 2] : 0ULL,
                   n ? (unsigned long long)t[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] : 0ULL);
            free(t);
            i++;
        } else if (!strcmp(s, "bulk")) {
            unsigned n = (unsigned)strtoul(arg, NULL, 0);
            size_t size = i + 2 < argc ? strtoul(argv[i + 2], NULL, 0) : 0;
            if (size == 0 || size > (256u << 20))
                die("bulk N SIZE: SIZE must be 1..256 MiB");
            step_bulk(n, size);
            i += 2;
        } else if (!strcmp(s, "storm")) {
            double sec = atof(arg);
            const char *cls = "Storm";
            i++;
            if (sec <= 0)
                die("storm SECONDS: SECONDS must be positive");
            if (i + 1 < argc && argv[i + 1][0] && strspn(argv[i + 1], "abcdefghijklmnopqrstuvwxyz") == 0 &&
                strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ*", argv[i + 1][0]))
                cls = argv[++i];
            step_storm(sec, cls);
        } else {
            die("unknown step %s", s);
        }
    }
    close(fd);
    return 0;
}
