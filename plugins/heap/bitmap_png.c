/* SPDX-License-Identifier: Apache-2.0
 *
 * bitmap_png: the 5x7 font, the page around the heap bitmap (caption,
 * legend, address scale) and its palette PNG encoding through libpng (or
 * a stub reporting "built without libpng"); see bitmap_png.h.
 */
#ifdef HAVE_CONFIG_H
#include "build-config.h"
#endif

#include "bitmap_png.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ddmon/bytes.h>

#ifdef HAVE_LIBPNG
#include <fcntl.h>
#include <unistd.h>

#include "../common/partfile.h"
#include "../common/pnglib.h"
#endif

/* ------------------------------------------------------------------ font */

static const uint8_t glyphs[BMF_LAST - BMF_FIRST + 1][BMF_GLYPH_W] = {
    { 0x00, 0x00, 0x00, 0x00, 0x00 }, /* ' ' */
    { 0x00, 0x00, 0x5f, 0x00, 0x00 }, /* ! */
    { 0x00, 0x07, 0x00, 0x07, 0x00 }, /* " */
    { 0x14, 0x7f, 0x14, 0x7f, 0x14 }, /* # */
    { 0x24, 0x2a, 0x7f, 0x2a, 0x12 }, /* $ */
    { 0x23, 0x13, 0x08, 0x64, 0x62 }, /* % */
    { 0x36, 0x49, 0x55, 0x22, 0x50 }, /* & */
    { 0x00, 0x05, 0x03, 0x00, 0x00 }, /* ' */
    { 0x00, 0x1c, 0x22, 0x41, 0x00 }, /* ( */
    { 0x00, 0x41, 0x22, 0x1c, 0x00 }, /* ) */
    { 0x14, 0x08, 0x3e, 0x08, 0x14 }, /* * */
    { 0x08, 0x08, 0x3e, 0x08, 0x08 }, /* + */
    { 0x00, 0x50, 0x30, 0x00, 0x00 }, /* , */
    { 0x08, 0x08, 0x08, 0x08, 0x08 }, /* - */
    { 0x00, 0x60, 0x60, 0x00, 0x00 }, /* . */
    { 0x20, 0x10, 0x08, 0x04, 0x02 }, /* / */
    { 0x3e, 0x51, 0x49, 0x45, 0x3e }, /* 0 */
    { 0x00, 0x42, 0x7f, 0x40, 0x00 }, /* 1 */
    { 0x42, 0x61, 0x51, 0x49, 0x46 }, /* 2 */
    { 0x21, 0x41, 0x45, 0x4b, 0x31 }, /* 3 */
    { 0x18, 0x14, 0x12, 0x7f, 0x10 }, /* 4 */
    { 0x27, 0x45, 0x45, 0x45, 0x39 }, /* 5 */
    { 0x3c, 0x4a, 0x49, 0x49, 0x30 }, /* 6 */
    { 0x01, 0x71, 0x09, 0x05, 0x03 }, /* 7 */
    { 0x36, 0x49, 0x49, 0x49, 0x36 }, /* 8 */
    { 0x06, 0x49, 0x49, 0x29, 0x1e }, /* 9 */
    { 0x00, 0x36, 0x36, 0x00, 0x00 }, /* : */
    { 0x00, 0x56, 0x36, 0x00, 0x00 }, /* ; */
    { 0x08, 0x14, 0x22, 0x41, 0x00 }, /* < */
    { 0x14, 0x14, 0x14, 0x14, 0x14 }, /* = */
    { 0x00, 0x41, 0x22, 0x14, 0x08 }, /* > */
    { 0x02, 0x01, 0x51, 0x09, 0x06 }, /* ? */
    { 0x32, 0x49, 0x79, 0x41, 0x3e }, /* @ */
    { 0x7e, 0x11, 0x11, 0x11, 0x7e }, /* A */
    { 0x7f, 0x49, 0x49, 0x49, 0x36 }, /* B */
    { 0x3e, 0x41, 0x41, 0x41, 0x22 }, /* C */
    { 0x7f, 0x41, 0x41, 0x22, 0x1c }, /* D */
    { 0x7f, 0x49, 0x49, 0x49, 0x41 }, /* E */
    { 0x7f, 0x09, 0x09, 0x09, 0x01 }, /* F */
    { 0x3e, 0x41, 0x49, 0x49, 0x7a }, /* G */
    { 0x7f, 0x08, 0x08, 0x08, 0x7f }, /* H */
    { 0x00, 0x41, 0x7f, 0x41, 0x00 }, /* I */
    { 0x20, 0x40, 0x41, 0x3f, 0x01 }, /* J */
    { 0x7f, 0x08, 0x14, 0x22, 0x41 }, /* K */
    { 0x7f, 0x40, 0x40, 0x40, 0x40 }, /* L */
    { 0x7f, 0x02, 0x0c, 0x02, 0x7f }, /* M */
    { 0x7f, 0x04, 0x08, 0x10, 0x7f }, /* N */
    { 0x3e, 0x41, 0x41, 0x41, 0x3e }, /* O */
    { 0x7f, 0x09, 0x09, 0x09, 0x06 }, /* P */
    { 0x3e, 0x41, 0x51, 0x21, 0x5e }, /* Q */
    { 0x7f, 0x09, 0x19, 0x29, 0x46 }, /* R */
    { 0x46, 0x49, 0x49, 0x49, 0x31 }, /* S */
    { 0x01, 0x01, 0x7f, 0x01, 0x01 }, /* T */
    { 0x3f, 0x40, 0x40, 0x40, 0x3f }, /* U */
    { 0x1f, 0x20, 0x40, 0x20, 0x1f }, /* V */
    { 0x3f, 0x40, 0x38, 0x40, 0x3f }, /* W */
    { 0x63, 0x14, 0x08, 0x14, 0x63 }, /* X */
    { 0x07, 0x08, 0x70, 0x08, 0x07 }, /* Y */
    { 0x61, 0x51, 0x49, 0x45, 0x43 }, /* Z */
    { 0x00, 0x7f, 0x41, 0x41, 0x00 }, /* [ */
    { 0x02, 0x04, 0x08, 0x10, 0x20 }, /* backslash */
    { 0x00, 0x41, 0x41, 0x7f, 0x00 }, /* ] */
    { 0x04, 0x02, 0x01, 0x02, 0x04 }, /* ^ */
    { 0x40, 0x40, 0x40, 0x40, 0x40 }, /* _ */
    { 0x00, 0x01, 0x02, 0x04, 0x00 }, /* ` */
    { 0x20, 0x54, 0x54, 0x54, 0x78 }, /* a */
    { 0x7f, 0x48, 0x44, 0x44, 0x38 }, /* b */
    { 0x38, 0x44, 0x44, 0x44, 0x20 }, /* c */
    { 0x38, 0x44, 0x44, 0x48, 0x7f }, /* d */
    { 0x38, 0x54, 0x54, 0x54, 0x18 }, /* e */
    { 0x08, 0x7e, 0x09, 0x01, 0x02 }, /* f */
    { 0x18, 0xa4, 0xa4, 0xa4, 0x7c }, /* g */
    { 0x7f, 0x08, 0x04, 0x04, 0x78 }, /* h */
    { 0x00, 0x44, 0x7d, 0x40, 0x00 }, /* i */
    { 0x40, 0x80, 0x84, 0x7d, 0x00 }, /* j */
    { 0x7f, 0x10, 0x28, 0x44, 0x00 }, /* k */
    { 0x00, 0x41, 0x7f, 0x40, 0x00 }, /* l */
    { 0x7c, 0x04, 0x18, 0x04, 0x78 }, /* m */
    { 0x7c, 0x08, 0x04, 0x04, 0x78 }, /* n */
    { 0x38, 0x44, 0x44, 0x44, 0x38 }, /* o */
    { 0xfc, 0x24, 0x24, 0x24, 0x18 }, /* p */
    { 0x18, 0x24, 0x24, 0x18, 0xfc }, /* q */
    { 0x7c, 0x08, 0x04, 0x04, 0x08 }, /* r */
    { 0x48, 0x54, 0x54, 0x54, 0x20 }, /* s */
    { 0x04, 0x3f, 0x44, 0x40, 0x20 }, /* t */
    { 0x3c, 0x40, 0x40, 0x20, 0x7c }, /* u */
    { 0x1c, 0x20, 0x40, 0x20, 0x1c }, /* v */
    { 0x3c, 0x40, 0x30, 0x40, 0x3c }, /* w */
    { 0x44, 0x28, 0x10, 0x28, 0x44 }, /* x */
    { 0x1c, 0xa0, 0xa0, 0xa0, 0x7c }, /* y */
    { 0x44, 0x64, 0x54, 0x4c, 0x44 }, /* z */
    { 0x00, 0x08, 0x36, 0x41, 0x00 }, /* { */
    { 0x00, 0x00, 0x7f, 0x00, 0x00 }, /* | */
    { 0x00, 0x41, 0x36, 0x08, 0x00 }, /* } */
    { 0x08, 0x04, 0x08, 0x10, 0x08 }, /* ~ */
};

const uint8_t *bmf_glyph(char c)
{
    unsigned char u = (unsigned char)c;
    if (u < BMF_FIRST || u > BMF_LAST)
        u = '?';
    return glyphs[u - BMF_FIRST];
}

uint32_t bmf_text_width(const char *s, unsigned scale)
{
    size_t n = strlen(s);
    if (n == 0)
        return 0;
    return (uint32_t)((n * BMF_ADVANCE - 1) * (scale ? scale : 1));
}

void bmf_draw_row(uint8_t *row, uint32_t row_w, int64_t x0, const char *s, unsigned gy,
                  unsigned scale, uint8_t color)
{
    unsigned y, i, gx;
    int64_t x;

    if (scale == 0)
        scale = 1;
    y = gy / scale;
    if (y >= BMF_GLYPH_H)
        return;
    for (x = x0; *s && x < (int64_t)row_w; s++, x += (int64_t)BMF_ADVANCE * scale) {
        const uint8_t *g = bmf_glyph(*s);
        for (gx = 0; gx < BMF_GLYPH_W; gx++) {
            if (!((g[gx] >> y) & 1))
                continue;
            for (i = 0; i < scale; i++) {
                int64_t px = x + (int64_t)gx * scale + i;
                if (px >= 0 && px < (int64_t)row_w)
                    row[px] = color;
            }
        }
    }
}

/* ------------------------------------------------------------------ page */

/* Layout (pixels). */
#define MARGIN 8u
#define TITLE_SCALE 2u
#define TITLE_GAP 6u      /* below the title */
#define LINE_H 11u        /* caption and legend line pitch */
#define LEGEND_GAP 6u     /* between the caption and the legend */
#define LEGEND_TEXT_DX (BMP_SWATCH_W + 4u)
#define LEGEND_COL_GAP 16u
#define BITMAP_GAP 12u    /* between the legend and the bitmap's frame */
#define TICK_W 4u
#define LABEL_GAP 2u      /* between a label and its tick */

const uint8_t bmp_palette[BMP_NCOLORS][3] = {
    { 192, 192, 192 }, /* the bitmap's (bitmap.c), in its order */
    { 0, 0, 0 },
    { 0, 0, 255 },
    { 0, 255, 0 },
    { 255, 0, 0 },
    { 255, 128, 0 },
    { 255, 255, 0 },
    { 255, 128, 128 },
    { 255, 0, 255 },
    { 64, 64, 64 },
    { 255, 255, 255 }, /* BMP_PIX_BG */
    { 0, 0, 0 },       /* BMP_PIX_TEXT */
    { 128, 128, 128 }, /* BMP_PIX_FRAME */
};

const char *bmp_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
    double v = (double)bytes;
    unsigned i = 0;
    if (bytes < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", bytes);
        return buf;
    }
    v /= 1024.0;
    while (v >= 1024.0 && i + 1 < sizeof unit / sizeof unit[0]) {
        v /= 1024.0;
        i++;
    }
    snprintf(buf, len, "%.1f %s", v, unit[i]);
    return buf;
}

/* 1234567 as "1,234,567". */
static const char *fmt_count(uint64_t n, char *buf, size_t len)
{
    char tmp[32];
    size_t digits, i, o = 0;
    snprintf(tmp, sizeof tmp, "%" PRIu64, n);
    digits = strlen(tmp);
    for (i = 0; i < digits && o + 2 < len; i++) {
        if (i && (digits - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
    return buf;
}

/* @part of @whole in tenths of a percent, as "65.3%". */
static const char *fmt_pct(uint64_t part, uint64_t whole, char *buf, size_t len)
{
    uint64_t t = whole ? (part * 1000u + whole / 2) / whole : 0;
    if (whole && part > UINT64_MAX / 1000u)
        t = part / (whole / 1000u ? whole / 1000u : 1);
    snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "%%", t / 10, t % 10);
    return buf;
}

static void add_line(bm_page *p, unsigned scale, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void add_line(bm_page *p, unsigned scale, const char *fmt, ...)
{
    va_list ap;
    if (p->n_lines >= BMP_MAX_LINES)
        return;
    va_start(ap, fmt);
    vsnprintf(p->lines[p->n_lines], BMP_LINE_MAX, fmt, ap);
    va_end(ap);
    p->line_scale[p->n_lines++] = scale;
}

static void caption_lines(bm_page *p, const seg_gen *g, const bm_caption *cap, uint64_t lo,
                          uint64_t hi, unsigned addr_digits)
{
    const seg_stats *st = &g->stats;
    uint64_t total = st->total_bytes, free_b = st->cls[SEG_CLASS_FREE].bytes;
    uint64_t used = total > free_b ? total - free_b : 0, allocs = 0;
    char a[32], b[32], c[32], d[32], e[32];
    unsigned i;

    if (cap->vm && *cap->vm)
        add_line(p, TITLE_SCALE, "Heap %" PRIu32 " - %s", cap->heap_id, cap->vm);
    else
        add_line(p, TITLE_SCALE, "Heap %" PRIu32, cap->heap_id);
    if (cap->captured_ms > 0) {
        time_t t = (time_t)(cap->captured_ms / 1000);
        struct tm tm;
        char when[64];
        if (localtime_r(&t, &tm) && strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %Z", &tm))
            add_line(p, 1, "Captured %s, after a GC", when);
        else
            add_line(p, 1, "Captured at %" PRId64 " ms (Unix time)", cap->captured_ms);
    } else {
        add_line(p, 1, "Capture time unknown");
    }
    add_line(p, 1, "Size %s (%s bytes), addresses 0x%0*" PRIx64 " to 0x%0*" PRIx64,
             bmp_fmt_bytes(total, a, sizeof a), fmt_count(total, b, sizeof b), (int)addr_digits,
             lo, (int)addr_digits, hi);
    add_line(p, 1, "Used %s (%s), free %s (%s), largest free block %s",
             bmp_fmt_bytes(used, a, sizeof a), fmt_pct(used, total, b, sizeof b),
             bmp_fmt_bytes(free_b, c, sizeof c), fmt_pct(free_b, total, d, sizeof d),
             bmp_fmt_bytes(st->largest_free_bytes, e, sizeof e));
    for (i = 1; i < SEG_NCLASS; i++)
        allocs += st->cls[i].count;
    if (cap->have_hpif)
        add_line(p, 1, "Objects %s (the VM's count), heap may grow to %s",
                 fmt_count(cap->hpif_objects, a, sizeof a), bmp_fmt_bytes(cap->hpif_max_bytes, b, sizeof b));
    else if (g->objects_mode)
        add_line(p, 1, "Objects %s", fmt_count(allocs, a, sizeof a));
    else
        add_line(p, 1, "Allocations %s (adjacent objects of one kind count as one)",
                 fmt_count(allocs, a, sizeof a));
    add_line(p, 1,
             "One pixel per %u-byte unit, %" PRIu32 " units (%s) per row; "
             "each row starts at the address on its left",
             g->unit_size, p->bm.width, bmp_fmt_bytes((uint64_t)p->bm.width * g->unit_size, a, sizeof a));
}

int bm_page_init(bm_page *p, const seg_gen *g, uint32_t bm_width, const bm_caption *cap)
{
    uint32_t text_w = 0, label_w, col_w = 0, ncols, nrows, y, w;
    uint64_t lo, hi = 0;
    unsigned digits = 8, i;
    int rc;

    memset(p, 0, sizeof(*p));
    rc = bm_layout_compute(g, bm_width, &p->bm);
    if (rc)
        return rc;
    bm_cursor_init(&p->cur, g, p->bm.width);
    if (!cap) {
        p->width = p->bm.width;
        p->height = p->bm.height;
        return p->height > BM_MAX_HEIGHT ? -EFBIG : 0;
    }
    p->framed = 1;

    lo = g->pieces[0]->addr;
    for (i = 0; i < g->n_pieces; i++) {
        uint64_t end = g->pieces[i]->addr + g->pieces[i]->units * g->pieces[i]->unit_size;
        if (end > hi)
            hi = end;
    }
    while (digits < 16 && (hi >> (4 * digits)))
        digits++;
    caption_lines(p, g, cap, lo, hi, digits);

    /* columns: scale labels, ticks, the frame, the bitmap */
    label_w = (uint32_t)((2 + digits) * BMF_ADVANCE - 1);
    p->label_right = MARGIN + label_w;
    p->bm_x = p->label_right + LABEL_GAP + TICK_W + 1;
    w = p->bm_x + p->bm.width + 1 + MARGIN;
    p->line_x = MARGIN;
    for (i = 0; i < p->n_lines; i++) {
        uint32_t lw = bmf_text_width(p->lines[i], p->line_scale[i]);
        if (lw > text_w)
            text_w = lw;
    }
    for (i = 0; i < BMP_NLEGEND; i++) {
        uint32_t nw;
        if (i < SEG_NCLASS) {
            p->legend_name[i] = seg_class_name(i);
            p->legend_pix[i] = (uint8_t)(i == SEG_CLASS_FREE ? BM_PIX_FREE : BM_PIX_KIND(i - 1));
        } else {
            p->legend_name[i] = "no heap here (gap between segments)";
            p->legend_pix[i] = BM_PIX_EXPANSION;
        }
        nw = LEGEND_TEXT_DX + bmf_text_width(p->legend_name[i], 1);
        if (nw > col_w)
            col_w = nw;
    }
    if (text_w + 2 * MARGIN > w)
        w = text_w + 2 * MARGIN;
    if (col_w + 2 * MARGIN > w)
        w = col_w + 2 * MARGIN;
    p->width = w;

    /* rows: title, caption lines, legend, frame and bitmap, margin */
    y = MARGIN;
    for (i = 0; i < p->n_lines; i++) {
        p->line_y[i] = y;
        y += p->line_scale[i] > 1 ? BMF_GLYPH_H * p->line_scale[i] + TITLE_GAP : LINE_H;
    }
    y += LEGEND_GAP;
    ncols = (w - 2 * MARGIN + LEGEND_COL_GAP) / (col_w + LEGEND_COL_GAP);
    if (ncols < 1)
        ncols = 1;
    nrows = (BMP_NLEGEND + ncols - 1) / ncols;
    for (i = 0; i < BMP_NLEGEND; i++) {
        p->legend_x[i] = MARGIN + (i / nrows) * (col_w + LEGEND_COL_GAP);
        p->legend_y[i] = y + (i % nrows) * LINE_H;
    }
    y += nrows * LINE_H + BITMAP_GAP;
    p->bm_y = y + 1; /* below the frame's top */
    p->height = p->bm_y + (p->bm.height + 1 > BMF_GLYPH_H ? p->bm.height + 1 : BMF_GLYPH_H) + MARGIN;
    return p->height > BM_MAX_HEIGHT ? -EFBIG : 0; /* under 200 rows added: no wrap */
}

void bm_page_row(bm_page *p, uint8_t *row)
{
    uint32_t y = p->next_y++, r;
    size_t i;

    if (!p->framed) {
        if (y >= p->bm.height || !bm_cursor_row(&p->cur, row))
            memset(row, BM_PIX_EXPANSION, p->width);
        return;
    }
    memset(row, BMP_PIX_BG, p->width);
    if (y >= p->height)
        return;
    for (i = 0; i < p->n_lines; i++) {
        uint32_t s = p->line_scale[i];
        if (y >= p->line_y[i] && y < p->line_y[i] + BMF_GLYPH_H * s)
            bmf_draw_row(row, p->width, p->line_x, p->lines[i], y - p->line_y[i], s, BMP_PIX_TEXT);
    }
    for (i = 0; i < BMP_NLEGEND; i++) {
        if (y >= p->legend_y[i] && y < p->legend_y[i] + BMF_GLYPH_H) {
            if (y < p->legend_y[i] + BMP_SWATCH_H)
                memset(row + p->legend_x[i], p->legend_pix[i], BMP_SWATCH_W);
            bmf_draw_row(row, p->width, p->legend_x[i] + LEGEND_TEXT_DX, p->legend_name[i],
                         y - p->legend_y[i], 1, BMP_PIX_TEXT);
        }
    }
    if (y + 1 == p->bm_y || y == p->bm_y + p->bm.height) {
        memset(row + p->bm_x - 1, BMP_PIX_FRAME, (size_t)p->bm.width + 2);
    } else if (y >= p->bm_y && y < p->bm_y + p->bm.height) {
        r = y - p->bm_y;
        row[p->bm_x - 1] = BMP_PIX_FRAME;
        row[p->bm_x + p->bm.width] = BMP_PIX_FRAME;
        if (!bm_cursor_row(&p->cur, row + p->bm_x))
            memset(row + p->bm_x, BM_PIX_EXPANSION, p->bm.width); /* cannot happen */
        if (r % BMP_SCALE_EVERY == 0) {
            p->label_row = r;
            p->label[0] = '\0';
            if (p->cur.row_addr_ok) {
                snprintf(p->label, sizeof p->label, "0x%0*" PRIx64,
                         (int)((p->label_right - MARGIN + 1) / BMF_ADVANCE - 2), p->cur.row_addr);
                memset(row + p->bm_x - 1 - TICK_W, BMP_PIX_TEXT, TICK_W);
            }
        }
    }
    if (p->label[0] && y >= p->bm_y + p->label_row && y < p->bm_y + p->label_row + BMF_GLYPH_H)
        bmf_draw_row(row, p->width, (int64_t)p->label_right - bmf_text_width(p->label, 1), p->label,
                     y - p->bm_y - p->label_row, 1, BMP_PIX_TEXT);
}

/* --------------------------------------------------------------- encoder */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

#ifndef HAVE_LIBPNG

int bm_png_available(void)
{
    return 0;
}

int bm_png_ready(char *err, size_t errlen)
{
    set_err(err, errlen, "built without libpng");
    return -ENOTSUP;
}

int bm_png_write_page_file(const seg_gen *g, uint32_t width, const bm_caption *cap,
                           const char *path, bm_page *page, char *err, size_t errlen)
{
    (void)g, (void)width, (void)cap, (void)path;
    memset(page, 0, sizeof(*page));
    set_err(err, errlen, "built without libpng");
    return -ENOTSUP;
}

int bm_png_write_file(const seg_gen *g, uint32_t width, const char *path, bm_layout *layout,
                      char *err, size_t errlen)
{
    (void)g, (void)width, (void)path;
    memset(layout, 0, sizeof(*layout));
    set_err(err, errlen, "built without libpng");
    return -ENOTSUP;
}

int bm_png_write_mem(const seg_gen *g, uint32_t width, size_t max_bytes, uint8_t **out,
                     size_t *out_len, bm_layout *layout, char *err, size_t errlen)
{
    (void)g, (void)width, (void)max_bytes;
    *out = NULL;
    *out_len = 0;
    memset(layout, 0, sizeof(*layout));
    set_err(err, errlen, "built without libpng");
    return -ENOTSUP;
}

#else /* HAVE_LIBPNG */

int bm_png_available(void)
{
    return ddm_pnglib_failure() == NULL;
}

int bm_png_ready(char *err, size_t errlen)
{
    char why[256];
    if (ddm_pnglib_get(why, sizeof why) == NULL) {
        set_err(err, errlen, "%s", why);
        return -ENOSYS;
    }
    return 0;
}

static int layout_or_err(const seg_gen *g, uint32_t width, const bm_caption *cap, bm_page *page,
                         char *err, size_t errlen)
{
    int rc = bm_page_init(page, g, width, cap);
    if (rc == -EINVAL)
        set_err(err, errlen, "bad width %u (1..%u)", width, BM_MAX_WIDTH);
    else if (rc == -ENODATA)
        set_err(err, errlen, "no complete heap bitmap kept for this heap (yet)");
    else if (rc == -EFBIG)
        set_err(err, errlen, "heap bitmap too big (more than 2^31 pixels, or more than 2^31 - 1 rows: "
                "a wider --width helps)");
    return rc;
}

/* libpng, loaded by encode() before the first call below (pnglib.h). */
static const ddm_pnglib *png_lib;

/* Where the encoder's bytes go, and the first error. */
typedef struct png_sink {
    FILE *fp;          /* file output, or */
    ddm_writer *w;     /* memory output */
    char msg[160];
} png_sink;

static void sink_write(png_structp png, png_bytep data, size_t len)
{
    png_sink *s = png_lib->png_get_io_ptr(png);
    if (s->fp) {
        if (fwrite(data, 1, len, s->fp) != len)
            png_lib->png_error(png, "write failed");
    } else {
        ddm_write_bytes(s->w, data, len);
        if (s->w->error)
            png_lib->png_error(png, "image bigger than the cap");
    }
}

static void sink_flush(png_structp png)
{
    png_sink *s = png_lib->png_get_io_ptr(png);
    if (s->fp)
        fflush(s->fp);
}

static void on_png_error(png_structp png, png_const_charp msg)
{
    png_sink *s = png_lib->png_get_error_ptr(png);
    snprintf(s->msg, sizeof(s->msg), "%s", msg);
    png_lib->png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg;
}

/* Encode the rows of @page into @sink. 0 or -EIO (message in sink->msg). */
static int encode(bm_page *page, png_sink *sink)
{
    png_structp png;
    png_infop info = NULL;
    png_color pal[BMP_NCOLORS];
    uint8_t *volatile row = NULL;
    unsigned i, ncolors = page->framed ? BMP_NCOLORS : BM_NCOLORS;
    int rc = 0;

    png_lib = ddm_pnglib_get(sink->msg, sizeof(sink->msg));
    if (png_lib == NULL)
        return -ENOSYS;
    png = png_lib->png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, on_png_error, on_png_warning);
    if (!png) {
        snprintf(sink->msg, sizeof(sink->msg), "out of memory");
        return -ENOMEM;
    }
    info = png_lib->png_create_info_struct(png);
    if (!info) {
        png_lib->png_destroy_write_struct(&png, NULL);
        snprintf(sink->msg, sizeof(sink->msg), "out of memory");
        return -ENOMEM;
    }
    if (setjmp(DDM_PNG_JMPBUF(png_lib, png))) {
        free(row);
        png_lib->png_destroy_write_struct(&png, &info);
        return -EIO;
    }
    row = malloc(page->width);
    if (!row)
        png_lib->png_error(png, "out of memory");
    /* PNG allows 2^31 - 1 rows (bm_page_init keeps within it); libpng's
     * default limit is 1,000,000, which a narrow --width (1: one unit a
     * row) passes on any heap of more than a million units */
    png_lib->png_set_user_limits(png, BM_MAX_HEIGHT, BM_MAX_HEIGHT);
    png_lib->png_set_write_fn(png, sink, sink_write, sink_flush);
    png_lib->png_set_compression_level(png, 1);
    png_lib->png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_lib->png_set_IHDR(png, info, page->width, page->height, 8, PNG_COLOR_TYPE_PALETTE,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    for (i = 0; i < ncolors; i++) {
        pal[i].red = bmp_palette[i][0];
        pal[i].green = bmp_palette[i][1];
        pal[i].blue = bmp_palette[i][2];
    }
    png_lib->png_set_PLTE(png, info, pal, (int)ncolors);
    png_lib->png_write_info(png, info);
    for (i = 0; i < page->height; i++) {
        bm_page_row(page, row);
        png_lib->png_write_row(png, row);
    }
    png_lib->png_write_end(png, info);
    free(row);
    png_lib->png_destroy_write_struct(&png, &info);
    return rc;
}

int bm_png_write_page_file(const seg_gen *g, uint32_t width, const bm_caption *cap,
                           const char *path, bm_page *page, char *err, size_t errlen)
{
    png_sink sink;
    char *tmp;
    int fd, rc;
    unsigned attempt;
    size_t n;

    rc = layout_or_err(g, width, cap, page, err, errlen);
    if (rc)
        return rc;
    if (!path || !*path) {
        set_err(err, errlen, "no file name");
        return -EINVAL;
    }
    rc = part_check_target(path);
    if (rc != 0) {
        set_err(err, errlen, "cannot write %s: %s", path, part_strerror(rc));
        return rc;
    }
    /* a fresh name next to @path; open() applies the umask (mkstemp would force 0600) */
    n = strlen(path);
    tmp = malloc(n + 48);
    if (!tmp) {
        set_err(err, errlen, "out of memory");
        return -ENOMEM;
    }
    fd = -1;
    for (attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(tmp, n + 48, "%s.tmp%ld.%u", path, (long)getpid(), attempt);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        rc = -errno;
        /* named as the user gave it: the temporary name next to it is ours */
        set_err(err, errlen, "cannot create %s: %s", path, strerror(errno));
        free(tmp);
        return rc;
    }
    memset(&sink, 0, sizeof(sink));
    sink.fp = fdopen(fd, "wb");
    if (!sink.fp) {
        rc = -errno;
        set_err(err, errlen, "cannot open %s: %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        return rc;
    }
    rc = encode(page, &sink);
    if (fclose(sink.fp) != 0 && rc == 0) {
        rc = -EIO;
        snprintf(sink.msg, sizeof(sink.msg), "write failed: %s", strerror(errno));
    }
    if (rc == 0 && (rc = part_check_target(path)) != 0) { /* again: it may have appeared */
        snprintf(sink.msg, sizeof(sink.msg), "cannot replace it: %s", part_strerror(rc));
    } else if (rc == 0 && rename(tmp, path) != 0) {
        rc = -errno;
        snprintf(sink.msg, sizeof(sink.msg), "cannot rename to %s: %s", path, strerror(errno));
    }
    if (rc != 0) {
        unlink(tmp);
        set_err(err, errlen, "%s: %s", path, sink.msg);
    }
    free(tmp);
    return rc;
}

int bm_png_write_file(const seg_gen *g, uint32_t width, const char *path, bm_layout *layout,
                      char *err, size_t errlen)
{
    bm_page page;
    int rc = bm_png_write_page_file(g, width, NULL, path, &page, err, errlen);
    *layout = page.bm;
    return rc;
}

int bm_png_write_mem(const seg_gen *g, uint32_t width, size_t max_bytes, uint8_t **out,
                     size_t *out_len, bm_layout *layout, char *err, size_t errlen)
{
    bm_page page_, *page = &page_;
    png_sink sink;
    ddm_writer w;
    int rc;

    *out = NULL;
    *out_len = 0;
    rc = layout_or_err(g, width, NULL, page, err, errlen);
    *layout = page->bm;
    if (rc)
        return rc;
    memset(&sink, 0, sizeof(sink));
    ddm_writer_init(&w, max_bytes);
    sink.w = &w;
    rc = encode(page, &sink);
    if (rc) {
        ddm_writer_reset(&w);
        set_err(err, errlen, "%s", sink.msg);
        return rc;
    }
    *out = ddm_writer_take(&w, out_len);
    if (!*out) {
        set_err(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

#endif /* HAVE_LIBPNG */
