/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the relay's use of a debugger's JDWP reader
 * (core/relay/relay_debugger.c on core/wire/jdwp.c): handshake first, heads
 * of incomplete commands offered from 11 bytes, a command at least as long
 * as the cut-through threshold taken as a stream (its header consumed, its
 * body handed out as it arrives), every other packet read whole and its id
 * rewritten in the reader's buffer, where the relay rewrites it; the bytes
 * fed in pieces whose sizes come from the input, as read(2) would give them;
 * some of a streamed packet's bytes, while none of it is buffered, taken
 * "from the socket" instead (the relay's splice: stream_unread/_moved).
 *
 * Input: u1 cap selector (0: default, else 11 + k * k * 64), u1 threshold
 * selector (11 + t * t * 8), u1 seed of the piece sizes (its top bit: heads
 * of replies offered too, as the relay asks of a VM's reader), then the
 * stream.
 * Invariants: has_packet() says exactly whether next() returns a whole
 * packet (the relay's batching relies on it); when the reader was idle
 * (ddm_jdwp_reader_idle), ddm_jdwp_whole_packet_len() on a piece says the
 * length of the packet next() returns first, or 0 when it returns none
 * (the relay's fast path takes that packet in place), and so it does on
 * the bytes pending at every step (a VM's reads use the same split,
 * core/session/vm_io.c, and say "more" through
 * ddm_jdwp_reader_set_more_outside, which leaves has_packet() as it was
 * once cleared); a packet rewritten in place
 * reads back with its new id; stream_unread is the streamed packet's rest
 * exactly while the reader holds none of it, else 0; a streamed command hands out exactly its
 * declared length less the header, never more, then ends; the bytes of the
 * handshake, whole packets, streamed commands and what is pending account
 * for every byte fed (until a packet is discarded before the handshake or
 * an error, which is sticky).
 */
#include <string.h>

#include "core/wire/jdwp.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    unsigned k = fuzz_u8(&in), t = fuzz_u8(&in), seed = fuzz_u8(&in);
    size_t cap = k ? DDM_JDWP_HEADER_LEN + (size_t)k * k * 64 : DDM_JDWP_DEFAULT_MAX_PACKET;
    size_t threshold = DDM_JDWP_HEADER_LEN + (size_t)t * t * 8;
    DdmJdwpReader *r = ddm_jdwp_reader_new(cap);
    ddm_jdwp_reader_expect_handshake(r);
    ddm_jdwp_reader_offer_heads(r, DDM_JDWP_HEADER_LEN);
    gboolean reply_heads = (seed & 0x80) != 0;
    ddm_jdwp_reader_offer_reply_heads(r, reply_heads);
    uint64_t fed = 0, accounted = 0, stream_left = 0;
    gboolean streaming = FALSE, exact = TRUE, failed = FALSE;
    DdmJdwpResult error = DDM_JDWP_NEED_MORE;
    uint32_t new_id = 0x01000000u;
    const uint8_t *stream = in.p; /* what is fed, in order */
    gboolean shaken = FALSE;

    while (in.n > 0 && !failed) {
        seed = seed * 1103515245u + 12345u;
        const uint8_t *piece;
        size_t n = fuzz_take(&in, 1 + (seed >> 8) % 300, &piece);
        /* while none of a streamed packet's bytes is buffered, the caller
         * may take them from the socket itself (the relay's splice): the
         * reader says how many are left exactly then, and counts them */
        uint64_t unread = ddm_jdwp_reader_stream_unread(r);
        if (streaming && !failed)
            FUZZ_CHECK(unread == (ddm_jdwp_reader_pending(r) == 0 ? stream_left : 0));
        else
            FUZZ_CHECK(unread == 0);
        if (unread > 0 && (seed & 0x10000u)) {
            size_t m = (uint64_t)n < unread ? n : (size_t)unread;
            ddm_jdwp_reader_stream_moved(r, m);
            fed += m;
            accounted += m;
            stream_left -= m;
            piece += m;
            n -= m;
        }
        /* the relay's fast path takes the first packet of a read in place
         * when the reader is idle: exactly the one next() would return */
        gboolean idle = ddm_jdwp_reader_idle(r);
        size_t in_place = idle ? ddm_jdwp_whole_packet_len(piece, n, cap) : 0;
        ddm_jdwp_reader_feed(r, piece, n);
        fed += n;
        for (;;) {
            /* the in-place path's "more packets follow" (a VM's reads,
             * core/session/vm_io.c) says TRUE while set and leaves the
             * reader's own answer as it was once cleared */
            ddm_jdwp_reader_set_more_outside(r, TRUE);
            FUZZ_CHECK(ddm_jdwp_reader_has_packet(r));
            ddm_jdwp_reader_set_more_outside(r, FALSE);
            gboolean predicted = ddm_jdwp_reader_has_packet(r);
            /* the bytes pending are known while every byte is accounted for */
            size_t whole = shaken && exact && !streaming
                               ? ddm_jdwp_whole_packet_len(stream + accounted, fed - accounted, cap)
                               : 0;
            DdmJdwpPacket pkt;
            DdmJdwpResult res = ddm_jdwp_reader_next(r, &pkt);
            FUZZ_CHECK(predicted == (res == DDM_JDWP_PACKET));
            if (shaken && exact && !streaming)
                FUZZ_CHECK(whole ? res == DDM_JDWP_PACKET && pkt.len == whole : res != DDM_JDWP_PACKET);
            if (idle) {
                FUZZ_CHECK(in_place ? res == DDM_JDWP_PACKET && pkt.len == in_place
                                    : res != DDM_JDWP_PACKET);
                idle = FALSE;
            }
            if (res == DDM_JDWP_NEED_MORE)
                break;
            if (res < 0) {
                failed = TRUE;
                error = res;
                break;
            }
            switch (res) {
            case DDM_JDWP_HANDSHAKE_OK:
                shaken = TRUE;
                accounted += DDM_JDWP_HANDSHAKE_LEN;
                break;
            case DDM_JDWP_DISCARDED:
                exact = FALSE; /* its length is not reported */
                break;
            case DDM_JDWP_PACKET: {
                FUZZ_CHECK(!streaming);
                FUZZ_CHECK(pkt.len >= DDM_JDWP_HEADER_LEN && pkt.len <= cap);
                ddm_jdwp_set_id((uint8_t *)pkt.bytes, new_id); /* the relay's remap */
                DdmJdwpHeader h;
                FUZZ_CHECK(ddm_jdwp_parse_header(pkt.bytes, pkt.len, &h) && h.id == new_id);
                new_id++;
                accounted += pkt.len;
                break;
            }
            case DDM_JDWP_PACKET_HEAD:
                FUZZ_CHECK(!streaming && pkt.len >= DDM_JDWP_HEADER_LEN);
                FUZZ_CHECK(!ddm_jdwp_is_reply(&pkt.header) || reply_heads);
                if (pkt.len >= threshold && pkt.len <= cap) {
                    FUZZ_CHECK(ddm_jdwp_reader_stream(r, 0));
                    streaming = TRUE;
                    stream_left = pkt.len - DDM_JDWP_HEADER_LEN;
                    accounted += DDM_JDWP_HEADER_LEN;
                }
                break;
            case DDM_JDWP_STREAM_DATA:
                FUZZ_CHECK(streaming && pkt.data_len > 0 && pkt.data_len <= stream_left);
                stream_left -= pkt.data_len;
                accounted += pkt.data_len;
                break;
            case DDM_JDWP_STREAM_END:
                FUZZ_CHECK(streaming && stream_left == 0);
                streaming = FALSE;
                break;
            default:
                FUZZ_CHECK(0);
            }
        }
        if (!failed && exact)
            FUZZ_CHECK(accounted + ddm_jdwp_reader_pending(r) == fed);
    }
    if (failed) { /* sticky */
        FUZZ_CHECK(ddm_jdwp_reader_next(r, NULL) == error);
        FUZZ_CHECK(!ddm_jdwp_reader_has_packet(r));
    }
    ddm_jdwp_reader_free(r);
    return 0;
}
