/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the capture check of the viewdebug plugin
 * (plugins/viewdebug/pngcheck.c, vd_png_size): libpng reading a VM's VUOP
 * reply from memory up to its image data (by hand without libpng).
 *
 * Input: a VUOP capture payload. Invariants: a PNG that passes has the
 * signature and a size PNG allows (1..2^31-1 each way); a failure gives a
 * reason. libpng's own errors must come back through its longjmp, never
 * abort.
 */
#include <string.h>

#include "plugins/viewdebug/pngcheck.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256] = "";
    uint32_t w = 0, h = 0;
    uint8_t *copy = fuzz_dup(data, size); /* exact size: ASan sees an over-read */

    if (vd_png_size(copy, size, &w, &h, why, sizeof why) != 0) {
        FUZZ_CHECK(why[0] != 0);
    } else {
        FUZZ_CHECK(size >= 8 && copy[1] == 'P' && copy[2] == 'N' && copy[3] == 'G');
        FUZZ_CHECK(w >= 1 && h >= 1 && w <= 0x7fffffffu && h <= 0x7fffffffu);
    }
    free(copy);
    return 0;
}
