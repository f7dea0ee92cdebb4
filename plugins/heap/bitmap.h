/* SPDX-License-Identifier: Apache-2.0
 *
 * bitmap: lays a published heap update (segcollect.h) out as rows of
 * palette-indexed pixels, one pixel per allocation unit, row by row, so an
 * image of any height is produced with O(width) memory. Pure C.
 *
 * Layout: kept pieces in address order. A gap between two pieces (the end
 * of one is below the start of the next) of up to one row of units is drawn
 * as that many "expansion area" pixels; a longer gap ends the current row
 * and adds one full row of them. Overlapping pieces are drawn one after the
 * other. The last row is padded with "expansion area" pixels.
 *
 * Palette (DDMS's HeapPanel, ddmuilib): index 0 heap expansion area
 * (192,192,192), 1 free (0,0,0), 2 + kind: object (0,0,255), class object
 * (0,255,0), 1-byte array (255,0,0), 2-byte array (255,128,0), 4-byte
 * array (255,255,0), 8-byte array (255,128,128), unknown (255,0,255),
 * native (64,64,64).
 *
 * Non-goals: image encoding (bitmap_png.h), zoom, Hilbert layouts.
 */
#ifndef DDM_HEAP_BITMAP_H
#define DDM_HEAP_BITMAP_H

#include <stddef.h>
#include <stdint.h>

#include "../common/segcollect.h"

#define BM_PIX_EXPANSION 0
#define BM_PIX_FREE 1
#define BM_PIX_KIND(k) (2 + (k))
#define BM_NCOLORS 10
/** Widest image accepted. */
#define BM_MAX_WIDTH 65536u
/** Most rows of an image: PNG's own limit (2^31 - 1), which libpng checks
 *  against a default of 1,000,000 unless told (bitmap_png.c lifts it). */
#define BM_MAX_HEIGHT 0x7fffffffu

/** RGB of each palette index. */
extern const uint8_t bm_palette[BM_NCOLORS][3];

/** Palette index of a state byte. */
static inline uint8_t bm_state_pixel(uint8_t state)
{
    return (state & 7) == 0 ? BM_PIX_FREE : (uint8_t)BM_PIX_KIND((state >> 3) & 7);
}

/** Image size of @g at @width. */
typedef struct bm_layout {
    uint32_t width;
    uint32_t height;
    uint64_t pixels;   /**< unit and gap pixels, before the last row's padding */
} bm_layout;

/**
 * Compute the layout of @g at @width (1..BM_MAX_WIDTH). Returns 0, -EINVAL
 * (bad width), -ENODATA (no complete bitmap kept, or no units) or -EFBIG
 * (more than SEG_MAX_BITMAP_UNITS pixels or 2^31 rows).
 */
int bm_layout_compute(const seg_gen *g, uint32_t width, bm_layout *out);

/** Row producer over @g (borrowed: @g must not change while in use). */
typedef struct bm_cursor {
    const seg_gen *g;
    uint32_t width;
    size_t piece;        /* index of the current piece */
    size_t run;          /* byte offset of the next pair in it */
    uint64_t run_left;   /* units left in the current run */
    uint8_t run_pix;
    uint64_t gap_left;   /* expansion pixels still to draw before the piece */
    uint64_t prev_end;   /* address after the previous piece */
    int started;
    uint64_t col_total;  /* pixels emitted so far */
    uint64_t addr;       /* address of the next pixel (valid if addr_ok) */
    int addr_ok;         /* 0 inside a gap drawn shorter than it is */
    uint64_t row_addr;   /**< address of column 0 of the last row produced */
    int row_addr_ok;     /**< 0 if that pixel stands for no one address (a long gap) */
} bm_cursor;

/** Start producing rows of @g at @width (from bm_layout_compute). */
void bm_cursor_init(bm_cursor *cur, const seg_gen *g, uint32_t width);
/** Fill @row (width bytes of palette indexes). Returns 1 when a row was
 *  produced (and sets row_addr/row_addr_ok: the address its first pixel
 *  stands for, for an address scale), 0 when the image is finished (all
 *  units drawn). */
int bm_cursor_row(bm_cursor *cur, uint8_t *row);

#endif /* DDM_HEAP_BITMAP_H */
