/* SPDX-License-Identifier: Apache-2.0
 *
 * The recent past of each VM's records (history.h): a views listener that
 * samples numeric fields into rings, and their JSON.
 *
 * Memory: one Series per (VM, record) in h->series, keyed "VM\nNAME";
 * each holds a ring of times and, per field, a ring of values of the same
 * length (NaN where a sample lacked the field).
 */
#include "web/history.h"

#include <math.h>
#include <string.h>

#include "core/views/jq.h"
#include "web/view_json.h"

typedef struct Series {
    char *vm, *name;
    gint64 last_ms;        /* monotonic time of the last sample */
    gint64 viewed_ms;      /* monotonic time of the last look (or creation) */
    guint n, head;         /* samples kept; the index of the oldest */
    gint64 *t_ms;          /* real time of each sample, ms since the epoch */
    GPtrArray *keys;       /* char*, in the order first seen */
    GPtrArray *values;     /* double[DDM_WEB_HISTORY_SAMPLES] per key */
} Series;

struct DdmWebHistory {
    DdmViews *views;
    guint listener;
    GHashTable *series;    /* "VM\nNAME" -> Series* */
    GHashTable *per_vm;    /* VM key (owned) -> GUINT count of its series */
    gint64 (*now_us)(void);
};

static gint64 now_ms(const DdmWebHistory *h)
{
    return h->now_us() / 1000;
}

static void count_vm(DdmWebHistory *h, const char *vm, int delta)
{
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(h->per_vm, vm));
    n = (guint)((int)n + delta);
    if (n == 0)
        g_hash_table_remove(h->per_vm, vm);
    else
        g_hash_table_insert(h->per_vm, g_strdup(vm), GUINT_TO_POINTER(n));
}

static void drop_series(DdmWebHistory *h, const char *id)
{
    Series *s = g_hash_table_lookup(h->series, id);
    if (s == NULL)
        return;
    count_vm(h, s->vm, -1);
    g_hash_table_remove(h->series, id);
}

/* Room for one more series: TRUE if there is, or if the least recently
 * looked-at one, unlooked-at for DDM_WEB_HISTORY_KEEP_S, made way. */
static gboolean make_room(DdmWebHistory *h, gint64 now)
{
    if (g_hash_table_size(h->series) < DDM_WEB_HISTORY_MAX_VIEWS)
        return TRUE;
    GHashTableIter it;
    gpointer key, value;
    const char *oldest = NULL;
    gint64 oldest_ms = G_MAXINT64;
    g_hash_table_iter_init(&it, h->series);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        const Series *s = value;
        if (s->viewed_ms < oldest_ms) {
            oldest_ms = s->viewed_ms;
            oldest = key;
        }
    }
    if (oldest == NULL || now - oldest_ms < DDM_WEB_HISTORY_KEEP_S * 1000)
        return FALSE;
    g_autofree char *id = g_strdup(oldest);
    drop_series(h, id);
    return TRUE;
}

static void series_free(gpointer p)
{
    Series *s = p;
    g_free(s->vm);
    g_free(s->name);
    g_free(s->t_ms);
    g_ptr_array_unref(s->keys);
    g_ptr_array_unref(s->values);
    g_free(s);
}

static double *new_column(void)
{
    double *col = g_new(double, DDM_WEB_HISTORY_SAMPLES);
    for (guint i = 0; i < DDM_WEB_HISTORY_SAMPLES; i++)
        col[i] = NAN;
    return col;
}

/* Sample the numeric fields of record @v into @s. */
static void series_add(Series *s, ddm_view *v)
{
    g_autoptr(JsonNode) node = ddm_web_view_json(v, FALSE);
    JsonObject *o = json_node_get_object(node);
    JsonObject *fields = json_object_has_member(o, "fields") ? json_object_get_object_member(o, "fields")
                                                             : NULL;
    if (fields == NULL)
        return;
    guint slot;
    if (s->n < DDM_WEB_HISTORY_SAMPLES) {
        slot = (s->head + s->n) % DDM_WEB_HISTORY_SAMPLES;
        s->n++;
    } else {
        slot = s->head;
        s->head = (s->head + 1) % DDM_WEB_HISTORY_SAMPLES;
    }
    s->t_ms[slot] = g_get_real_time() / 1000;
    for (guint k = 0; k < s->values->len; k++)
        ((double *)s->values->pdata[k])[slot] = NAN;
    GList *members = json_object_get_members(fields);
    for (GList *l = members; l != NULL; l = l->next) {
        JsonNode *f = json_object_get_member(fields, l->data);
        if (!JSON_NODE_HOLDS_VALUE(f))
            continue;
        GType t = json_node_get_value_type(f);
        if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE)
            continue;
        guint k = 0;
        while (k < s->keys->len && strcmp(s->keys->pdata[k], l->data) != 0)
            k++;
        if (k == s->keys->len) {
            if (s->keys->len >= DDM_WEB_HISTORY_MAX_FIELDS)
                continue;
            g_ptr_array_add(s->keys, g_strdup(l->data));
            g_ptr_array_add(s->values, new_column());
        }
        ((double *)s->values->pdata[k])[slot] = json_node_get_double(f);
    }
    g_list_free(members);
}

static void on_change(ddm_view *v, DdmViewChange change, gpointer ud)
{
    DdmWebHistory *h = ud;
    const char *vm = ddm_view_vm_key(v);
    if (vm == NULL || ddm_view_kind_of(v) != DDM_VIEW_RECORD)
        return;
    g_autofree char *id = g_strdup_printf("%s\n%s", vm, ddm_view_name(v));
    if (change == DDM_VIEW_REMOVED) {
        drop_series(h, id);
        return;
    }
    if (change != DDM_VIEW_CHANGED)
        return;
    Series *s = g_hash_table_lookup(h->series, id);
    gint64 now = now_ms(h);
    if (s == NULL) {
        if (GPOINTER_TO_UINT(g_hash_table_lookup(h->per_vm, vm)) >= DDM_WEB_HISTORY_MAX_PER_VM ||
            !make_room(h, now))
            return;
        s = g_new0(Series, 1);
        s->viewed_ms = now;
        count_vm(h, vm, +1);
        s->vm = g_strdup(vm);
        s->name = g_strdup(ddm_view_name(v));
        s->t_ms = g_new0(gint64, DDM_WEB_HISTORY_SAMPLES);
        s->keys = g_ptr_array_new_with_free_func(g_free);
        s->values = g_ptr_array_new_with_free_func(g_free);
        g_hash_table_insert(h->series, g_steal_pointer(&id), s);
    } else if (now - s->last_ms < DDM_WEB_HISTORY_MIN_INTERVAL_MS) {
        return;
    }
    s->last_ms = now;
    series_add(s, v);
}

DdmWebHistory *ddm_web_history_new(DdmViews *views)
{
    DdmWebHistory *h = g_new0(DdmWebHistory, 1);
    h->views = views;
    h->series = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, series_free);
    h->per_vm = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    h->now_us = g_get_monotonic_time;
    h->listener = ddm_views_add_listener(views, on_change, h);
    return h;
}

void ddm_web_history_free(DdmWebHistory *h)
{
    if (h == NULL)
        return;
    ddm_views_remove_listener(h->views, h->listener);
    g_hash_table_destroy(h->series);
    g_hash_table_destroy(h->per_vm);
    g_free(h);
}

void ddm_web_history_set_clock(DdmWebHistory *h, gint64 (*now_us)(void))
{
    h->now_us = now_us != NULL ? now_us : g_get_monotonic_time;
}

JsonNode *ddm_web_history_json(DdmWebHistory *h, const char *vm_key, const char *name)
{
    g_autofree char *id = g_strdup_printf("%s\n%s", vm_key, name);
    Series *s = g_hash_table_lookup(h->series, id);
    if (s == NULL)
        return NULL;
    s->viewed_ms = now_ms(h);
    JsonObject *o = json_object_new();
    json_object_set_int_member(o, "schema", DDM_WEB_API_SCHEMA);
    json_object_set_string_member(o, "vm", s->vm);
    json_object_set_string_member(o, "name", s->name);
    JsonArray *t = json_array_new();
    for (guint i = 0; i < s->n; i++)
        json_array_add_double_element(t, s->t_ms[(s->head + i) % DDM_WEB_HISTORY_SAMPLES] / 1000.0);
    json_object_set_array_member(o, "t", t);
    JsonObject *fo = json_object_new();
    for (guint k = 0; k < s->keys->len; k++) {
        const double *col = s->values->pdata[k];
        JsonArray *a = json_array_new();
        for (guint i = 0; i < s->n; i++) {
            double x = col[(s->head + i) % DDM_WEB_HISTORY_SAMPLES];
            if (isnan(x))
                json_array_add_null_element(a);
            else if (x == floor(x) && fabs(x) < 9007199254740992.0)
                json_array_add_int_element(a, (gint64)x);
            else
                json_array_add_double_element(a, x);
        }
        json_object_set_array_member(fo, s->keys->pdata[k], a);
    }
    json_object_set_object_member(o, "fields", fo);
    JsonNode *n = json_node_init_object(json_node_alloc(), o);
    json_object_unref(o);
    return n;
}
