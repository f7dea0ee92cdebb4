/* SPDX-License-Identifier: Apache-2.0
 *
 * test-pnglib-missing: a server where libpng cannot be loaded (built with
 * its headers, but the library opened at the first image is not there;
 * plugins/common/pnglib.c, compiled here with DDM_PNG_SONAME naming a
 * library that does not exist, and this program links no libpng). The
 * failure is said once and kept; viewdebug's capture check falls back to
 * the PNG header; heap's bitmap command fails before it asks for a GC and
 * its view, declared before anything drew, is no longer made for a VM.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/common/pnglib.h"
#include "plugins/heap/bitmap_png.h"
#include "plugins/viewdebug/pngcheck.h"

/* Signature and an IHDR of @w x @h (the CRC is not what the by-hand check
 * reads; libpng would refuse a wrong one, so it is right). */
static size_t png_header(uint8_t *out, uint32_t w, uint32_t h)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    const uint8_t ihdr[] = {0, 0, 0, 13, 'I', 'H', 'D', 'R',
                            (uint8_t)(w >> 24), (uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w,
                            (uint8_t)(h >> 24), (uint8_t)(h >> 16), (uint8_t)(h >> 8), (uint8_t)h,
                            8, 3, 0, 0, 0, 0, 0, 0, 0};
    memcpy(out, sig, 8);
    memcpy(out + 8, ihdr, sizeof ihdr);
    return 8 + sizeof ihdr;
}

/* Runs first: nothing has tried to load libpng yet. */
static void test_not_tried_until_asked(void **state)
{
    (void)state;
    assert_null(ddm_pnglib_failure());
    assert_int_equal(bm_png_available(), 1); /* declaring the view loads nothing */
}

static void test_heap_bitmap_refused_with_reason(void **state)
{
    (void)state;
    char err[300] = "";
    assert_int_equal(bm_png_ready(err, sizeof err), -ENOSYS);
    assert_non_null(strstr(err, "libddmon-test-no-png.so.0"));
    assert_non_null(strstr(err, "could not be loaded"));
    assert_int_equal(bm_png_available(), 0); /* heap_views.c makes and fills no heap.bitmap */
}

static void test_failure_is_kept(void **state)
{
    (void)state;
    char a[300] = "", b[300] = "";
    assert_null(ddm_pnglib_get(a, sizeof a));
    assert_null(ddm_pnglib_get(b, sizeof b));
    assert_string_equal(a, b);
    assert_non_null(ddm_pnglib_failure());
    assert_string_equal(ddm_pnglib_failure(), a);
}

static void test_capture_checked_by_header(void **state)
{
    (void)state;
    uint8_t png[64];
    size_t n = png_header(png, 3, 2);
    uint32_t w = 0, h = 0;
    char why[300] = "";
    assert_int_equal(vd_png_size(png, n, &w, &h, why, sizeof why), 0);
    assert_int_equal(w, 3);
    assert_int_equal(h, 2);
}

static void test_capture_without_header_refused(void **state)
{
    (void)state;
    uint8_t png[64];
    size_t n = png_header(png, 3, 2);
    png[12] = 'X'; /* not IHDR */
    uint32_t w = 0, h = 0;
    char why[300] = "";
    assert_int_equal(vd_png_size(png, n, &w, &h, why, sizeof why), -1);
    assert_non_null(strstr(why, "IHDR"));
    n = png_header(png, 0, 2); /* an empty image */
    assert_int_equal(vd_png_size(png, n, &w, &h, why, sizeof why), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_tried_until_asked),
        cmocka_unit_test(test_heap_bitmap_refused_with_reason),
        cmocka_unit_test(test_failure_is_kept),
        cmocka_unit_test(test_capture_checked_by_header),
        cmocka_unit_test(test_capture_without_header_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
