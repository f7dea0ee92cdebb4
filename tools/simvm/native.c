/* SPDX-License-Identifier: Apache-2.0
 *
 * NHGT reply generator (see native.h). Backtrace addresses fall inside the
 * executable mappings listed in the maps text, so a symbolizer can place
 * them.
 */
#include "native.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rng.h"

static const char *const libs64[] = {
    "/apex/com.android.runtime/lib64/bionic/libc.so",
    "/apex/com.android.art/lib64/libart.so",
    "/system/lib64/libhwui.so",
    "/system/lib64/libandroid_runtime.so",
    "/system/lib64/libbinder.so",
    "/system/lib64/libutils.so",
    "/data/app/~~sim==/com.example.app-1/lib/x86_64/libnative-lib.so",
};
static const char *const libs32[] = {
    "/apex/com.android.runtime/lib/bionic/libc.so",
    "/apex/com.android.art/lib/libart.so",
    "/system/lib/libhwui.so",
    "/system/lib/libandroid_runtime.so",
    "/system/lib/libbinder.so",
    "/system/lib/libutils.so",
    "/data/app/~~sim==/com.example.app-1/lib/x86/libnative-lib.so",
};
#define N_LIBS (sizeof libs64 / sizeof libs64[0])

typedef struct Map {
    uint64_t start, end;
} Map;

void sim_native_write_nhgt(ddm_writer *w, uint64_t seed, uint32_t generation, unsigned version,
                           unsigned ptr_size, SimNhgtStats *stats)
{
    SimRng r;
    Map maps[N_LIBS];
    char line[256];
    ddm_writer text, recs;
    uint64_t base, total = 0, zygote = 0;
    uint64_t top_bit;
    uint32_t i, nrec, info_size;
    size_t map_len, rec_len;
    uint8_t *map_bytes, *rec_bytes;

    if (version != 1)
        version = 2;
    if (version == 1 || ptr_size != 8)
        ptr_size = 4;
    top_bit = (uint64_t)1 << (ptr_size * 8 - 1);
    sim_rng_seed(&r, sim_rng_mix(seed, 0x6e686774ULL));

    /* the maps text stays the same for a process; records change per generation */
    ddm_writer_init(&text, 1 << 20);
    base = ptr_size == 8 ? 0x7f0000000000ULL + ((uint64_t)sim_rng_below(&r, 0x1000) << 28)
                         : 0xe0000000ULL + ((uint64_t)sim_rng_below(&r, 0x40) << 20);
    for (i = 0; i < N_LIBS; i++) {
        uint64_t len = (uint64_t)sim_rng_range(&r, 0x10, 0x400) << 12;
        int n;
        maps[i].start = base;
        maps[i].end = base + len;
        n = snprintf(line, sizeof line, "%0*" PRIx64 "-%0*" PRIx64 " r-xp %08x fd:05 %u  %s\n",
                     ptr_size == 8 ? 12 : 8, maps[i].start, ptr_size == 8 ? 12 : 8, maps[i].end,
                     (unsigned)sim_rng_below(&r, 0x100000) << 12, (unsigned)sim_rng_range(&r, 100, 99999),
                     ptr_size == 8 ? libs64[i] : libs32[i]);
        ddm_write_bytes(&text, line, n > 0 && (size_t)n < sizeof line ? (size_t)n : 0);
        /* a data mapping after each library, as in a real maps file */
        n = snprintf(line, sizeof line, "%0*" PRIx64 "-%0*" PRIx64 " rw-p 00000000 00:00 0\n",
                     ptr_size == 8 ? 12 : 8, maps[i].end, ptr_size == 8 ? 12 : 8, maps[i].end + 0x2000);
        ddm_write_bytes(&text, line, n > 0 && (size_t)n < sizeof line ? (size_t)n : 0);
        base = maps[i].end + 0x10000;
    }
    map_bytes = ddm_writer_take(&text, &map_len);

    sim_rng_seed(&r, sim_rng_mix(seed, 0x726563ULL + generation));
    info_size = (2 + SIM_NHGT_BACKTRACE) * ptr_size;
    nrec = sim_rng_range(&r, 20, 60);
    ddm_writer_init(&recs, 1 << 20);
    for (i = 0; i < nrec; i++) {
        uint64_t size = sim_rng_chance(&r, 0.1) ? sim_rng_range(&r, 4096, 1 << 20) : sim_rng_range(&r, 8, 4096);
        uint32_t count = sim_rng_range(&r, 1, 20), depth = sim_rng_range(&r, 3, SIM_NHGT_BACKTRACE), k;
        int in_zygote = sim_rng_chance(&r, 0.15);
        total += size * count;
        if (in_zygote)
            zygote += size * count;
        ddm_write_le(&recs, size | (in_zygote ? top_bit : 0), ptr_size);
        ddm_write_le(&recs, count, ptr_size);
        for (k = 0; k < SIM_NHGT_BACKTRACE; k++) {
            uint64_t pc = 0;
            if (k < depth) {
                const Map *m = &maps[k == 0 ? 0 : sim_rng_below(&r, N_LIBS)];
                pc = m->start + (sim_rng_below(&r, (uint32_t)(m->end - m->start)) & ~(uint64_t)3);
            }
            ddm_write_le(&recs, pc, ptr_size);
        }
    }
    rec_bytes = ddm_writer_take(&recs, &rec_len);

    if (version == 2) {
        ddm_write_le(w, SIM_NHGT_SIGNATURE, 4);
        ddm_write_le(w, 2, 2);
        ddm_write_le(w, ptr_size, 2);
    }
    ddm_write_le(w, map_len, ptr_size);
    ddm_write_le(w, rec_len, ptr_size);
    ddm_write_le(w, info_size, ptr_size);
    ddm_write_le(w, total > (top_bit - 1) ? top_bit - 1 : total, ptr_size);
    ddm_write_le(w, SIM_NHGT_BACKTRACE, ptr_size);
    ddm_write_bytes(w, map_bytes, map_bytes ? map_len : 0);
    ddm_write_bytes(w, rec_bytes, rec_bytes ? rec_len : 0);
    free(map_bytes);
    free(rec_bytes);

    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->version = version;
        stats->ptr_size = ptr_size;
        stats->map_bytes = map_len;
        stats->records = nrec;
        stats->total_memory = total;
        stats->zygote_bytes = zygote;
        stats->backtrace_size = SIM_NHGT_BACKTRACE;
    }
}
