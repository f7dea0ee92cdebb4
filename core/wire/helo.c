/* SPDX-License-Identifier: Apache-2.0
 *
 * The payloads the core itself understands (ddm.h): the HELO request and
 * reply, the FEAT reply and the FAIL chunk.
 *
 * Invariants: every length from the wire is checked against the bytes left
 * before anything is allocated for it (a huge vmIdentLen or FEAT count
 * fails cleanly), and a FEAT list is kept to a cap of names and of units a
 * name: the rest is walked, not allocated. HELO's optional tails are parsed by remaining length: a
 * tail that does not fit ends the known fields and what is left is counted
 * in DdmHelo.trailing. Strings come out as valid UTF-8 (bytes.h replaces
 * bad UTF-16) owned by glib (g_free).
 *
 * Non-goals: deciding what a HELO means (session code does that).
 */
#include "core/wire/ddm.h"

#include <string.h>

#include <ddmon/bytes.h>

/* @nbytes of UTF-16BE at @p as a new g_malloc()ed UTF-8 string (bytes.h's
 * rules), converted straight into glib's memory rather than into a
 * malloc()ed string that is then copied and freed. */
static char *gstr16(const uint8_t *p, size_t nbytes)
{
    const size_t need = ddm_utf16be_to_utf8(p, nbytes, NULL, 0);
    char *g = g_malloc(need + 1);
    ddm_utf16be_to_utf8(p, nbytes, g, need + 1);
    return g;
}

/* ddm_read_str16, but g_malloc()ed: NULL (r->overrun set) when @units do
 * not fit in what is left. */
static char *read_gstr16(ddm_reader *r, uint32_t units)
{
    const uint64_t n = (uint64_t)units * 2; /* no wrap where size_t is 32 bits */
    const uint8_t *p = n <= ddm_reader_remaining(r) ? ddm_read_bytes(r, (size_t)n) : NULL;
    if (!p)
        r->overrun = 1;
    return p ? gstr16(p, (size_t)n) : NULL;
}

/* Read an lstr if one fits entirely; otherwise leave @r untouched. */
static gboolean try_lstr(ddm_reader *r, char **out)
{
    size_t save = r->pos;
    uint32_t units;
    char *s;

    if (ddm_reader_remaining(r) < 4)
        return FALSE;
    units = ddm_read_u4(r);
    if ((uint64_t)units * 2 > ddm_reader_remaining(r)) {
        r->pos = save;
        return FALSE;
    }
    s = read_gstr16(r, units);
    if (!s) {
        r->pos = save;
        return FALSE;
    }
    *out = s;
    return TRUE;
}

static void helo_init(DdmHelo *h)
{
    memset(h, 0, sizeof *h);
    h->user_id = -1;
    h->native_debuggable = -1;
}

gboolean ddm_helo_parse(const uint8_t *data, size_t len, DdmHelo *out)
{
    ddm_reader r;
    uint32_t ident_len, name_len;

    g_return_val_if_fail(out != NULL, FALSE);
    helo_init(out);
    ddm_reader_init(&r, data, len);
    out->protocol_version = ddm_read_u4(&r);
    out->pid = ddm_read_u4(&r);
    ident_len = ddm_read_u4(&r);
    name_len = ddm_read_u4(&r);
    out->vm_ident = read_gstr16(&r, ident_len);
    out->app_name = read_gstr16(&r, name_len);
    if (!ddm_reader_ok(&r)) {
        g_debug("HELO reply truncated (%zu bytes)", len);
        ddm_helo_clear(out);
        return FALSE;
    }

    /* optional tails, each present only if it fits */
    if (ddm_reader_remaining(&r) >= 4) {
        out->user_id = ddm_read_i4(&r);
        if (try_lstr(&r, &out->abi) && try_lstr(&r, &out->jvm_flags) &&
            ddm_reader_remaining(&r) >= 1) {
            out->native_debuggable = ddm_read_u1(&r);
            if (try_lstr(&r, &out->package_name) && ddm_reader_remaining(&r) >= 4)
                out->boot_stage = ddm_read_u4(&r);
        }
    }
    out->trailing = ddm_reader_remaining(&r);
    return TRUE;
}

void ddm_helo_clear(DdmHelo *h)
{
    if (!h)
        return;
    g_free(h->vm_ident);
    g_free(h->app_name);
    g_free(h->abi);
    g_free(h->jvm_flags);
    g_free(h->package_name);
    helo_init(h);
}

void ddm_helo_request(uint8_t out[4], uint32_t server_version)
{
    ddm_put_u4(out, server_version);
}

/* The UTF-16 units of an lstr of @units at @p to decode under @max_units:
 * all of them if they fit, else @max_units, one fewer when the cut falls
 * between a high and a low surrogate. */
static uint32_t units_to_keep(const uint8_t *p, uint32_t units, uint32_t max_units)
{
    uint32_t last;
    if (units <= max_units)
        return units;
    if (max_units == 0)
        return 0;
    last = ((uint32_t)p[(max_units - 1) * 2] << 8) | p[(max_units - 1) * 2 + 1];
    return last >= 0xD800 && last <= 0xDBFF ? max_units - 1 : max_units;
}

char **ddm_feat_parse_capped(const uint8_t *data, size_t len, uint32_t max_names,
                             uint32_t max_units, DdmFeatSize *size)
{
    ddm_reader r;
    uint32_t count, i, longest = 0;
    GPtrArray *names;

    ddm_reader_init(&r, data, len);
    count = ddm_read_u4(&r);
    /* each lstr takes at least 4 bytes: bound count before allocating */
    if (!ddm_reader_ok(&r) || count > ddm_reader_remaining(&r) / 4) {
        g_debug("FEAT reply malformed (count %u, %zu bytes)", count, len);
        return NULL;
    }
    names = g_ptr_array_new_full(MIN(count, max_names) + 1, g_free);
    for (i = 0; i < count; i++) {
        uint32_t units;
        const uint8_t *p;

        if (ddm_reader_remaining(&r) < 4)
            break;
        units = ddm_read_u4(&r);
        if ((uint64_t)units * 2 > ddm_reader_remaining(&r))
            break;
        p = ddm_read_bytes(&r, (size_t)units * 2);
        longest = MAX(longest, units);
        if (i < max_names) {
            g_ptr_array_add(names, gstr16(p, (size_t)units_to_keep(p, units, max_units) * 2));
        }
    }
    if (i < count) {
        g_debug("FEAT reply: feature %u of %u malformed", i, count);
        g_ptr_array_free(names, TRUE);
        return NULL;
    }
    if (size) {
        size->count = count;
        size->longest_units = longest;
    }
    g_ptr_array_add(names, NULL);
    g_ptr_array_set_free_func(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

char **ddm_feat_parse(const uint8_t *data, size_t len)
{
    return ddm_feat_parse_capped(data, len, DDM_FEAT_NAMES_MAX, DDM_FEAT_UNITS_MAX, NULL);
}

gboolean ddm_fail_parse(const uint8_t *data, size_t len, uint32_t *code, char **msg)
{
    ddm_reader r;
    uint32_t c, units;
    char *s;

    ddm_reader_init(&r, data, len);
    c = ddm_read_u4(&r);
    units = ddm_read_u4(&r);
    s = read_gstr16(&r, units);
    if (!s || !ddm_reader_ok(&r)) {
        g_free(s);
        return FALSE;
    }
    if (code)
        *code = c;
    if (msg)
        *msg = s;
    else
        g_free(s);
    return TRUE;
}
