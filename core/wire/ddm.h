/* SPDX-License-Identifier: Apache-2.0
 *
 * DDM chunk framing inside JDWP packets on command set 0xC7 command 1:
 * `u4 type, u4 length, data`, big-endian, possibly several per packet (the
 * draft allows it; real VMs send one). ZLIB-wrapped chunks (our reading of
 * the draft, see doc/protocol.md): outer type ZLIB, u4 length of what
 * follows, then u4 original type, u4 uncompressed length, zlib or raw
 * deflate data. Also the HELO, FEAT and FAIL payloads: with DBGD, the only
 * chunk types the core knows. Pure bytes in, structures out: no I/O.
 */
#ifndef DDM_DDM_H
#define DDM_DDM_H

#include <glib.h>
#include <stdint.h>

#include <ddmon/chunk.h>

/* The one core chunk the SDK does not name: sent (empty) by the relay when
 * a debugger detached, so that a VM may release what the debugger left;
 * a VM that answers DBGD keeps its connection, one that does not (every
 * real VM) is reconnected (doc/protocol.md, "REAQ, MPRQ, DBGD" and "Debuggers"). */
#define DDM_CHUNK_DBGD DDM_CHUNK('D', 'B', 'G', 'D')

/** One chunk; @data borrowed from the packet. */
typedef struct DdmChunk {
    uint32_t type;
    const uint8_t *data;
    size_t len;
} DdmChunk;

/** Iterate over the chunks of a payload. */
typedef struct DdmChunkIter {
    const uint8_t *payload;
    size_t len;
    size_t pos;
} DdmChunkIter;

typedef enum {
    DDM_CHUNK_END = 0,          /* no more chunks; see ddm_chunk_iter_trailing() */
    DDM_CHUNK_OK = 1,
    DDM_CHUNK_ERR_OVERRUN = -1  /* a chunk's length runs past the payload */
} DdmChunkResult;

void ddm_chunk_iter_init(DdmChunkIter *it, const uint8_t *payload, size_t len);
DdmChunkResult ddm_chunk_iter_next(DdmChunkIter *it, DdmChunk *out);
/** Bytes left after the last whole chunk that cannot form a chunk header (tolerated, reported). */
size_t ddm_chunk_iter_trailing(const DdmChunkIter *it);

/** Append a chunk header + @data to @out. */
void ddm_chunk_append(GByteArray *out, uint32_t type, const void *data, size_t len);
/** A JDWP command packet on 0xC7/1 carrying one chunk. (transfer full, g_free) */
uint8_t *ddm_chunk_build_packet(uint32_t id, uint32_t type, const void *data, size_t len,
                                size_t *out_len);
/** A JDWP reply packet carrying one chunk (or none when @type is 0). (transfer full, g_free) */
uint8_t *ddm_chunk_build_reply(uint32_t id, uint32_t type, const void *data, size_t len,
                               size_t *out_len);

typedef enum {
    DDM_ZLIB_OK = 0,
    DDM_ZLIB_ERR_SHORT = -1,     /* payload shorter than the 8-byte inner header */
    DDM_ZLIB_ERR_TOO_BIG = -2,   /* declared size over the cap (nothing is inflated) */
    DDM_ZLIB_ERR_SIZE = -3,      /* inflated size differs from the declared size (inflate
                                  * stops one byte past it: a bomb under a small claim) */
    DDM_ZLIB_ERR_DATA = -4,      /* not a valid zlib/deflate stream */
} DdmZlibResult;

/** Inflate a ZLIB chunk payload (after the outer 8-byte header) into a new
 *  buffer of at most @cap bytes. (out: transfer full, g_free) */
DdmZlibResult ddm_zlib_inflate(const uint8_t *payload, size_t len, size_t cap,
                               uint32_t *orig_type, uint8_t **out, size_t *out_len);
/** Build a ZLIB chunk payload (without the outer header) for @type/@data. (transfer full) */
uint8_t *ddm_zlib_deflate(uint32_t type, const void *data, size_t len, size_t *out_len);
const char *ddm_zlib_result_str(DdmZlibResult r);

/** A HELO reply. Strings are UTF-8 (g_free'd by ddm_helo_clear). Optional
 *  tails absent from the reply keep their "unknown" values. */
typedef struct DdmHelo {
    uint32_t protocol_version;
    uint32_t pid;
    char *vm_ident;
    char *app_name;
    int32_t user_id;          /* -1 absent */
    char *abi;                /* NULL absent */
    char *jvm_flags;          /* NULL absent */
    int native_debuggable;    /* -1 absent */
    char *package_name;       /* NULL absent */
    uint32_t boot_stage;      /* 0 absent (API 34 only) */
    size_t trailing;          /* unknown bytes after the last known field */
} DdmHelo;

/** Parse a HELO reply payload; FALSE if the mandatory part is short or bad. */
gboolean ddm_helo_parse(const uint8_t *data, size_t len, DdmHelo *out);
void ddm_helo_clear(DdmHelo *h);
/** The HELO request payload (u4 server protocol version). */
void ddm_helo_request(uint8_t out[4], uint32_t server_version);
/** The caps ddm_feat_parse keeps a FEAT list to: real VMs send ~20 short names. */
#define DDM_FEAT_NAMES_MAX 256u
#define DDM_FEAT_UNITS_MAX 256u

/** What a FEAT reply held, kept or not (ddm_feat_parse_capped). */
typedef struct {
    uint32_t count;         /* names in the reply */
    uint32_t longest_units; /* the longest name's length, in UTF-16 units */
} DdmFeatSize;

/**
 * Parse a FEAT reply (u4 count, count x lstr), keeping at most @max_names
 * names, each decoded from at most its first @max_units UTF-16 units (one
 * fewer when the cut would split a surrogate pair); the names past the cap
 * are walked, their lengths checked, but never decoded or allocated, so a
 * reply costs at most @max_names x (@max_units x 3 + 1) bytes of strings
 * whatever its count. @size (may be NULL) gets the whole reply's count and
 * longest length. NULL if malformed anywhere. (transfer full, g_strfreev)
 */
char **ddm_feat_parse_capped(const uint8_t *data, size_t len, uint32_t max_names,
                             uint32_t max_units, DdmFeatSize *size);
/** ddm_feat_parse_capped at DDM_FEAT_NAMES_MAX x DDM_FEAT_UNITS_MAX. (transfer full, g_strfreev) */
char **ddm_feat_parse(const uint8_t *data, size_t len);
/** Parse a FAIL chunk: u4 code, u4 msg units, str16. FALSE if malformed. (msg: transfer full) */
gboolean ddm_fail_parse(const uint8_t *data, size_t len, uint32_t *code, char **msg);

#endif /* DDM_DDM_H */
