/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of core/wire/ddm.c: chunk iteration (single, several,
 * zero-length, overrunning, trailing bytes) driven by a table of payloads,
 * chunk_append, and the packet builders against the worked example in
 * doc/protocol.md, "DDM", round-tripped through the JDWP reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/wire/ddm.h"
#include "core/wire/jdwp.h"
#include "test-util.h"

#define MAX_CHUNKS 4

typedef struct {
    const char *what;
    const char *hex;            /* the payload after the JDWP header */
    size_t n_chunks;            /* chunks returned before the end or the error */
    struct {
        uint32_t type;
        size_t offset;          /* of the data within the payload */
        size_t len;
    } chunks[MAX_CHUNKS];
    DdmChunkResult last;        /* END or ERR_OVERRUN */
    size_t trailing;
} IterCase;

#define T(a, b, c, d) DDM_CHUNK(a, b, c, d)

static const IterCase iter_cases[] = {
    { "empty payload", "", 0, { { 0, 0, 0 } }, DDM_CHUNK_END, 0 },
    { "single HELO request", "48 45 4c 4f 00 00 00 04 00 00 00 01", 1,
      { { T('H', 'E', 'L', 'O'), 8, 4 } }, DDM_CHUNK_END, 0 },
    { "zero-length chunk", "46 45 41 54 00 00 00 00", 1, { { T('F', 'E', 'A', 'T'), 8, 0 } },
      DDM_CHUNK_END, 0 },
    { "three chunks, one empty",
      "54 48 43 52 00 00 00 02 aa bb | 48 50 47 43 00 00 00 00 | 54 48 44 45 00 00 00 04 00 00 00 07",
      3,
      { { T('T', 'H', 'C', 'R'), 8, 2 }, { T('H', 'P', 'G', 'C'), 18, 0 },
        { T('T', 'H', 'D', 'E'), 26, 4 } },
      DDM_CHUNK_END, 0 },
    { "1 trailing byte", "48 45 4c 4f 00 00 00 01 01 | ff", 1, { { T('H', 'E', 'L', 'O'), 8, 1 } },
      DDM_CHUNK_END, 1 },
    { "7 trailing bytes", "48 45 4c 4f 00 00 00 00 | 01 02 03 04 05 06 07", 1,
      { { T('H', 'E', 'L', 'O'), 8, 0 } }, DDM_CHUNK_END, 7 },
    { "only trailing bytes", "01 02 03", 0, { { 0, 0, 0 } }, DDM_CHUNK_END, 3 },
    { "length one past the end", "48 45 4c 4f 00 00 00 05 01 02 03 04", 0, { { 0, 0, 0 } },
      DDM_CHUNK_ERR_OVERRUN, 12 },
    { "length 0xFFFFFFFF", "48 45 4c 4f ff ff ff ff 01 02 03 04", 0, { { 0, 0, 0 } },
      DDM_CHUNK_ERR_OVERRUN, 12 },
    { "second chunk overruns",
      "54 48 44 45 00 00 00 04 00 00 00 01 | 54 48 44 45 00 00 00 08 00 00 00 02", 1,
      { { T('T', 'H', 'D', 'E'), 8, 4 } }, DDM_CHUNK_ERR_OVERRUN, 12 },
    { "second chunk overruns by 0xFFFFFFF8 (no wrap)",
      "54 48 44 45 00 00 00 00 | 54 48 44 45 ff ff ff f8 00", 1,
      { { T('T', 'H', 'D', 'E'), 8, 0 } }, DDM_CHUNK_ERR_OVERRUN, 9 },
};

static void test_ddm_iter_table(void **state)
{
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(iter_cases); i++) {
        const IterCase *c = &iter_cases[i];
        size_t len, k;
        uint8_t *payload = test_util_unhex(c->hex, &len);
        DdmChunkIter it;
        DdmChunk ch;
        DdmChunkResult res;

        print_message("# case: %s\n", c->what);
        ddm_chunk_iter_init(&it, payload, len);
        for (k = 0; k < c->n_chunks; k++) {
            memset(&ch, 0, sizeof ch);
            assert_int_equal(ddm_chunk_iter_next(&it, &ch), DDM_CHUNK_OK);
            assert_int_equal(ch.type, c->chunks[k].type);
            assert_int_equal(ch.len, c->chunks[k].len);
            assert_ptr_equal(ch.data, payload + c->chunks[k].offset);
            assert_true(ch.data + ch.len <= payload + len);
        }
        res = ddm_chunk_iter_next(&it, &ch);
        assert_int_equal(res, c->last);
        assert_int_equal(ddm_chunk_iter_trailing(&it), c->trailing);
        /* the end and the error both stay put */
        assert_int_equal(ddm_chunk_iter_next(&it, &ch), c->last);
        assert_int_equal(ddm_chunk_iter_trailing(&it), c->trailing);
        g_free(payload);
    }
}

/* Every truncation of a valid two-chunk payload: never a chunk outside the
 * bytes, an error exactly when a chunk's header is whole but its data not. */
static void test_ddm_iter_every_truncation(void **state)
{
    size_t full_len, cut;
    uint8_t *full = test_util_unhex(
        "54 48 43 52 00 00 00 05 01 02 03 04 05 | 54 48 44 45 00 00 00 04 00 00 00 07", &full_len);
    (void)state;

    for (cut = 0; cut <= full_len; cut++) {
        uint8_t *p = g_malloc(cut + 1);
        DdmChunkIter it;
        DdmChunk ch;
        size_t got = 0;
        DdmChunkResult res;

        memcpy(p, full, cut);
        ddm_chunk_iter_init(&it, p, cut);
        while ((res = ddm_chunk_iter_next(&it, &ch)) == DDM_CHUNK_OK) {
            assert_true(ch.data >= p && ch.data + ch.len <= p + cut);
            got++;
        }
        if (cut < 8)
            assert_true(res == DDM_CHUNK_END && got == 0 && ddm_chunk_iter_trailing(&it) == cut);
        else if (cut < 13)
            assert_true(res == DDM_CHUNK_ERR_OVERRUN && got == 0);
        else if (cut < 21)
            assert_true(res == DDM_CHUNK_END && got == 1 &&
                        ddm_chunk_iter_trailing(&it) == cut - 13);
        else if (cut < full_len)
            assert_true(res == DDM_CHUNK_ERR_OVERRUN && got == 1);
        else
            assert_true(res == DDM_CHUNK_END && got == 2 && ddm_chunk_iter_trailing(&it) == 0);
        g_free(p);
    }
    g_free(full);
}

static void test_ddm_iter_null_payload(void **state)
{
    DdmChunkIter it;
    DdmChunk ch;
    (void)state;

    ddm_chunk_iter_init(&it, NULL, 100);
    assert_int_equal(ddm_chunk_iter_next(&it, &ch), DDM_CHUNK_END);
    assert_int_equal(ddm_chunk_iter_trailing(&it), 0);
}

static void test_ddm_chunk_append(void **state)
{
    GByteArray *b = g_byte_array_new();
    size_t want_len;
    uint8_t *want = test_util_unhex(
        "48 45 4c 4f 00 00 00 04 00 00 00 01 | 46 45 41 54 00 00 00 00 | 54 45 53 54 00 00 00 01 7f",
        &want_len);
    (void)state;

    ddm_chunk_append(b, DDM_CHUNK_HELO, "\0\0\0\x01", 4);
    ddm_chunk_append(b, DDM_CHUNK_FEAT, NULL, 0);
    ddm_chunk_append(b, DDM_CHUNK('T', 'E', 'S', 'T'), "\x7f", 1);
    assert_bytes_equal(b->data, b->len, want, want_len);
    g_byte_array_free(b, TRUE);
    g_free(want);
}

/* The worked example of doc/protocol.md, "DDM": HELO, id 0x40000000, version 1. */
static const char helo_request_hex[] =
    "00 00 00 17 40 00 00 00 00 C7 01 48 45 4C 4F 00 00 00 04 00 00 00 01";

static void test_ddm_build_packet_worked_example(void **state)
{
    size_t len, want_len;
    uint8_t version[4];
    uint8_t *want = test_util_unhex(helo_request_hex, &want_len);
    uint8_t *p;
    (void)state;

    ddm_helo_request(version, 1);
    p = ddm_chunk_build_packet(0x40000000u, DDM_CHUNK_HELO, version, 4, &len);
    assert_int_equal(len, 23);
    assert_bytes_equal(p, len, want, want_len);
    g_free(p);
    g_free(want);
}

static void test_ddm_build_reply(void **state)
{
    size_t len, want_len;
    uint8_t *p, *want;
    (void)state;

    p = ddm_chunk_build_reply(0x40000000u, DDM_CHUNK_HELO, "\0\0\0\x01", 4, &len);
    want = test_util_unhex("00 00 00 17 40 00 00 00 80 00 00 48 45 4C 4F 00 00 00 04 00 00 00 01",
                           &want_len);
    assert_bytes_equal(p, len, want, want_len);
    g_free(p);
    g_free(want);

    /* type 0: an empty success reply, as Dalvik sends when it has nothing */
    p = ddm_chunk_build_reply(7, 0, NULL, 0, &len);
    want = test_util_unhex("00 00 00 0b 00 00 00 07 80 00 00", &want_len);
    assert_bytes_equal(p, len, want, want_len);
    g_free(p);
    g_free(want);

    /* zero-length chunk */
    p = ddm_chunk_build_packet(8, DDM_CHUNK_FEAT, NULL, 0, &len);
    want = test_util_unhex("00 00 00 13 00 00 00 08 00 c7 01 46 45 41 54 00 00 00 00", &want_len);
    assert_bytes_equal(p, len, want, want_len);
    g_free(p);
    g_free(want);
}

/* Build -> JDWP reader -> chunk iterator gives back what was built. */
static void test_ddm_round_trip_through_reader(void **state)
{
    static const struct {
        gboolean reply;
        uint32_t id, type;
        const char *data;
        size_t len;
    } cases[] = {
        { FALSE, 0x40000000u, DDM_CHUNK('H', 'E', 'L', 'O'), "\0\0\0\x01", 4 },
        { TRUE, 0x40000000u, DDM_CHUNK('H', 'E', 'L', 'O'), "\0\0\0\x01\0\0\0\x2a", 8 },
        { FALSE, 0x80000001u, DDM_CHUNK('T', 'H', 'D', 'E'), "\0\0\0\x09", 4 },
        { TRUE, 0x40000001u, DDM_CHUNK('F', 'E', 'A', 'T'), "", 0 },
        { TRUE, 0x40000002u, 0, NULL, 0 },
    };
    DdmJdwpReader *r = ddm_jdwp_reader_new(0);
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        size_t len;
        uint8_t *p = cases[i].reply
                         ? ddm_chunk_build_reply(cases[i].id, cases[i].type, cases[i].data,
                                                 cases[i].len, &len)
                         : ddm_chunk_build_packet(cases[i].id, cases[i].type, cases[i].data,
                                                  cases[i].len, &len);
        ddm_jdwp_reader_feed(r, p, len);
        g_free(p);
    }
    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        DdmJdwpPacket pkt;
        DdmChunkIter it;
        DdmChunk ch;

        assert_int_equal(ddm_jdwp_reader_next(r, &pkt), DDM_JDWP_PACKET);
        assert_int_equal(pkt.header.id, cases[i].id);
        assert_int_equal(ddm_jdwp_is_reply(&pkt.header), cases[i].reply);
        assert_int_equal(pkt.header.error, 0);
        if (!cases[i].reply) {
            assert_int_equal(pkt.header.cmdset, DDM_JDWP_CMDSET);
            assert_int_equal(pkt.header.cmd, DDM_JDWP_CMD);
        }
        ddm_chunk_iter_init(&it, pkt.data, pkt.data_len);
        if (cases[i].type != 0) {
            assert_int_equal(ddm_chunk_iter_next(&it, &ch), DDM_CHUNK_OK);
            assert_int_equal(ch.type, cases[i].type);
            assert_bytes_equal(ch.data, ch.len, cases[i].data, cases[i].len);
        } else {
            assert_int_equal(pkt.data_len, 0);
        }
        assert_int_equal(ddm_chunk_iter_next(&it, &ch), DDM_CHUNK_END);
        assert_int_equal(ddm_chunk_iter_trailing(&it), 0);
    }
    assert_int_equal(ddm_jdwp_reader_next(r, NULL), DDM_JDWP_NEED_MORE);
    ddm_jdwp_reader_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ddm_iter_table),
        cmocka_unit_test(test_ddm_iter_every_truncation),
        cmocka_unit_test(test_ddm_iter_null_payload),
        cmocka_unit_test(test_ddm_chunk_append),
        cmocka_unit_test(test_ddm_build_packet_worked_example),
        cmocka_unit_test(test_ddm_build_reply),
        cmocka_unit_test(test_ddm_round_trip_through_reader),
    };
    return cmocka_run_group_tests_name("ddm", tests, NULL, NULL);
}
