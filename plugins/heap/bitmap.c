/* SPDX-License-Identifier: Apache-2.0
 *
 * bitmap: one pixel per allocation unit, row by row; see bitmap.h for the
 * layout rules and the palette's source.
 */
#include "bitmap.h"

#include <errno.h>
#include <string.h>

const uint8_t bm_palette[BM_NCOLORS][3] = {
    { 192, 192, 192 }, /* heap expansion area / gaps */
    { 0, 0, 0 },       /* free */
    { 0, 0, 255 },     /* data object */
    { 0, 255, 0 },     /* class object */
    { 255, 0, 0 },     /* 1-byte array */
    { 255, 128, 0 },   /* 2-byte array */
    { 255, 255, 0 },   /* 4-byte array */
    { 255, 128, 128 }, /* 8-byte array */
    { 255, 0, 255 },   /* unknown object */
    { 64, 64, 64 },    /* non-Java object */
};

/* Expansion pixels before a piece at @addr when the previous one ended at
 * @prev_end and the next pixel goes to column @col. */
static uint64_t gap_pixels(uint64_t prev_end, uint64_t addr, unsigned unit, uint64_t col,
                           uint32_t width)
{
    uint64_t gap;
    if (addr <= prev_end || unit == 0)
        return 0;
    gap = (addr - prev_end) / unit;
    if (gap <= width)
        return gap;
    return (width - col) % width + width; /* end this row, then one full row */
}

static uint64_t piece_end(const seg_kept *k)
{
    return k->addr + k->units * k->unit_size;
}

int bm_layout_compute(const seg_gen *g, uint32_t width, bm_layout *out)
{
    uint64_t total = 0, prev_end = 0;
    size_t i;

    memset(out, 0, sizeof(*out));
    if (width == 0 || width > BM_MAX_WIDTH)
        return -EINVAL;
    if (!g->bitmap_complete || g->n_pieces == 0)
        return -ENODATA;
    for (i = 0; i < g->n_pieces; i++) {
        const seg_kept *k = g->pieces[i];
        if (i > 0)
            total += gap_pixels(prev_end, k->addr, k->unit_size, total % width, width);
        total += k->units;
        prev_end = piece_end(k);
        if (total > ((uint64_t)1 << 31))
            return -EFBIG;
    }
    if (total == 0)
        return -ENODATA;
    out->width = width;
    out->pixels = total;
    out->height = (uint32_t)((total + width - 1) / width);
    return 0;
}

void bm_cursor_init(bm_cursor *cur, const seg_gen *g, uint32_t width)
{
    memset(cur, 0, sizeof(*cur));
    cur->g = g;
    cur->width = width;
}

int bm_cursor_row(bm_cursor *cur, uint8_t *row)
{
    const seg_gen *g = cur->g;
    const uint32_t width = cur->width;
    uint32_t x = 0;

    while (x < width) {
        if (cur->gap_left || cur->run_left) {
            uint64_t *left = cur->gap_left ? &cur->gap_left : &cur->run_left;
            uint64_t k = *left < width - x ? *left : width - x;
            if (x == 0) {
                cur->row_addr = cur->addr;
                cur->row_addr_ok = cur->addr_ok;
            }
            memset(row + x, cur->gap_left ? BM_PIX_EXPANSION : cur->run_pix, (size_t)k);
            x += (uint32_t)k;
            *left -= k;
            cur->addr += k * g->pieces[cur->piece]->unit_size;
        } else {
            const seg_kept *k;
            if (cur->piece >= g->n_pieces)
                break;
            k = g->pieces[cur->piece];
            if (!cur->started) {
                cur->gap_left = cur->piece > 0
                    ? gap_pixels(cur->prev_end, k->addr, k->unit_size, x, width) : 0;
                /* a short gap is one pixel per unit from prev_end on; a
                 * long one (drawn as the rest of a row and one more) is not */
                cur->addr = cur->prev_end;
                cur->addr_ok = k->unit_size && cur->gap_left * k->unit_size == k->addr - cur->prev_end;
                cur->started = 1;
                cur->run = 0;
            } else if (cur->run + 1 < k->runs_len) {
                if (cur->run == 0) {
                    cur->addr = k->addr;
                    cur->addr_ok = 1;
                }
                cur->run_pix = bm_state_pixel(k->runs[cur->run]);
                cur->run_left = (uint64_t)k->runs[cur->run + 1] + 1;
                cur->run += 2;
            } else {
                cur->prev_end = piece_end(k);
                cur->piece++;
                cur->started = 0;
            }
        }
    }
    if (x == 0)
        return 0;
    if (x < width)
        memset(row + x, BM_PIX_EXPANSION, width - x);
    cur->col_total += x;
    return 1;
}
