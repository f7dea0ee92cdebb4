/* SPDX-License-Identifier: Apache-2.0
 *
 * The simulated allocation tracker: see alloc_model.h. Pure bytes: the
 * records are drawn from the seed, the REAL encoder writes them.
 */
#include "alloc_model.h"

#include <string.h>

#include "rng.h"

static const char *const k_classes[] = {
    "Ljava/lang/String;", "[I", "[B", "Ljava/util/ArrayList;", "Lcom/example/sim/Widget;",
    "[[Ljava/lang/Object;", "Ljava/lang/StringBuilder;", "Landroid/graphics/Bitmap;",
    "Lcom/example/sim/Widget$Holder;",
};
static const char *const k_methods[] = {
    "<init>", "toString", "onDraw", "run", "append", "decode", "nativeCreate", "loop",
};
/* "" is a frame without a source file. */
static const char *const k_files[] = {
    "String.java", "Widget.java", "Thread.java", "Looper.java", "", "Bitmap.java",
};
#define N_CLASSES (sizeof k_classes / sizeof k_classes[0])
#define N_METHODS (sizeof k_methods / sizeof k_methods[0])
#define N_FILES (sizeof k_files / sizeof k_files[0])
static const uint16_t k_tids[] = { 1, 2, 7, 12, 13 };

const char *sim_alloc_class_name(unsigned i) { return i < N_CLASSES ? k_classes[i] : NULL; }
const char *sim_alloc_method_name(unsigned i) { return i < N_METHODS ? k_methods[i] : NULL; }
const char *sim_alloc_file_name(unsigned i) { return i < N_FILES ? k_files[i] : NULL; }

void sim_alloc_init(SimAlloc *a, uint64_t seed)
{
    memset(a, 0, sizeof *a);
    a->seed = seed;
}

static void generate(SimAlloc *a)
{
    SimRng r;
    uint32_t i, d;

    sim_rng_seed(&r, sim_rng_mix(a->seed, a->enables));
    a->n = sim_rng_range(&r, 24, SIM_ALLOC_MAX_RECORDS);
    for (i = 0; i < a->n; i++) {
        SimAllocRecord *rec = &a->rec[i];
        rec->cls = (uint16_t)sim_rng_below(&r, N_CLASSES);
        rec->size = 8u * sim_rng_range(&r, 2, 512);
        rec->tid = k_tids[sim_rng_below(&r, sizeof k_tids / sizeof k_tids[0])];
        rec->depth = (uint8_t)sim_rng_below(&r, SIM_ALLOC_MAX_DEPTH + 1); /* 0: no stack */
        for (d = 0; d < rec->depth; d++) {
            SimAllocFrame *f = &rec->f[d];
            uint32_t kind = sim_rng_below(&r, 8);
            f->cls = (uint16_t)sim_rng_below(&r, N_CLASSES);
            f->method = (uint16_t)sim_rng_below(&r, N_METHODS);
            f->file = (uint16_t)sim_rng_below(&r, N_FILES);
            f->line = kind == 0 ? -2 : kind == 1 ? -1 : (int16_t)sim_rng_range(&r, 1, 4000);
        }
    }
}

void sim_alloc_set_enabled(SimAlloc *a, int on)
{
    if (on && !a->enabled) {
        a->enabled = 1;
        a->enables++;
        generate(a);
    } else if (!on) {
        a->enabled = 0;
        a->n = 0; /* ART: SetAllocTrackingEnabled(false) clears the records */
    }
}

void sim_alloc_write_real(const SimAlloc *a, ddm_writer *w)
{
    size_t start = w->len, off_at;
    uint32_t i, d;

    ddm_write_u1(w, 15);
    ddm_write_u1(w, 9);
    ddm_write_u1(w, 8);
    ddm_write_u2(w, (uint16_t)a->n);
    off_at = w->len;
    ddm_write_u4(w, 0); /* string table offset, patched below */
    ddm_write_u2(w, N_CLASSES);
    ddm_write_u2(w, N_METHODS);
    ddm_write_u2(w, N_FILES);
    for (i = 0; i < a->n; i++) {
        const SimAllocRecord *rec = &a->rec[i];
        ddm_write_u4(w, rec->size);
        ddm_write_u2(w, rec->tid);
        ddm_write_u2(w, rec->cls);
        ddm_write_u1(w, rec->depth);
        for (d = 0; d < rec->depth; d++) {
            ddm_write_u2(w, rec->f[d].cls);
            ddm_write_u2(w, rec->f[d].method);
            ddm_write_u2(w, rec->f[d].file);
            ddm_write_u2(w, (uint16_t)rec->f[d].line);
        }
    }
    if (!w->error)
        ddm_writer_patch_u4(w, off_at, (uint32_t)(w->len - start));
    for (i = 0; i < N_CLASSES; i++)
        ddm_write_lstr(w, k_classes[i]);
    for (i = 0; i < N_METHODS; i++)
        ddm_write_lstr(w, k_methods[i]);
    for (i = 0; i < N_FILES; i++)
        ddm_write_lstr(w, k_files[i]);
}
