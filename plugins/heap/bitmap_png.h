/* SPDX-License-Identifier: Apache-2.0
 *
 * bitmap_png: the heap bitmap (bitmap.h) as a PNG that reads on its own,
 * in three parts (one file, so whatever links bitmap.c and bitmap_png.c,
 * as bench/heapdecode does, has them all):
 *
 *  - a 5x7 bitmap font for printable ASCII (bmf_*), so the image can carry
 *    text without a font library;
 *  - the page (bm_page_*): the bitmap framed by a caption with the
 *    figures, a legend of the kind colours and an address scale down the
 *    left side, produced one row of palette indexes at a time;
 *  - the encoder (bm_png_*): an 8-bit palette PNG through libpng, into a
 *    file or into memory, one row at a time.
 *
 * Without libpng (configure --without-libpng, HAVE_LIBPNG undefined) the
 * font and the page still work; the bm_png_* functions exist and fail with
 * -ENOTSUP and the message "built without libpng", so callers need no
 * #ifdef.
 *
 * Files are written to a temporary name next to @path and renamed into
 * place, so a reader never sees half an image. Fast settings (zlib level
 * 1, no row filters): heaps give long runs that compress well anyway.
 *
 * Errors: 0, or a negative errno with a one-line reason in @err.
 */
#ifndef DDM_HEAP_BITMAP_PNG_H
#define DDM_HEAP_BITMAP_PNG_H

#include <stddef.h>
#include <stdint.h>

#include "bitmap.h"

/* ------------------------------------------------------------------ font
 *
 * The classic column-major 5x7 LCD table: a glyph is 5 column bytes, bit 0
 * the top row, bit 7 the descenders of g, j, p, q and y (so 5x8 cells).
 * Text is drawn one pixel row at a time (the PNG is written row by row):
 * bmf_draw_row() sets the pixels of row @gy of a string's
 * glyphs in a row of palette indexes, clipped to the row. A character
 * outside 0x20..0x7e is drawn as '?'.
 */
#define BMF_GLYPH_W 5
#define BMF_GLYPH_H 8
/** Horizontal advance per character (glyph and one pixel of spacing). */
#define BMF_ADVANCE 6
#define BMF_FIRST 0x20
#define BMF_LAST 0x7e

/** The 5 column bytes of @c ('?' for a character outside the table). */
const uint8_t *bmf_glyph(char c);

/** 1 if pixel (@x, @y) of @c's glyph is set (0 outside the 5x8 cell). */
static inline int bmf_pixel(char c, unsigned x, unsigned y)
{
    return x < BMF_GLYPH_W && y < BMF_GLYPH_H && ((bmf_glyph(c)[x] >> y) & 1);
}

/** Width in pixels of @s drawn at @scale (no trailing spacing). */
uint32_t bmf_text_width(const char *s, unsigned scale);

/**
 * Set to @color the pixels of glyph row @gy (0 .. BMF_GLYPH_H * @scale - 1)
 * of @s drawn from column @x0 (may be negative) at @scale (1 or more) in
 * @row of @row_w pixels. Cost: O(strlen(@s) * @scale * BMF_GLYPH_W).
 */
void bmf_draw_row(uint8_t *row, uint32_t row_w, int64_t x0, const char *s, unsigned gy,
                  unsigned scale, uint8_t color);

/* ------------------------------------------------------------------ page
 *
 *   +--------------------------------------------------------------+
 *   | Heap 1 - app (pid 42, 127.0.0.1:8042)      (title, 2x size)  |
 *   | captured / size / used, free / objects / how to read it      |
 *   | [swatch] free        [swatch] data object      ...  (legend)  |
 *   |  0x12c00000 -+-------------------------------+                |
 *   |              | one pixel per allocation unit |                |
 *   |  0x12c10000 -|  (the bitmap, framed in grey) |                |
 *   |              +-------------------------------+                |
 *   +--------------------------------------------------------------+
 *
 * Legend: the decoder's classes (segdecode.h: free, data object, class
 * object, 1/2/4/8-byte arrays, unknown object, non-Java object) in the
 * bitmap's colours, and the grey of the gaps between segments.
 *
 * Scale: every BMP_SCALE_EVERY bitmap rows a tick and, from it down, the
 * hex address of the row's first pixel (bm_cursor.row_addr); a row that
 * starts inside a long gap (drawn shorter than it is) gets no label.
 *
 * Bounds: the page adds a fixed number of rows (caption, legend, frame,
 * margins: under 200) and columns (scale and margins: under 100, or the
 * widest caption line, under 1600) to the bitmap, so its size stays within
 * the bitmap's caps; each row costs O(width + text on it), so a page is
 * O(pixels), and needs no memory beyond the caller's row.
 *
 * Without a caption (bm_page_init's @cap NULL) the page is the bare
 * bitmap, one pixel per unit and nothing else.
 */
/* Palette beyond the bitmap's (bitmap.h): page background, text, frame. */
#define BMP_PIX_BG BM_NCOLORS
#define BMP_PIX_TEXT (BM_NCOLORS + 1)
#define BMP_PIX_FRAME (BM_NCOLORS + 2)
#define BMP_NCOLORS (BM_NCOLORS + 3)

/** Caption lines (title included) and their longest text. */
#define BMP_MAX_LINES 7
#define BMP_LINE_MAX 128
/** Legend entries: the 9 statistic classes (free, then kinds) and the gaps. */
#define BMP_NLEGEND 10
/** A scale label every this many bitmap rows. */
#define BMP_SCALE_EVERY 16u
/** Legend swatch size. */
#define BMP_SWATCH_W 12u
#define BMP_SWATCH_H 7u

/** RGB of each page palette index (the bitmap's first, then BMP_PIX_*). */
extern const uint8_t bmp_palette[BMP_NCOLORS][3];

/** What the caption says beyond the bitmap's own statistics. */
typedef struct bm_caption {
    uint32_t heap_id;
    const char *vm;          /**< "app (pid 42, 127.0.0.1:8042)", or NULL */
    int64_t captured_ms;     /**< Unix epoch ms the segments were complete; 0 unknown */
    int have_hpif;           /**< the VM's HPIF figures of this heap are known: */
    uint64_t hpif_objects;   /**< allocated objects */
    uint64_t hpif_max_bytes; /**< max heap size */
} bm_caption;

typedef struct bm_page {
    bm_layout bm;                 /**< the bitmap proper */
    uint32_t width, height;       /**< the whole image */
    uint32_t bm_x, bm_y;          /**< top left pixel of the bitmap */
    int framed;                   /**< 0: bare bitmap (no caption) */
    size_t n_lines;
    char lines[BMP_MAX_LINES][BMP_LINE_MAX];
    uint32_t line_x, line_y[BMP_MAX_LINES], line_scale[BMP_MAX_LINES];
    const char *legend_name[BMP_NLEGEND];
    uint8_t legend_pix[BMP_NLEGEND];
    uint32_t legend_x[BMP_NLEGEND], legend_y[BMP_NLEGEND]; /**< swatch top left */
    uint32_t label_right;         /**< scale labels end just before this column */
    /* row production */
    bm_cursor cur;
    uint32_t next_y;
    char label[24];               /**< current scale label, "" if none */
    uint32_t label_row;           /**< its bitmap row */
} bm_page;

/**
 * Lay out the page of @g at bitmap width @bm_width with caption @cap (NULL:
 * the bare bitmap). Returns 0, the errors of bm_layout_compute, or -EFBIG
 * when the page would have more than BM_MAX_HEIGHT rows (a PNG cannot). @g
 * is borrowed while the page is in use (there is nothing to free).
 */
int bm_page_init(bm_page *p, const seg_gen *g, uint32_t bm_width, const bm_caption *cap);
/** Fill @row (p->width palette indexes) with the next row, top to bottom;
 *  rows past the last are background. */
void bm_page_row(bm_page *p, uint8_t *row);

/** "12.3 MiB" (1024-based; "512 B" under 1 KiB) into @buf. */
const char *bmp_fmt_bytes(uint64_t bytes, char *buf, size_t len);

/* --------------------------------------------------------------- encoder */

/** 1 if this build can write PNG and libpng did not fail to load (it is
 *  loaded at the first image, not by this: plugins/common/pnglib.h). The
 *  views are declared before any image, when this is still 1: after a
 *  failure heap.bitmap stays listed but is neither made nor filled. */
int bm_png_available(void);

/** Load libpng now (a command about to draw checks before it works): 0,
 *  or -ENOTSUP (a build without libpng) / -ENOSYS (it cannot be loaded)
 *  with the reason in @err. */
int bm_png_ready(char *err, size_t errlen);

/** Write the page of @g at bitmap width @width with caption @cap (NULL:
 *  the bare bitmap) to @path (through a fresh temporary name renamed onto
 *  it; @path a device, FIFO, directory or symlink is refused, before the
 *  encoding and again at the rename: partfile.h); fills @page (its sizes,
 *  and ->bm the bitmap's). */
int bm_png_write_page_file(const seg_gen *g, uint32_t width, const bm_caption *cap,
                           const char *path, bm_page *page, char *err, size_t errlen);

/** Write the bare bitmap of @g at @width to @path; fills @layout. */
int bm_png_write_file(const seg_gen *g, uint32_t width, const char *path, bm_layout *layout,
                      char *err, size_t errlen);

/** Encode the bare bitmap of @g at @width into a new buffer (transfer
 *  full, free()) of at most @max_bytes bytes; fills @layout. */
int bm_png_write_mem(const seg_gen *g, uint32_t width, size_t max_bytes, uint8_t **out,
                     size_t *out_len, bm_layout *layout, char *err, size_t errlen);

#endif /* DDM_HEAP_BITMAP_PNG_H */
