/* SPDX-License-Identifier: Apache-2.0
 *
 * SHA-256 of a heap dump as it is written: libcrypto's (hardware SHA where
 * the CPU has it) when configure found it, else GLib's GChecksum. One
 * small object per dump; no memory grows with the data.
 */
#ifndef DDM_HPROF_HASH_H
#define DDM_HPROF_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HPROF_SHA256_HEX 64

typedef struct hprof_hash hprof_hash;

/** NULL on out of memory. */
hprof_hash *hprof_hash_new(void);
void hprof_hash_update(hprof_hash *h, const uint8_t *p, size_t n);
/** Finish into @hex (65 bytes: 64 lowercase hex digits and a NUL). */
void hprof_hash_hex(hprof_hash *h, char hex[HPROF_SHA256_HEX + 1]);
void hprof_hash_free(hprof_hash *h);
/** "libcrypto" or "glib": which implementation hashes (libcrypto is loaded
 *  at the first call of this or hprof_hash_new, when the build has it). */
const char *hprof_hash_impl(void);
/** Tests only: @on nonzero makes the next hprof_hash_new (and
 *  hprof_hash_impl) use GLib even where libcrypto loads, so a test can
 *  hash the same bytes both ways. */
void hprof_hash_force_glib(int on);

#endif /* DDM_HPROF_HASH_H */
