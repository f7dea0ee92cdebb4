/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the incremental JDWP packet reader (core/wire/jdwp.c), fed
 * as the session feeds it: optionally in handshake mode first, in pieces
 * whose sizes come from the input, through feed() or through
 * space()/commit() as read(2) fills it, draining next() after each piece.
 *
 * Input: u1 flags (bit 0 handshake mode, bit 1 space/commit, bits 2..7 the
 * cap: 0 = default, else 11 + k * k * 16), u1 seed of the piece sizes (its
 * top bit: offer heads of 19 bytes, as the session does, and take every
 * head as a stream, skipping the 8 chunk-header bytes; bit 6: the reader
 * shares a budget, so it reads through the budget's scratch as the
 * session's readers do; then some reads through space() ask 256 KiB, as
 * core/session/vm_io.c does while a long packet streams, and a piece that
 * comes up short hands an emptied buffer back, release_empty(), as it
 * does), then the stream.
 * Streaming adds: pieces never run past the packet's declared length, the
 * end comes exactly when it is reached, and the buffer does not grow. Invariants: every packet is 11..cap bytes with its
 * declared length and valid flags and lies in the reader's buffer; after
 * draining, fewer bytes are pending than the cap allows; the buffer never
 * grows past what a packet may hold; handshake, packets, discards and
 * pending account for every byte fed; an error is sticky; with a budget,
 * the scratch is given back at every NEED_MORE, the budget counts exactly
 * the reader's own buffer, never passes its limit, and its spare is none
 * or one buffer of the 256 KiB reads' size.
 */
#include <string.h>

#include "core/wire/jdwp.h"
#include "tests/fuzz/fuzz.h"

#define READER_INITIAL ((size_t)64 << 10) /* jdwp.c's starting buffer */
#define STREAM_READ ((size_t)256 << 10)   /* vm_io.c's reads of a streamed packet */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    uint8_t flags = fuzz_u8(&in), piece_seed = fuzz_u8(&in);
    unsigned k = flags >> 2;
    size_t cap = k ? DDM_JDWP_HEADER_LEN + (size_t)k * k * 16 : DDM_JDWP_DEFAULT_MAX_PACKET;
    size_t floor_buf = cap < READER_INITIAL ? MAX(cap, (size_t)DDM_JDWP_HANDSHAKE_LEN)
                                            : READER_INITIAL;
    gboolean handshake = flags & 1, use_space = (flags & 2) != 0;
    DdmJdwpReader *r = ddm_jdwp_reader_new(k ? cap : 0);
    uint64_t fed = 0, taken = 0;
    DdmJdwpResult failed = 0;
    size_t discarded = 0;
    uint32_t step = piece_seed | 1u;
    gboolean stream_heads = (piece_seed & 0x80) != 0, streaming = FALSE;
    uint64_t stream_left = 0;
    DdmJdwpBudget *budget = (piece_seed & 0x40) ? ddm_jdwp_budget_new((size_t)1 << 20) : NULL;
    /* a second peer on the budget whose reads find nothing (space(), then
     * EAGAIN): it borrows the scratch and must not keep it from r */
    DdmJdwpReader *idle = budget && (piece_seed & 0x20) ? ddm_jdwp_reader_new(cap) : NULL;

    if (budget)
        ddm_jdwp_reader_set_budget(r, budget);
    if (idle)
        ddm_jdwp_reader_set_budget(idle, budget);
    if (handshake)
        ddm_jdwp_reader_expect_handshake(r);
    if (stream_heads)
        ddm_jdwp_reader_offer_heads(r, DDM_JDWP_HEADER_LEN + 8);
    while (in.n > 0) {
        const uint8_t *piece;
        size_t want, n;
        DdmJdwpResult res;
        DdmJdwpPacket pkt;

        /* piece sizes: 1..64, sometimes a whole 4 KiB read */
        step = step * 1103515245u + 12345u;
        want = (step >> 16) % 8 == 0 ? 4096 : 1 + (step >> 16) % 64;
        if (budget && use_space && (step >> 16) % 16 == 1)
            want = STREAM_READ; /* (vm_io.c while a packet streams) */
        size_t asked = want; /* what the read asked (space() may offer less) */
        if (idle) {
            size_t idle_avail = 0;
            FUZZ_CHECK(ddm_jdwp_reader_space(idle, 4096, &idle_avail) != NULL);
            FUZZ_CHECK(ddm_jdwp_reader_buffer_size(idle) == 0);
        }
        if (use_space) {
            size_t avail = 0;
            uint8_t *space = ddm_jdwp_reader_space(r, want, &avail);
            FUZZ_CHECK(space != NULL && avail > 0);
            asked = MIN(want, avail);
            n = fuzz_take(&in, asked, &piece);
            memcpy(space, piece, n);
            ddm_jdwp_reader_commit(r, n);
            if (budget)
                FUZZ_CHECK(ddm_jdwp_budget_used(budget) <= (size_t)1 << 20);
        } else {
            n = fuzz_take(&in, want, &piece);
            ddm_jdwp_reader_feed(r, piece, n);
        }
        fed += n;

        gboolean short_read = n < asked;
        while ((res = ddm_jdwp_reader_next(r, &pkt)) != DDM_JDWP_NEED_MORE) {
            if (res < 0) {
                FUZZ_CHECK(failed == 0 || failed == res);
                failed = res;
                break;
            }
            FUZZ_CHECK(failed == 0);
            if (res == DDM_JDWP_HANDSHAKE_OK) {
                FUZZ_CHECK(handshake);
                handshake = FALSE;
                taken += DDM_JDWP_HANDSHAKE_LEN;
            } else if (res == DDM_JDWP_DISCARDED) {
                FUZZ_CHECK(handshake);
                discarded++;
            } else if (res == DDM_JDWP_PACKET_HEAD) {
                FUZZ_CHECK(stream_heads && !handshake && !streaming);
                FUZZ_CHECK(pkt.header.flags == 0 && pkt.len >= DDM_JDWP_HEADER_LEN + 8);
                FUZZ_CHECK(pkt.data_len >= 8 && pkt.data_len < pkt.len - DDM_JDWP_HEADER_LEN + 1);
                FUZZ_CHECK(ddm_jdwp_reader_stream(r, 8));
                FUZZ_CHECK(!ddm_jdwp_reader_stream(r, 8)); /* once per head */
                streaming = TRUE;
                stream_left = pkt.len - DDM_JDWP_HEADER_LEN - 8;
                FUZZ_CHECK(ddm_jdwp_reader_stream_left(r) == stream_left);
                taken += DDM_JDWP_HEADER_LEN + 8;
            } else if (res == DDM_JDWP_STREAM_DATA) {
                FUZZ_CHECK(streaming && pkt.data_len > 0 && pkt.data_len <= stream_left);
                FUZZ_CHECK(pkt.data[pkt.data_len - 1] == pkt.data[pkt.data_len - 1]);
                stream_left -= pkt.data_len;
                taken += pkt.data_len;
            } else if (res == DDM_JDWP_STREAM_END) {
                FUZZ_CHECK(streaming && stream_left == 0);
                streaming = FALSE;
            } else {
                FUZZ_CHECK(res == DDM_JDWP_PACKET);
                FUZZ_CHECK(!handshake);
                FUZZ_CHECK(pkt.len >= DDM_JDWP_HEADER_LEN && pkt.len <= cap);
                FUZZ_CHECK(pkt.header.length == pkt.len);
                FUZZ_CHECK(pkt.header.flags == 0 || pkt.header.flags == DDM_JDWP_FLAG_REPLY);
                FUZZ_CHECK(pkt.data == pkt.bytes + DDM_JDWP_HEADER_LEN);
                FUZZ_CHECK(pkt.data_len == pkt.len - DDM_JDWP_HEADER_LEN);
                /* the whole packet is readable (ASan checks the last byte) */
                FUZZ_CHECK(pkt.bytes[pkt.len - 1] == pkt.bytes[pkt.len - 1]);
                taken += pkt.len;
            }
        }
        if (failed) {
            /* sticky: more input changes nothing */
            FUZZ_CHECK(ddm_jdwp_reader_next(r, NULL) == failed);
            break;
        }
        /* drained: what is left is less than one packet the cap allows
         * (nothing at all in the middle of a stream) */
        FUZZ_CHECK(ddm_jdwp_reader_pending(r) < MAX(cap, (size_t)DDM_JDWP_HANDSHAKE_LEN));
        if (streaming && stream_left > 0)
            FUZZ_CHECK(ddm_jdwp_reader_pending(r) == 0);
        /* the buffer holds at most one packet (and the read that completes it) */
        FUZZ_CHECK(ddm_jdwp_reader_buffer_size(r) <= MAX(floor_buf, cap + 4096));
        if (!discarded)
            FUZZ_CHECK(taken + ddm_jdwp_reader_pending(r) == fed);
        if (budget) {
            size_t spare = ddm_jdwp_budget_spare_size(budget);
            if (short_read) /* the socket is empty (vm_io.c) */
                ddm_jdwp_reader_release_empty(r);
            FUZZ_CHECK(!ddm_jdwp_reader_on_scratch(r));
            FUZZ_CHECK(ddm_jdwp_budget_used(budget) == ddm_jdwp_reader_buffer_size(r));
            FUZZ_CHECK(ddm_jdwp_budget_used(budget) <= (size_t)1 << 20);
            FUZZ_CHECK(spare == 0 || spare == STREAM_READ);
            /* its own buffer follows what arrived: none when drained, at
             * most twice the bytes of its incomplete packet (while a
             * packet streams, a full read's buffer of up to 256 KiB is
             * kept for its next read) */
            if (!(streaming && !short_read))
                FUZZ_CHECK(ddm_jdwp_reader_buffer_size(r) <= 2 * ddm_jdwp_reader_pending(r) + 1);
            else
                FUZZ_CHECK(ddm_jdwp_reader_buffer_size(r) <= STREAM_READ);
        }
    }
    ddm_jdwp_reader_free(idle);
    ddm_jdwp_reader_free(r);
    if (budget) {
        FUZZ_CHECK(ddm_jdwp_budget_used(budget) == 0);
        ddm_jdwp_budget_free(budget);
    }

    /* the builders' packets read back as built */
    if (size >= DDM_JDWP_HEADER_LEN) {
        size_t len = 0;
        uint8_t *p = ddm_jdwp_build_command(data[0], data[1], data[2], data + 3, size - 3, &len);
        DdmJdwpHeader h;
        FUZZ_CHECK(len == size - 3 + DDM_JDWP_HEADER_LEN);
        FUZZ_CHECK(ddm_jdwp_parse_header(p, len, &h) && h.length == len && h.id == data[0] &&
                   h.cmdset == data[1] && h.cmd == data[2] && !ddm_jdwp_is_reply(&h));
        g_free(p);
    }
    return 0;
}
