/* SPDX-License-Identifier: Apache-2.0
 *
 * Valid UTF-8 cut to a byte budget (text_cut.h).
 */
#include "core/views/text_cut.h"

#include <string.h>

char *ddm_utf8_cut(const char *s, gsize max)
{
    char *v = g_utf8_make_valid(s != NULL ? s : "", -1);
    gsize len = strlen(v);
    if (len > max) {
        gsize end = max;
        while (end > 0 && (((guchar)v[end]) & 0xC0) == 0x80)
            end--; /* back to the start of the character cut in two */
        v[end] = '\0';
    }
    return v;
}
