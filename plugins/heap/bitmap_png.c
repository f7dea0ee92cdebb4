/* SPDX-License-Identifier: Apache-2.0
 *
 * bitmap_png: palette PNG encoding of a heap bitmap through libpng (or a
 * stub reporting "built without libpng"); see bitmap_png.h.
 */
#ifdef HAVE_CONFIG_H
#include "build-config.h"
#endif

#include "bitmap_png.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>

#ifdef HAVE_LIBPNG
#include <fcntl.h>
#include <png.h>
#include <unistd.h>
#endif

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
    return 1;
}

static int layout_or_err(const seg_gen *g, uint32_t width, bm_layout *layout, char *err,
                         size_t errlen)
{
    int rc = bm_layout_compute(g, width, layout);
    if (rc == -EINVAL)
        set_err(err, errlen, "bad width %u (1..%u)", width, BM_MAX_WIDTH);
    else if (rc == -ENODATA)
        set_err(err, errlen, "no complete heap bitmap kept for this heap (yet)");
    else if (rc == -EFBIG)
        set_err(err, errlen, "heap bitmap too big (more than 2^31 pixels)");
    return rc;
}

/* Where the encoder's bytes go, and the first error. */
typedef struct png_sink {
    FILE *fp;          /* file output, or */
    ddm_writer *w;     /* memory output */
    char msg[160];
} png_sink;

static void sink_write(png_structp png, png_bytep data, size_t len)
{
    png_sink *s = png_get_io_ptr(png);
    if (s->fp) {
        if (fwrite(data, 1, len, s->fp) != len)
            png_error(png, "write failed");
    } else {
        ddm_write_bytes(s->w, data, len);
        if (s->w->error)
            png_error(png, "image bigger than the cap");
    }
}

static void sink_flush(png_structp png)
{
    png_sink *s = png_get_io_ptr(png);
    if (s->fp)
        fflush(s->fp);
}

static void on_png_error(png_structp png, png_const_charp msg)
{
    png_sink *s = png_get_error_ptr(png);
    snprintf(s->msg, sizeof(s->msg), "%s", msg);
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg;
}

/* Encode rows from a cursor into @sink. 0 or -EIO (message in sink->msg). */
static int encode(const seg_gen *g, const bm_layout *layout, png_sink *sink)
{
    png_structp png;
    png_infop info = NULL;
    png_color pal[BM_NCOLORS];
    uint8_t *volatile row = NULL;
    bm_cursor cur;
    unsigned i;
    int rc = 0;

    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, on_png_error, on_png_warning);
    if (!png) {
        snprintf(sink->msg, sizeof(sink->msg), "out of memory");
        return -ENOMEM;
    }
    info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        snprintf(sink->msg, sizeof(sink->msg), "out of memory");
        return -ENOMEM;
    }
    if (setjmp(png_jmpbuf(png))) {
        free(row);
        png_destroy_write_struct(&png, &info);
        return -EIO;
    }
    row = malloc(layout->width);
    if (!row)
        png_error(png, "out of memory");
    png_set_write_fn(png, sink, sink_write, sink_flush);
    png_set_compression_level(png, 1);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_set_IHDR(png, info, layout->width, layout->height, 8, PNG_COLOR_TYPE_PALETTE,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    for (i = 0; i < BM_NCOLORS; i++) {
        pal[i].red = bm_palette[i][0];
        pal[i].green = bm_palette[i][1];
        pal[i].blue = bm_palette[i][2];
    }
    png_set_PLTE(png, info, pal, BM_NCOLORS);
    png_write_info(png, info);
    bm_cursor_init(&cur, g, layout->width);
    for (i = 0; i < layout->height; i++) {
        if (!bm_cursor_row(&cur, row))
            memset(row, BM_PIX_EXPANSION, layout->width); /* cannot happen: layout counted it */
        png_write_row(png, row);
    }
    png_write_end(png, info);
    free(row);
    png_destroy_write_struct(&png, &info);
    return rc;
}

int bm_png_write_file(const seg_gen *g, uint32_t width, const char *path, bm_layout *layout,
                      char *err, size_t errlen)
{
    png_sink sink;
    char *tmp;
    int fd, rc;
    unsigned attempt;
    size_t n;

    rc = layout_or_err(g, width, layout, err, errlen);
    if (rc)
        return rc;
    if (!path || !*path) {
        set_err(err, errlen, "no file name");
        return -EINVAL;
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
        set_err(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    memset(&sink, 0, sizeof(sink));
    sink.fp = fdopen(fd, "wb");
    if (!sink.fp) {
        rc = -errno;
        set_err(err, errlen, "cannot open %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        return rc;
    }
    rc = encode(g, layout, &sink);
    if (fclose(sink.fp) != 0 && rc == 0) {
        rc = -EIO;
        snprintf(sink.msg, sizeof(sink.msg), "write failed: %s", strerror(errno));
    }
    if (rc == 0 && rename(tmp, path) != 0) {
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

int bm_png_write_mem(const seg_gen *g, uint32_t width, size_t max_bytes, uint8_t **out,
                     size_t *out_len, bm_layout *layout, char *err, size_t errlen)
{
    png_sink sink;
    ddm_writer w;
    int rc;

    *out = NULL;
    *out_len = 0;
    rc = layout_or_err(g, width, layout, err, errlen);
    if (rc)
        return rc;
    memset(&sink, 0, sizeof(sink));
    ddm_writer_init(&w, max_bytes);
    sink.w = &w;
    rc = encode(g, layout, &sink);
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
