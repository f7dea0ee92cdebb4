/* SPDX-License-Identifier: Apache-2.0
 *
 * viewdebug: is a VM's capture a PNG, and of what size? libpng reads it
 * from memory up to the image data (signature, IHDR and the chunks before
 * IDAT, CRCs checked); a build without libpng, or a server where libpng
 * cannot be loaded (it is opened at the first capture: plugins/common/
 * pnglib.h), checks the signature and that an IHDR of 13 bytes with a
 * non-zero size comes first. Pure: no host
 * calls (its fuzz target is tests/fuzz/fuzz-vupng.c).
 */
#ifndef VIEWDEBUG_PNGCHECK_H
#define VIEWDEBUG_PNGCHECK_H

#include <stddef.h>
#include <stdint.h>

/** Width and height of the PNG in @data (@len bytes, borrowed); 0, or -1
 *  with a reason in @why. */
int vd_png_size(const uint8_t *data, size_t len, uint32_t *width, uint32_t *height, char *why,
                size_t why_len);

#endif /* VIEWDEBUG_PNGCHECK_H */
