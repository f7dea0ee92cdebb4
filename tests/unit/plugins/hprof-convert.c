/* SPDX-License-Identifier: Apache-2.0
 *
 * hprof-convert: a file-to-file driver of plugins/hprof/hprof_stream.c for
 * tests/integration/hprof-conv-compare.sh, the way the hprof plugin will
 * use it: the input arrives in pieces of random size (1 byte to 128 KiB,
 * from a seed), the output is appended with write(2) and lengths are
 * patched with pwrite(2).
 *
 *   hprof-convert [-a] [-s SEED] IN OUT
 *     -a  ANDROID mode (check, copy); default STANDARD (as hprof-conv)
 * Exit 0 on success; 1 with hprof_stream's message on stderr otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugins/hprof/hprof_stream.h"

#define MAX_PIECE (128u * 1024u)

typedef struct {
    int fd;
    uint64_t written;
} out_file;

static int write_out(void *ud, const uint8_t *p, size_t n)
{
    out_file *o = ud;
    while (n > 0) {
        ssize_t k = write(o->fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += k;
        n -= (size_t)k;
        o->written += (uint64_t)k;
    }
    return 0;
}

static int patch_out(void *ud, uint64_t off, const uint8_t *p, size_t n)
{
    out_file *o = ud;
    if (off + n > o->written) {
        fprintf(stderr, "hprof-convert: patch at %llu+%zu past the %llu bytes written\n",
                (unsigned long long)off, n, (unsigned long long)o->written);
        return -EINVAL;
    }
    if (pwrite(o->fd, p, n, (off_t)off) != (ssize_t)n)
        return -errno;
    return 0;
}

int main(int argc, char **argv)
{
    hprof_out_format fmt = HPROF_OUT_STANDARD;
    uint64_t seed = 1;
    static uint8_t piece[MAX_PIECE];
    out_file out = { -1, 0 };
    hprof_stream *s;
    FILE *in;
    int opt, rc = 0;

    while ((opt = getopt(argc, argv, "as:")) != -1) {
        if (opt == 'a')
            fmt = HPROF_OUT_ANDROID;
        else if (opt == 's')
            seed = strtoull(optarg, NULL, 0) | 1;
        else
            return 2;
    }
    if (argc - optind != 2) {
        fprintf(stderr, "usage: %s [-a] [-s SEED] IN OUT\n", argv[0]);
        return 2;
    }
    in = fopen(argv[optind], "rb");
    out.fd = open(argv[optind + 1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!in || out.fd < 0) {
        perror("hprof-convert: open");
        return 1;
    }
    s = hprof_stream_new(fmt, write_out, patch_out, &out);
    if (!s) {
        perror("hprof-convert: hprof_stream_new");
        return 1;
    }
    for (;;) {
        size_t want, got;
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        want = 1 + (size_t)(seed % MAX_PIECE);
        if (seed % 4 == 0)
            want = 1 + want % 64; /* small pieces too */
        got = fread(piece, 1, want, in);
        if (got == 0)
            break;
        rc = hprof_stream_feed(s, piece, got);
        if (rc != 0)
            break;
    }
    if (rc == 0 && ferror(in)) {
        perror("hprof-convert: read");
        rc = -EIO;
    } else if (rc == 0) {
        rc = hprof_stream_finish(s);
    }
    if (rc != 0)
        fprintf(stderr, "hprof-convert: %s\n",
                hprof_stream_error(s) ? hprof_stream_error(s) : strerror(-rc));
    else if (hprof_stream_bytes_out(s) != out.written)
        fprintf(stderr, "hprof-convert: %llu bytes out but %llu written\n",
                (unsigned long long)hprof_stream_bytes_out(s), (unsigned long long)out.written), rc = -1;
    hprof_stream_free(s);
    fclose(in);
    if (close(out.fd) != 0 && rc == 0)
        rc = -errno;
    return rc == 0 ? 0 : 1;
}
