/* SPDX-License-Identifier: Apache-2.0
 *
 * parse_number (numparse.h): strtoull with the checks every caller needs
 * (whole string, no sign, range, optional K/M/G).
 */
#include "build-config.h"

#include <errno.h>
#include <stdlib.h>

#include "numparse.h"

int parse_number(const char *s, unsigned flags, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;
    uint64_t mul = 1;
    if (!*s || *s == '-' || *s == '+' || *s == ' ' || *s == '\t')
        return -1;
    errno = 0;
    v = strtoull(s, &end, (flags & NUM_C_BASES) ? 0 : 10);
    if (errno || end == s)
        return -1;
    if (flags & NUM_SUFFIX) {
        if (*end == 'k' || *end == 'K')
            mul = 1u << 10;
        else if (*end == 'm' || *end == 'M')
            mul = 1u << 20;
        else if (*end == 'g' || *end == 'G')
            mul = 1u << 30;
        if (mul > 1)
            end++;
    }
    if (*end || v > max / mul)
        return -1;
    *out = v * mul;
    return 0;
}
