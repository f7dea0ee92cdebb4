/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the relay's batching predicate, ddm_jdwp_reader_has_packet
 * (core/wire/jdwp.c): the relay writes a packet to the debugger at once
 * unless the predicate says another whole packet is already read, and
 * sends a debugger's packet to the VM straight from the reader's buffer
 * unless it does. So it must predict exactly whether the reader's next()
 * returns a whole packet without more input: for whole packets, a stream
 * cut at every byte boundary, large bodies, bad lengths and flags, and the
 * handshake. (tests/fuzz/fuzz-relay checks the same on any input.)
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_packets),
        cmocka_unit_test(test_every_byte_boundary),
        cmocka_unit_test(test_large_bodies),
        cmocka_unit_test(test_bad_lengths),
        cmocka_unit_test(test_bad_flags),
        cmocka_unit_test(test_handshake_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
