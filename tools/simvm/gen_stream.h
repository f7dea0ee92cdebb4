/* SPDX-License-Identifier: Apache-2.0
 *
 * A generated payload (a heap dump from hprof_gen.h, a method trace from
 * trace_gen.h) on its way out of a simulated VM, with its sha256 computed
 * on the way: into a producer's buffer (an HPDS or MPSE event as the socket
 * drains) or into a file on the "device" (HPDU, MPRE, --write-hprof). The
 * one copy loop both generators share.
 */
#ifndef SIMVM_GEN_STREAM_H
#define SIMVM_GEN_STREAM_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "hprof_gen.h"
#include "trace_gen.h"

/* One generator seen through its read and offset functions (borrowed). */
typedef struct {
    void *gen;
    size_t (*read)(void *gen, uint8_t *buf, size_t cap); /* 0 at the end */
    uint64_t (*offset)(const void *gen);                  /* bytes read so far */
} SimGenSource;

/* The source of a heap dump, of a trace (@g borrowed: it must outlive the
 * source). */
SimGenSource sim_gen_hprof(hprof_gen *g);
SimGenSource sim_gen_trace(trace_gen *g);

/* Reads @src into @buf (@cap bytes) until the buffer is full, the source
 * ends or its offset reaches @limit; each byte read goes into @sha. Returns
 * the number of bytes written to @buf. */
size_t sim_gen_fill(const SimGenSource *src, uint64_t limit, GChecksum *sha, uint8_t *buf, size_t cap);

/* Reads all of @src into the file @path (created or truncated; NULL: only
 * computed) and its lowercase hex sha256 into @sha256. FALSE with @error
 * set when the file cannot be opened (nothing read), written or closed. */
gboolean sim_gen_write_file(const SimGenSource *src, const char *path, char sha256[65], GError **error);

#endif
