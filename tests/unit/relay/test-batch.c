/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the relay's batching predicate, ddm_jdwp_reader_has_packet
 * (core/wire/jdwp.c): the relay writes a packet to the debugger at once
 * unless the predicate says another whole packet is already read, and
 * sends a debugger's packet to the VM straight from the reader's buffer
 * unless it does. So it must predict exactly whether the reader's next()
 * returns a whole packet without more input: for whole packets, a stream
 * cut at every byte boundary, large bodies, bad lengths and flags, and the
 * handshake. (tests/fuzz/fuzz-relay checks the same on any input.) And the
 * relay's fast path: whole packets taken in place while the reader is idle
 * (ddm_jdwp_reader_idle, ddm_jdwp_whole_packet_len), the rest fed to it,
 * give the packets and errors of the reader fed everything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/wire/jdwp.h"

#define CAP ((size_t)1 << 20)

/* A stream of @n packets of the lengths given, ids 1.. and a body pattern. */
static uint8_t *make_stream(const size_t *lens, size_t n, size_t *total)
{
    size_t all = 0;
    for (size_t i = 0; i < n; i++)
        all += lens[i];
    uint8_t *s = g_malloc(all);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        DdmJdwpHeader h = {.length = (uint32_t)lens[i], .id = (uint32_t)i + 1,
                           .flags = (i % 2) ? DDM_JDWP_FLAG_REPLY : 0, .cmdset = 1, .cmd = 1};
        ddm_jdwp_write_header(s + at, &h);
        for (size_t k = DDM_JDWP_HEADER_LEN; k < lens[i]; k++)
            s[at + k] = (uint8_t)(k * 7 + i);
        at += lens[i];
    }
    *total = all;
    return s;
}

/* Drain @r, checking before each call that the predicate says what next()
 * then does, and that the packets come whole and in order. */
static void drain_checked(DdmJdwpReader *r, const uint8_t *stream, const size_t *lens, size_t *next_pkt,
                          size_t *offset)
{
    for (;;) {
        gboolean predicted = ddm_jdwp_reader_has_packet(r);
        DdmJdwpPacket pkt;
        DdmJdwpResult res = ddm_jdwp_reader_next(r, &pkt);
        assert_int_equal(predicted, res == DDM_JDWP_PACKET);
        if (res == DDM_JDWP_NEED_MORE)
            return;
        assert_int_equal(res, DDM_JDWP_PACKET);
        assert_int_equal(pkt.len, lens[*next_pkt]);
        assert_int_equal(pkt.header.id, *next_pkt + 1);
        assert_memory_equal(pkt.bytes, stream + *offset, pkt.len);
        *offset += pkt.len;
        (*next_pkt)++;
    }
}

/* Feed @stream cut at @cut (and the rest), draining after each piece. */
static void run_cut(const uint8_t *stream, size_t total, const size_t *lens, size_t n, size_t cut)
{
    DdmJdwpReader *r = ddm_jdwp_reader_new(CAP);
    size_t next_pkt = 0, offset = 0;
    assert_false(ddm_jdwp_reader_has_packet(r));
    ddm_jdwp_reader_feed(r, stream, cut);
    drain_checked(r, stream, lens, &next_pkt, &offset);
    ddm_jdwp_reader_feed(r, stream + cut, total - cut);
    drain_checked(r, stream, lens, &next_pkt, &offset);
    assert_int_equal(next_pkt, n);
    assert_false(ddm_jdwp_reader_has_packet(r));
    ddm_jdwp_reader_free(r);
}

static void test_whole_packets(void **state)
{
    (void)state;
    const size_t lens[] = {11, 30, 11, 200};
    size_t total;
    g_autofree uint8_t *s = make_stream(lens, 4, &total);
    run_cut(s, total, lens, 4, total); /* all at once: TRUE after each but the last */
    DdmJdwpReader *r = ddm_jdwp_reader_new(CAP);
    ddm_jdwp_reader_feed(r, s, total);
    DdmJdwpPacket pkt;
    for (int i = 0; i < 4; i++) {
        assert_true(ddm_jdwp_reader_has_packet(r));
        assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    }
    assert_false(ddm_jdwp_reader_has_packet(r));
    ddm_jdwp_reader_free(r);
}

static void test_every_byte_boundary(void **state)
{
    (void)state;
    const size_t lens[] = {11, 12, 57, 11, 300, 19};
    size_t total;
    g_autofree uint8_t *s = make_stream(lens, 6, &total);
    for (size_t cut = 0; cut <= total; cut++)
        run_cut(s, total, lens, 6, cut);
}

static void test_large_bodies(void **state)
{
    (void)state;
    /* Bodies past the reader's first buffer, between small packets. */
    const size_t lens[] = {11, 200000, 11, 70000, 40};
    size_t total;
    g_autofree uint8_t *s = make_stream(lens, 5, &total);
    const size_t cuts[] = {0, 5, 11, 12, 100, 65536, 200010, 200011, 200012, 200022, 200023,
                           240000, 270022, 270033, 270034, total - 1, total};
    for (size_t i = 0; i < G_N_ELEMENTS(cuts); i++)
        run_cut(s, total, lens, 5, cuts[i]);
}

static void test_bad_lengths(void **state)
{
    (void)state;
    /* Declared lengths below 11 or past the cap are no packet: next() fails. */
    const uint32_t bad[] = {0, 5, 10, (uint32_t)CAP + 1, 0xFFFFFFFFu};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        uint8_t b[64] = {0};
        DdmJdwpHeader h = {.length = bad[i], .id = 1};
        ddm_jdwp_write_header(b, &h);
        DdmJdwpReader *r = ddm_jdwp_reader_new(CAP);
        ddm_jdwp_reader_feed(r, b, sizeof b);
        assert_false(ddm_jdwp_reader_has_packet(r));
        DdmJdwpPacket pkt;
        assert_true(ddm_jdwp_reader_next(r, &pkt) < 0);
        assert_false(ddm_jdwp_reader_has_packet(r)); /* failed for good */
        ddm_jdwp_reader_free(r);
    }
}

static void test_bad_flags(void **state)
{
    (void)state;
    /* Whole by its length, but with flags neither 0 nor 0x80: no packet. */
    uint8_t b[20] = {0};
    DdmJdwpHeader h = {.length = sizeof b, .id = 1, .flags = 0x40};
    ddm_jdwp_write_header(b, &h);
    DdmJdwpReader *r = ddm_jdwp_reader_new(CAP);
    ddm_jdwp_reader_feed(r, b, sizeof b);
    assert_false(ddm_jdwp_reader_has_packet(r));
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_ERR_FLAGS);
    ddm_jdwp_reader_free(r);
}

static void test_handshake_first(void **state)
{
    (void)state;
    const size_t lens[] = {11};
    size_t total;
    g_autofree uint8_t *s = make_stream(lens, 1, &total);
    DdmJdwpReader *r = ddm_jdwp_reader_new(CAP);
    ddm_jdwp_reader_expect_handshake(r);
    ddm_jdwp_reader_feed(r, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    ddm_jdwp_reader_feed(r, s, total);
    assert_false(ddm_jdwp_reader_has_packet(r)); /* the handshake comes first */
    DdmJdwpPacket pkt;
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_HANDSHAKE_OK);
    assert_true(ddm_jdwp_reader_has_packet(r));
    assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
    assert_false(ddm_jdwp_reader_has_packet(r));
    ddm_jdwp_reader_free(r);
}

/* ---------------------------------------------------------- the fast path
 * The relay's fast path (core/relay/relay_debugger.c, relay_in_place): while
 * the reader is idle (ddm_jdwp_reader_idle) a read goes to a buffer of the
 * relay's own; the whole packets at its start are taken in place
 * (ddm_jdwp_whole_packet_len) and only the rest is fed to the reader. The
 * packets and errors must be exactly those of the reader fed everything. */

/* The readers' cap in these tests. */
static size_t fast_cap = CAP;

/* One "read" of @n bytes, the way the relay takes it: appends the packets
 * to @got (id, length pairs) and returns the reader's result that ended
 * its drain (NEED_MORE, or an error). */
static DdmJdwpResult fast_read(DdmJdwpReader *r, const uint8_t *p, size_t n, GArray *got, gboolean *went_fast)
{
    size_t off = 0, len;
    if (ddm_jdwp_reader_idle(r)) {
        *went_fast = TRUE;
        while ((len = ddm_jdwp_whole_packet_len(p + off, n - off, fast_cap))) {
            DdmJdwpHeader h;
            assert_true(ddm_jdwp_parse_header(p + off, len, &h));
            uint32_t pair[2] = {h.id, (uint32_t)len};
            g_array_append_vals(got, pair, 2);
            off += len;
        }
    }
    if (off < n)
        ddm_jdwp_reader_feed(r, p + off, n - off);
    for (;;) {
        DdmJdwpPacket pkt;
        DdmJdwpResult res = ddm_jdwp_reader_next(r, &pkt);
        if (res != DDM_JDWP_PACKET)
            return res;
        uint32_t pair[2] = {pkt.header.id, (uint32_t)pkt.len};
        g_array_append_vals(got, pair, 2);
    }
}

/* The same bytes fed whole to a reader. */
static DdmJdwpResult slow_read(DdmJdwpReader *r, const uint8_t *p, size_t n, GArray *got)
{
    ddm_jdwp_reader_feed(r, p, n);
    for (;;) {
        DdmJdwpPacket pkt;
        DdmJdwpResult res = ddm_jdwp_reader_next(r, &pkt);
        if (res != DDM_JDWP_PACKET)
            return res;
        uint32_t pair[2] = {pkt.header.id, (uint32_t)pkt.len};
        g_array_append_vals(got, pair, 2);
    }
}

/* @stream cut into reads at @cut1 and @cut2, both ways: same packets, same end. */
static void compare_paths(const uint8_t *stream, size_t total, size_t cut1, size_t cut2, gboolean *went_fast)
{
    DdmJdwpReader *fr = ddm_jdwp_reader_new(fast_cap), *sr = ddm_jdwp_reader_new(fast_cap);
    g_autoptr(GArray) fgot = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_autoptr(GArray) sgot = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    const size_t at[] = {0, cut1, cut2, total};
    DdmJdwpResult fres = DDM_JDWP_NEED_MORE, sres = DDM_JDWP_NEED_MORE;
    for (int i = 0; i < 3; i++) {
        fres = fast_read(fr, stream + at[i], at[i + 1] - at[i], fgot, went_fast);
        sres = slow_read(sr, stream + at[i], at[i + 1] - at[i], sgot);
        assert_int_equal(fres, sres);
        assert_int_equal(fgot->len, sgot->len);
        if (fgot->len)
            assert_memory_equal(fgot->data, sgot->data, fgot->len * sizeof(uint32_t));
        if (fres < 0)
            break;
    }
    ddm_jdwp_reader_free(fr);
    ddm_jdwp_reader_free(sr);
}

static void test_in_place_every_cut(void **state)
{
    (void)state;
    const size_t lens[] = {11, 12, 57, 11, 300, 19};
    size_t total;
    g_autofree uint8_t *s = make_stream(lens, 6, &total);
    gboolean went_fast = FALSE;
    for (size_t c1 = 0; c1 <= total; c1++)
        for (size_t c2 = c1; c2 <= total; c2 += 7)
            compare_paths(s, total, c1, c2, &went_fast);
    assert_true(went_fast);
    /* and the predicate is the reader's, on every prefix */
    for (size_t n = 0; n <= total; n++) {
        DdmJdwpReader *r = ddm_jdwp_reader_new(CAP);
        ddm_jdwp_reader_feed(r, s, n);
        assert_int_equal(ddm_jdwp_whole_packet_len(s, n, CAP) != 0, ddm_jdwp_reader_has_packet(r));
        ddm_jdwp_reader_free(r);
    }
}

/* A bad packet after good ones: the good ones are taken in place, the bad
 * one goes to the reader, which fails as it does when fed everything. */
static void test_in_place_bad_packets(void **state)
{
    (void)state;
    const uint32_t bad_len[] = {0, 5, 10, (uint32_t)CAP + 1, 0xFFFFFFFFu, 20, 20};
    const uint8_t bad_flags[] = {0, 0, 0, 0, 0, 0x40, 0x81};
    for (size_t i = 0; i < G_N_ELEMENTS(bad_len); i++) {
        const size_t lens[] = {11, 30};
        size_t good;
        g_autofree uint8_t *g = make_stream(lens, 2, &good);
        uint8_t *s = g_malloc0(good + 64);
        memcpy(s, g, good);
        DdmJdwpHeader h = {.length = bad_len[i], .id = 9, .flags = bad_flags[i]};
        ddm_jdwp_write_header(s + good, &h);
        gboolean went_fast = FALSE;
        for (size_t c = 0; c <= good + 64; c++)
            compare_paths(s, good + 64, c, c, &went_fast);
        assert_true(went_fast);
        DdmJdwpReader *r = ddm_jdwp_reader_new(CAP);
        g_autoptr(GArray) got = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        assert_true(fast_read(r, s, good + 64, got, &went_fast) < 0); /* it failed */
        assert_int_equal(got->len, 4); /* after the two good packets */
        assert_false(ddm_jdwp_reader_idle(r));
        ddm_jdwp_reader_free(r);
        g_free(s);
    }
    /* whole, but past the cap (100 bytes here): the reader's to refuse */
    const size_t lens[] = {11, 200, 11};
    size_t total;
    g_autofree uint8_t *t = make_stream(lens, 3, &total);
    gboolean went_fast = FALSE;
    fast_cap = 100;
    for (size_t c = 0; c <= total; c++)
        compare_paths(t, total, c, c, &went_fast);
    DdmJdwpReader *r = ddm_jdwp_reader_new(fast_cap);
    g_autoptr(GArray) got = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    assert_int_equal(fast_read(r, t, total, got, &went_fast), DDM_JDWP_ERR_TOO_BIG);
    assert_int_equal(got->len, 2);
    ddm_jdwp_reader_free(r);
    fast_cap = CAP;
}

/* The reader is idle only between packets: not before the handshake, not
 * with part of a packet, not once failed. */
static void test_reader_idle(void **state)
{
    (void)state;
    DdmJdwpReader *r = ddm_jdwp_reader_new(CAP);
    assert_true(ddm_jdwp_reader_idle(r));
    ddm_jdwp_reader_expect_handshake(r);
    assert_false(ddm_jdwp_reader_idle(r));
    ddm_jdwp_reader_feed(r, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_HANDSHAKE_OK);
    assert_true(ddm_jdwp_reader_idle(r));
    const size_t lens[] = {30};
    size_t total;
    g_autofree uint8_t *s = make_stream(lens, 1, &total);
    ddm_jdwp_reader_feed(r, s, 5);
    assert_false(ddm_jdwp_reader_idle(r));
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_NEED_MORE);
    ddm_jdwp_reader_feed(r, s + 5, total - 5);
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_PACKET);
    assert_true(ddm_jdwp_reader_idle(r));
    uint8_t bad[11] = {0, 0, 0, 3};
    ddm_jdwp_reader_feed(r, bad, sizeof bad);
    assert_true(ddm_jdwp_reader_next(r, NULL) < 0);
    assert_false(ddm_jdwp_reader_idle(r));
    ddm_jdwp_reader_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_packets),
        cmocka_unit_test(test_every_byte_boundary),
        cmocka_unit_test(test_large_bodies),
        cmocka_unit_test(test_bad_lengths),
        cmocka_unit_test(test_bad_flags),
        cmocka_unit_test(test_handshake_first),
        cmocka_unit_test(test_in_place_every_cut),
        cmocka_unit_test(test_in_place_bad_packets),
        cmocka_unit_test(test_reader_idle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
