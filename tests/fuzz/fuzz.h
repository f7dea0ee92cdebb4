/* SPDX-License-Identifier: Apache-2.0
 *
 * What every fuzz target (tests/fuzz/fuzz-NAME.c) and the replay driver
 * share: the libFuzzer entry point's prototype, a cursor that takes sizes
 * and selectors from the input's front, and FUZZ_CHECK for invariants.
 *
 * A target exports LLVMFuzzerTestOneInput and nothing else; it is linked
 * either with replay.c (make check: seeds and deterministic mutations) or
 * with libFuzzer (configure --enable-fuzzing). A broken invariant aborts,
 * so both drivers report it as a crash (doc/fuzzing.md).
 */
#ifndef DDM_TESTS_FUZZ_H
#define DDM_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** Abort (a crash to either driver) when @cond, an invariant, is false. */
#define FUZZ_CHECK(cond)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

/** The unread rest of an input. */
typedef struct FuzzIn {
    const uint8_t *p;
    size_t n;
} FuzzIn;

static inline FuzzIn fuzz_in(const uint8_t *data, size_t size)
{
    FuzzIn in = {data, size};
    return in;
}

/** The next byte, or 0 once the input is used up. */
static inline uint8_t fuzz_u8(FuzzIn *in)
{
    uint8_t b;
    if (in->n == 0)
        return 0;
    b = in->p[0];
    in->p++;
    in->n--;
    return b;
}

/** The next big-endian u2 (missing bytes read as 0). */
static inline uint16_t fuzz_u16(FuzzIn *in)
{
    uint16_t v = (uint16_t)(fuzz_u8(in) << 8);
    return (uint16_t)(v | fuzz_u8(in));
}

/** Take up to @want bytes: *@out points at them (borrowed); returns how many. */
static inline size_t fuzz_take(FuzzIn *in, size_t want, const uint8_t **out)
{
    size_t n = want < in->n ? want : in->n;
    *out = in->p;
    in->p += n;
    in->n -= n;
    return n;
}

/** A copy of @n bytes at @p in a buffer of exactly @n bytes, so that
 *  AddressSanitizer sees any read past them (the caller frees it). */
static inline uint8_t *fuzz_dup(const uint8_t *p, size_t n)
{
    uint8_t *d = calloc(1, n ? n : 1);
    if (!d)
        abort();
    if (n)
        memcpy(d, p, n);
    return d;
}

#endif /* DDM_TESTS_FUZZ_H */
