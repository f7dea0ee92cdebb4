/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the VM list's jq document written as text from the store
 * (ddm_jq_table_with_figures_text, core/views/jq_text.c), whose strings
 * are escaped by hand, against json-glib: the same views' server JSON
 * (ddm_view_to_json) converted by the CLI's ddm_jq_vms (cli/jsonout.c)
 * and written by json-glib's generator.
 *
 * Input: 8 bytes, a double in the machine's byte order, written alone by
 * ddm_json_text_double; then u1 columns (mod 9), each: u1 type (mod 4), u1 length and the
 * name's bytes; u1 rows (mod 17), each cell: u1 selector (0 null, else a
 * value of the column's type: a string of u1 length and bytes, or when
 * the selector is 3 the key "vmN" of a record below, N = the next u1 mod 4;
 * an int of 4 bytes; a double, a 4-byte int over 1 + u1, NaN when the
 * selector is 2; a bool); then records (mod 9), each: u1 key (below 0x80:
 * "vmN", N mod 4; else a string of u1 length and bytes) and fields (mod 9),
 * each: u1 length and the key's bytes, u1 type (mod 4) and a value as
 * above. The store makes every string valid UTF-8 and refuses some names;
 * refused views are left out.
 * Invariants: the double's text is null when it is not finite, else one
 * number of RFC 8259's strict grammar that reads back as the same double,
 * and what ddm_ctl_encode writes for it;
 * the two texts are the same bytes, have no raw byte below 0x20, and
 * json-glib reads the text as one object.
 */
#include <math.h>
#include <string.h>

#include "cli/jsonout.h"
#include "core/views/jq_text.h"
#include "core/views/views.h"
#include "core/wire/ctlproto.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/json_number.h"

/* A string of u1 length and bytes (NUL ends it early), or "vmN". (transfer full) */
static char *take_string(FuzzIn *in, gboolean vm_key)
{
    if (vm_key)
        return g_strdup_printf("vm%u", fuzz_u8(in) % 4u);
    const uint8_t *p = NULL;
    size_t n = fuzz_take(in, fuzz_u8(in), &p);
    return g_strndup((const char *)p, n);
}

static double take_double(FuzzIn *in)
{
    int32_t i = (int32_t)(((uint32_t)fuzz_u16(in) << 16) | fuzz_u16(in));
    return (double)i / (1.0 + fuzz_u8(in));
}

static void take_cell(FuzzIn *in, ddm_view *v, ddm_value_type type)
{
    uint8_t sel = fuzz_u8(in);
    if (sel == 0) {
        ddm_view_cell_str(v, NULL);
        return;
    }
    switch (type) {
    case DDM_VAL_STR: {
        g_autofree char *s = take_string(in, sel == 3);
        ddm_view_cell_str(v, s);
        break;
    }
    case DDM_VAL_INT:
        ddm_view_cell_int(v, (int64_t)(int32_t)(((uint32_t)fuzz_u16(in) << 16) | fuzz_u16(in)) * 1000003);
        break;
    case DDM_VAL_DOUBLE: ddm_view_cell_double(v, sel == 2 ? NAN : take_double(in)); break;
    default: ddm_view_cell_bool(v, sel & 1); break;
    }
}

static void take_field(FuzzIn *in, ddm_view *v)
{
    g_autofree char *key = take_string(in, FALSE);
    uint8_t type = fuzz_u8(in) % 4u;
    uint8_t sel = fuzz_u8(in);
    switch (type) {
    case 0: {
        g_autofree char *s = take_string(in, sel == 3);
        ddm_view_field_str(v, key, sel == 0 ? NULL : s);
        break;
    }
    case 1: ddm_view_field_int(v, key, (int64_t)(int32_t)(((uint32_t)fuzz_u16(in) << 16) | fuzz_u16(in))); break;
    case 2: ddm_view_field_double(v, key, sel == 2 ? NAN : take_double(in)); break;
    default: ddm_view_field_bool(v, key, sel & 1); break;
    }
}

static void check_double(FuzzIn *in)
{
    const uint8_t *p = NULL;
    if (fuzz_take(in, sizeof(double), &p) < sizeof(double))
        return;
    double d;
    memcpy(&d, p, sizeof d);
    GString *s = g_string_new(NULL);
    ddm_json_text_double(s, d);
    if (!isfinite(d))
        FUZZ_CHECK(strcmp(s->str, "null") == 0);
    else {
        FUZZ_CHECK(json_number_is_strict(s->str, s->len));
        double back = g_ascii_strtod(s->str, NULL);
        FUZZ_CHECK(back == d && signbit(back) == signbit(d));
        JsonNode *n = json_node_init_double(json_node_alloc(), d); /* ddm_ctl_encode writes the same */
        gsize len = 0;
        char *line = ddm_ctl_encode(n, &len);
        FUZZ_CHECK(len == s->len + 1 && memcmp(line, s->str, s->len) == 0);
        g_free(line);
        json_node_unref(n);
    }
    g_string_free(s, TRUE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    check_double(&in);
    DdmViews *store = ddm_views_new();
    ddm_view *table = ddm_views_create(store, "ddmon", NULL, "vms", DDM_VIEW_TABLE, "Virtual machines");
    FUZZ_CHECK(table != NULL);

    guint ncols = fuzz_u8(&in) % 9u;
    ddm_column cols[8];
    char *names[8];
    for (guint i = 0; i < ncols; i++) {
        cols[i].type = (ddm_value_type)(fuzz_u8(&in) % 4u);
        names[i] = take_string(&in, FALSE);
        cols[i].name = names[i];
        cols[i].unit = (i & 1) ? "%" : NULL;
    }
    gboolean have_cols = ddm_view_set_columns(table, cols, ncols) == 0;
    for (guint i = 0; i < ncols; i++)
        g_free(names[i]);
    if (!have_cols)
        ncols = 0;
    ddm_view_begin(table);
    guint nrows = fuzz_u8(&in) % 17u;
    for (guint r = 0; r < nrows && ncols > 0; r++) {
        ddm_view_row(table);
        for (guint k = 0; k < ncols; k++)
            take_cell(&in, table, cols[k].type);
    }
    (void)ddm_view_commit(table); /* refused: the empty content stays */

    guint nrecs = fuzz_u8(&in) % 9u;
    for (guint i = 0; i < nrecs; i++) {
        uint8_t sel = fuzz_u8(&in);
        g_autofree char *key = take_string(&in, sel < 0x80);
        ddm_view *h = ddm_views_create(store, "ddmon", key, "headline", DDM_VIEW_RECORD, "Headline figures");
        guint nf = fuzz_u8(&in) % 9u;
        if (h != NULL)
            ddm_view_begin(h);
        for (guint f = 0; f < nf && h != NULL; f++)
            take_field(&in, h);
        if (h != NULL)
            (void)ddm_view_commit(h);
    }

    GPtrArray *heads = ddm_views_list_named(store, "headline");
    GString *got = g_string_new(NULL);
    ddm_jq_table_with_figures_text(got, table, heads);

    JsonNode *t = ddm_view_to_json(table, FALSE);
    JsonArray *a = json_array_new();
    for (guint i = 0; i < heads->len; i++)
        json_array_add_element(a, ddm_view_to_json(g_ptr_array_index(heads, i), FALSE));
    JsonNode *hn = json_node_init_array(json_node_alloc(), a);
    json_array_unref(a);
    JsonNode *doc = ddm_jq_vms(t, hn, TRUE);
    gsize len = 0;
    char *want = ddm_ctl_encode(doc, &len);
    FUZZ_CHECK(len == got->len + 1 && memcmp(want, got->str, got->len) == 0);
    for (gsize i = 0; i < got->len; i++)
        FUZZ_CHECK((unsigned char)got->str[i] >= 0x20);

    GError *error = NULL;
    JsonNode *parsed = ddm_ctl_parse_object(got->str, got->len, &error);
    FUZZ_CHECK(parsed != NULL);
    json_node_unref(parsed);

    g_free(want);
    json_node_unref(doc);
    json_node_unref(hn);
    json_node_unref(t);
    g_string_free(got, TRUE);
    g_ptr_array_unref(heads);
    ddm_views_free(store);
    return 0;
}
