/* SPDX-License-Identifier: Apache-2.0
 *
 * The one string hash for tables keyed by text a VM may choose (VM keys,
 * FEAT lists, record field names): FNV-1a started from a random seed drawn
 * once per process, with murmur3's finalizer so the low bits a table uses
 * mix every byte. An unseeded hash (g_str_hash is DJB2) lets a VM pick keys
 * that collide ("aB" and "b!"), making each lookup a walk of every key in
 * the table. Not a cryptographic hash: it only makes collisions
 * unpredictable from outside the process.
 */
#ifndef DDM_SEEDED_HASH_H
#define DDM_SEEDED_HASH_H

#include <glib.h>

/** The process's seed: drawn on first use (getrandom, else glib's random
 *  generator mixed with an address), the same for the process's life. */
guint32 ddm_hash_seed(void);

/** Seeded FNV-1a of the @len bytes at @data (NULs included), finalized. */
guint ddm_hash_bytes(guint32 seed, const void *data, gsize len);

/** A GHashFunc for NUL-terminated strings, in place of g_str_hash:
 *  ddm_hash_bytes(ddm_hash_seed(), s, strlen(s)). Pair it with g_str_equal. */
guint ddm_str_hash(gconstpointer s);

#endif
