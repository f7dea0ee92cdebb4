/* SPDX-License-Identifier: Apache-2.0
 *
 * bitmap_png: encodes a heap bitmap (bitmap.h) as an 8-bit palette PNG
 * through libpng, into a file or into memory, one row at a time.
 *
 * Without libpng (configure --without-libpng, HAVE_LIBPNG undefined) the
 * same functions exist and fail with -ENOTSUP and the message "built
 * without libpng", so callers need no #ifdef.
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

/** 1 if this build can write PNG. */
int bm_png_available(void);

/** Write the bitmap of @g at @width to @path; fills @layout. */
int bm_png_write_file(const seg_gen *g, uint32_t width, const char *path, bm_layout *layout,
                      char *err, size_t errlen);

/** Encode the bitmap of @g at @width into a new buffer (transfer full,
 *  free()) of at most @max_bytes bytes; fills @layout. */
int bm_png_write_mem(const seg_gen *g, uint32_t width, size_t max_bytes, uint8_t **out,
                     size_t *out_len, bm_layout *layout, char *err, size_t errlen);

#endif /* DDM_HEAP_BITMAP_PNG_H */
