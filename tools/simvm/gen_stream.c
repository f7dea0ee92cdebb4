/* SPDX-License-Identifier: Apache-2.0
 *
 * A generated payload streamed into a buffer or a device file, with its
 * sha256 (gen_stream.h).
 */
#include "gen_stream.h"

#include <errno.h>
#include <gio/gio.h>
#include <stdio.h>

#define FILE_STEP ((size_t)256 << 10)

static size_t read_hprof(void *g, uint8_t *buf, size_t cap)
{
    return hprof_gen_read(g, buf, cap);
}

static uint64_t offset_hprof(const void *g)
{
    return hprof_gen_offset(g);
}

static size_t read_trace(void *g, uint8_t *buf, size_t cap)
{
    return trace_gen_read(g, buf, cap);
}

static uint64_t offset_trace(const void *g)
{
    return trace_gen_offset(g);
}

SimGenSource sim_gen_hprof(hprof_gen *g)
{
    return (SimGenSource){g, read_hprof, offset_hprof};
}

SimGenSource sim_gen_trace(trace_gen *g)
{
    return (SimGenSource){g, read_trace, offset_trace};
}

size_t sim_gen_fill(const SimGenSource *src, uint64_t limit, GChecksum *sha, uint8_t *buf, size_t cap)
{
    size_t done = 0;

    while (done < cap && src->offset(src->gen) < limit) {
        uint64_t left = limit - src->offset(src->gen);
        size_t n = src->read(src->gen, buf + done, (size_t)MIN(left, (uint64_t)(cap - done)));
        if (n == 0)
            break;
        g_checksum_update(sha, buf + done, n);
        done += n;
    }
    return done;
}

gboolean sim_gen_write_file(const SimGenSource *src, const char *path, char sha256[65], GError **error)
{
    GChecksum *sha;
    uint8_t *buf;
    FILE *f = NULL;
    size_t n;
    gboolean ok = TRUE;

    if (path && !(f = fopen(path, "wb"))) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "%s: %s", path, g_strerror(errno));
        return FALSE;
    }
    sha = g_checksum_new(G_CHECKSUM_SHA256);
    buf = g_malloc(FILE_STEP);
    while (ok && (n = src->read(src->gen, buf, FILE_STEP)) > 0) {
        g_checksum_update(sha, buf, n);
        if (f && fwrite(buf, 1, n, f) != n) {
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "%s: %s", path, g_strerror(errno));
            ok = FALSE;
        }
    }
    if (f && fclose(f) != 0 && ok) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "%s: %s", path, g_strerror(errno));
        ok = FALSE;
    }
    g_strlcpy(sha256, g_checksum_get_string(sha), 65);
    g_free(buf);
    g_checksum_free(sha);
    return ok;
}
