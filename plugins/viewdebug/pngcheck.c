/* SPDX-License-Identifier: Apache-2.0
 *
 * viewdebug: the PNG check of a capture; see pngcheck.h.
 */
#include "build-config.h"

#include "pngcheck.h"

#include <stdio.h>
#include <string.h>

#ifdef HAVE_LIBPNG
#include "../common/pnglib.h"
#endif

#include <ddmon/bytes.h>
#include <ddmon/chunk.h>

static const uint8_t png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

#ifdef HAVE_LIBPNG
/* libpng, loaded by vd_png_size before the first call below (pnglib.h). */
static const ddm_pnglib *png_lib;

typedef struct png_mem {
    const uint8_t *p;
    size_t n, off;
} png_mem;

static void read_mem(png_structp png, png_bytep out, size_t len)
{
    png_mem *m = png_lib->png_get_io_ptr(png);
    if (len > m->n - m->off)
        png_lib->png_error(png, "the image ends early");
    memcpy(out, m->p + m->off, len);
    m->off += len;
}

static void no_warnings(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* libpng's reason for a bad image, for the user. */
static void keep_error(png_structp png, png_const_charp msg)
{
    char *why = png_lib->png_get_error_ptr(png);
    snprintf(why, 200, "%s", msg);
    png_lib->png_longjmp(png, 1);
}
#endif

/* The IHDR chunk that must come first, by hand: a build without libpng,
 * or a server where it cannot be loaded. */
static int ihdr_size(const uint8_t *data, size_t len, uint32_t *width, uint32_t *height, char *why,
                     size_t why_len)
{
    ddm_reader r;
    ddm_reader_init(&r, data + 8, len - 8);
    uint32_t ihdr_len = ddm_read_u4(&r), type = ddm_read_u4(&r);
    *width = ddm_read_u4(&r);
    *height = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r) || ihdr_len != 13 || type != DDM_CHUNK('I', 'H', 'D', 'R') ||
        *width == 0 || *height == 0) {
        snprintf(why, why_len, "not a valid PNG: no IHDR chunk first");
        return -1;
    }
    return 0;
}

int vd_png_size(const uint8_t *data, size_t len, uint32_t *width, uint32_t *height, char *why,
                size_t why_len)
{
    if (len < 8 || memcmp(data, png_signature, 8) != 0) {
        snprintf(why, why_len, "no PNG signature (%zu bytes)", len);
        return -1;
    }
#ifdef HAVE_LIBPNG
    char load_why[256];
    png_lib = ddm_pnglib_get(load_why, sizeof load_why);
    if (png_lib != NULL) {
        char err[200] = "";
        png_mem m = {data, len, 0};
        png_structp png = png_lib->png_create_read_struct(PNG_LIBPNG_VER_STRING, err, keep_error, no_warnings);
        png_infop info = png ? png_lib->png_create_info_struct(png) : NULL;
        if (!info) {
            png_lib->png_destroy_read_struct(&png, NULL, NULL);
            snprintf(why, why_len, "out of memory");
            return -1;
        }
        if (setjmp(DDM_PNG_JMPBUF(png_lib, png))) {
            png_lib->png_destroy_read_struct(&png, &info, NULL);
            snprintf(why, why_len, "not a valid PNG: %s", err[0] ? err : "libpng refused it");
            return -1;
        }
        png_lib->png_set_read_fn(png, &m, read_mem);
        png_lib->png_read_info(png, info); /* signature, IHDR (checked by libpng) up to the image data */
        *width = png_lib->png_get_image_width(png, info);
        *height = png_lib->png_get_image_height(png, info);
        png_lib->png_destroy_read_struct(&png, &info, NULL);
        return 0;
    }
    /* libpng could not be loaded (ddm_pnglib_failure says why): check by
     * hand, as a build without it does. */
#endif
    return ihdr_size(data, len, width, height, why, why_len);
}
