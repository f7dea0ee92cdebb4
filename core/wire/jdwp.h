/* SPDX-License-Identifier: Apache-2.0
 *
 * JDWP framing: the 14-byte handshake, the 11-byte packet header (command
 * and reply forms), an incremental packet reader and packet builders.
 * Pure bytes in, structures out: no I/O, no main loop.
 *
 * Reader invariants: input may be split at any byte or hold several packets;
 * a packet's declared length is checked (>= 11, <= the reader's cap) from
 * its first 4 bytes, before any buffer grows for it, so a hostile length
 * never causes a large allocation; the buffer grows with the bytes that
 * arrive (at most twice them) and an idle reader holds none (see trim). Readers may
 * share a memory budget (DdmJdwpBudget): a growth past it fails the reader
 * that asked. Readers sharing a budget also share one scratch buffer: they
 * read and parse there, and hold a buffer of their own only while a packet
 * is incomplete (so an idle peer costs none between two reads). After an error the reader stays failed: the caller logs and
 * closes the connection.
 */
#ifndef DDM_JDWP_H
#define DDM_JDWP_H

#include <glib.h>
#include <stdint.h>
#include <string.h>

#include <ddmon/plugin.h> /* DDM_REQUEST_MAX_PACKET */

#define DDM_JDWP_HANDSHAKE "JDWP-Handshake"
#define DDM_JDWP_HANDSHAKE_LEN 14
#define DDM_JDWP_HEADER_LEN 11
#define DDM_JDWP_FLAG_REPLY 0x80
/* The standard JDWP commands and errors ddmon itself uses (the JDWP
 * specification's numbers; doc/protocol.md says why each is used). The
 * vendor command set DDM rides on is the SDK's DDM_JDWP_CMDSET/CMD. */
#define DDM_JDWP_CMDSET_VM 1               /* VirtualMachine */
#define DDM_JDWP_CMD_VM_VERSION 1          /* VirtualMachine.Version: the probe before DDM */
#define DDM_JDWP_CMD_VM_DISPOSE 6          /* VirtualMachine.Dispose: a debugger that left */
/* The read-only commands plugins may send to a plain JVM (ddm_host.jdwp_request;
 * doc/protocol.md, "Plain JVMs"), and the one pair that is not read-only. */
#define DDM_JDWP_CMD_VM_ALL_THREADS 4
#define DDM_JDWP_CMD_VM_ID_SIZES 7
#define DDM_JDWP_CMD_VM_CAPABILITIES 12
#define DDM_JDWP_CMD_VM_CLASS_PATHS 13
#define DDM_JDWP_CMD_VM_CAPABILITIES_NEW 17
#define DDM_JDWP_CMDSET_REFTYPE 2          /* ReferenceType */
#define DDM_JDWP_CMD_REFTYPE_SIGNATURE 1
#define DDM_JDWP_CMD_REFTYPE_METHODS 5
#define DDM_JDWP_CMD_REFTYPE_SOURCE_FILE 7
#define DDM_JDWP_CMDSET_METHOD 6           /* Method */
#define DDM_JDWP_CMD_METHOD_LINE_TABLE 1
#define DDM_JDWP_CMDSET_THREAD 11          /* ThreadReference */
#define DDM_JDWP_CMD_THREAD_NAME 1
#define DDM_JDWP_CMD_THREAD_SUSPEND 2
#define DDM_JDWP_CMD_THREAD_RESUME 3
#define DDM_JDWP_CMD_THREAD_STATUS 4
#define DDM_JDWP_CMD_THREAD_GROUP 5
#define DDM_JDWP_CMD_THREAD_FRAMES 6
#define DDM_JDWP_CMD_THREAD_FRAME_COUNT 7
#define DDM_JDWP_CMDSET_THREAD_GROUP 12    /* ThreadGroupReference */
#define DDM_JDWP_CMD_THREAD_GROUP_NAME 1
/** TRUE for a command a plugin may send to a plain JVM: read-only, standard
 *  (command sets 1..64), or ThreadReference.Suspend/Resume (the core holds
 *  at most one such thread per VM). The list is the SDK's
 *  ddm_jdwp_command_allowed (<ddmon/plugin.h>), shared with the test kit. */
gboolean ddm_jdwp_plugin_allowed(uint8_t cmdset, uint8_t cmd);
#define DDM_JDWP_ERROR_NOT_IMPLEMENTED 99  /* the answer to a command a VM does not know */

/** Default cap on one packet (configurable per reader): HPDS dumps are large. */
#define DDM_JDWP_DEFAULT_MAX_PACKET DDM_REQUEST_MAX_PACKET

typedef struct DdmJdwpHeader {
    uint32_t length;  /* whole packet including the header */
    uint32_t id;
    uint8_t flags;    /* 0 command, 0x80 reply */
    uint8_t cmdset;   /* commands only */
    uint8_t cmd;      /* commands only */
    uint16_t error;   /* replies only: big-endian u2 at offset 9 */
} DdmJdwpHeader;

static inline gboolean ddm_jdwp_is_reply(const DdmJdwpHeader *h)
{
    return (h->flags & DDM_JDWP_FLAG_REPLY) != 0;
}

/** A complete packet. @bytes points at the header (borrowed from the reader,
 *  valid until the next call on it); @data/@data_len is the payload. The
 *  reader has consumed those bytes and never reads them again: its owner
 *  may lend them writable (the VM session to the relay, which writes a
 *  debugger's id into a reply: DdmSessionEvents.foreign_reply). */
typedef struct DdmJdwpPacket {
    DdmJdwpHeader header;
    const uint8_t *bytes;
    size_t len;
    const uint8_t *data;
    size_t data_len;
} DdmJdwpPacket;

/** Results of ddm_jdwp_reader_next(). */
typedef enum {
    DDM_JDWP_NEED_MORE = 0,
    DDM_JDWP_PACKET = 1,
    DDM_JDWP_HANDSHAKE_OK = 2,      /* in handshake mode: the 14 bytes arrived */
    DDM_JDWP_DISCARDED = 3,         /* in handshake mode: a complete packet raced ahead, dropped */
    DDM_JDWP_PACKET_HEAD = 4,       /* with heads offered: the first bytes of a command packet
                                       that is not complete (or is past the cap); take it as a
                                       stream with ddm_jdwp_reader_stream() or call next() again */
    DDM_JDWP_STREAM_DATA = 5,       /* streaming: the next bytes of the streamed packet */
    DDM_JDWP_STREAM_END = 6,        /* streaming: the streamed packet is complete */
    DDM_JDWP_ERR_SHORT = -1,        /* declared length < 11 */
    DDM_JDWP_ERR_TOO_BIG = -2,      /* declared length > cap */
    DDM_JDWP_ERR_HANDSHAKE = -3,    /* bytes that are neither the handshake nor a packet */
    DDM_JDWP_ERR_FLAGS = -4,        /* flags neither 0x00 nor 0x80 */
    DDM_JDWP_ERR_BUDGET = -5,       /* the buffer would take the shared budget past its limit */
} DdmJdwpResult;

typedef struct DdmJdwpReader DdmJdwpReader;

/** A memory budget shared by readers: the bytes their buffers hold, all
 *  together, never exceed @limit (0 = no limit). It must outlive the
 *  readers attached to it. (transfer full) */
typedef struct DdmJdwpBudget DdmJdwpBudget;

DdmJdwpBudget *ddm_jdwp_budget_new(size_t limit);
void ddm_jdwp_budget_free(DdmJdwpBudget *b);
/** Bytes the attached readers' buffers hold now. */
size_t ddm_jdwp_budget_used(const DdmJdwpBudget *b);
size_t ddm_jdwp_budget_limit(const DdmJdwpBudget *b);
/** The read size while a long packet streams (core/session/vm_io.c), and
 *  the one size of buffer the budget keeps as its spare: one value, so the
 *  spare is the buffer those reads want. */
#define DDM_JDWP_STREAM_READ_SIZE ((size_t)256 << 10)
/** The budget keeps one emptied buffer of exactly 256 KiB (a streamed
 *  packet's reads, core/session/vm_io.c) for the next large one, uncounted,
 *  as the scratch (a reader takes it only if the budget has room for all of
 *  it): free it (call it periodically). TRUE if one was freed. */
gboolean ddm_jdwp_budget_trim(DdmJdwpBudget *b);
/** Bytes of that spare buffer now (tests). */
size_t ddm_jdwp_budget_spare_size(const DdmJdwpBudget *b);

/* ---- private: the reader's state, jdwp.c's own ------------------------
 * It is here only for the inline predicates below (every relayed packet
 * asks them), which only read it; callers use the functions, never these
 * fields. Every VM has one: no holes, flags in bits. */
struct DdmJdwpReader {
    uint8_t *buf;       /* NULL while nothing is buffered (lazy); the budget's scratch
                           while on_scratch */
    size_t alloc;       /* bytes allocated in buf (the scratch's size while on_scratch) */
    DdmJdwpBudget *budget; /* borrowed, or NULL: alloc is charged to it */
    size_t refused_len; /* after ERR_BUDGET: the size the buffer needed */
    size_t start;       /* first unconsumed byte */
    size_t end;         /* one past the last buffered byte */
    size_t max_packet;  /* cap on one packet's declared length */
    size_t want_len;    /* declared length of the incomplete packet at start, or 0 */
    size_t head_avail;     /* bytes buffered of it when shown */
    uint64_t stream_left;  /* bytes of the streamed packet still to hand out */
    size_t claimed_len;    /* after ERR_SHORT/ERR_TOO_BIG: the length the packet declared */
    uint32_t initial;   /* size the buffer starts at and shrinks back to (<= READER_INITIAL) */
    uint32_t head_len;  /* offer heads of this many bytes (0: off; <= initial) */
    DdmJdwpResult failed; /* 0 while healthy; the first error, sticky */
    guint on_scratch : 1;  /* buf is the budget's scratch (borrowed, never freed here) */
    guint scratch_fed : 1; /* bytes were put in the scratch since it was borrowed */
    guint handshake_pending : 1;
    guint reply_heads : 1;  /* offer the heads of replies too */
    guint head_offered : 1; /* the packet at start was shown as a head */
    guint head_last : 1;    /* the last result was that head (stream() allowed) */
    guint streaming : 1;    /* handing out the packet's remaining bytes */
    guint busy : 1;         /* bytes came since the last trim */
    guint more_outside : 1; /* whole packets the caller read itself follow the one it
                               handles now (ddm_jdwp_reader_set_more_outside) */
    guint streamed_last : 1; /* the last packet handed out was streamed (a long one) */
};
/* ---- end of private ---------------------------------------------------- */

/** Charge @r's buffer to @b (borrowed; NULL detaches). A growth that would
 *  take @b past its limit fails @r with DDM_JDWP_ERR_BUDGET (space() then
 *  returns NULL, feed() drops the bytes) and frees its buffer. */
void ddm_jdwp_reader_set_budget(DdmJdwpReader *r, DdmJdwpBudget *b);
/** TRUE while @r's bytes are in its budget's shared scratch buffer (jdwp.c:
 *  readers sharing a budget read into one scratch and keep a buffer of
 *  their own only for the bytes of an incomplete packet; tests). */
gboolean ddm_jdwp_reader_on_scratch(const DdmJdwpReader *r);
/** Give the shared scratch back now, for a reader whose owner stops calling
 *  next() before NEED_MORE (a debugger held until its VM is up): its bytes
 *  move to a buffer of its own. No-op off the scratch. FALSE when the move
 *  failed over the budget (the reader failed: next() says so). */
gboolean ddm_jdwp_reader_release_scratch(DdmJdwpReader *r);
/* jdwp.c: its slow part; call only through ddm_jdwp_reader_release_empty
 * (the inline wrapper checks @r and that there is an empty buffer of its
 * own to give back). */
gboolean ddm_jdwp_reader_release_empty_(DdmJdwpReader *r);
/** A reader sharing a budget that holds an empty buffer of its own (kept
 *  between the reads of a streamed packet): hand it back now (as the
 *  budget's spare if it is of the stream reads' size and the spare is
 *  free, else freed),
 *  e.g. when the socket is empty, so a peer that trickles a long packet
 *  holds nothing between its bytes. TRUE if a buffer went. */
static inline gboolean ddm_jdwp_reader_release_empty(DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, FALSE);
    if (!r->buf || r->on_scratch || !r->budget || r->end != r->start) /* (mostly none held) */
        return FALSE;
    return ddm_jdwp_reader_release_empty_(r);
}
/** After DDM_JDWP_ERR_BUDGET: the buffer size that was refused. */
size_t ddm_jdwp_reader_refused_len(const DdmJdwpReader *r);
/** The length the packet at the front declared (after DDM_JDWP_ERR_SHORT or
 *  ERR_TOO_BIG: the offending value, for the log line), or 0. */
size_t ddm_jdwp_reader_claimed_len(const DdmJdwpReader *r);
/** The reader's cap on one packet's declared length (ddm_jdwp_reader_new). */
static inline size_t ddm_jdwp_reader_max_packet(const DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, 0);
    return r->max_packet;
}

/** New reader with packet cap @max_packet (0 = default). (transfer full) */
DdmJdwpReader *ddm_jdwp_reader_new(size_t max_packet);
void ddm_jdwp_reader_free(DdmJdwpReader *r);
/** Expect the 14-byte handshake before packets (complete packets before it are discarded). */
void ddm_jdwp_reader_expect_handshake(DdmJdwpReader *r);
/**
 * Offer the heads of large command packets (flags 0) to the caller: once
 * @head_len bytes (>= 11) of such a packet have arrived and it is not
 * complete yet, or it declares more than the cap, next() returns
 * DDM_JDWP_PACKET_HEAD once, with @pkt's header parsed, pkt->len the
 * declared length and pkt->data/data_len the body bytes buffered so far
 * (at least @head_len - 11). The caller then either calls
 * ddm_jdwp_reader_stream(), or next() again to have the packet buffered
 * (or refused past the cap) as usual. 0 turns the offer off.
 */
void ddm_jdwp_reader_offer_heads(DdmJdwpReader *r, size_t head_len);
/**
 * Right after DDM_JDWP_PACKET_HEAD: consume the 11 header bytes and @skip
 * body bytes (<= what the head showed) and stream the rest of the packet:
 * next() returns DDM_JDWP_STREAM_DATA with pkt->data/data_len the bytes
 * buffered (never past the packet's end; the buffer never grows for it),
 * then DDM_JDWP_STREAM_END once every declared byte went by. The packet's
 * length is not checked against the cap (the caller bounds it).
 * FALSE (nothing changed) if the last result was not a head or @skip is
 * past what it showed.
 */
gboolean ddm_jdwp_reader_stream(DdmJdwpReader *r, size_t skip);
/** With heads offered: offer the heads of replies too (flags 0x80), under
 *  the same conditions (a relay forwards long ones cut-through). */
void ddm_jdwp_reader_offer_reply_heads(DdmJdwpReader *r, gboolean on);
/** Bytes of the streamed packet not yet returned by next() (0 when not streaming). */
uint64_t ddm_jdwp_reader_stream_left(const DdmJdwpReader *r);
/** Streaming and nothing buffered: the bytes of the streamed packet still
 *  on the wire, which the caller may take from the socket itself (splice)
 *  instead of reading them through the reader; 0 otherwise (not streaming,
 *  failed, or bytes of it buffered: next() hands those out first). */
uint64_t ddm_jdwp_reader_stream_unread(const DdmJdwpReader *r);
/** The caller took @n (<= ddm_jdwp_reader_stream_unread()) bytes of the
 *  streamed packet from the socket itself: the reader counts them as
 *  handed out (at 0 left, next() returns DDM_JDWP_STREAM_END). */
void ddm_jdwp_reader_stream_moved(DdmJdwpReader *r, uint64_t n);
/** Append @n bytes (copied). */
void ddm_jdwp_reader_feed(DdmJdwpReader *r, const uint8_t *data, size_t n);
/** For read(2) straight into the buffer: space for at least @want bytes (*avail
 *  says how many; it may be fewer, never 0, when the packet being received
 *  needs fewer and the buffer would have to grow past it); then commit.
 *  NULL (*avail 0) once the reader failed over its budget: call next() for
 *  the error. */
uint8_t *ddm_jdwp_reader_space(DdmJdwpReader *r, size_t want, size_t *avail);
void ddm_jdwp_reader_commit(DdmJdwpReader *r, size_t n);
/** Take the next unit; on DDM_JDWP_PACKET fills @pkt (borrowed until the next call). */
DdmJdwpResult ddm_jdwp_reader_next(DdmJdwpReader *r, DdmJdwpPacket *pkt);
/** Give the buffer back if nothing is pending and no byte came since the
 *  previous call (call it periodically: a peer idle for a whole period then
 *  holds no buffer, a busy one keeps reusing its own). Packets returned by
 *  next() must not be in use. TRUE if a buffer was freed. */
gboolean ddm_jdwp_reader_trim(DdmJdwpReader *r);
/** Bytes buffered but not yet returned (e.g. to hand over raw to a relay). */
size_t ddm_jdwp_reader_pending(const DdmJdwpReader *r);
/** TRUE if next() would now return a whole packet without more input (the
 *  relay batches its writes to a debugger while this holds). */
static inline gboolean ddm_jdwp_reader_has_packet(const DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, FALSE);
    if (r->more_outside)
        return TRUE;
    if (r->failed || r->streaming || r->handshake_pending ||
        r->end - r->start < DDM_JDWP_HEADER_LEN)
        return FALSE;
    const uint8_t *p = r->buf + r->start;
    uint32_t be;
    memcpy(&be, p, sizeof be);
    size_t len = GUINT32_FROM_BE(be);
    return len >= DDM_JDWP_HEADER_LEN && len <= r->max_packet && len <= r->end - r->start &&
           (p[8] == 0 || p[8] == DDM_JDWP_FLAG_REPLY);
}
/** The in-place path (ddm_jdwp_reader_idle, below): while its caller
 *  handles a whole packet it read itself, @more says whether more whole
 *  packets of that read follow it; has_packet() then says TRUE, as it would
 *  had the reader read them (the relay batches its writes on it). The
 *  caller sets it back to FALSE before it feeds the reader the rest. */
void ddm_jdwp_reader_set_more_outside(DdmJdwpReader *r, gboolean more);
/** TRUE while the reader holds no byte and is between packets (no
 *  handshake awaited, nothing streaming, not failed): a caller may then
 *  parse whole packets it read itself in place, and feed() only what is
 *  left after them (a packet not yet whole, or one the reader must judge),
 *  and the reader sees the same stream as if it had read it all (the
 *  relay's fast path, core/relay/relay_debugger.c). */
static inline gboolean ddm_jdwp_reader_idle(const DdmJdwpReader *r)
{
    g_return_val_if_fail(r != NULL, FALSE);
    return r->end == r->start && !r->failed && !r->streaming && !r->handshake_pending;
}
/** For a caller whose in-place reads are small (core/session/vm_io.c):
 *  idle (above), its own buffer at most @max_buffer bytes (a larger one a
 *  stream left shrinks at the reader's next read), and the last packet it
 *  handed out was not streamed: a peer that sent a long packet likely
 *  sends another, and a read straight into the reader takes it in fewer
 *  reads and writes than a small in-place read and then the reader. */
static inline gboolean ddm_jdwp_reader_in_place_ok(const DdmJdwpReader *r, size_t max_buffer)
{
    g_return_val_if_fail(r != NULL, FALSE);
    return r->end == r->start && !r->failed && !r->streaming && !r->handshake_pending &&
           !r->streamed_last && (r->on_scratch ? 0 : r->alloc) <= max_buffer;
}
/** The length of the whole, well-formed packet at the start of @p (@n
 *  bytes there), or 0: not whole yet, or one the reader must judge (length
 *  below 11 or past @max_packet, flags neither 0 nor 0x80). Nonzero exactly
 *  when a reader holding those bytes would return them from next() as a
 *  DDM_JDWP_PACKET (ddm_jdwp_reader_has_packet). */
static inline size_t ddm_jdwp_whole_packet_len(const uint8_t *p, size_t n, size_t max_packet)
{
    if (n < DDM_JDWP_HEADER_LEN)
        return 0;
    uint32_t be;
    memcpy(&be, p, sizeof be);
    size_t len = GUINT32_FROM_BE(be);
    if (len < DDM_JDWP_HEADER_LEN || len > n || len > max_packet ||
        (p[8] != 0 && p[8] != DDM_JDWP_FLAG_REPLY))
        return 0;
    return len;
}
/** Whether @p/@n is exactly one whole, well-formed packet whose flags are
 *  @flags (0 or DDM_JDWP_FLAG_REPLY): ddm_jdwp_whole_packet_len(@p, @n,
 *  @max_packet) == @n and @p[8] == @flags, in fewer steps (the length must
 *  equal @n, so it is at least the header's and within what was read):
 *  the fused paths' test of a read (core/session/vm_io.c,
 *  core/relay/relay_debugger.c). */
static inline gboolean ddm_jdwp_is_alone(const uint8_t *p, size_t n, size_t max_packet,
                                         uint8_t flags)
{
    if (n < DDM_JDWP_HEADER_LEN)
        return FALSE;
    uint32_t be;
    memcpy(&be, p, sizeof be);
    return GUINT32_FROM_BE(be) == n && n <= max_packet && p[8] == flags;
}
/** The fields of the header at @p (at least DDM_JDWP_HEADER_LEN bytes:
 *  the caller checked; no validation), inline: every relayed packet's
 *  header is parsed here (ddm_jdwp_parse_header checks the length first). */
static inline void ddm_jdwp_header_of(const uint8_t *p, DdmJdwpHeader *h)
{
    uint32_t be;
    memcpy(&be, p, sizeof be);
    h->length = GUINT32_FROM_BE(be);
    memcpy(&be, p + 4, sizeof be);
    h->id = GUINT32_FROM_BE(be);
    h->flags = p[8];
    if (h->flags & DDM_JDWP_FLAG_REPLY) {
        h->cmdset = 0;
        h->cmd = 0;
        h->error = (uint16_t)((p[9] << 8) | p[10]);
    } else {
        h->cmdset = p[9];
        h->cmd = p[10];
        h->error = 0;
    }
}
/** @pkt describes the whole packet of @len bytes at @p (as
 *  ddm_jdwp_whole_packet_len found it): the in-place paths' packets
 *  (core/session/vm_io.c, core/relay/relay_debugger.c), borrowed from @p. */
static inline void ddm_jdwp_packet_in_place(DdmJdwpPacket *pkt, const uint8_t *p, size_t len)
{
    pkt->bytes = p;
    pkt->len = len;
    ddm_jdwp_header_of(p, &pkt->header);
    pkt->data = p + DDM_JDWP_HEADER_LEN;
    pkt->data_len = len - DDM_JDWP_HEADER_LEN;
}
/** Bytes currently allocated for the reader's buffer (tests: a hostile
 *  length never makes it grow; 0 while idle). */
size_t ddm_jdwp_reader_buffer_size(const DdmJdwpReader *r);
const char *ddm_jdwp_result_str(DdmJdwpResult res);

/** Parse the first 11 bytes of @buf; FALSE if @len < 11. No validation of length. */
gboolean ddm_jdwp_parse_header(const uint8_t *buf, size_t len, DdmJdwpHeader *h);
/** Write @h into @out (11 bytes). */
void ddm_jdwp_write_header(uint8_t out[DDM_JDWP_HEADER_LEN], const DdmJdwpHeader *h);
/** Build a command packet. (transfer full, g_free) */
uint8_t *ddm_jdwp_build_command(uint32_t id, uint8_t cmdset, uint8_t cmd, const void *data,
                                size_t len, size_t *out_len);
/** Build a reply packet (no data when @error != 0, as Dalvik does). (transfer full, g_free) */
uint8_t *ddm_jdwp_build_reply(uint32_t id, uint16_t error, const void *data, size_t len,
                              size_t *out_len);
/** Rewrite the id of a complete packet in place (relay id remapping). */
void ddm_jdwp_set_id(uint8_t *packet, uint32_t id);
/** Name of a JDWP error code ("NOT_IMPLEMENTED"), or "UNKNOWN". */
const char *ddm_jdwp_error_name(uint16_t error);

#endif /* DDM_JDWP_H */
