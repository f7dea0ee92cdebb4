/* SPDX-License-Identifier: Apache-2.0
 *
 * The plugins' one parser of unsigned numbers in text: command options
 * (`--buffer 8M`, `--top 20`) and the numbers of file headers (a .trace's
 * method ids, thread ids, versions). libc only.
 */
#ifndef DDM_PLUGINS_COMMON_NUMPARSE_H
#define DDM_PLUGINS_COMMON_NUMPARSE_H

#include <stdint.h>

enum {
    NUM_C_BASES = 1, /* also 0x hex and 0 octal, as strtoull base 0; else decimal only */
    NUM_SUFFIX = 2,  /* a K, M or G (binary) suffix multiplies */
};

/* All of @s as a number of at most @max (after any suffix): no sign, no
 * space, no empty string. 0 with *@out set, or -1. */
int parse_number(const char *s, unsigned flags, uint64_t max, uint64_t *out);

#endif
