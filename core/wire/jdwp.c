/* SPDX-License-Identifier: Apache-2.0
 *
 * JDWP framing: handshake, headers, the incremental packet reader and the
 * packet builders declared in jdwp.h.
 *
 * Reader buffer: [start, end) holds unconsumed bytes inside buf[0, alloc).
 * It is lazy: a new reader holds no buffer, the first feed/space allocates
 * READER_INITIAL bytes (or what the bytes need), and ddm_jdwp_reader_trim()
 * releases it when nothing is pending and no byte came since the previous
 * trim, so an idle peer costs no buffer while a busy one keeps reusing its
 * own (no allocation per read). It grows only when fed data does not fit; while a
 * packet is incomplete, growth by doubling is clamped to that packet's
 * declared length (already checked against the cap), so memory follows the
 * bytes actually received (at most twice them), never a length a peer
 * merely claimed. Consumed bytes are compacted away lazily (feed/space),
 * so a packet returned by next() stays valid until the next call. When the
 * pending data fits again, the buffer shrinks back to its initial size.
 *
 * Budget (optional, ddm_jdwp_reader_set_budget): the bytes allocated by
 * every reader sharing one DdmJdwpBudget are counted together; a growth
 * that would take the total past the budget's limit fails that reader
 * (DDM_JDWP_ERR_BUDGET) and releases its buffer, so the peer whose packet
 * is the newest claim on the shared memory is the one refused.
 *
 * Scratch (readers sharing a budget): the budget also owns one scratch
 * buffer of READER_INITIAL bytes. A reader that holds no byte and no
 * buffer of its own reads into the scratch (it "borrows" it: buf points at
 * it, on_scratch is set) and parses its packets there. When next() runs out
 * of whole units (NEED_MORE), the reader gives the scratch back: nothing
 * left, or the bytes of an incomplete packet moved to a buffer of its own
 * sized to them (then grown as above). So a thousand idle peers hold no
 * buffer at all, and reading from them costs no allocation; only a peer in
 * the middle of a packet holds one. One reader borrows it at a time: a
 * reader that finds it borrowed (a handler reading another peer from inside
 * next()'s caller, or a peer closed in the middle of its bytes) uses its
 * own buffer, so a packet handed out from the scratch is never overwritten
 * while it is borrowed; at its NEED_MORE that buffer too goes, or shrinks
 * to the bytes of its incomplete packet. A borrower that got no byte into
 * the scratch (its read found nothing, EAGAIN) loses it to the next reader.
 * The scratch is not counted in the budget's bytes, nor is the budget's
 * spare: one emptied buffer of exactly SPARE_MAX bytes (a streamed
 * packet's reads) kept for the next large one until ddm_jdwp_budget_trim,
 * so that the next streamed packet's reads do not cost a fresh mapping and
 * its page faults; a reader takes it only when the budget has room for all
 * of it.
 *
 * Streaming (opt-in, ddm_jdwp_reader_offer_heads): the head of a command
 * packet that has not arrived whole is shown to the caller once; if the
 * caller takes it as a stream, the rest of that packet is handed out as
 * it arrives (STREAM_DATA pieces, then STREAM_END) and never buffered
 * whole, so a multi-GiB packet costs one buffer of READER_INITIAL bytes
 * (or of the larger reads its caller asks for: an emptied buffer of up to
 * SPARE_MAX is kept between those reads until the caller's socket is empty,
 * ddm_jdwp_reader_release_empty(), or the packet's end, see settle()).
 *
 * Non-goals: no I/O, no logging above g_debug (callers log and close).
 */
#include "core/wire/jdwp.h"

#include <string.h>

#include <ddmon/bytes.h>

#define READER_INITIAL ((size_t)64 << 10)
/* The largest buffer the budget keeps as its spare (the 256 KiB reads of a
 * streamed packet, core/session/vm_io.c). */
#define SPARE_MAX DDM_JDWP_STREAM_READ_SIZE

struct DdmJdwpBudget {
    size_t limit;       /* bytes all readers together may allocate */
    size_t used;        /* bytes they have allocated now */
    guint readers;      /* readers attached (the budget must outlive them) */
    uint8_t *scratch;   /* READER_INITIAL bytes, allocated at the first borrow, or NULL */
    DdmJdwpReader *scratch_user; /* the reader borrowing it now, or NULL */
    uint8_t *spare;     /* a large buffer a reader emptied (<= SPARE_MAX), kept for the
                           next large one until ddm_jdwp_budget_trim; not counted in used */
    size_t spare_len;
};

static inline uint32_t get_u4(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v); /* one load and a byte swap, not four loads and shifts */
    return GUINT32_FROM_BE(v);
}

/* The header's fields (@buf holds at least DDM_JDWP_HEADER_LEN bytes: the
 * callers checked). */
static inline void header_of(const uint8_t *buf, DdmJdwpHeader *h)
{
    ddm_jdwp_header_of(buf, h);
}

DdmJdwpReader *ddm_jdwp_reader_new(size_t max_packet)
{
    DdmJdwpReader *r = g_new0(DdmJdwpReader, 1);
    r->max_packet = max_packet ? max_packet : DDM_JDWP_DEFAULT_MAX_PACKET;
    r->initial = (uint32_t)MIN(READER_INITIAL, MAX(r->max_packet, (size_t)DDM_JDWP_HANDSHAKE_LEN));
    return r;
}

/* The bytes of buf this reader owns (and the budget counts). */
static size_t own_alloc(const DdmJdwpReader *r)
{
    return r->on_scratch ? 0 : r->alloc;
}

/* Give the scratch back; its bytes are dropped (the caller moved or consumed them). */
static void scratch_return(DdmJdwpReader *r)
{
    if (!r->on_scratch)
        return;
    r->budget->scratch_user = NULL;
    r->on_scratch = FALSE;
    r->scratch_fed = FALSE;
    r->buf = NULL;
    r->alloc = 0;
}

/* Resize the reader's own buffer to @size bytes (0 frees it), keeping the
 * budget's count. Never called while on the scratch. */
static void set_alloc(DdmJdwpReader *r, size_t size)
{
    g_assert(!r->on_scratch);
    if (r->budget) {
        r->budget->used -= r->alloc;
        r->budget->used += size;
    }
    if (size == 0) {
        g_free(r->buf);
        r->buf = NULL;
    } else {
        r->buf = g_realloc(r->buf, size);
    }
    r->alloc = size;
}

void ddm_jdwp_reader_free(DdmJdwpReader *r)
{
    if (!r)
        return;
    scratch_return(r);
    ddm_jdwp_reader_set_budget(r, NULL);
    g_free(r->buf);
    g_free(r);
}

DdmJdwpBudget *ddm_jdwp_budget_new(size_t limit)
{
    DdmJdwpBudget *b = g_new0(DdmJdwpBudget, 1);
    b->limit = limit ? limit : G_MAXSIZE;
    return b;
}

void ddm_jdwp_budget_free(DdmJdwpBudget *b)
{
    if (!b)
        return;
    g_warn_if_fail(b->readers == 0 && b->scratch_user == NULL);
    g_free(b->scratch);
    g_free(b->spare);
    g_free(b);
}

size_t ddm_jdwp_budget_used(const DdmJdwpBudget *b)
{
    g_return_val_if_fail(b != NULL, 0);
    return b->used;
}

size_t ddm_jdwp_budget_limit(const DdmJdwpBudget *b)
{
    g_return_val_if_fail(b != NULL, 0);
    return b->limit;
}

gboolean ddm_jdwp_budget_trim(DdmJdwpBudget *b)
{
    g_return_val_if_fail(b != NULL, FALSE);
    if (!b->spare)
        return FALSE;
    g_clear_pointer(&b->spare, g_free);
    b->spare_len = 0;
    return TRUE;
}

size_t ddm_jdwp_budget_spare_size(const DdmJdwpBudget *b)
{
    g_return_val_if_fail(b != NULL, 0);
    return b->spare_len;
}

static gboolean scratch_leave(DdmJdwpReader *r, size_t target);

void ddm_jdwp_reader_set_budget(DdmJdwpReader *r, DdmJdwpBudget *b)
{
    g_return_if_fail(r != NULL);
    if (r->budget == b)
        return;
    if (r->on_scratch) /* its bytes move to a buffer of its own, charged to the old budget */
        scratch_leave(r, 0);
    if (r->budget) {
        r->budget->used -= r->alloc;
        r->budget->readers--;
    }
    r->budget = b;
    if (b) {
        b->used += r->alloc;
        b->readers++;
    }
}

size_t ddm_jdwp_reader_refused_len(const DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, 0);
    return r->refused_len;
}

size_t ddm_jdwp_reader_claimed_len(const DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, 0);
    if (r->claimed_len)
        return r->claimed_len;
    return r->end - r->start >= 4 ? get_u4(r->buf + r->start) : 0;
}

void ddm_jdwp_reader_expect_handshake(DdmJdwpReader *r)
{
    g_return_if_fail(r != NULL);
    r->handshake_pending = TRUE;
}

size_t ddm_jdwp_reader_buffer_size(const DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, 0);
    return own_alloc(r);
}

gboolean ddm_jdwp_reader_on_scratch(const DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, FALSE);
    return r->on_scratch;
}

static gboolean settle(DdmJdwpReader *r);

gboolean ddm_jdwp_reader_release_scratch(DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, FALSE);
    if (!r->on_scratch)
        return !r->failed;
    if (r->failed) { /* a failed reader keeps no input */
        scratch_return(r);
        r->start = r->end = 0;
        return FALSE;
    }
    return settle(r); /* on the scratch, settle always gives it back */
}

/* Move the unconsumed bytes to the front of the buffer. */
static void compact(DdmJdwpReader *r)
{
    size_t used = r->end - r->start;
    if (r->start == 0)
        return;
    if (used > 0)
        memmove(r->buf, r->buf + r->start, used);
    r->start = 0;
    r->end = used;
}

/* Fail with DDM_JDWP_ERR_BUDGET: the buffer would have taken all readers
 * sharing the budget past its limit. The buffer goes back at once. */
static gboolean refuse_budget(DdmJdwpReader *r, size_t target)
{
    scratch_return(r);
    r->refused_len = target;
    r->failed = DDM_JDWP_ERR_BUDGET;
    r->want_len = 0;
    r->start = r->end = 0;
    set_alloc(r, 0);
    g_debug("JDWP reader failed: %s", ddm_jdwp_result_str(DDM_JDWP_ERR_BUDGET));
    return FALSE;
}

/* Move the unconsumed bytes off the scratch into a buffer of the reader's
 * own of @target bytes (at least what they need; none when there are no
 * bytes and @target is 0), and give the scratch back. FALSE (the reader
 * failed) when the budget does not allow it. */
static gboolean scratch_leave(DdmJdwpReader *r, size_t target)
{
    size_t used = r->end - r->start;
    uint8_t *own = NULL;

    g_assert(r->on_scratch);
    if (target < used)
        target = used;
    if (target > 0 && r->budget->used + target > r->budget->limit)
        return refuse_budget(r, target);
    if (target > 0) {
        own = g_malloc(target);
        memcpy(own, r->buf + r->start, used);
    }
    scratch_return(r);
    r->buf = own;
    r->alloc = target;
    r->budget->used += target;
    r->start = 0;
    r->end = used;
    return TRUE;
}

/* Borrow the budget's scratch if the reader holds nothing and nobody else
 * uses it; TRUE if it did. A borrower that never got a byte into it (its
 * read found nothing: space(), then EAGAIN, so neither commit nor next())
 * has handed nothing out from it: the scratch is taken back from it, or
 * that one quiet peer would send every other reader to a 64 KiB buffer of
 * its own until its next read. */
static gboolean scratch_borrow(DdmJdwpReader *r)
{
    DdmJdwpBudget *b = r->budget;
    DdmJdwpReader *idle;

    if (!b || r->buf || r->alloc || r->end != r->start)
        return FALSE;
    idle = b->scratch_user;
    if (idle && (idle->scratch_fed || idle->end != idle->start))
        return FALSE;
    if (idle) {
        scratch_return(idle);
        idle->start = idle->end = 0;
    }
    if (!b->scratch)
        b->scratch = g_malloc(READER_INITIAL);
    b->scratch_user = r;
    r->on_scratch = TRUE;
    r->buf = b->scratch;
    r->alloc = READER_INITIAL;
    r->start = r->end = 0;
    return TRUE;
}

/* The size a buffer grows to so that it holds @need bytes: double, but never
 * past the packet being received, and at least @need. */
static size_t growth_target(const DdmJdwpReader *r, size_t need)
{
    size_t target;

    if (r->alloc == 0)
        target = r->initial;
    else
        target = r->alloc <= G_MAXSIZE / 2 ? r->alloc * 2 : G_MAXSIZE;
    if (r->want_len && target > r->want_len)
        target = r->want_len; /* never grow past the packet being received */
    if (target < need)
        target = need;
    return target;
}

/* Make room for @want more bytes after end; may move the buffered data.
 * FALSE (the reader failed) when the budget does not allow it. */
static gboolean ensure_space(DdmJdwpReader *r, size_t want)
{
    size_t used = r->end - r->start;
    size_t need, target;

    if (used == 0)
        r->start = r->end = 0;
    need = used + want; /* no overflow: feed() copies real memory, space() clamps want */
    if (r->on_scratch) {
        if (r->alloc - r->end >= want)
            return TRUE;
        compact(r);
        if (r->alloc >= need)
            return TRUE;
        /* the packet outgrows the scratch: its bytes move to a buffer of its own */
        return scratch_leave(r, growth_target(r, need));
    }
    if (need <= READER_INITIAL && scratch_borrow(r))
        return TRUE;
    if (r->alloc > r->initial && need <= r->initial && r->want_len <= r->initial) {
        /* a large packet has gone: give the memory back */
        compact(r);
        set_alloc(r, r->initial);
        return TRUE;
    }
    if (r->alloc - r->end >= want && r->buf)
        return TRUE;
    compact(r);
    if (r->alloc >= need && r->buf)
        return TRUE;
    target = growth_target(r, need);
    if (r->budget && target > r->alloc &&
        r->budget->used - r->alloc + target > r->budget->limit)
        return refuse_budget(r, target);
    if (!r->buf && r->budget && r->budget->spare && target <= r->budget->spare_len &&
        target > r->budget->spare_len / 2 && /* (at most twice what it needs) */
        r->budget->used + r->budget->spare_len <= r->budget->limit) { /* (charged whole) */
        /* the spare a streamed packet left: no new mapping, no page faults */
        r->buf = r->budget->spare;
        r->alloc = r->budget->spare_len;
        r->budget->used += r->alloc;
        r->budget->spare = NULL;
        r->budget->spare_len = 0;
        return TRUE;
    }
    set_alloc(r, target);
    return TRUE;
}

void ddm_jdwp_reader_feed(DdmJdwpReader *r, const uint8_t *data, size_t n)
{
    g_return_if_fail(r != NULL);
    if (n == 0)
        return;
    g_return_if_fail(data != NULL);
    if (r->failed) {
        /* a failed reader only reports its error; keep no more input */
        r->start = r->end = 0;
        return;
    }
    if (!ensure_space(r, n))
        return;
    r->busy = TRUE;
    r->scratch_fed = r->on_scratch;
    memcpy(r->buf + r->end, data, n);
    r->end += n;
}

uint8_t *ddm_jdwp_reader_space(DdmJdwpReader *r, size_t want, size_t *avail)
{
    g_return_val_if_fail(r != NULL, NULL);
    DdmJdwpBudget *b = r->budget;
    if (G_LIKELY(b && b->scratch && !b->scratch_user && !r->buf && !r->alloc && !r->failed &&
                 r->start == r->end && want <= READER_INITIAL)) {
        /* The common read (a peer that holds nothing, the scratch free):
         * what ensure_space() + scratch_borrow() would do, and no more. */
        b->scratch_user = r;
        r->on_scratch = TRUE;
        r->buf = b->scratch;
        r->alloc = READER_INITIAL;
        r->start = r->end = 0;
        if (avail)
            *avail = READER_INITIAL;
        return r->buf;
    }
    if (avail)
        *avail = 0;
    if (r->failed) {
        r->start = r->end = 0;
        if (r->failed == DDM_JDWP_ERR_BUDGET)
            return NULL;
    }
    /* reading more than one packet ahead is never needed */
    want = CLAMP(want, (size_t)1, MAX(r->max_packet, r->initial));
    /* while a packet is incomplete, grow no further than its end */
    if (r->want_len > r->end - r->start && r->end - r->start + want > r->alloc)
        want = MIN(want, r->want_len - (r->end - r->start));
    if (!ensure_space(r, want))
        return NULL;
    if (avail)
        *avail = r->alloc - r->end;
    return r->buf + r->end;
}

void ddm_jdwp_reader_commit(DdmJdwpReader *r, size_t n)
{
    g_return_if_fail(r != NULL);
    g_return_if_fail(n <= r->alloc - r->end);
    if (r->failed)
        return;
    if (n == 0)
        return;
    r->busy = TRUE;
    r->scratch_fed = r->on_scratch;
    r->end += n;
}

size_t ddm_jdwp_reader_pending(const DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, 0);
    return r->end - r->start;
}

void ddm_jdwp_reader_set_more_outside(DdmJdwpReader *r, gboolean more)
{
    g_return_if_fail(r != NULL);
    r->more_outside = more != 0;
}

void ddm_jdwp_reader_offer_heads(DdmJdwpReader *r, size_t head_len)
{
    g_return_if_fail(r != NULL);
    g_return_if_fail(head_len == 0 || head_len >= DDM_JDWP_HEADER_LEN);
    r->head_len = (uint32_t)MIN(head_len, (size_t)r->initial);
}

void ddm_jdwp_reader_offer_reply_heads(DdmJdwpReader *r, gboolean on)
{
    g_return_if_fail(r != NULL);
    r->reply_heads = on != 0;
}

gboolean ddm_jdwp_reader_stream(DdmJdwpReader *r, size_t skip)
{
    uint32_t len;

    g_return_val_if_fail(r != NULL, FALSE);
    if (!r->head_last || r->failed || DDM_JDWP_HEADER_LEN + skip > r->head_avail)
        return FALSE;
    len = get_u4(r->buf + r->start);
    r->start += DDM_JDWP_HEADER_LEN + skip;
    r->stream_left = (uint64_t)len - DDM_JDWP_HEADER_LEN - skip;
    r->streaming = TRUE;
    r->streamed_last = TRUE;
    r->head_last = r->head_offered = FALSE;
    r->want_len = 0; /* the buffer never grows for a streamed packet */
    return TRUE;
}

uint64_t ddm_jdwp_reader_stream_left(const DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, 0);
    return r->streaming ? r->stream_left : 0;
}

uint64_t ddm_jdwp_reader_stream_unread(const DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, 0);
    return r->streaming && !r->failed && r->start == r->end ? r->stream_left : 0;
}

void ddm_jdwp_reader_stream_moved(DdmJdwpReader *r, uint64_t n)
{
    g_return_if_fail(r != NULL);
    g_return_if_fail(n <= ddm_jdwp_reader_stream_unread(r));
    r->stream_left -= n;
    r->busy = TRUE; /* bytes came: no trim of a reader in use */
}

/* Streaming: the next piece of the streamed packet, or its end. */
static DdmJdwpResult next_stream_piece(DdmJdwpReader *r, DdmJdwpPacket *pkt)
{
    size_t avail = r->end - r->start;
    size_t n;

    if (r->stream_left == 0) {
        r->streaming = FALSE;
        return DDM_JDWP_STREAM_END;
    }
    if (avail == 0)
        return DDM_JDWP_NEED_MORE;
    n = (uint64_t)avail < r->stream_left ? avail : (size_t)r->stream_left;
    if (pkt) {
        memset(pkt, 0, sizeof *pkt);
        pkt->bytes = pkt->data = r->buf + r->start;
        pkt->len = pkt->data_len = n;
    }
    r->start += n;
    r->stream_left -= n;
    return DDM_JDWP_STREAM_DATA;
}

gboolean ddm_jdwp_reader_trim(DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, FALSE);
    if (r->busy) {
        r->busy = FALSE; /* released at the next trim if it stays quiet */
        return FALSE;
    }
    if (!r->buf || r->start != r->end)
        return FALSE;
    r->start = r->end = 0;
    r->head_last = FALSE; /* nothing returned stays borrowed */
    if (r->on_scratch) { /* normally given back by next() already */
        scratch_return(r);
        return FALSE;
    }
    set_alloc(r, 0);
    return TRUE;
}

static DdmJdwpResult fail(DdmJdwpReader *r, DdmJdwpResult res)
{
    if (r->on_scratch) { /* a failed reader keeps no input: the scratch goes back */
        scratch_return(r);
        r->start = r->end = 0;
    }
    r->failed = res;
    r->want_len = 0;
    g_debug("JDWP reader failed: %s", ddm_jdwp_result_str(res));
    return res;
}

/* Check the packet at start as far as its bytes go. Returns DDM_JDWP_PACKET
 * when complete (length in *plen), NEED_MORE, or an error (not yet sticky). */
static DdmJdwpResult check_packet(DdmJdwpReader *r, size_t *plen)
{
    const uint8_t *p = r->buf + r->start;
    size_t avail = r->end - r->start;
    uint32_t len;

    if (avail < 4)
        return DDM_JDWP_NEED_MORE;
    len = get_u4(p);
    if (len < DDM_JDWP_HEADER_LEN) {
        r->claimed_len = len;
        return DDM_JDWP_ERR_SHORT;
    }
    if (r->head_len && !r->head_offered && !r->handshake_pending && len >= r->head_len &&
        (avail <= 8 || p[8] == 0 || (r->reply_heads && p[8] == DDM_JDWP_FLAG_REPLY)) &&
        (avail < len || (uint64_t)len > r->max_packet)) {
        if (avail < r->head_len)
            return DDM_JDWP_NEED_MORE; /* a command that may be streamed: see its head first */
        r->head_offered = TRUE;
        return DDM_JDWP_PACKET_HEAD;
    }
    if ((uint64_t)len > (uint64_t)r->max_packet) {
        r->claimed_len = len;
        return DDM_JDWP_ERR_TOO_BIG;
    }
    if (avail > 8 && p[8] != 0 && p[8] != DDM_JDWP_FLAG_REPLY)
        return DDM_JDWP_ERR_FLAGS;
    if (avail < len) {
        r->want_len = len;
        return DDM_JDWP_NEED_MORE;
    }
    *plen = len;
    return DDM_JDWP_PACKET;
}

/* In handshake mode: 1 = handshake complete, 0 = prefix so far, -1 = mismatch. */
static int match_handshake(const DdmJdwpReader *r)
{
    size_t avail = r->end - r->start;
    size_t n = MIN(avail, (size_t)DDM_JDWP_HANDSHAKE_LEN);
    if (memcmp(r->buf + r->start, DDM_JDWP_HANDSHAKE, n) != 0)
        return -1;
    return n == DDM_JDWP_HANDSHAKE_LEN ? 1 : 0;
}

/* An emptied buffer of a reader's own (budget attached): the budget keeps
 * it as its spare for the next large packet (ddm_jdwp_budget_trim) if it
 * is of the streamed reads' size and the spare is free; freed otherwise. */
static void park_or_free(DdmJdwpReader *r)
{
    if (!r->budget->spare && r->alloc == SPARE_MAX) {
        r->budget->used -= r->alloc;
        r->budget->spare = r->buf;
        r->budget->spare_len = r->alloc;
        r->buf = NULL;
        r->alloc = 0;
        return;
    }
    set_alloc(r, 0);
}

/* next() found no whole unit: give the scratch back (moving the bytes of an
 * incomplete packet to a buffer of the reader's own, sized to them). A
 * reader sharing a budget that read into a buffer of its own (the scratch
 * was in use) keeps no more than what arrived either: none once drained,
 * and the bytes of its incomplete packet when the buffer is more than
 * twice them (a 64 KiB read that brought a few bytes). A buffer at most
 * twice its bytes (a large packet growing) is left alone, and so is an
 * empty one of up to SPARE_MAX bytes while a packet streams (the caller's
 * larger reads of it, vm_io.c): it goes at ddm_jdwp_reader_release_empty()
 * (the caller's socket is empty) or at the first NEED_MORE after the
 * packet's end (one of SPARE_MAX bytes to the budget's spare if free, which
 * the next large buffer reuses). FALSE when the move failed over the budget. */
static gboolean settle(DdmJdwpReader *r)
{
    size_t used = r->end - r->start;

    if (r->on_scratch) {
        if (used == 0) {
            scratch_return(r);
            r->start = r->end = 0;
            return TRUE;
        }
        return scratch_leave(r, 0);
    }
    if (!r->buf || !r->budget)
        return TRUE;
    if (used == 0) {
        r->start = r->end = 0;
        if (r->streaming && r->alloc <= SPARE_MAX)
            return TRUE; /* a streamed packet's next reads reuse it (see release_empty) */
        park_or_free(r);
    } else if (r->alloc / 2 > used) {
        compact(r);
        set_alloc(r, used); /* shrinking: never over the budget */
    }
    return TRUE;
}

static DdmJdwpResult next_unit(DdmJdwpReader *r, DdmJdwpPacket *pkt);

gboolean ddm_jdwp_reader_release_empty_(DdmJdwpReader *r)
{
    r->start = r->end = 0;
    park_or_free(r);
    return TRUE;
}

DdmJdwpResult ddm_jdwp_reader_next(DdmJdwpReader *r, DdmJdwpPacket *pkt)
{
    DdmJdwpResult res;

    g_return_val_if_fail(r != NULL, DDM_JDWP_ERR_HANDSHAKE);
    r->head_last = FALSE;
    if (G_LIKELY(!r->failed && !r->streaming && !r->handshake_pending)) {
        /* The relay's hot path (one packet per read, bench/relay.sh): a
         * whole, well-formed packet at start is handed out here, and what
         * next_unit() + check_packet() would do for it is all that is done;
         * anything else (a packet not yet whole, one past the cap, bad
         * flags, heads to offer) takes the general path below. */
        size_t avail = r->end - r->start;
        if (avail >= DDM_JDWP_HEADER_LEN) {
            const uint8_t *p = r->buf + r->start;
            uint32_t len = get_u4(p);
            if (len >= DDM_JDWP_HEADER_LEN && len <= avail && len <= r->max_packet &&
                (p[8] == 0 || p[8] == DDM_JDWP_FLAG_REPLY)) {
                r->head_offered = FALSE;
                r->start += len;
                r->want_len = 0;
                r->streamed_last = FALSE;
                if (pkt) {
                    pkt->bytes = p;
                    pkt->len = len;
                    header_of(p, &pkt->header);
                    pkt->data = p + DDM_JDWP_HEADER_LEN;
                    pkt->data_len = len - DDM_JDWP_HEADER_LEN;
                }
                return DDM_JDWP_PACKET;
            }
        } else if (avail == 0) {
            return settle(r) ? DDM_JDWP_NEED_MORE : r->failed;
        }
    }
    if (r->failed) {
        if (r->on_scratch) {
            scratch_return(r);
            r->start = r->end = 0;
        }
        return r->failed;
    }
    res = next_unit(r, pkt);
    if (res == DDM_JDWP_NEED_MORE && !settle(r))
        return r->failed;
    return res;
}

static DdmJdwpResult next_unit(DdmJdwpReader *r, DdmJdwpPacket *pkt)
{
    DdmJdwpResult res;
    size_t len = 0;

    if (r->streaming)
        return next_stream_piece(r, pkt);
    if (r->start == r->end)
        return DDM_JDWP_NEED_MORE;

    if (r->handshake_pending) {
        int m = match_handshake(r);
        if (m > 0) {
            r->start += DDM_JDWP_HANDSHAKE_LEN;
            r->handshake_pending = FALSE;
            return DDM_JDWP_HANDSHAKE_OK;
        }
        if (m == 0)
            return DDM_JDWP_NEED_MORE;
        /* not the handshake: only a well-formed packet racing ahead is allowed */
        res = check_packet(r, &len);
        if (res < 0)
            return fail(r, DDM_JDWP_ERR_HANDSHAKE);
        if (res == DDM_JDWP_NEED_MORE)
            return res;
        r->start += len;
        r->want_len = 0;
        return DDM_JDWP_DISCARDED;
    }

    res = check_packet(r, &len);
    if (res < 0)
        return fail(r, res);
    if (res == DDM_JDWP_NEED_MORE)
        return res;
    if (res == DDM_JDWP_PACKET_HEAD) {
        size_t avail = r->end - r->start;
        r->head_last = TRUE;
        r->head_avail = avail;
        if (pkt) {
            pkt->bytes = r->buf + r->start;
            ddm_jdwp_parse_header(pkt->bytes, avail, &pkt->header);
            pkt->len = pkt->header.length;
            pkt->data = pkt->bytes + DDM_JDWP_HEADER_LEN;
            pkt->data_len = MIN(avail, (size_t)pkt->header.length) - DDM_JDWP_HEADER_LEN;
        }
        return res;
    }
    r->head_offered = FALSE;
    if (pkt) {
        pkt->bytes = r->buf + r->start;
        pkt->len = len;
        ddm_jdwp_parse_header(pkt->bytes, len, &pkt->header);
        pkt->data = pkt->bytes + DDM_JDWP_HEADER_LEN;
        pkt->data_len = len - DDM_JDWP_HEADER_LEN;
    }
    r->start += len;
    r->want_len = 0;
    r->streamed_last = FALSE;
    return DDM_JDWP_PACKET;
}

const char *ddm_jdwp_result_str(DdmJdwpResult res)
{
    switch (res) {
    case DDM_JDWP_NEED_MORE:
        return "need more data";
    case DDM_JDWP_PACKET:
        return "packet";
    case DDM_JDWP_HANDSHAKE_OK:
        return "handshake";
    case DDM_JDWP_DISCARDED:
        return "packet before handshake discarded";
    case DDM_JDWP_PACKET_HEAD:
        return "packet head";
    case DDM_JDWP_STREAM_DATA:
        return "streamed bytes";
    case DDM_JDWP_STREAM_END:
        return "end of streamed packet";
    case DDM_JDWP_ERR_SHORT:
        return "packet length below 11";
    case DDM_JDWP_ERR_TOO_BIG:
        return "packet length over the cap";
    case DDM_JDWP_ERR_HANDSHAKE:
        return "bad JDWP handshake";
    case DDM_JDWP_ERR_FLAGS:
        return "bad packet flags";
    case DDM_JDWP_ERR_BUDGET:
        return "packet buffers of all peers over the memory budget";
    }
    return "unknown result";
}

gboolean ddm_jdwp_parse_header(const uint8_t *buf, size_t len, DdmJdwpHeader *h)
{
    g_return_val_if_fail(h != NULL, FALSE);
    if (!buf || len < DDM_JDWP_HEADER_LEN)
        return FALSE;
    header_of(buf, h);
    return TRUE;
}

void ddm_jdwp_write_header(uint8_t out[DDM_JDWP_HEADER_LEN], const DdmJdwpHeader *h)
{
    ddm_put_u4(out, h->length);
    ddm_put_u4(out + 4, h->id);
    out[8] = h->flags;
    if (h->flags & DDM_JDWP_FLAG_REPLY) {
        out[9] = (uint8_t)(h->error >> 8);
        out[10] = (uint8_t)h->error;
    } else {
        out[9] = h->cmdset;
        out[10] = h->cmd;
    }
}

static uint8_t *build(const DdmJdwpHeader *tmpl, const void *data, size_t len, size_t *out_len)
{
    DdmJdwpHeader h = *tmpl;
    uint8_t *p;

    g_return_val_if_fail(len <= G_MAXUINT32 - DDM_JDWP_HEADER_LEN, NULL);
    g_return_val_if_fail(len == 0 || data != NULL, NULL);
    h.length = (uint32_t)(len + DDM_JDWP_HEADER_LEN);
    p = g_malloc(h.length);
    ddm_jdwp_write_header(p, &h);
    if (len)
        memcpy(p + DDM_JDWP_HEADER_LEN, data, len);
    if (out_len)
        *out_len = h.length;
    return p;
}

uint8_t *ddm_jdwp_build_command(uint32_t id, uint8_t cmdset, uint8_t cmd, const void *data,
                                size_t len, size_t *out_len)
{
    DdmJdwpHeader h = { 0, id, 0, cmdset, cmd, 0 };
    return build(&h, data, len, out_len);
}

uint8_t *ddm_jdwp_build_reply(uint32_t id, uint16_t error, const void *data, size_t len,
                              size_t *out_len)
{
    DdmJdwpHeader h = { 0, id, DDM_JDWP_FLAG_REPLY, 0, 0, error };
    if (error != 0)
        len = 0;
    return build(&h, len ? data : NULL, len, out_len);
}

void ddm_jdwp_set_id(uint8_t *packet, uint32_t id)
{
    g_return_if_fail(packet != NULL);
    ddm_put_u4(packet + 4, id);
}

static const struct {
    uint16_t code;
    const char *name;
} error_names[] = {
    { 0, "NONE" },
    { 10, "INVALID_THREAD" },
    { 11, "INVALID_THREAD_GROUP" },
    { 12, "INVALID_PRIORITY" },
    { 13, "THREAD_NOT_SUSPENDED" },
    { 14, "THREAD_SUSPENDED" },
    { 20, "INVALID_OBJECT" },
    { 21, "INVALID_CLASS" },
    { 22, "CLASS_NOT_PREPARED" },
    { 23, "INVALID_METHODID" },
    { 24, "INVALID_LOCATION" },
    { 25, "INVALID_FIELDID" },
    { 30, "INVALID_FRAMEID" },
    { 31, "NO_MORE_FRAMES" },
    { 32, "OPAQUE_FRAME" },
    { 33, "NOT_CURRENT_FRAME" },
    { 34, "TYPE_MISMATCH" },
    { 35, "INVALID_SLOT" },
    { 40, "DUPLICATE" },
    { 41, "NOT_FOUND" },
    { 50, "INVALID_MONITOR" },
    { 51, "NOT_MONITOR_OWNER" },
    { 52, "INTERRUPT" },
    { 60, "INVALID_CLASS_FORMAT" },
    { 61, "CIRCULAR_CLASS_DEFINITION" },
    { 62, "FAILS_VERIFICATION" },
    { 63, "ADD_METHOD_NOT_IMPLEMENTED" },
    { 64, "SCHEMA_CHANGE_NOT_IMPLEMENTED" },
    { 65, "INVALID_TYPESTATE" },
    { 66, "HIERARCHY_CHANGE_NOT_IMPLEMENTED" },
    { 67, "DELETE_METHOD_NOT_IMPLEMENTED" },
    { 68, "UNSUPPORTED_VERSION" },
    { 69, "NAMES_DONT_MATCH" },
    { 70, "CLASS_MODIFIERS_CHANGE_NOT_IMPLEMENTED" },
    { 71, "METHOD_MODIFIERS_CHANGE_NOT_IMPLEMENTED" },
    { 99, "NOT_IMPLEMENTED" },
    { 100, "NULL_POINTER" },
    { 101, "ABSENT_INFORMATION" },
    { 102, "INVALID_EVENT_TYPE" },
    { 103, "ILLEGAL_ARGUMENT" },
    { 110, "OUT_OF_MEMORY" },
    { 111, "ACCESS_DENIED" },
    { 112, "VM_DEAD" },
    { 113, "INTERNAL" },
    { 115, "UNATTACHED_THREAD" },
    { 500, "INVALID_TAG" },
    { 502, "ALREADY_INVOKING" },
    { 503, "INVALID_INDEX" },
    { 504, "INVALID_LENGTH" },
    { 506, "INVALID_STRING" },
    { 507, "INVALID_CLASS_LOADER" },
    { 508, "INVALID_ARRAY" },
    { 509, "TRANSPORT_LOAD" },
    { 510, "TRANSPORT_INIT" },
    { 511, "NATIVE_METHOD" },
    { 512, "INVALID_COUNT" },
};

const char *ddm_jdwp_error_name(uint16_t error)
{
    size_t i;
    for (i = 0; i < G_N_ELEMENTS(error_names); i++)
        if (error_names[i].code == error)
            return error_names[i].name;
    return "UNKNOWN";
}

/* The list itself is the SDK's (<ddmon/plugin.h>), so the test kit
 * enforces the very same one. */
gboolean ddm_jdwp_plugin_allowed(uint8_t cmdset, uint8_t cmd)
{
    return ddm_jdwp_command_allowed(cmdset, cmd) != 0;
}
