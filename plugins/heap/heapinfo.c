/* SPDX-License-Identifier: Apache-2.0
 *
 * heapinfo: HPIF data parsing; see heapinfo.h.
 */
#include "heapinfo.h"

#include <errno.h>
#include <string.h>

#include <ddmon/bytes.h>

const char *hpif_when_name(unsigned when)
{
    static const char *const names[] = { "never", "now", "next GC", "every GC" };
    return when < 4 ? names[when] : "?";
}

int hpif_parse(const uint8_t *data, size_t len, hpif_data *out)
{
    ddm_reader r;
    size_t fit, i;

    memset(out, 0, sizeof(*out));
    ddm_reader_init(&r, data, len);
    out->declared = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r))
        return -EINVAL;
    fit = ddm_reader_remaining(&r) / HPIF_ENTRY_LEN;
    if (fit > out->declared)
        fit = out->declared;
    if (fit > HPIF_MAX_HEAPS)
        fit = HPIF_MAX_HEAPS;
    for (i = 0; i < fit; i++) {
        hpif_entry *e = &out->heaps[i];
        e->heap_id = ddm_read_u4(&r);
        e->timestamp_ms = ddm_read_u8(&r);
        e->reason = ddm_read_u1(&r);
        e->max_bytes = ddm_read_u4(&r);
        e->size_bytes = ddm_read_u4(&r);
        e->allocated_bytes = ddm_read_u4(&r);
        e->allocated_objects = ddm_read_u4(&r);
    }
    if (!ddm_reader_ok(&r)) /* cannot happen: fit was computed from the length */
        return -EINVAL;
    out->n = fit;
    return fit == out->declared ? 0 : 1;
}
