/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the streaming HPROF checker and converter
 * (plugins/hprof/hprof_stream.c), in both modes, fed in pieces.
 *
 * Input: one control byte, then the dump. Control bit 0: pieces of a fixed
 * size (0) or of sizes that vary piece by piece (1); bits 1-7: the size,
 * 1 to 128. Invariants: ANDROID output is a prefix of the input, byte for
 * byte; STANDARD output is never longer than the input and is patched only
 * inside what was already written; a failure is -EPROTO with a message
 * naming a byte offset; whatever STANDARD accepts, ANDROID accepts too;
 * every input byte is consumed before success.
 */
#include <errno.h>
#include <string.h>

#include "plugins/hprof/hprof_stream.h"
#include "tests/fuzz/fuzz.h"

typedef struct {
    const uint8_t *input;   /* ANDROID: what the output must repeat */
    size_t input_len;
    uint64_t written;
} fuzz_sink;

static int write_android(void *ud, const uint8_t *p, size_t n)
{
    fuzz_sink *k = ud;
    FUZZ_CHECK(n > 0);
    FUZZ_CHECK(k->written + n <= k->input_len);
    FUZZ_CHECK(memcmp(p, k->input + k->written, n) == 0);
    k->written += n;
    return 0;
}

static int write_discard(void *ud, const uint8_t *p, size_t n)
{
    fuzz_sink *k = ud;
    (void)p;
    FUZZ_CHECK(n > 0);
    k->written += n;
    FUZZ_CHECK(k->written <= k->input_len);
    return 0;
}

static int patch_check(void *ud, uint64_t off, const uint8_t *p, size_t n)
{
    fuzz_sink *k = ud;
    (void)p;
    FUZZ_CHECK(n == 4);
    FUZZ_CHECK(off < k->written && off + n <= k->written);
    return 0;
}

static int run(hprof_out_format fmt, const uint8_t *data, size_t size, unsigned piece, int vary)
{
    fuzz_sink k = { data, size, 0 };
    hprof_stream *s = hprof_stream_new(fmt, fmt == HPROF_OUT_ANDROID ? write_android : write_discard,
                                       patch_check, &k);
    size_t off = 0, i = 0;
    int rc = 0;
    if (!s)
        abort();
    while (off < size && rc == 0) {
        size_t n = vary ? 1 + (i++ * piece + 7) % 97 : piece;
        if (n > size - off)
            n = size - off;
        rc = hprof_stream_feed(s, data + off, n);
        off += n;
        if (rc == 0)
            FUZZ_CHECK(hprof_stream_bytes_in(s) == off);
        FUZZ_CHECK(hprof_stream_bytes_out(s) == k.written);
    }
    if (rc == 0)
        rc = hprof_stream_finish(s);
    if (rc == 0) {
        FUZZ_CHECK(hprof_stream_error(s) == NULL);
        FUZZ_CHECK(hprof_stream_bytes_in(s) == size);
        if (fmt == HPROF_OUT_ANDROID)
            FUZZ_CHECK(k.written == size);
    } else {
        const char *msg = hprof_stream_error(s);
        FUZZ_CHECK(rc == -EPROTO);
        FUZZ_CHECK(msg != NULL && strstr(msg, "byte ") != NULL);
        FUZZ_CHECK(hprof_stream_feed(s, data, size ? 1 : 0) == rc); /* sticky */
    }
    hprof_stream_free(s);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned piece;
    int vary, android, standard;
    if (size < 1)
        return 0;
    vary = data[0] & 1;
    piece = (unsigned)(data[0] >> 1) + 1;
    android = run(HPROF_OUT_ANDROID, data + 1, size - 1, piece, vary);
    standard = run(HPROF_OUT_STANDARD, data + 1, size - 1, piece, vary);
    if (standard == 0)
        FUZZ_CHECK(android == 0);
    return 0;
}
