/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pnglib: libpng for the plugins that use it (heap's bitmap encoder,
 * viewdebug's capture check), loaded with dlopen() at the first image
 * instead of with the plugin. A server that never draws a heap bitmap nor
 * captures a view does not map libpng at all (about 90 kB resident with
 * every plugin loaded; doc/memory.md). The calls keep libpng's own
 * prototypes (each member is declared with __typeof__ of libpng's
 * declaration), so a mismatch is a compile error, not a crash.
 *
 * Only with HAVE_LIBPNG (configure found libpng's headers); the plugin
 * then links no libpng, only this and libdl.
 */
#ifndef DDM_PLUGINS_COMMON_PNGLIB_H
#define DDM_PLUGINS_COMMON_PNGLIB_H

#include <setjmp.h>
#include <stddef.h>

#include <png.h>

/* The libpng functions the plugins call, X(name) for each. */
#define DDM_PNGLIB_FUNCTIONS(X) \
    X(png_create_read_struct)   \
    X(png_create_write_struct)  \
    X(png_create_info_struct)   \
    X(png_destroy_read_struct)  \
    X(png_destroy_write_struct) \
    X(png_set_longjmp_fn)       \
    X(png_longjmp)              \
    X(png_error)                \
    X(png_get_io_ptr)           \
    X(png_get_error_ptr)        \
    X(png_set_read_fn)          \
    X(png_set_write_fn)         \
    X(png_read_info)            \
    X(png_get_image_width)      \
    X(png_get_image_height)     \
    X(png_set_compression_level) \
    X(png_set_filter)           \
    X(png_set_user_limits)      \
    X(png_set_IHDR)             \
    X(png_set_PLTE)             \
    X(png_write_info)           \
    X(png_write_row)            \
    X(png_write_end)

/* Pointers to the loaded library's functions, same names as libpng's. */
typedef struct ddm_pnglib {
#define DDM_PNGLIB_MEMBER(name) __typeof__(name) *name;
    DDM_PNGLIB_FUNCTIONS(DDM_PNGLIB_MEMBER)
#undef DDM_PNGLIB_MEMBER
} ddm_pnglib;

/* libpng's png_jmpbuf() through @lib: the jmp_buf libpng longjmps to. */
#define DDM_PNG_JMPBUF(lib, png) (*(lib)->png_set_longjmp_fn((png), longjmp, sizeof(jmp_buf)))

/* The soname this build's headers belong to, e.g. "libpng16.so.16" (a
 * test may define another, to play a system without libpng). */
#ifndef DDM_PNG_SONAME
#define DDM_PNG_STR2(x) #x
#define DDM_PNG_STR(x) DDM_PNG_STR2(x)
#define DDM_PNG_SONAME \
    "libpng" DDM_PNG_STR(PNG_LIBPNG_VER_DLLNUM) ".so." DDM_PNG_STR(PNG_LIBPNG_VER_SONUM)
#endif

/* libpng's functions, loaded at the first call and kept (the result is
 * static: borrowed, valid until the process ends), or NULL with the
 * reason in @why (the library or a function missing). Tried once: after a
 * failure every call answers NULL with the same reason, without a second
 * dlopen() (a view refreshed every second must not retry and log each
 * time). Main thread only, as every plugin callback. */
const ddm_pnglib *ddm_pnglib_get(char *why, size_t why_len);

/* Why libpng could not be loaded (static, borrowed), or NULL if it was
 * not tried yet or was loaded. */
const char *ddm_pnglib_failure(void);

#endif
