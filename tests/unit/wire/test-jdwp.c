/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of core/wire/jdwp.c: the incremental reader (split at every byte,
 * several packets per feed, length and flag checks, handshake mode, sticky
 * errors, bounded buffer growth), header parse/write, builders, ids and
 * error names. The stream under test is tests/fixtures/jdwp-vm-stream.hex.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/wire/jdwp.h"
#include <ddmon/bytes.h>
#include "test-util.h"

/* ---------------------------------------------------------------- fixture */

/* What the reader must produce from tests/fixtures/jdwp-vm-stream.hex, in order. */
typedef struct {
    uint32_t length;
    uint32_t id;
    uint8_t flags;
    uint8_t cmdset;
    uint8_t cmd;
    uint16_t error;
} ExpectedPacket;

/* The reader's first buffer (jdwp.c READER_INITIAL): what small packets use. */
#define FIRST_BUFFER ((size_t)64 << 10)

static const ExpectedPacket stream_packets[] = {
    { 49, 0x80000001u, 0x00, 0xC7, 0x01, 0 },
    { 178, 0x40000000u, 0x80, 0, 0, 0 },
    { 105, 0x40000001u, 0x80, 0, 0, 0 },
    { 11, 0x40000002u, 0x80, 0, 0, 0 },
    { 11, 0x40000003u, 0x80, 0, 0, 99 },
    { 11, 0x40000004u, 0x80, 0, 0, 500 },
    { 21, 0x10000001u, 0x00, 64, 100, 0 },
    { 55, 0x80000002u, 0x00, 0xC7, 0x01, 0 },
    { 23, 0x80000003u, 0x00, 0xC7, 0x01, 0 },
};
#define N_STREAM_PACKETS G_N_ELEMENTS(stream_packets)

typedef struct {
    uint8_t *stream;
    size_t len;
} Fixture;

static int setup_stream(void **state)
{
    Fixture *f = g_new0(Fixture, 1);
    f->stream = test_util_read_srcfile("tests/fixtures/jdwp-vm-stream.hex", DDM_TEST_SRCDIR,
                                       &f->len);
    {
        char *text = g_strndup((const char *)f->stream, f->len);
        g_free(f->stream);
        f->stream = test_util_unhex(text, &f->len);
        g_free(text);
    }
    *state = f;
    return 0;
}

static int teardown_stream(void **state)
{
    Fixture *f = *state;
    g_free(f->stream);
    g_free(f);
    return 0;
}

/* Everything a reader returned, copied (packets are borrowed). */
typedef struct {
    GArray *results;  /* DdmJdwpResult */
    GPtrArray *packets; /* GBytes of whole packets */
} Collected;

static void collected_init(Collected *c)
{
    c->results = g_array_new(FALSE, FALSE, sizeof(DdmJdwpResult));
    c->packets = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
}

static void collected_clear(Collected *c)
{
    g_array_free(c->results, TRUE);
    g_ptr_array_free(c->packets, TRUE);
}

/* Call next() until it needs more; record results and packet copies. */
static DdmJdwpResult drain(DdmJdwpReader *r, Collected *c)
{
    for (;;) {
        DdmJdwpPacket pkt;
        DdmJdwpResult res = ddm_jdwp_reader_next(r, &pkt);
        if (res == DDM_JDWP_NEED_MORE || res < 0)
            return res;
        g_array_append_val(c->results, res);
        if (res == DDM_JDWP_PACKET) {
            assert_int_equal(pkt.len, pkt.header.length);
            assert_ptr_equal(pkt.data, pkt.bytes + DDM_JDWP_HEADER_LEN);
            assert_int_equal(pkt.data_len, pkt.len - DDM_JDWP_HEADER_LEN);
            g_ptr_array_add(c->packets, g_bytes_new(pkt.bytes, pkt.len));
        }
    }
}

/* The collected units must be: handshake, then every expected packet, whose
 * bytes are the consecutive slices of the stream. */
static void check_stream_result(const Fixture *f, const Collected *c)
{
    size_t i, off = DDM_JDWP_HANDSHAKE_LEN;

    assert_int_equal(c->results->len, 1 + N_STREAM_PACKETS);
    assert_int_equal(g_array_index(c->results, DdmJdwpResult, 0), DDM_JDWP_HANDSHAKE_OK);
    assert_int_equal(c->packets->len, N_STREAM_PACKETS);
    for (i = 0; i < N_STREAM_PACKETS; i++) {
        const ExpectedPacket *e = &stream_packets[i];
        GBytes *b = g_ptr_array_index(c->packets, i);
        gsize n;
        const uint8_t *p = g_bytes_get_data(b, &n);
        DdmJdwpHeader h;

        assert_int_equal(g_array_index(c->results, DdmJdwpResult, i + 1), DDM_JDWP_PACKET);
        assert_true(ddm_jdwp_parse_header(p, n, &h));
        assert_int_equal(h.length, e->length);
        assert_int_equal(h.id, e->id);
        assert_int_equal(h.flags, e->flags);
        assert_int_equal(h.cmdset, e->cmdset);
        assert_int_equal(h.cmd, e->cmd);
        assert_int_equal(h.error, e->error);
        assert_true(off + n <= f->len);
        assert_bytes_equal(p, n, f->stream + off, e->length);
        off += n;
    }
    assert_int_equal(off, f->len);
}

/* ----------------------------------------------------------- stream tests */

static void test_jdwp_fixture_whole(void **state)
{
    Fixture *f = *state;
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    Collected c;

    collected_init(&c);
    ddm_jdwp_reader_expect_handshake(r);
    ddm_jdwp_reader_feed(r, f->stream, f->len);
    assert_int_equal(drain(r, &c), DDM_JDWP_NEED_MORE);
    check_stream_result(f, &c);
    assert_int_equal(ddm_jdwp_reader_pending(r), 0);
    collected_clear(&c);
    ddm_jdwp_reader_free(r);
}

static void test_jdwp_split_every_offset(void **state)
{
    Fixture *f = *state;
    size_t split;

    for (split = 0; split <= f->len; split++) {
        DdmJdwpReader *r = ddm_jdwp_reader_new(0);
        Collected c;

        collected_init(&c);
        ddm_jdwp_reader_expect_handshake(r);
        ddm_jdwp_reader_feed(r, f->stream, split);
        assert_int_equal(drain(r, &c), DDM_JDWP_NEED_MORE);
        ddm_jdwp_reader_feed(r, f->stream + split, f->len - split);
        assert_int_equal(drain(r, &c), DDM_JDWP_NEED_MORE);
        check_stream_result(f, &c);
        assert_int_equal(ddm_jdwp_reader_pending(r), 0);
        collected_clear(&c);
        ddm_jdwp_reader_free(r);
    }
}

static void test_jdwp_split_every_pair_of_offsets(void **state)
{
    Fixture *f = *state;
    size_t a, b;

    /* three pieces, cut at every pair (a <= b): 100k+ readers, each tiny */
    for (a = 0; a <= f->len; a++) {
        for (b = a; b <= f->len; b += 3) {
            DdmJdwpReader *r = ddm_jdwp_reader_new(0);
            Collected c;

            collected_init(&c);
            ddm_jdwp_reader_expect_handshake(r);
            ddm_jdwp_reader_feed(r, f->stream, a);
            assert_int_equal(drain(r, &c), DDM_JDWP_NEED_MORE);
            ddm_jdwp_reader_feed(r, f->stream + a, b - a);
            assert_int_equal(drain(r, &c), DDM_JDWP_NEED_MORE);
            ddm_jdwp_reader_feed(r, f->stream + b, f->len - b);
            assert_int_equal(drain(r, &c), DDM_JDWP_NEED_MORE);
            check_stream_result(f, &c);
            collected_clear(&c);
            ddm_jdwp_reader_free(r);
        }
    }
}

static void test_jdwp_byte_at_a_time(void **state)
{
    Fixture *f = *state;
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    Collected c;
    size_t i;

    collected_init(&c);
    ddm_jdwp_reader_expect_handshake(r);
    for (i = 0; i < f->len; i++) {
        ddm_jdwp_reader_feed(r, f->stream + i, 1);
        assert_int_equal(drain(r, &c), DDM_JDWP_NEED_MORE);
    }
    check_stream_result(f, &c);
    collected_clear(&c);
    ddm_jdwp_reader_free(r);
}

/* read(2)-style input through space()/commit(), in every chunk size. */
static void test_jdwp_space_commit_every_chunk_size(void **state)
{
    Fixture *f = *state;
    size_t step;

    for (step = 1; step <= f->len; step++) {
        DdmJdwpReader *r = ddm_jdwp_reader_new(0);
        Collected c;
        size_t off = 0;

        collected_init(&c);
        ddm_jdwp_reader_expect_handshake(r);
        while (off < f->len) {
            size_t avail = 0, n = MIN(step, f->len - off);
            uint8_t *dst = ddm_jdwp_reader_space(r, n, &avail);
            assert_non_null(dst);
            assert_true(avail >= n);
            memcpy(dst, f->stream + off, n);
            ddm_jdwp_reader_commit(r, n);
            off += n;
            assert_int_equal(drain(r, &c), DDM_JDWP_NEED_MORE);
        }
        check_stream_result(f, &c);
        collected_clear(&c);
        ddm_jdwp_reader_free(r);
    }
}

/* Packets are borrowed until the next call: bytes after a returned packet
 * must not move before the caller calls again. */
static void test_jdwp_packet_valid_until_next_call(void **state)
{
    Fixture *f = *state;
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    DdmJdwpPacket pkt;
    size_t off = DDM_JDWP_HANDSHAKE_LEN;

    ddm_jdwp_reader_feed(r, f->stream + off, f->len - off);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_bytes_equal(pkt.bytes, pkt.len, f->stream + off, stream_packets[0].length);
    assert_int_equal(ddm_jdwp_reader_pending(r),
                     f->len - off - stream_packets[0].length);
    ddm_jdwp_reader_free(r);
}

/* -------------------------------------------------------- length checks */

static uint8_t *make_packet(uint32_t declared, uint8_t flags, size_t body, size_t *len)
{
    uint8_t *p = g_malloc0(DDM_JDWP_HEADER_LEN + body);
    DdmJdwpHeader h = { declared, 7, flags, 0xC7, 1, 0 };
    size_t i;
    ddm_jdwp_write_header(p, &h);
    for (i = 0; i < body; i++)
        p[DDM_JDWP_HEADER_LEN + i] = (uint8_t)i;
    *len = DDM_JDWP_HEADER_LEN + body;
    return p;
}

typedef struct {
    const char *what;
    size_t cap;            /* reader cap (0 = default) */
    uint64_t declared;     /* length field */
    DdmJdwpResult expect;
} LengthCase;

#define SMALL_CAP 100

static const LengthCase length_cases[] = {
    { "length 0", SMALL_CAP, 0, DDM_JDWP_ERR_SHORT },
    { "length 10", SMALL_CAP, 10, DDM_JDWP_ERR_SHORT },
    { "length 11 (empty packet)", SMALL_CAP, 11, DDM_JDWP_PACKET },
    { "length 12", SMALL_CAP, 12, DDM_JDWP_PACKET },
    { "length == cap", SMALL_CAP, SMALL_CAP, DDM_JDWP_PACKET },
    { "length cap+1", SMALL_CAP, SMALL_CAP + 1, DDM_JDWP_ERR_TOO_BIG },
    { "length 0xFFFFFFFF", SMALL_CAP, 0xFFFFFFFFu, DDM_JDWP_ERR_TOO_BIG },
    { "default cap: length 0", 0, 0, DDM_JDWP_ERR_SHORT },
    { "default cap: length 10", 0, 10, DDM_JDWP_ERR_SHORT },
    { "default cap: length 11", 0, 11, DDM_JDWP_PACKET },
    { "default cap: cap+1", 0, DDM_JDWP_DEFAULT_MAX_PACKET + 1, DDM_JDWP_ERR_TOO_BIG },
    { "default cap: 0xFFFFFFFF", 0, 0xFFFFFFFFu, DDM_JDWP_ERR_TOO_BIG },
};

static void test_jdwp_lengths(void **state)
{
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(length_cases); i++) {
        const LengthCase *lc = &length_cases[i];
        /* send a whole packet when it is valid, else only the header */
        size_t body = lc->expect == DDM_JDWP_PACKET ? (size_t)lc->declared - 11 : 0;
        size_t len, before;
        uint8_t *p = make_packet((uint32_t)lc->declared, 0, body, &len);
        DdmJdwpReader *r = ddm_jdwp_reader_new(lc->cap);
        DdmJdwpPacket pkt;
        DdmJdwpResult res;

        print_message("# case: %s\n", lc->what);
        before = ddm_jdwp_reader_buffer_size(r);
        assert_int_equal(before, 0); /* lazy: no buffer before the first byte */
        ddm_jdwp_reader_feed(r, p, len);
        res = ddm_jdwp_reader_next(r, &pkt);
        assert_int_equal(res, lc->expect);
        /* no case may have grown the buffer past the first one: errors come
         * from 4 bytes */
        assert_true(ddm_jdwp_reader_buffer_size(r) <= FIRST_BUFFER);
        if (res == DDM_JDWP_PACKET) {
            assert_int_equal(pkt.len, lc->declared);
            assert_int_equal(pkt.data_len, body);
            assert_bytes_equal(pkt.data, pkt.data_len, p + 11, body);
        }
        ddm_jdwp_reader_free(r);
        g_free(p);
    }
}

/* A bad length is reported from its 4 bytes alone, before the rest arrives. */
static void test_jdwp_length_error_from_four_bytes(void **state)
{
    static const uint8_t huge[4] = { 0xFF, 0xFF, 0xFF, 0xFF };
    static const uint8_t tiny[4] = { 0, 0, 0, 10 };
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    size_t before = ddm_jdwp_reader_buffer_size(r);
    (void)state;

    ddm_jdwp_reader_feed(r, huge, 3);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_NEED_MORE);
    ddm_jdwp_reader_feed(r, huge + 3, 1);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_ERR_TOO_BIG);
    assert_true(ddm_jdwp_reader_buffer_size(r) <= MAX(before, FIRST_BUFFER));
    ddm_jdwp_reader_free(r);

    r = ddm_jdwp_reader_new(0);
    ddm_jdwp_reader_feed(r, tiny, 4);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_ERR_SHORT);
    ddm_jdwp_reader_free(r);
}

/* A large valid packet grows the buffer only up to its declared length, and
 * the buffer shrinks back once it is consumed. */
static void test_jdwp_large_packet_growth_bounded(void **state)
{
    const size_t body = (size_t)1 << 20;
    size_t len, off = 0, initial;
    uint8_t *p = make_packet((uint32_t)(body + 11), 0, body, &len);
    DdmJdwpReader *r = ddm_jdwp_reader_new(4u << 20);
    DdmJdwpPacket pkt;
    DdmJdwpResult res = DDM_JDWP_NEED_MORE;
    (void)state;

    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0); /* lazy */
    initial = FIRST_BUFFER; /* what small packets use */
    while (off < len) {
        size_t avail, n;
        uint8_t *dst = ddm_jdwp_reader_space(r, 4096, &avail);
        n = MIN(MIN(avail, (size_t)4096), len - off);
        memcpy(dst, p + off, n);
        ddm_jdwp_reader_commit(r, n);
        off += n;
        res = ddm_jdwp_reader_next(r, &pkt);
        assert_true(ddm_jdwp_reader_buffer_size(r) <= len);
        if (off < len)
            assert_int_equal(res, DDM_JDWP_NEED_MORE);
    }
    assert_int_equal(res, DDM_JDWP_PACKET);
    assert_int_equal(pkt.len, len);
    assert_bytes_equal(pkt.data, pkt.data_len, p + 11, body);

    /* next small packet: the big buffer is given back */
    {
        size_t slen;
        uint8_t *s = make_packet(11, 0x80, 0, &slen);
        ddm_jdwp_reader_feed(r, s, slen);
        assert_true(ddm_jdwp_reader_buffer_size(r) <= initial);
        assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
        assert_int_equal(pkt.len, 11);

        /* big and small in one feed: after both are taken, the next feed
         * shrinks the buffer even though the small one would fit */
        {
            GByteArray *both = g_byte_array_new();
            g_byte_array_append(both, p, (guint)len);
            g_byte_array_append(both, s, (guint)slen);
            ddm_jdwp_reader_feed(r, both->data, both->len);
            assert_true(ddm_jdwp_reader_buffer_size(r) >= both->len);
            assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
            assert_int_equal(pkt.len, len);
            assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
            assert_int_equal(pkt.len, 11);
            ddm_jdwp_reader_feed(r, s, slen);
            assert_true(ddm_jdwp_reader_buffer_size(r) <= initial);
            assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
            assert_int_equal(pkt.len, 11);
            g_byte_array_free(both, TRUE);
        }
        g_free(s);
    }
    ddm_jdwp_reader_free(r);
    g_free(p);
}

/* --------------------------------------------------------------- flags */

static void test_jdwp_flags(void **state)
{
    unsigned f;
    (void)state;

    for (f = 0; f <= 0xFF; f++) {
        size_t len;
        uint8_t *p = make_packet(11, (uint8_t)f, 0, &len);
        DdmJdwpReader *r = ddm_jdwp_reader_new(0);
        DdmJdwpPacket pkt;
        DdmJdwpResult res, want = (f == 0 || f == 0x80) ? DDM_JDWP_PACKET : DDM_JDWP_ERR_FLAGS;

        /* flags are judged once byte 8 is there, before the packet completes */
        ddm_jdwp_reader_feed(r, p, 9);
        res = ddm_jdwp_reader_next(r, &pkt);
        assert_int_equal(res, want == DDM_JDWP_PACKET ? DDM_JDWP_NEED_MORE : want);
        ddm_jdwp_reader_feed(r, p + 9, len - 9);
        res = ddm_jdwp_reader_next(r, &pkt);
        assert_int_equal(res, want);
        if (res == DDM_JDWP_PACKET)
            assert_int_equal(pkt.header.flags, f);
        ddm_jdwp_reader_free(r);
        g_free(p);
    }
}

/* ----------------------------------------------------------- handshake */

static void test_jdwp_handshake_exact(void **state)
{
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    (void)state;

    ddm_jdwp_reader_expect_handshake(r);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_NEED_MORE);
    ddm_jdwp_reader_feed(r, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_HANDSHAKE_OK);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_NEED_MORE);
    assert_int_equal(ddm_jdwp_reader_pending(r), 0);
    /* a second handshake is not expected any more: it is a (bad) packet */
    ddm_jdwp_reader_feed(r, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    assert_true(ddm_jdwp_reader_next(r, NULL) < 0);
    ddm_jdwp_reader_free(r);
}

static void test_jdwp_handshake_split(void **state)
{
    size_t split;
    (void)state;

    for (split = 0; split <= DDM_JDWP_HANDSHAKE_LEN; split++) {
        DdmJdwpReader *r = ddm_jdwp_reader_new(0);
        const uint8_t *hs = (const uint8_t *)DDM_JDWP_HANDSHAKE;

        ddm_jdwp_reader_expect_handshake(r);
        ddm_jdwp_reader_feed(r, hs, split);
        if (split < DDM_JDWP_HANDSHAKE_LEN) {
            assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_NEED_MORE);
            ddm_jdwp_reader_feed(r, hs + split, DDM_JDWP_HANDSHAKE_LEN - split);
        }
        assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_HANDSHAKE_OK);
        ddm_jdwp_reader_free(r);
    }
}

typedef struct {
    const char *what;
    const char *hex;
    DdmJdwpResult first; /* what next() says once all bytes are in */
} BadHandshakeCase;

static const BadHandshakeCase bad_handshakes[] = {
    { "last byte wrong", "4a 44 57 50 2d 48 61 6e 64 73 68 61 6b 78", DDM_JDWP_ERR_HANDSHAKE },
    { "lower case", "6a 64 77 70 2d 68 61 6e 64 73 68 61 6b 65", DDM_JDWP_ERR_HANDSHAKE },
    { "HTTP", "47 45 54 20 2f 20 48 54 54 50 2f 31 2e 31", DDM_JDWP_ERR_HANDSHAKE },
    { "short length", "00 00 00 05 00 00 00 01 00 c7 01", DDM_JDWP_ERR_HANDSHAKE },
    { "bad flags", "00 00 00 0b 00 00 00 01 01 c7 01", DDM_JDWP_ERR_HANDSHAKE },
    { "prefix then junk", "4a 44 57 00", DDM_JDWP_ERR_HANDSHAKE },
};

static void test_jdwp_handshake_wrong(void **state)
{
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(bad_handshakes); i++) {
        size_t len;
        uint8_t *b = test_util_unhex(bad_handshakes[i].hex, &len);
        DdmJdwpReader *r = ddm_jdwp_reader_new(0);

        print_message("# case: %s\n", bad_handshakes[i].what);
        ddm_jdwp_reader_expect_handshake(r);
        ddm_jdwp_reader_feed(r, b, len);
        assert_int_equal(ddm_jdwp_reader_next(r, NULL), bad_handshakes[i].first);
        /* sticky */
        ddm_jdwp_reader_feed(r, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
        assert_int_equal(ddm_jdwp_reader_next(r, NULL), bad_handshakes[i].first);
        ddm_jdwp_reader_free(r);
        g_free(b);
    }
}

/* Complete packets before the echo are discarded (an early APNM), split
 * at every offset. */
static void test_jdwp_handshake_packets_race_ahead(void **state)
{
    size_t early_len, late_len, split;
    uint8_t *early = ddm_jdwp_build_command(0x80000001u, 0xC7, 1, "APNMxxxx", 8, &early_len);
    uint8_t *late = ddm_jdwp_build_reply(0x40000000u, 0, "ok", 2, &late_len);
    GByteArray *s = g_byte_array_new();
    (void)state;

    g_byte_array_append(s, early, (guint)early_len);
    g_byte_array_append(s, early, (guint)early_len);
    g_byte_array_append(s, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    g_byte_array_append(s, late, (guint)late_len);

    for (split = 0; split <= s->len; split++) {
        static const DdmJdwpResult want[] = { DDM_JDWP_DISCARDED, DDM_JDWP_DISCARDED,
                                              DDM_JDWP_HANDSHAKE_OK, DDM_JDWP_PACKET };
        DdmJdwpReader *r = ddm_jdwp_reader_new(0);
        Collected c;
        size_t i;

        collected_init(&c);
        ddm_jdwp_reader_expect_handshake(r);
        ddm_jdwp_reader_feed(r, s->data, split);
        assert_int_equal(drain(r, &c), DDM_JDWP_NEED_MORE);
        ddm_jdwp_reader_feed(r, s->data + split, s->len - split);
        assert_int_equal(drain(r, &c), DDM_JDWP_NEED_MORE);
        assert_int_equal(c.results->len, G_N_ELEMENTS(want));
        for (i = 0; i < G_N_ELEMENTS(want); i++)
            assert_int_equal(g_array_index(c.results, DdmJdwpResult, i), want[i]);
        assert_int_equal(c.packets->len, 1);
        {
            gsize n;
            const uint8_t *p = g_bytes_get_data(g_ptr_array_index(c.packets, 0), &n);
            assert_bytes_equal(p, n, late, late_len);
        }
        collected_clear(&c);
        ddm_jdwp_reader_free(r);
    }
    g_byte_array_free(s, TRUE);
    g_free(early);
    g_free(late);
}

/* ------------------------------------------------------- sticky errors */

static void test_jdwp_error_is_sticky(void **state)
{
    static const uint8_t bad[] = { 0, 0, 0, 3 };
    size_t good_len;
    uint8_t *good = ddm_jdwp_build_command(1, 1, 1, NULL, 0, &good_len);
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    size_t avail, before;
    uint8_t *dst;
    int i;
    (void)state;

    ddm_jdwp_reader_feed(r, good, good_len);
    ddm_jdwp_reader_feed(r, bad, sizeof bad);
    ddm_jdwp_reader_feed(r, good, good_len);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_PACKET);
    before = ddm_jdwp_reader_buffer_size(r);
    for (i = 0; i < 3; i++) {
        assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_ERR_SHORT);
        ddm_jdwp_reader_feed(r, good, good_len);
        dst = ddm_jdwp_reader_space(r, good_len, &avail);
        memcpy(dst, good, good_len);
        ddm_jdwp_reader_commit(r, good_len);
    }
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_ERR_SHORT);
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), before);

    /* a failed reader keeps no input: a lot more does not grow it */
    {
        size_t big = before * 3;
        uint8_t *junk = g_malloc0(big);
        ddm_jdwp_reader_feed(r, junk, big);
        assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_ERR_SHORT);
        assert_int_equal(ddm_jdwp_reader_buffer_size(r), before);
        assert_int_equal(ddm_jdwp_reader_pending(r), 0);
        g_free(junk);
    }
    ddm_jdwp_reader_free(r);
    g_free(good);
}

static void test_jdwp_result_str(void **state)
{
    static const DdmJdwpResult all[] = {
        DDM_JDWP_NEED_MORE, DDM_JDWP_PACKET, DDM_JDWP_HANDSHAKE_OK, DDM_JDWP_DISCARDED,
        DDM_JDWP_ERR_SHORT, DDM_JDWP_ERR_TOO_BIG, DDM_JDWP_ERR_HANDSHAKE, DDM_JDWP_ERR_FLAGS,
    };
    size_t i, j;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(all); i++) {
        assert_non_null(ddm_jdwp_result_str(all[i]));
        for (j = 0; j < i; j++)
            assert_string_not_equal(ddm_jdwp_result_str(all[i]), ddm_jdwp_result_str(all[j]));
    }
    assert_string_equal(ddm_jdwp_result_str((DdmJdwpResult)42), "unknown result");
}

/* -------------------------------------------------- headers and builders */

typedef struct {
    const char *hex;
    DdmJdwpHeader h;
} HeaderCase;

static const HeaderCase header_cases[] = {
    { "00 00 00 0b 00 00 00 01 00 01 01", { 11, 1, 0x00, 1, 1, 0 } },
    { "00 00 00 17 40 00 00 00 00 c7 01", { 23, 0x40000000u, 0x00, 0xC7, 0x01, 0 } },
    { "ff ff ff ff ff ff ff ff 00 ff ff", { 0xFFFFFFFFu, 0xFFFFFFFFu, 0x00, 0xFF, 0xFF, 0 } },
    { "00 00 00 0b 40 00 00 02 80 00 00", { 11, 0x40000002u, 0x80, 0, 0, 0 } },
    { "00 00 00 0b 40 00 00 03 80 00 63", { 11, 0x40000003u, 0x80, 0, 0, 99 } },
    /* big-endian u2: 01 00 is 256, not 1 (ddmlib's byte-swapped reading) */
    { "00 00 00 0b 40 00 00 03 80 01 00", { 11, 0x40000003u, 0x80, 0, 0, 256 } },
    { "00 00 00 0b 40 00 00 04 80 01 f4", { 11, 0x40000004u, 0x80, 0, 0, 500 } },
    { "00 00 00 0b 80 00 00 01 80 ff ff", { 11, 0x80000001u, 0x80, 0, 0, 0xFFFF } },
};

static void test_jdwp_header_round_trip(void **state)
{
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(header_cases); i++) {
        const HeaderCase *hc = &header_cases[i];
        size_t len;
        uint8_t *b = test_util_unhex(hc->hex, &len);
        uint8_t out[DDM_JDWP_HEADER_LEN];
        DdmJdwpHeader h;

        assert_int_equal(len, DDM_JDWP_HEADER_LEN);
        memset(&h, 0xAA, sizeof h);
        assert_true(ddm_jdwp_parse_header(b, len, &h));
        assert_int_equal(h.length, hc->h.length);
        assert_int_equal(h.id, hc->h.id);
        assert_int_equal(h.flags, hc->h.flags);
        assert_int_equal(h.cmdset, hc->h.cmdset);
        assert_int_equal(h.cmd, hc->h.cmd);
        assert_int_equal(h.error, hc->h.error);
        assert_int_equal(ddm_jdwp_is_reply(&h), hc->h.flags == 0x80);
        ddm_jdwp_write_header(out, &hc->h);
        assert_bytes_equal(out, sizeof out, b, len);
        g_free(b);
    }
}

static void test_jdwp_parse_header_short(void **state)
{
    uint8_t b[DDM_JDWP_HEADER_LEN] = { 0 };
    DdmJdwpHeader h;
    size_t n;
    (void)state;

    for (n = 0; n < DDM_JDWP_HEADER_LEN; n++)
        assert_false(ddm_jdwp_parse_header(b, n, &h));
    assert_false(ddm_jdwp_parse_header(NULL, 100, &h));
    assert_true(ddm_jdwp_parse_header(b, DDM_JDWP_HEADER_LEN, &h));
}

static void test_jdwp_builders(void **state)
{
    size_t len, want_len;
    uint8_t *p, *want;
    (void)state;

    p = ddm_jdwp_build_command(0x40000000u, 0xC7, 1, "\x48\x45\x4C\x4F\0\0\0\x04\0\0\0\x01", 12,
                               &len);
    want = test_util_unhex("00 00 00 17 40 00 00 00 00 C7 01 48 45 4C 4F 00 00 00 04 00 00 00 01",
                           &want_len);
    assert_bytes_equal(p, len, want, want_len);
    g_free(p);
    g_free(want);

    p = ddm_jdwp_build_command(5, 1, 7, NULL, 0, &len);
    want = test_util_unhex("00 00 00 0b 00 00 00 05 00 01 07", &want_len);
    assert_bytes_equal(p, len, want, want_len);
    g_free(p);
    g_free(want);

    p = ddm_jdwp_build_reply(9, 0, "\x01\x02", 2, &len);
    want = test_util_unhex("00 00 00 0d 00 00 00 09 80 00 00 01 02", &want_len);
    assert_bytes_equal(p, len, want, want_len);
    g_free(p);
    g_free(want);

    /* an error reply carries no data, as Dalvik sends it */
    p = ddm_jdwp_build_reply(9, 99, "\x01\x02", 2, &len);
    want = test_util_unhex("00 00 00 0b 00 00 00 09 80 00 63", &want_len);
    assert_bytes_equal(p, len, want, want_len);
    g_free(p);
    g_free(want);

    /* out_len may be NULL */
    p = ddm_jdwp_build_reply(1, 0, NULL, 0, NULL);
    assert_non_null(p);
    assert_int_equal(p[3], 11);
    g_free(p);
}

static void test_jdwp_set_id(void **state)
{
    static const uint32_t ids[] = { 0, 1, 0x40000000u, 0x80000001u, 0xFFFFFFFFu };
    size_t i, len;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(ids); i++) {
        uint8_t *p = ddm_jdwp_build_command(0x12345678u, 0xC7, 1, "abc", 3, &len);
        uint8_t *orig = g_malloc(len);
        DdmJdwpHeader h;

        memcpy(orig, p, len);
        ddm_jdwp_set_id(p, ids[i]);
        assert_true(ddm_jdwp_parse_header(p, len, &h));
        assert_int_equal(h.id, ids[i]);
        /* nothing but bytes 4..7 changed */
        assert_bytes_equal(p, 4, orig, 4);
        assert_bytes_equal(p + 8, len - 8, orig + 8, len - 8);
        g_free(p);
        g_free(orig);
    }
}

/* The core's allow-list is the SDK's: every command the core names for
 * plugins passes, and nothing else in the standard or vendor sets. */
static void test_jdwp_plugin_allow_list(void **state)
{
    static const uint8_t ok[][2] = {
        {DDM_JDWP_CMDSET_VM, DDM_JDWP_CMD_VM_VERSION},
        {DDM_JDWP_CMDSET_VM, DDM_JDWP_CMD_VM_ALL_THREADS},
        {DDM_JDWP_CMDSET_VM, DDM_JDWP_CMD_VM_ID_SIZES},
        {DDM_JDWP_CMDSET_VM, DDM_JDWP_CMD_VM_CAPABILITIES},
        {DDM_JDWP_CMDSET_VM, DDM_JDWP_CMD_VM_CLASS_PATHS},
        {DDM_JDWP_CMDSET_VM, DDM_JDWP_CMD_VM_CAPABILITIES_NEW},
        {DDM_JDWP_CMDSET_REFTYPE, DDM_JDWP_CMD_REFTYPE_SIGNATURE},
        {DDM_JDWP_CMDSET_REFTYPE, DDM_JDWP_CMD_REFTYPE_METHODS},
        {DDM_JDWP_CMDSET_REFTYPE, DDM_JDWP_CMD_REFTYPE_SOURCE_FILE},
        {DDM_JDWP_CMDSET_METHOD, DDM_JDWP_CMD_METHOD_LINE_TABLE},
        {DDM_JDWP_CMDSET_THREAD, DDM_JDWP_CMD_THREAD_NAME},
        {DDM_JDWP_CMDSET_THREAD, DDM_JDWP_CMD_THREAD_SUSPEND},
        {DDM_JDWP_CMDSET_THREAD, DDM_JDWP_CMD_THREAD_RESUME},
        {DDM_JDWP_CMDSET_THREAD, DDM_JDWP_CMD_THREAD_STATUS},
        {DDM_JDWP_CMDSET_THREAD, DDM_JDWP_CMD_THREAD_GROUP},
        {DDM_JDWP_CMDSET_THREAD, DDM_JDWP_CMD_THREAD_FRAMES},
        {DDM_JDWP_CMDSET_THREAD, DDM_JDWP_CMD_THREAD_FRAME_COUNT},
        {DDM_JDWP_CMDSET_THREAD_GROUP, DDM_JDWP_CMD_THREAD_GROUP_NAME},
    };
    unsigned set, cmd, n = 0;
    (void)state;
    for (size_t i = 0; i < G_N_ELEMENTS(ok); i++)
        assert_true(ddm_jdwp_plugin_allowed(ok[i][0], ok[i][1]));
    for (set = 0; set < 256; set++)
        for (cmd = 0; cmd < 256; cmd++)
            n += ddm_jdwp_plugin_allowed((uint8_t)set, (uint8_t)cmd) ? 1 : 0;
    assert_int_equal(n, G_N_ELEMENTS(ok));
    assert_false(ddm_jdwp_plugin_allowed(DDM_JDWP_CMDSET_VM, DDM_JDWP_CMD_VM_DISPOSE));
    assert_false(ddm_jdwp_plugin_allowed(DDM_JDWP_CMDSET, DDM_JDWP_CMD));
}

static void test_jdwp_error_names(void **state)
{
    static const struct {
        uint16_t code;
        const char *name;
    } cases[] = {
        { 0, "NONE" },
        { 10, "INVALID_THREAD" },
        { 35, "INVALID_SLOT" },
        { 41, "NOT_FOUND" },
        { 71, "METHOD_MODIFIERS_CHANGE_NOT_IMPLEMENTED" },
        { 99, "NOT_IMPLEMENTED" },
        { 112, "VM_DEAD" },
        { 115, "UNATTACHED_THREAD" },
        { 500, "INVALID_TAG" },
        { 512, "INVALID_COUNT" },
        { 1, "UNKNOWN" },
        { 114, "UNKNOWN" },
        { 501, "UNKNOWN" },
        { 505, "UNKNOWN" },
        { 0x6300, "UNKNOWN" },
        { 0xFFFF, "UNKNOWN" },
    };
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(cases); i++)
        assert_string_equal(ddm_jdwp_error_name(cases[i].code), cases[i].name);
}

/* ------------------------------------------------------------- streaming */

/* Feed @p/@len in pieces of @step; collect streamed bytes of the first
 * packet (taken as a stream after skipping @skip body bytes) into @got;
 * return how many STREAM_END and complete packets were seen after it. */
static void stream_through(DdmJdwpReader *r, const uint8_t *p, size_t len, size_t step,
                           size_t skip, GByteArray *got, int *ends, int *packets, int *heads)
{
    size_t off = 0;
    while (off < len) {
        size_t avail, n;
        uint8_t *dst = ddm_jdwp_reader_space(r, step, &avail);
        DdmJdwpPacket pkt;
        DdmJdwpResult res;
        n = MIN(MIN(avail, step), len - off);
        memcpy(dst, p + off, n);
        ddm_jdwp_reader_commit(r, n);
        off += n;
        while ((res = ddm_jdwp_reader_next(r, &pkt)) != DDM_JDWP_NEED_MORE) {
            switch (res) {
            case DDM_JDWP_PACKET_HEAD:
                (*heads)++;
                assert_true(pkt.data_len >= 8);
                assert_int_equal(pkt.header.cmdset, 0xC7);
                assert_true(ddm_jdwp_reader_stream(r, skip));
                break;
            case DDM_JDWP_STREAM_DATA:
                assert_true(pkt.data_len > 0);
                g_byte_array_append(got, pkt.data, (guint)pkt.data_len);
                break;
            case DDM_JDWP_STREAM_END:
                (*ends)++;
                break;
            case DDM_JDWP_PACKET:
                (*packets)++;
                break;
            default:
                fail_msg("unexpected reader result %d", res);
            }
        }
        /* the buffer never grows for the streamed packet */
        assert_true(ddm_jdwp_reader_buffer_size(r) <= (size_t)128 << 10);
    }
}

/* A packet far larger than the cap streams through a 64 KiB buffer, byte
 * for byte, at every piece size; a packet after it is read as usual. */
static void test_jdwp_stream_large_packet(void **state)
{
    static const size_t steps[] = { 1, 7, 4096, 65536, 100000 };
    const size_t body = (size_t)3 << 20;
    size_t len, slen;
    uint8_t *p = make_packet((uint32_t)(body + 11), 0, body, &len);
    uint8_t *s = make_packet(11, 0x80, 0, &slen);
    GByteArray *all = g_byte_array_new();
    (void)state;

    g_byte_array_append(all, p, (guint)len);
    g_byte_array_append(all, s, (guint)slen);
    for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
        DdmJdwpReader *r = ddm_jdwp_reader_new(1u << 20); /* cap: 1 MiB < packet */
        GByteArray *got = g_byte_array_new();
        int ends = 0, packets = 0, heads = 0;
        if (steps[i] == 1 && i == 0) {
            /* byte at a time over 3 MiB is slow under ASan: a shorter packet */
            size_t l2;
            uint8_t *p2 = make_packet(11 + 70000, 0, 70000, &l2);
            ddm_jdwp_reader_offer_heads(r, 19);
            stream_through(r, p2, l2, 1, 8, got, &ends, &packets, &heads);
            assert_int_equal(heads, 1);
            assert_int_equal(ends, 1);
            assert_bytes_equal(got->data, got->len, p2 + 19, l2 - 19);
            g_free(p2);
        } else {
            ddm_jdwp_reader_offer_heads(r, 19);
            stream_through(r, all->data, all->len, steps[i], 8, got, &ends, &packets, &heads);
            assert_int_equal(heads, 1);
            assert_int_equal(ends, 1);
            assert_int_equal(packets, 1);
            assert_bytes_equal(got->data, got->len, p + 19, body - 8);
            assert_int_equal(ddm_jdwp_reader_stream_left(r), 0);
        }
        g_byte_array_free(got, TRUE);
        ddm_jdwp_reader_free(r);
    }
    g_byte_array_free(all, TRUE);
    g_free(p);
    g_free(s);
}

/* Heads are offered once per packet, only for command packets that are not
 * complete, only when asked for; a head not taken leaves the usual path:
 * buffered whole under the cap, refused over it. */
static void test_jdwp_stream_head_rules(void **state)
{
    size_t len, rlen;
    uint8_t *p = make_packet(11 + 1000, 0, 1000, &len);
    uint8_t *reply = make_packet(11 + 1000, 0x80, 1000, &rlen);
    DdmJdwpPacket pkt;
    DdmJdwpReader *r;
    (void)state;

    /* off by default: a split packet just waits */
    r = ddm_jdwp_reader_new(0);
    ddm_jdwp_reader_feed(r, p, 100);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    ddm_jdwp_reader_free(r);

    /* on: once, then not again; not taken -> buffered and returned whole */
    r = ddm_jdwp_reader_new(0);
    ddm_jdwp_reader_offer_heads(r, 19);
    ddm_jdwp_reader_feed(r, p, 18);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    ddm_jdwp_reader_feed(r, p + 18, 82);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET_HEAD);
    assert_int_equal(pkt.len, len);
    assert_int_equal(pkt.data_len, 89);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    assert_false(ddm_jdwp_reader_stream(r, 8)); /* only right after the head */
    ddm_jdwp_reader_feed(r, p + 100, len - 100);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_int_equal(pkt.len, len);
    /* a complete packet in one feed: no head */
    ddm_jdwp_reader_feed(r, p, len);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    /* a reply: no head */
    ddm_jdwp_reader_feed(r, reply, 100);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    ddm_jdwp_reader_free(r);

    /* over the cap: head first, then the usual refusal */
    r = ddm_jdwp_reader_new(500);
    ddm_jdwp_reader_offer_heads(r, 19);
    ddm_jdwp_reader_feed(r, p, 19);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET_HEAD);
    assert_false(ddm_jdwp_reader_stream(r, 9)); /* more than the head showed */
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_ERR_TOO_BIG);
    ddm_jdwp_reader_free(r);
    g_free(p);
    g_free(reply);
}

/* ------------------------------------------------------------- memory (issue 15, fault 5) */

/* Commit @n bytes of @byte through space(), as a socket read would. */
static void commit_bytes(DdmJdwpReader *r, const uint8_t *p, size_t n)
{
    size_t off = 0;
    while (off < n) {
        size_t avail = 0;
        uint8_t *dst = ddm_jdwp_reader_space(r, 65536, &avail);
        assert_non_null(dst);
        avail = MIN(MIN(avail, (size_t)65536), n - off);
        memcpy(dst, p + off, avail);
        ddm_jdwp_reader_commit(r, avail);
        off += avail;
    }
}

/* A peer that claims 255 MiB and sends 1 MiB costs about 1 MiB, not the
 * claim: the buffer follows the bytes that arrived (at most twice them). */
static void test_jdwp_claim_costs_what_arrives(void **state)
{
    const size_t claim = (size_t)255 << 20, sent = (size_t)1 << 20;
    DdmJdwpReader *r = ddm_jdwp_reader_new((size_t)256 << 20);
    uint8_t *p = g_malloc0(sent);
    (void)state;

    ddm_put_u4(p, (uint32_t)claim);
    p[8] = DDM_JDWP_FLAG_REPLY; /* a reply: buffered whole, never streamed */
    commit_bytes(r, p, sent);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_NEED_MORE);
    assert_true(ddm_jdwp_reader_buffer_size(r) >= sent);
    assert_true(ddm_jdwp_reader_buffer_size(r) <= 2 * sent);
    ddm_jdwp_reader_free(r);
    g_free(p);
}

/* An idle reader holds no buffer: none before the first byte, none again
 * after a trim round with no new byte; a busy reader keeps its buffer
 * (no allocation per read); nothing pending is never trimmed. */
static void test_jdwp_idle_reader_holds_nothing(void **state)
{
    size_t len;
    uint8_t *p = make_packet(100, DDM_JDWP_FLAG_REPLY, 89, &len);
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    DdmJdwpPacket pkt;
    (void)state;

    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0);
    assert_false(ddm_jdwp_reader_trim(r));
    ddm_jdwp_reader_feed(r, p, len);
    assert_true(ddm_jdwp_reader_buffer_size(r) > 0);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_int_equal(pkt.len, 100);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    /* bytes came in this round: kept */
    assert_false(ddm_jdwp_reader_trim(r));
    assert_true(ddm_jdwp_reader_buffer_size(r) > 0);
    /* a quiet round: given back */
    assert_true(ddm_jdwp_reader_trim(r));
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0);
    /* half a packet keeps its bytes however long it waits */
    ddm_jdwp_reader_feed(r, p, 50);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    assert_false(ddm_jdwp_reader_trim(r));
    assert_false(ddm_jdwp_reader_trim(r));
    assert_true(ddm_jdwp_reader_buffer_size(r) >= 50);
    ddm_jdwp_reader_feed(r, p + 50, len - 50);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_bytes_equal(pkt.data, pkt.data_len, p + 11, 89);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    assert_false(ddm_jdwp_reader_trim(r));
    assert_true(ddm_jdwp_reader_trim(r));
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0);
    ddm_jdwp_reader_free(r);
    g_free(p);
}

/* Two peers claiming big packets share one budget: the one whose growth
 * would pass it is refused (ERR_BUDGET, its buffer freed at once, the
 * refused size reported), the other goes on; the budget counts exactly
 * what the readers hold. */
static void test_jdwp_budget_refuses_newest_claim(void **state)
{
    const size_t budget = (size_t)4 << 20, claim = (size_t)100 << 20, chunk = (size_t)1 << 20;
    DdmJdwpBudget *b = ddm_jdwp_budget_new(budget);
    DdmJdwpReader *a = ddm_jdwp_reader_new((size_t)256 << 20);
    DdmJdwpReader *c = ddm_jdwp_reader_new((size_t)256 << 20);
    uint8_t *p = g_malloc0(chunk);
    size_t avail;
    (void)state;

    ddm_jdwp_reader_set_budget(a, b);
    ddm_jdwp_reader_set_budget(c, b);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    ddm_put_u4(p, (uint32_t)claim);
    p[8] = DDM_JDWP_FLAG_REPLY;
    /* a: 2 MiB arrive (a buffer of 2 MiB) */
    commit_bytes(a, p, chunk);
    {
        uint8_t *more = g_malloc0(chunk);
        commit_bytes(a, more, chunk);
        g_free(more);
    }
    assert_int_equal(ddm_jdwp_reader_next(a, NULL), DDM_JDWP_NEED_MORE);
    assert_int_equal(ddm_jdwp_budget_used(b), ddm_jdwp_reader_buffer_size(a));
    /* c: its first MiB fits; it is refused before it holds more than the
     * budget leaves (at most 200 reads of 64 KiB are tried) */
    commit_bytes(c, p, chunk);
    assert_int_equal(ddm_jdwp_reader_next(c, NULL), DDM_JDWP_NEED_MORE);
    assert_true(ddm_jdwp_budget_used(b) <= budget);
    for (int i = 0; i < 200; i++) {
        uint8_t *dst = ddm_jdwp_reader_space(c, 65536, &avail);
        if (!dst)
            break;
        memset(dst, 0, MIN(avail, (size_t)65536));
        ddm_jdwp_reader_commit(c, MIN(avail, (size_t)65536));
        assert_true(ddm_jdwp_budget_used(b) <= budget);
    }
    assert_null(ddm_jdwp_reader_space(c, 65536, &avail));
    assert_int_equal(avail, 0);
    assert_int_equal(ddm_jdwp_reader_next(c, NULL), DDM_JDWP_ERR_BUDGET);
    assert_int_equal(ddm_jdwp_reader_buffer_size(c), 0);
    assert_true(ddm_jdwp_reader_refused_len(c) > chunk);
    assert_true(ddm_jdwp_budget_used(b) <= budget);
    assert_int_equal(ddm_jdwp_budget_used(b), ddm_jdwp_reader_buffer_size(a));
    /* a goes on: it is still within the budget with c's memory back */
    {
        uint8_t *more = g_malloc0(chunk);
        commit_bytes(a, more, chunk);
        g_free(more);
    }
    assert_int_equal(ddm_jdwp_reader_next(a, NULL), DDM_JDWP_NEED_MORE);
    assert_true(ddm_jdwp_budget_used(b) <= budget);
    /* freeing gives everything back */
    ddm_jdwp_reader_free(c);
    ddm_jdwp_reader_free(a);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    ddm_jdwp_budget_free(b);
    g_free(p);
}

/* Read @n bytes of @p into @r the way the session does (space, read,
 * commit, then next() until NEED_MORE); returns how many packets came out
 * and checks each against @expect, @plen bytes. */
static int read_like_session(DdmJdwpReader *r, const uint8_t *p, size_t n, const uint8_t *expect,
                             size_t plen)
{
    int packets = 0;
    size_t off = 0;
    while (off < n) {
        size_t avail = 0;
        uint8_t *dst = ddm_jdwp_reader_space(r, 65536, &avail);
        DdmJdwpPacket pkt;
        DdmJdwpResult res;
        assert_non_null(dst);
        avail = MIN(MIN(avail, (size_t)65536), n - off);
        memcpy(dst, p + off, avail);
        ddm_jdwp_reader_commit(r, avail);
        off += avail;
        while ((res = ddm_jdwp_reader_next(r, &pkt)) == DDM_JDWP_PACKET) {
            assert_int_equal(pkt.len, plen);
            assert_bytes_equal(pkt.bytes, pkt.len, expect, plen);
            packets++;
        }
        assert_int_equal(res, DDM_JDWP_NEED_MORE);
        /* after NEED_MORE the scratch is free again */
        assert_false(ddm_jdwp_reader_on_scratch(r));
    }
    return packets;
}

/* Readers sharing a budget read into its scratch: whole packets cost them
 * no buffer of their own; the bytes of an incomplete packet move to a
 * buffer of the reader's own sized to them (not to the packet's claim),
 * which goes back as soon as the packet is taken; a large packet
 * outgrows the scratch into its own buffer and comes out whole. */
static void test_jdwp_scratch_whole_and_partial(void **state)
{
    DdmJdwpBudget *b = ddm_jdwp_budget_new((size_t)64 << 20);
    DdmJdwpReader *r = ddm_jdwp_reader_new((size_t)8 << 20);
    DdmJdwpReader *q = ddm_jdwp_reader_new((size_t)8 << 20);
    size_t len, big_len;
    uint8_t *p = make_packet(100, DDM_JDWP_FLAG_REPLY, 89, &len);
    uint8_t *big = make_packet((uint32_t)(((size_t)1 << 20) + 11), DDM_JDWP_FLAG_REPLY,
                               (size_t)1 << 20, &big_len);
    GByteArray *many = g_byte_array_new();
    (void)state;

    ddm_jdwp_reader_set_budget(r, b);
    ddm_jdwp_reader_set_budget(q, b);
    for (int i = 0; i < 50; i++)
        g_byte_array_append(many, p, (guint)len);

    /* whole packets: nothing of their own, before or after */
    assert_int_equal(read_like_session(r, many->data, many->len, p, len), 50);
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);

    /* 30 bytes of a 100-byte packet: a buffer of at least 30, at most 60 */
    assert_int_equal(read_like_session(r, p, 30, p, len), 0);
    assert_int_equal(ddm_jdwp_reader_pending(r), 30);
    assert_true(ddm_jdwp_reader_buffer_size(r) >= 30);
    assert_true(ddm_jdwp_reader_buffer_size(r) <= 60);
    assert_int_equal(ddm_jdwp_budget_used(b), ddm_jdwp_reader_buffer_size(r));
    /* the other reader still reads through the scratch meanwhile */
    assert_int_equal(read_like_session(q, many->data, many->len, p, len), 50);
    assert_int_equal(ddm_jdwp_reader_buffer_size(q), 0);
    /* the rest, plus two whole ones: three packets, and the buffer is gone */
    {
        GByteArray *rest = g_byte_array_new();
        g_byte_array_append(rest, p + 30, (guint)(len - 30));
        g_byte_array_append(rest, p, (guint)len);
        g_byte_array_append(rest, p, (guint)len);
        assert_int_equal(read_like_session(r, rest->data, rest->len, p, len), 3);
        g_byte_array_free(rest, TRUE);
    }
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);

    /* 1 MiB: it outgrows the 64 KiB scratch and comes out whole */
    assert_int_equal(read_like_session(r, big, big_len, big, big_len), 1);
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);

    ddm_jdwp_reader_free(r);
    ddm_jdwp_reader_free(q);
    ddm_jdwp_budget_free(b);
    g_byte_array_free(many, TRUE);
    g_free(p);
    g_free(big);
}

/* One reader borrows the scratch at a time: while a packet handed out from
 * it is in use (before its reader's NEED_MORE), another reader reads into
 * a buffer of its own and the packet's bytes stay intact; a reader freed
 * or failed while on the scratch gives it back. */
static void test_jdwp_scratch_one_borrower(void **state)
{
    DdmJdwpBudget *b = ddm_jdwp_budget_new(0);
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    DdmJdwpReader *q = ddm_jdwp_reader_new(0);
    size_t len, avail;
    uint8_t *p = make_packet(100, DDM_JDWP_FLAG_REPLY, 89, &len);
    uint8_t *dst;
    DdmJdwpPacket pkt;
    static const uint8_t junk[4] = { 0, 0, 0, 3 };
    (void)state;

    ddm_jdwp_reader_set_budget(r, b);
    ddm_jdwp_reader_set_budget(q, b);
    dst = ddm_jdwp_reader_space(r, 65536, &avail);
    memcpy(dst, p, len);
    ddm_jdwp_reader_commit(r, len);
    assert_true(ddm_jdwp_reader_on_scratch(r));
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    /* the packet is in use: q may not write over it */
    dst = ddm_jdwp_reader_space(q, 65536, &avail);
    assert_false(ddm_jdwp_reader_on_scratch(q));
    assert_true(ddm_jdwp_reader_buffer_size(q) > 0);
    memset(dst, 0xEE, avail);
    ddm_jdwp_reader_commit(q, 0);
    assert_bytes_equal(pkt.bytes, pkt.len, p, len);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    assert_false(ddm_jdwp_reader_on_scratch(r));
    /* q drains: its own buffer goes, the scratch being free again */
    assert_int_equal(ddm_jdwp_reader_next(q, &pkt), DDM_JDWP_NEED_MORE);
    assert_int_equal(ddm_jdwp_reader_buffer_size(q), 0);

    /* a reader freed on the scratch gives it back */
    dst = ddm_jdwp_reader_space(q, 64, &avail);
    assert_true(ddm_jdwp_reader_on_scratch(q));
    ddm_jdwp_reader_free(q);
    q = ddm_jdwp_reader_new(0);
    ddm_jdwp_reader_set_budget(q, b);
    /* a reader that fails on the scratch gives it back */
    dst = ddm_jdwp_reader_space(r, 64, &avail);
    memcpy(dst, junk, sizeof junk);
    ddm_jdwp_reader_commit(r, sizeof junk);
    assert_true(ddm_jdwp_reader_on_scratch(r));
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_ERR_SHORT);
    assert_false(ddm_jdwp_reader_on_scratch(r));
    assert_int_equal(ddm_jdwp_reader_claimed_len(r), 3);
    dst = ddm_jdwp_reader_space(q, 64, &avail);
    assert_true(ddm_jdwp_reader_on_scratch(q));
    ddm_jdwp_reader_commit(q, 0);
    assert_int_equal(ddm_jdwp_reader_next(q, &pkt), DDM_JDWP_NEED_MORE);
    assert_false(ddm_jdwp_reader_on_scratch(q));

    ddm_jdwp_reader_free(r);
    ddm_jdwp_reader_free(q);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    ddm_jdwp_budget_free(b);
    g_free(p);
}

/* A reader whose owner stops before NEED_MORE (a debugger held until its
 * VM is up) gives the scratch back on release_scratch: its unread packets
 * move to a buffer of its own and come out intact afterwards, and another
 * reader can read into the scratch meanwhile. */
static void test_jdwp_scratch_release(void **state)
{
    DdmJdwpBudget *b = ddm_jdwp_budget_new(0);
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    DdmJdwpReader *q = ddm_jdwp_reader_new(0);
    size_t len, avail;
    uint8_t *p = make_packet(40, 0, 29, &len);
    uint8_t *dst;
    DdmJdwpPacket pkt;
    (void)state;

    ddm_jdwp_reader_set_budget(r, b);
    ddm_jdwp_reader_set_budget(q, b);
    assert_true(ddm_jdwp_reader_release_scratch(r)); /* off the scratch: no-op */
    dst = ddm_jdwp_reader_space(r, 65536, &avail);
    memcpy(dst, p, len);
    memcpy(dst + len, p, len);
    ddm_jdwp_reader_commit(r, 2 * len);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_true(ddm_jdwp_reader_on_scratch(r));
    assert_true(ddm_jdwp_reader_release_scratch(r));
    assert_false(ddm_jdwp_reader_on_scratch(r));
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), len); /* only what was left */
    dst = ddm_jdwp_reader_space(q, 64, &avail);
    assert_true(ddm_jdwp_reader_on_scratch(q));
    memset(dst, 0xEE, avail);
    ddm_jdwp_reader_commit(q, 0);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_bytes_equal(pkt.bytes, pkt.len, p, len);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0);

    ddm_jdwp_reader_free(r);
    ddm_jdwp_reader_free(q);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    ddm_jdwp_budget_free(b);
    g_free(p);
}

/* Start-up with thousands of peers (issue 16): a reader whose read found
 * nothing (space() borrowed the scratch, read() said EAGAIN, so no commit
 * and no next()) must not keep every other reader off the scratch; and a
 * reader that reads into a buffer of its own (the scratch really in use)
 * keeps only what arrived: nothing once drained, and for an incomplete
 * packet a buffer sized to its bytes, not to the 64 KiB read. */
static void test_jdwp_scratch_empty_read_and_own_buffers(void **state)
{
    DdmJdwpBudget *b = ddm_jdwp_budget_new((size_t)64 << 20);
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    DdmJdwpReader *q = ddm_jdwp_reader_new(0);
    DdmJdwpReader *s = ddm_jdwp_reader_new(0);
    size_t len, avail;
    uint8_t *p = make_packet(100, DDM_JDWP_FLAG_REPLY, 89, &len);
    uint8_t *dst;
    DdmJdwpPacket pkt;
    (void)state;

    ddm_jdwp_reader_set_budget(r, b);
    ddm_jdwp_reader_set_budget(q, b);
    ddm_jdwp_reader_set_budget(s, b);

    /* r: a whole packet, then a read that finds nothing (EAGAIN) */
    assert_int_equal(read_like_session(r, p, len, p, len), 1);
    dst = ddm_jdwp_reader_space(r, 65536, &avail);
    assert_non_null(dst);
    /* q: 30 bytes of a packet, then whole ones: never more than it holds */
    assert_int_equal(read_like_session(q, p, 30, p, len), 0);
    assert_true(ddm_jdwp_reader_buffer_size(q) >= 30);
    assert_true(ddm_jdwp_reader_buffer_size(q) <= 60);
    assert_int_equal(read_like_session(q, p + 30, len - 30, p, len), 1);
    assert_int_equal(ddm_jdwp_reader_buffer_size(q), 0);
    assert_int_equal(read_like_session(q, p, len, p, len), 1);
    assert_int_equal(ddm_jdwp_reader_buffer_size(q), 0);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    /* r reads on normally afterwards */
    assert_int_equal(read_like_session(r, p, len, p, len), 1);
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0);

    /* the scratch in use for real: a packet r handed out is still borrowed */
    dst = ddm_jdwp_reader_space(r, 65536, &avail);
    memcpy(dst, p, len);
    ddm_jdwp_reader_commit(r, len);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    /* s reads into its own buffer meanwhile: 30 bytes keep at most 60 */
    dst = ddm_jdwp_reader_space(s, 65536, &avail);
    assert_false(ddm_jdwp_reader_on_scratch(s));
    memcpy(dst, p, 30);
    ddm_jdwp_reader_commit(s, 30);
    assert_int_equal(ddm_jdwp_reader_next(s, NULL), DDM_JDWP_NEED_MORE);
    assert_true(ddm_jdwp_reader_buffer_size(s) >= 30);
    assert_true(ddm_jdwp_reader_buffer_size(s) <= 60);
    /* the rest: the packet comes out whole and the buffer goes */
    dst = ddm_jdwp_reader_space(s, 65536, &avail);
    assert_false(ddm_jdwp_reader_on_scratch(s));
    memcpy(dst, p + 30, len - 30);
    ddm_jdwp_reader_commit(s, len - 30);
    {
        DdmJdwpPacket spkt;
        assert_int_equal(ddm_jdwp_reader_next(s, &spkt), DDM_JDWP_PACKET);
        assert_bytes_equal(spkt.bytes, spkt.len, p, len);
    }
    assert_int_equal(ddm_jdwp_reader_next(s, NULL), DDM_JDWP_NEED_MORE);
    assert_int_equal(ddm_jdwp_reader_buffer_size(s), 0);
    /* r's packet was never written over */
    assert_bytes_equal(pkt.bytes, pkt.len, p, len);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);

    ddm_jdwp_reader_free(r);
    ddm_jdwp_reader_free(q);
    ddm_jdwp_reader_free(s);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    ddm_jdwp_budget_free(b);
    g_free(p);
}

/* A reader sharing a budget that streams a long reply (the relay's
 * cut-through) and is asked for reads larger than the scratch
 * (core/session/vm_io.c: 256 KiB once a read filled its buffer) keeps that
 * buffer, emptied, between its reads of the packet, and gives it back at
 * the first NEED_MORE after the packet's end (to the budget's one spare,
 * reused by the next large read, freed by ddm_jdwp_budget_trim); the bytes
 * come out whole, and a packet read in the same read after it comes out as
 * usual. */
static void test_jdwp_stream_keeps_large_buffer_to_its_end(void **state)
{
    const size_t body = (size_t)1 << 20, big = (size_t)256 << 10;
    DdmJdwpBudget *b = ddm_jdwp_budget_new((size_t)64 << 20);
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    size_t len, slen, avail, off = 0;
    uint8_t *p = make_packet((uint32_t)(body + 11), DDM_JDWP_FLAG_REPLY, body, &len);
    uint8_t *s = make_packet(20, DDM_JDWP_FLAG_REPLY, 9, &slen);
    GByteArray *all = g_byte_array_new(), *got = g_byte_array_new();
    DdmJdwpPacket pkt;
    DdmJdwpResult res;
    int ends = 0, packets = 0;
    (void)state;

    g_byte_array_append(all, p, (guint)len);
    g_byte_array_append(all, s, (guint)slen);
    ddm_jdwp_reader_set_budget(r, b);
    ddm_jdwp_reader_offer_heads(r, DDM_JDWP_HEADER_LEN);
    ddm_jdwp_reader_offer_reply_heads(r, TRUE);
    /* the first read: 64 KiB into the scratch, the head taken as a stream */
    uint8_t *dst = ddm_jdwp_reader_space(r, (size_t)64 << 10, &avail);
    assert_non_null(dst);
    assert_true(ddm_jdwp_reader_on_scratch(r));
    memcpy(dst, all->data, avail);
    ddm_jdwp_reader_commit(r, avail);
    off = avail;
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET_HEAD);
    assert_true(ddm_jdwp_reader_stream(r, 0));
    while ((res = ddm_jdwp_reader_next(r, &pkt)) == DDM_JDWP_STREAM_DATA)
        g_byte_array_append(got, pkt.data, (guint)pkt.data_len);
    assert_int_equal(res, DDM_JDWP_NEED_MORE);
    /* then reads of 256 KiB: one buffer, kept (empty) from read to read */
    uint8_t *first = NULL;
    while (off < all->len) {
        dst = ddm_jdwp_reader_space(r, big, &avail);
        assert_non_null(dst);
        assert_false(ddm_jdwp_reader_on_scratch(r));
        assert_true(avail >= big);
        if (!first)
            first = dst;
        assert_ptr_equal(dst, first); /* the same buffer: no allocation per read */
        size_t n = MIN(big, all->len - off);
        memcpy(dst, all->data + off, n);
        ddm_jdwp_reader_commit(r, n);
        off += n;
        while ((res = ddm_jdwp_reader_next(r, &pkt)) != DDM_JDWP_NEED_MORE) {
            if (res == DDM_JDWP_STREAM_DATA)
                g_byte_array_append(got, pkt.data, (guint)pkt.data_len);
            else if (res == DDM_JDWP_STREAM_END)
                ends++;
            else if (res == DDM_JDWP_PACKET) {
                packets++;
                assert_bytes_equal(pkt.bytes, pkt.len, s, slen);
            } else
                fail_msg("unexpected reader result %d", res);
        }
        if (off < all->len) { /* mid-packet: the emptied buffer stays, counted */
            assert_int_equal(ddm_jdwp_reader_buffer_size(r), big);
            assert_int_equal(ddm_jdwp_budget_used(b), big);
        }
    }
    assert_int_equal(ends, 1);
    assert_int_equal(packets, 1);
    assert_bytes_equal(got->data, got->len, p + DDM_JDWP_HEADER_LEN, body);
    /* the packet's end: the buffer went back, to the budget's spare
     * (uncounted), which the next large read takes instead of a new one */
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), big);
    dst = ddm_jdwp_reader_space(r, big, &avail);
    assert_ptr_equal(dst, first);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), 0);
    assert_int_equal(ddm_jdwp_budget_used(b), big);
    memcpy(dst, s, slen);
    ddm_jdwp_reader_commit(r, slen);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), big);
    /* a small ask never takes it (at most twice what a buffer needs) */
    dst = ddm_jdwp_reader_space(r, 100000, &avail);
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 100000);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), big);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0);
    /* the monitor's trim frees it */
    assert_true(ddm_jdwp_budget_trim(b));
    assert_int_equal(ddm_jdwp_budget_spare_size(b), 0);
    assert_false(ddm_jdwp_budget_trim(b));
    assert_int_equal(ddm_jdwp_budget_used(b), 0);

    ddm_jdwp_reader_free(r);
    ddm_jdwp_budget_free(b);
    g_byte_array_free(all, TRUE);
    g_byte_array_free(got, TRUE);
    g_free(p);
    g_free(s);
}

/* Put @r (sharing @b) in the middle of streaming the reply @p (a long one,
 * only partly given): a 64 KiB read into the scratch, the head taken as a
 * stream, then one 256 KiB read; every piece handed out: the reader holds
 * its emptied 256 KiB buffer. */
static void stream_with_big_buffer(DdmJdwpReader *r, const uint8_t *p)
{
    const size_t big = (size_t)256 << 10, first = (size_t)64 << 10;
    size_t avail;
    DdmJdwpPacket pkt;
    DdmJdwpResult res;

    ddm_jdwp_reader_offer_heads(r, DDM_JDWP_HEADER_LEN);
    ddm_jdwp_reader_offer_reply_heads(r, TRUE);
    uint8_t *dst = ddm_jdwp_reader_space(r, first, &avail);
    assert_non_null(dst);
    memcpy(dst, p, first);
    ddm_jdwp_reader_commit(r, first);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET_HEAD);
    assert_true(ddm_jdwp_reader_stream(r, 0));
    while ((res = ddm_jdwp_reader_next(r, &pkt)) == DDM_JDWP_STREAM_DATA)
        ;
    assert_int_equal(res, DDM_JDWP_NEED_MORE);
    dst = ddm_jdwp_reader_space(r, big, &avail);
    assert_non_null(dst);
    assert_true(avail >= big);
    memcpy(dst, p + first, big);
    ddm_jdwp_reader_commit(r, big);
    while ((res = ddm_jdwp_reader_next(r, &pkt)) == DDM_JDWP_STREAM_DATA)
        ;
    assert_int_equal(res, DDM_JDWP_NEED_MORE);
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), big);
}

/* release_empty (the caller's socket is empty, review rB 1): the emptied
 * 256 KiB buffer of a stream goes to the budget's spare (uncounted), or is
 * freed when the spare is taken; the streams go on as before. A reader
 * holding nothing, or bytes, keeps what it has. */
/* ddm_jdwp_reader_set_more_outside: has_packet() says TRUE while its
 * caller handles packets it read itself with more to come (the in-place
 * path, core/session/vm_io.c), and goes back to what the reader holds. */
static void test_jdwp_more_outside(void **state)
{
    (void)state;
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    size_t len;
    uint8_t *p = ddm_jdwp_build_reply(7, 0, "ab", 2, &len);
    assert_true(ddm_jdwp_reader_idle(r));
    assert_false(ddm_jdwp_reader_has_packet(r));
    ddm_jdwp_reader_set_more_outside(r, TRUE);
    assert_true(ddm_jdwp_reader_has_packet(r));
    assert_true(ddm_jdwp_reader_idle(r)); /* it holds nothing all the same */
    ddm_jdwp_reader_set_more_outside(r, FALSE);
    assert_false(ddm_jdwp_reader_has_packet(r));
    ddm_jdwp_reader_feed(r, p, len - 1); /* not whole */
    assert_false(ddm_jdwp_reader_has_packet(r));
    ddm_jdwp_reader_feed(r, p + len - 1, 1);
    assert_true(ddm_jdwp_reader_has_packet(r));
    DdmJdwpPacket pkt;
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_int_equal(pkt.header.id, 7);
    assert_false(ddm_jdwp_reader_has_packet(r));
    g_free(p);
    ddm_jdwp_reader_free(r);
}

/* ddm_jdwp_reader_in_place_ok: not right after a streamed packet (its
 * peer's next is likely long), again once a whole packet went out; never
 * with a buffer above the bound. */
static void test_jdwp_in_place_ok_after_stream(void **state)
{
    (void)state;
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    ddm_jdwp_reader_offer_heads(r, DDM_JDWP_HEADER_LEN);
    ddm_jdwp_reader_offer_reply_heads(r, TRUE);
    DdmJdwpPacket pkt;
    assert_true(ddm_jdwp_reader_in_place_ok(r, 1 << 16));
    size_t len;
    uint8_t body[100] = { 0 };
    uint8_t *big = ddm_jdwp_build_reply(9, 0, body, sizeof body, &len);
    ddm_jdwp_reader_feed(r, big, 20); /* its head only */
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET_HEAD);
    assert_true(ddm_jdwp_reader_stream(r, 0));
    ddm_jdwp_reader_feed(r, big + 20, len - 20);
    DdmJdwpResult res;
    while ((res = ddm_jdwp_reader_next(r, &pkt)) == DDM_JDWP_STREAM_DATA)
        ;
    assert_int_equal(res, DDM_JDWP_STREAM_END);
    assert_true(ddm_jdwp_reader_idle(r));
    assert_false(ddm_jdwp_reader_in_place_ok(r, G_MAXSIZE)); /* streamed last */
    size_t slen;
    uint8_t *small = ddm_jdwp_build_reply(10, 0, "x", 1, &slen);
    ddm_jdwp_reader_feed(r, small, slen);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    assert_true(ddm_jdwp_reader_in_place_ok(r, G_MAXSIZE)); /* a whole one since */
    if (ddm_jdwp_reader_buffer_size(r) > 0)
        assert_false(ddm_jdwp_reader_in_place_ok(r, ddm_jdwp_reader_buffer_size(r) - 1));
    g_free(big);
    g_free(small);
    ddm_jdwp_reader_free(r);
}

static void test_jdwp_stream_release_empty(void **state)
{
    const size_t big = (size_t)256 << 10, body = (size_t)1 << 20;
    DdmJdwpBudget *b = ddm_jdwp_budget_new((size_t)4 << 20);
    DdmJdwpReader *r1 = ddm_jdwp_reader_new(0), *r2 = ddm_jdwp_reader_new(0);
    size_t len, avail;
    uint8_t *p = make_packet((uint32_t)(body + 11), DDM_JDWP_FLAG_REPLY, body, &len);
    DdmJdwpPacket pkt;
    (void)state;

    ddm_jdwp_reader_set_budget(r1, b);
    ddm_jdwp_reader_set_budget(r2, b);
    assert_false(ddm_jdwp_reader_release_empty(r1));
    stream_with_big_buffer(r1, p);
    stream_with_big_buffer(r2, p);
    assert_int_equal(ddm_jdwp_budget_used(b), 2 * big);
    assert_true(ddm_jdwp_reader_release_empty(r1));
    assert_int_equal(ddm_jdwp_reader_buffer_size(r1), 0);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), big);
    assert_int_equal(ddm_jdwp_budget_used(b), big);
    assert_true(ddm_jdwp_reader_release_empty(r2)); /* the spare is taken: freed */
    assert_int_equal(ddm_jdwp_reader_buffer_size(r2), 0);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), big);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    assert_false(ddm_jdwp_reader_release_empty(r2));
    /* the stream goes on: a small read, its bytes handed out */
    uint8_t *dst = ddm_jdwp_reader_space(r1, 100, &avail);
    assert_non_null(dst);
    memcpy(dst, p + (320u << 10), 100);
    ddm_jdwp_reader_commit(r1, 100);
    assert_false(ddm_jdwp_reader_release_empty(r1)); /* (bytes pending) */
    assert_int_equal(ddm_jdwp_reader_next(r1, &pkt), DDM_JDWP_STREAM_DATA);
    assert_int_equal(pkt.data_len, 100);
    assert_memory_equal(pkt.data, p + (320u << 10), 100);
    assert_int_equal(ddm_jdwp_reader_next(r1, &pkt), DDM_JDWP_NEED_MORE);
    assert_true(ddm_jdwp_reader_stream_left(r1) > 0);
    ddm_jdwp_reader_free(r1);
    ddm_jdwp_reader_free(r2);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    ddm_jdwp_budget_free(b);
    g_free(p);
}

/* A caller that takes a streamed packet's bytes from the socket itself
 * (the relay's splice): stream_unread says how many are still on the wire,
 * only while the reader holds none of them; stream_moved counts them, and
 * at the last one next() ends the stream; the packet after it is read as
 * usual. */
static void test_jdwp_stream_moved_outside(void **state)
{
    const size_t body = 100000;
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    size_t len, slen;
    uint8_t *p = make_packet((uint32_t)(body + 11), DDM_JDWP_FLAG_REPLY, body, &len);
    uint8_t *s = make_packet(20, DDM_JDWP_FLAG_REPLY, 9, &slen);
    DdmJdwpPacket pkt;
    (void)state;

    ddm_jdwp_reader_offer_heads(r, DDM_JDWP_HEADER_LEN);
    ddm_jdwp_reader_offer_reply_heads(r, TRUE);
    assert_int_equal(ddm_jdwp_reader_stream_unread(r), 0); /* not streaming */
    ddm_jdwp_reader_feed(r, p, 11 + 100);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET_HEAD);
    assert_int_equal(ddm_jdwp_reader_stream_unread(r), 0); /* a head: not yet streaming */
    assert_true(ddm_jdwp_reader_stream(r, 0));
    /* 100 body bytes are buffered: they come first, through next() */
    assert_int_equal(ddm_jdwp_reader_stream_unread(r), 0);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_STREAM_DATA);
    assert_int_equal(pkt.data_len, 100);
    assert_memory_equal(pkt.data, p + 11, 100);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    /* none buffered: the rest is the caller's to take */
    assert_int_equal(ddm_jdwp_reader_stream_unread(r), body - 100);
    ddm_jdwp_reader_stream_moved(r, 60000);
    assert_int_equal(ddm_jdwp_reader_stream_unread(r), body - 100 - 60000);
    assert_int_equal(ddm_jdwp_reader_stream_left(r), body - 100 - 60000);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    /* some read through the reader again, then moved again */
    ddm_jdwp_reader_feed(r, p + 11 + 100 + 60000, 900);
    assert_int_equal(ddm_jdwp_reader_stream_unread(r), 0); /* buffered: next() first */
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_STREAM_DATA);
    assert_int_equal(pkt.data_len, 900);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    size_t rest = body - 100 - 60000 - 900;
    assert_int_equal(ddm_jdwp_reader_stream_unread(r), rest);
    ddm_jdwp_reader_stream_moved(r, rest);
    assert_int_equal(ddm_jdwp_reader_stream_unread(r), 0);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_STREAM_END);
    assert_int_equal(ddm_jdwp_reader_stream_left(r), 0);
    /* the next packet: as usual */
    ddm_jdwp_reader_feed(r, s, slen);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_int_equal(pkt.len, slen);
    assert_memory_equal(pkt.bytes, s, slen);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    g_free(p);
    g_free(s);
    ddm_jdwp_reader_free(r);
}

/* While a packet streams, an emptied buffer larger than the stream's reads
 * (one grown for a large whole packet just before it) is not kept (review
 * rB 2): it goes at the NEED_MORE, and is not the spare either. */
static void test_jdwp_stream_drops_oversized_buffer(void **state)
{
    const size_t whole = (size_t)1 << 20;
    DdmJdwpBudget *b = ddm_jdwp_budget_new((size_t)16 << 20);
    DdmJdwpReader *r = ddm_jdwp_reader_new((size_t)2 << 20);
    size_t wlen, llen;
    uint8_t *w = make_packet((uint32_t)whole, 0, whole - 11, &wlen);
    uint8_t *l = make_packet((uint32_t)(1536u << 10), 0, 100, &llen); /* only its start */
    GByteArray *all = g_byte_array_new();
    DdmJdwpPacket pkt;
    (void)state;

    g_byte_array_append(all, w, (guint)wlen);
    g_byte_array_append(all, l, (guint)llen);
    ddm_jdwp_reader_set_budget(r, b);
    ddm_jdwp_reader_offer_heads(r, DDM_JDWP_HEADER_LEN);
    ddm_jdwp_reader_feed(r, all->data, all->len);
    assert_true(ddm_jdwp_reader_buffer_size(r) > whole);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_int_equal(pkt.len, whole);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET_HEAD);
    assert_true(ddm_jdwp_reader_stream(r, 0));
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_STREAM_DATA);
    assert_int_equal(pkt.data_len, 100);
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_NEED_MORE);
    assert_true(ddm_jdwp_reader_stream_left(r) > 0);
    assert_int_equal(ddm_jdwp_reader_buffer_size(r), 0);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), 0);
    ddm_jdwp_reader_free(r);
    ddm_jdwp_budget_free(b);
    g_byte_array_free(all, TRUE);
    g_free(w);
    g_free(l);
}

/* Read a whole packet of @size bytes into @r through space(@size): its
 * buffer is then empty (NEED_MORE). */
static void read_whole_packet(DdmJdwpReader *r, size_t size)
{
    size_t len, avail;
    uint8_t *p = make_packet((uint32_t)size, 0, size - 11, &len);
    uint8_t *dst = ddm_jdwp_reader_space(r, size, &avail);
    assert_non_null(dst);
    assert_true(avail >= size);
    memcpy(dst, p, size);
    ddm_jdwp_reader_commit(r, size);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_PACKET);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_NEED_MORE);
    g_free(p);
}

/* The spare (review rB 3, 4): only a buffer of exactly the stream reads'
 * 256 KiB is parked (a 200 KB one is freed); a reader takes it only when
 * the budget has room for all of it (it is charged whole), else it gets a
 * buffer of the size it needs; the budget is never exceeded. */
static void test_jdwp_spare_exact_and_charged_whole(void **state)
{
    const size_t big = (size_t)256 << 10, limit = 350000;
    DdmJdwpBudget *b = ddm_jdwp_budget_new(limit);
    DdmJdwpReader *r1 = ddm_jdwp_reader_new((size_t)1 << 20);
    DdmJdwpReader *r2 = ddm_jdwp_reader_new((size_t)1 << 20);
    DdmJdwpReader *r3 = ddm_jdwp_reader_new((size_t)1 << 20);
    size_t avail;
    (void)state;

    ddm_jdwp_reader_set_budget(r1, b);
    ddm_jdwp_reader_set_budget(r2, b);
    ddm_jdwp_reader_set_budget(r3, b);
    read_whole_packet(r1, 200000);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), 0); /* not of the reads' size: freed */
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    read_whole_packet(r1, big);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), big);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    /* 100,000 bytes held elsewhere: 200,000 more fit (300,000 <= 350,000),
     * the 256 KiB spare would not (362,144) */
    assert_non_null(ddm_jdwp_reader_space(r2, 100000, &avail));
    assert_int_equal(ddm_jdwp_budget_used(b), 100000);
    assert_non_null(ddm_jdwp_reader_space(r3, 200000, &avail));
    assert_int_equal(ddm_jdwp_reader_buffer_size(r3), 200000);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), big);
    assert_int_equal(ddm_jdwp_budget_used(b), 300000);
    assert_true(ddm_jdwp_budget_used(b) <= limit);
    /* with room for it (the other reader's buffers gone), the spare is taken */
    assert_int_equal(ddm_jdwp_reader_next(r2, NULL), DDM_JDWP_NEED_MORE);
    assert_int_equal(ddm_jdwp_reader_next(r3, NULL), DDM_JDWP_NEED_MORE);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    assert_non_null(ddm_jdwp_reader_space(r3, 200000, &avail));
    assert_int_equal(ddm_jdwp_reader_buffer_size(r3), big);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), 0);
    assert_int_equal(ddm_jdwp_budget_used(b), big);
    ddm_jdwp_reader_free(r1);
    ddm_jdwp_reader_free(r2);
    ddm_jdwp_reader_free(r3);
    ddm_jdwp_budget_free(b);
}

/* The length a bad packet declared is kept for the log line. */
static void test_jdwp_bad_length_value_kept(void **state)
{
    static const uint8_t huge[4] = { 0x10, 0x00, 0x00, 0x01 };
    static const uint8_t tiny[4] = { 0, 0, 0, 7 };
    DdmJdwpReader *r = ddm_jdwp_reader_new(1u << 20);
    (void)state;

    ddm_jdwp_reader_feed(r, huge, 4);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_ERR_TOO_BIG);
    assert_int_equal(ddm_jdwp_reader_claimed_len(r), 0x10000001u);
    ddm_jdwp_reader_free(r);
    r = ddm_jdwp_reader_new(0);
    ddm_jdwp_reader_feed(r, tiny, 4);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_ERR_SHORT);
    assert_int_equal(ddm_jdwp_reader_claimed_len(r), 7);
    ddm_jdwp_reader_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_jdwp_fixture_whole, setup_stream, teardown_stream),
        cmocka_unit_test_setup_teardown(test_jdwp_split_every_offset, setup_stream,
                                        teardown_stream),
        cmocka_unit_test_setup_teardown(test_jdwp_split_every_pair_of_offsets, setup_stream,
                                        teardown_stream),
        cmocka_unit_test_setup_teardown(test_jdwp_byte_at_a_time, setup_stream, teardown_stream),
        cmocka_unit_test_setup_teardown(test_jdwp_space_commit_every_chunk_size, setup_stream,
                                        teardown_stream),
        cmocka_unit_test_setup_teardown(test_jdwp_packet_valid_until_next_call, setup_stream,
                                        teardown_stream),
        cmocka_unit_test(test_jdwp_lengths),
        cmocka_unit_test(test_jdwp_length_error_from_four_bytes),
        cmocka_unit_test(test_jdwp_large_packet_growth_bounded),
        cmocka_unit_test(test_jdwp_flags),
        cmocka_unit_test(test_jdwp_handshake_exact),
        cmocka_unit_test(test_jdwp_handshake_split),
        cmocka_unit_test(test_jdwp_handshake_wrong),
        cmocka_unit_test(test_jdwp_handshake_packets_race_ahead),
        cmocka_unit_test(test_jdwp_error_is_sticky),
        cmocka_unit_test(test_jdwp_result_str),
        cmocka_unit_test(test_jdwp_header_round_trip),
        cmocka_unit_test(test_jdwp_parse_header_short),
        cmocka_unit_test(test_jdwp_builders),
        cmocka_unit_test(test_jdwp_set_id),
        cmocka_unit_test(test_jdwp_error_names),
        cmocka_unit_test(test_jdwp_plugin_allow_list),
        cmocka_unit_test(test_jdwp_stream_large_packet),
        cmocka_unit_test(test_jdwp_claim_costs_what_arrives),
        cmocka_unit_test(test_jdwp_idle_reader_holds_nothing),
        cmocka_unit_test(test_jdwp_budget_refuses_newest_claim),
        cmocka_unit_test(test_jdwp_bad_length_value_kept),
        cmocka_unit_test(test_jdwp_stream_head_rules),
        cmocka_unit_test(test_jdwp_scratch_whole_and_partial),
        cmocka_unit_test(test_jdwp_scratch_one_borrower),
        cmocka_unit_test(test_jdwp_scratch_release),
        cmocka_unit_test(test_jdwp_scratch_empty_read_and_own_buffers),
        cmocka_unit_test(test_jdwp_stream_keeps_large_buffer_to_its_end),
        cmocka_unit_test(test_jdwp_more_outside),
        cmocka_unit_test(test_jdwp_in_place_ok_after_stream),
        cmocka_unit_test(test_jdwp_stream_release_empty),
        cmocka_unit_test(test_jdwp_stream_moved_outside),
        cmocka_unit_test(test_jdwp_stream_drops_oversized_buffer),
        cmocka_unit_test(test_jdwp_spare_exact_and_charged_whole),
    };
    return cmocka_run_group_tests_name("jdwp", tests, NULL, NULL);
}
