/* SPDX-License-Identifier: Apache-2.0
 *
 * DDM chunk types: four ASCII characters packed big-endian into a u4
 * ("HELO" = 0x48454C4F), and how to print them. DDM chunks travel in JDWP
 * command packets of command set 0xC7, command 1, framed as
 * `u4 type, u4 length, data` (big-endian). Header-only; no glib.
 */
#ifndef DDMON_CHUNK_H
#define DDMON_CHUNK_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Build a chunk type from its four characters: DDM_CHUNK('T','H','C','R'). Since: 1.0 */
#define DDM_CHUNK(a, b, c, d) \
    (((uint32_t)(uint8_t)(a) << 24) | ((uint32_t)(uint8_t)(b) << 16) | \
     ((uint32_t)(uint8_t)(c) << 8) | (uint32_t)(uint8_t)(d))

/** JDWP command set and command that carry DDM chunks. Since: 1.0 */
#define DDM_JDWP_CMDSET 0xC7
#define DDM_JDWP_CMD 0x01

/** Size of a chunk header (u4 type, u4 length). Since: 1.0 */
#define DDM_CHUNK_HEADER_LEN 8

/* The chunk types the core itself knows (the HELO exchange) and the
 * generic failure reply. Plugins define their own types with DDM_CHUNK. */
#define DDM_CHUNK_HELO DDM_CHUNK('H', 'E', 'L', 'O')
#define DDM_CHUNK_FEAT DDM_CHUNK('F', 'E', 'A', 'T')
#define DDM_CHUNK_FAIL DDM_CHUNK('F', 'A', 'I', 'L')
#define DDM_CHUNK_ZLIB DDM_CHUNK('Z', 'L', 'I', 'B')

/**
 * Print @type into @buf as four characters and a NUL. Bytes that are not
 * printable ASCII are shown as '?', so a hostile type never breaks a log line.
 * Returns @buf. Since: 1.0
 */
static inline const char *ddm_chunk_name(uint32_t type, char buf[5])
{
    int i;
    for (i = 0; i < 4; i++) {
        unsigned char c = (unsigned char)(type >> (24 - 8 * i));
        buf[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    buf[4] = '\0';
    return buf;
}

/**
 * Parse a four-character name ("THCR") into a chunk type. Returns 0 when
 * @name is not exactly four printable ASCII characters (0 is never a valid
 * type). Since: 1.0
 */
static inline uint32_t ddm_chunk_from_name(const char *name)
{
    uint32_t t = 0;
    int i;
    if (!name || strlen(name) != 4)
        return 0;
    for (i = 0; i < 4; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c >= 0x7f)
            return 0;
        t = (t << 8) | c;
    }
    return t;
}

#ifdef __cplusplus
}
#endif

#endif /* DDMON_CHUNK_H */
