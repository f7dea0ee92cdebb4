/* SPDX-License-Identifier: Apache-2.0
 *
 * Storage of a view's content (see views-private.h): column sets (shared
 * by reference count between a view's schema and its contents), and the
 * Content that holds a table's cells, a record's fields or a blob, with
 * its strings in a chain of blocks under the DDM_VIEW_MAX_STRING and
 * DDM_VIEW_MAX_STRING_BYTES caps. Blocks start at STRING_BLOCK_FIRST bytes
 * and double up to STRING_BLOCK_MAX, so the many small per-VM views (a
 * record of a few fields) cost about their strings' size; a big table
 * costs at most twice its strings plus one block header per doubling.
 */
#include <string.h>

#include <ddmon/bytes.h>

#include "core/views/views-private.h"
#include "core/wire/seeded_hash.h"

#define STRING_BLOCK_FIRST ((gsize)128)
#define STRING_BLOCK_MAX ((gsize)64 << 10)
/* A sealed content with at most this many bytes of strings keeps them in one block. */
#define STRINGS_COMPACT_MAX ((gsize)16 << 10)
/* A record looks its fields up by a linear scan up to this many, then by a hash. */
#define FIELDS_WITHOUT_INDEX 16u

struct StringBlock {
    StringBlock *next; /* older block */
    gsize size;        /* bytes in data */
    gsize used;
    char data[];
};

/* The header in front of a shared column array. */
typedef struct ColumnsShared {
    gint refs;
    guint n : 31;        /* at most DDM_VIEW_MAX_COLUMNS */
    guint interned : 1; /* it is in interned_columns */
} ColumnsShared;

/* Column sets by content (a set of ColumnsShared, hashed and compared by
 * their columns' names, types and units, a NULL unit being ""; borrowed:
 * a set leaves when its last copy goes), so the same table of every VM
 * (threads, heap, ...) shares one set. Hashing the columns themselves
 * costs no string per call: formatting a key with printf for every view
 * created was 10.5% of a server's instructions at start-up (issue 16).
 * Views live on the main loop only. */
static GHashTable *interned_columns;

static ColumnsShared *columns_shared(const Column *cols)
{
    return (ColumnsShared *)(void *)((char *)cols - sizeof(ColumnsShared));
}

static Column *shared_columns(const ColumnsShared *sh)
{
    return (Column *)(void *)(sh + 1);
}

static const char *unit_or_empty(const char *unit)
{
    return unit ? unit : "";
}

static guint columns_set_hash(gconstpointer p)
{
    const ColumnsShared *sh = p;
    const Column *cols = shared_columns(sh);
    guint h = sh->n;

    for (guint i = 0; i < sh->n; i++) {
        h = h * 31u + ddm_str_hash(cols[i].name);
        h = h * 31u + (guint)cols[i].type;
        h = h * 31u + ddm_str_hash(unit_or_empty(cols[i].unit));
    }
    return h;
}

static gboolean columns_set_equal(gconstpointer pa, gconstpointer pb)
{
    const ColumnsShared *a = pa, *b = pb;
    const Column *ca = shared_columns(a), *cb = shared_columns(b);

    if (a->n != b->n)
        return FALSE;
    for (guint i = 0; i < a->n; i++) {
        if (ca[i].type != cb[i].type || strcmp(ca[i].name, cb[i].name) != 0 ||
            strcmp(unit_or_empty(ca[i].unit), unit_or_empty(cb[i].unit)) != 0)
            return FALSE;
    }
    return TRUE;
}

void ddm_views_columns_alloc(Columns *c, guint n)
{
    ColumnsShared *sh;

    ddm_views_columns_clear(c);
    if (n == 0)
        return;
    G_STATIC_ASSERT(sizeof(ColumnsShared) % G_ALIGNOF(Column) == 0);
    sh = g_malloc0(sizeof(ColumnsShared) + (gsize)n * sizeof(Column));
    sh->refs = 1;
    sh->n = n;
    c->cols = (Column *)(void *)(sh + 1);
    c->n = n;
}

void ddm_views_columns_intern(Columns *c)
{
    ColumnsShared *mine, *found;

    if (!c->cols || columns_shared(c->cols)->interned)
        return;
    mine = columns_shared(c->cols);
    if (!interned_columns)
        interned_columns = g_hash_table_new(columns_set_hash, columns_set_equal);
    found = g_hash_table_lookup(interned_columns, mine);
    if (found) {
        Columns shared = {shared_columns(found), found->n};
        ddm_views_columns_copy(c, &shared);
        return;
    }
    mine->interned = TRUE;
    g_hash_table_add(interned_columns, mine);
}

void ddm_views_columns_clear(Columns *c)
{
    if (c->cols) {
        ColumnsShared *sh = columns_shared(c->cols);
        if (--sh->refs == 0) {
            if (sh->interned)
                g_hash_table_remove(interned_columns, sh);
            for (guint i = 0; i < sh->n; i++) {
                g_free(c->cols[i].name);
                g_free(c->cols[i].unit);
            }
            g_free(sh);
        }
    }
    c->cols = NULL;
    c->n = 0;
}

void ddm_views_columns_copy(Columns *dst, const Columns *src)
{
    if (dst->cols == src->cols)
        return;
    ddm_views_columns_clear(dst);
    if (src->n == 0 || !src->cols)
        return;
    columns_shared(src->cols)->refs++;
    dst->cols = src->cols;
    dst->n = src->n;
}

Columns ddm_views_columns_of(Column *cols)
{
    Columns c = {cols, cols ? columns_shared(cols)->n : 0};
    return c;
}

gboolean ddm_views_columns_equal(const Columns *a, const Columns *b)
{
    if (a->cols == b->cols)
        return TRUE;
    if (a->n != b->n)
        return FALSE;
    for (guint i = 0; i < a->n; i++) {
        if (a->cols[i].type != b->cols[i].type || g_strcmp0(a->cols[i].name, b->cols[i].name) != 0 ||
            g_strcmp0(a->cols[i].unit, b->cols[i].unit) != 0)
            return FALSE;
    }
    return TRUE;
}

Content *ddm_views_content_new(ddm_view_kind kind, const Columns *schema)
{
    Content *c = g_new0(Content, 1);
    /* cells, fields and the field index come with the first of each */
    if (kind == DDM_VIEW_TABLE && schema)
        ddm_views_columns_copy(&c->columns, schema);
    return c;
}

/* The committed content of every view that has had none yet: one, shared,
 * never written (builders only write the building content; commit and
 * set_columns replace the committed one). */
static Content empty_content;

Content *ddm_views_content_empty(void)
{
    return &empty_content;
}

/* Empty tables by column set (ColumnsShared* -> Content*, borrowed: a
 * content leaves when the last view holding it lets go). */
static GHashTable *shared_empty_tables;

Content *ddm_views_content_share_empty(Content *c)
{
    Content *shared;

    if (c->strings || c->cells || c->cell_nulls || c->n_rows || c->fields || c->blob || c->media_type || c->rows_capped ||
        c->bad || c->shared_refs)
        return c;
    if (!c->columns.cols) {
        ddm_views_content_free(c);
        return &empty_content;
    }
    if (!shared_empty_tables)
        shared_empty_tables = g_hash_table_new(g_direct_hash, g_direct_equal);
    shared = g_hash_table_lookup(shared_empty_tables, columns_shared(c->columns.cols));
    if (shared) {
        shared->shared_refs++;
        ddm_views_content_free(c);
        return shared;
    }
    c->shared_refs = 1;
    g_hash_table_insert(shared_empty_tables, columns_shared(c->columns.cols), c);
    return c;
}

static gboolean cell_is_null(const Content *c, gsize i)
{
    return c->cell_nulls && ((c->cell_nulls[i / 8] >> (i % 8)) & 1);
}

/* Calls @fn on the address of every string pointer of @c (table cells of
 * string columns, field keys and string values) that points into its
 * blocks, once a string: a table cell that shares the string of the cell
 * above it (ddm_views_content_str_above) is pointed at whatever that one
 * points to after @fn, and not passed to @fn. */
static void each_string_ref(Content *c, void (*fn)(const char **ref, gpointer ud), gpointer ud)
{
    guint n = c->columns.n;
    const char **above = n > 0 && c->n_cells > n ? g_new0(const char *, n) : NULL; /* as they were */

    for (gsize i = 0; i < c->n_cells && n > 0; i++) {
        guint col = (guint)(i % n);
        const char *s;
        if (c->columns.cols[col].type != DDM_VAL_STR || cell_is_null(c, i) || !c->cells[i].s) {
            if (above)
                above[col] = NULL;
            continue;
        }
        s = c->cells[i].s;
        if (above && i >= n && above[col] == s) {
            c->cells[i].s = c->cells[i - n].s;
            continue;
        }
        if (above)
            above[col] = s;
        fn(&c->cells[i].s, ud);
    }
    g_free(above);
    for (guint i = 0; i < c->n_fields; i++) {
        fn(&c->fields[i].key, ud);
        if (c->fields[i].value_type == DDM_VAL_STR && c->fields[i].u.s)
            fn(&c->fields[i].u.s, ud);
    }
}

static void count_string(const char **ref, gpointer ud)
{
    *(gsize *)ud += strlen(*ref) + 1;
}

static void move_string(const char **ref, gpointer ud)
{
    StringBlock *b = ud;
    gsize n = strlen(*ref) + 1;
    memcpy(b->data + b->used, *ref, n);
    *ref = b->data + b->used;
    b->used += n;
}

/* Bytes of the blocks holding @c's strings. */
static gsize strings_allocated(const Content *c)
{
    gsize n = 0;
    for (const StringBlock *b = c->strings; b; b = b->next)
        n += b->size;
    return n;
}

/* A sealed content's strings move into one block of exactly their size
 * (the doubling blocks of a small content were up to half empty, and
 * strings replaced while building are dropped): always for contents of at
 * most STRINGS_COMPACT_MAX bytes of strings (the many small per-VM views),
 * and for a bigger one when its blocks hold more than an eighth more than
 * its strings (a table of some 100 kB, such as the "vms" view of 1,000
 * VMs, whose newest 64 KiB block was mostly empty: issue 16). Past some
 * 512 kB that cannot happen: blocks stop doubling at STRING_BLOCK_MAX. */
static void strings_compact(Content *c)
{
    gsize need = 0;
    StringBlock *b;

    if (!c->strings || (!c->strings->next && c->strings->used == c->strings->size))
        return;
    if (c->string_bytes > STRINGS_COMPACT_MAX && strings_allocated(c) - c->string_bytes <= c->string_bytes / 8)
        return;
    each_string_ref(c, count_string, &need);
    b = need ? g_malloc(sizeof(StringBlock) + need) : NULL;
    if (b) {
        b->next = NULL;
        b->size = need;
        b->used = 0;
        each_string_ref(c, move_string, b);
    }
    while (c->strings) {
        StringBlock *older = c->strings->next;
        g_free(c->strings);
        c->strings = older;
    }
    c->strings = b;
    c->string_bytes = need;
    if (c->field_index) {
        /* its keys were the old copies */
        g_hash_table_remove_all(c->field_index);
        for (guint i = 0; i < c->n_fields; i++)
            g_hash_table_insert(c->field_index, (gpointer)c->fields[i].key, GUINT_TO_POINTER(i + 1));
    }
}

void ddm_views_content_seal(Content *c)
{
    if (c->cap_cells > c->n_cells) {
        c->cells = g_renew(CellValue, c->cells, c->n_cells); /* 0: freed, NULL */
        if (c->cell_nulls)
            c->cell_nulls = g_realloc(c->cell_nulls, (c->n_cells + 7) / 8);
        c->cap_cells = c->n_cells;
    }
    if (c->cap_fields > c->n_fields) {
        c->fields = g_renew(Field, c->fields, c->n_fields);
        c->cap_fields = c->n_fields;
    }
    strings_compact(c);
}

void ddm_views_content_cell_add(Content *c, const Cell *cell)
{
    if (c->n_cells == c->cap_cells) {
        gsize cap = c->cap_cells ? c->cap_cells + c->cap_cells / 2 : 8;
        c->cells = g_renew(CellValue, c->cells, cap);
        if (c->cell_nulls) {
            c->cell_nulls = g_realloc(c->cell_nulls, (cap + 7) / 8);
            memset(c->cell_nulls + (c->cap_cells + 7) / 8, 0, (cap + 7) / 8 - (c->cap_cells + 7) / 8);
        }
        c->cap_cells = cap;
    }
    if (cell->type == 0) {
        if (!c->cell_nulls)
            c->cell_nulls = g_malloc0((c->cap_cells + 7) / 8);
        c->cell_nulls[c->n_cells / 8] |= (guint8)(1u << (c->n_cells % 8));
        c->cells[c->n_cells].i = 0;
    } else {
        g_assert(c->columns.n > 0 && cell->type == c->columns.cols[c->n_cells % c->columns.n].type);
        c->cells[c->n_cells] = cell->u;
    }
    c->n_cells++;
}

const char *ddm_views_content_str_above(const Content *c)
{
    gsize i = c->n_cells;
    if (c->columns.n == 0 || i < c->columns.n)
        return NULL;
    i -= c->columns.n;
    if (cell_is_null(c, i) || c->columns.cols[i % c->columns.n].type != DDM_VAL_STR)
        return NULL;
    return c->cells[i].s;
}

guint ddm_views_content_string_blocks(const Content *c)
{
    guint n = 0;
    for (const StringBlock *b = c->strings; b; b = b->next)
        n++;
    return n;
}

Cell ddm_views_content_cell(const Content *c, gsize i)
{
    Cell cell = {0};

    if (cell_is_null(c, i))
        return cell;
    cell.type = (guint8)c->columns.cols[i % c->columns.n].type;
    cell.u = c->cells[i];
    return cell;
}

guint ddm_views_content_n_fields(const Content *c)
{
    return c->n_fields;
}

Field *ddm_views_content_field_find(Content *c, const char *key)
{
    if (!c->fields)
        return NULL;
    if (c->field_index) {
        gpointer idx = g_hash_table_lookup(c->field_index, key);
        return idx ? &c->fields[GPOINTER_TO_UINT(idx) - 1] : NULL;
    }
    for (guint i = 0; i < c->n_fields; i++) {
        Field *f = &c->fields[i];
        if (strcmp(f->key, key) == 0)
            return f;
    }
    return NULL;
}

void ddm_views_content_field_add(Content *c, const Field *f)
{
    if (c->n_fields == c->cap_fields) {
        c->cap_fields = c->cap_fields ? c->cap_fields + c->cap_fields / 2 : 4;
        c->fields = g_renew(Field, c->fields, c->cap_fields);
    }
    c->fields[c->n_fields++] = *f;
    if (!c->field_index && c->n_fields > FIELDS_WITHOUT_INDEX) {
        /* past a few fields, lookups go through a hash (records may hold
         * 65536; keys may come from the wire: seeded) */
        c->field_index = g_hash_table_new(ddm_str_hash, g_str_equal);
        for (guint i = 0; i < c->n_fields; i++)
            g_hash_table_insert(c->field_index, (gpointer)c->fields[i].key, GUINT_TO_POINTER(i + 1));
    } else if (c->field_index) {
        g_hash_table_insert(c->field_index, (gpointer)f->key, GUINT_TO_POINTER(c->n_fields));
    }
}

void ddm_views_content_free(Content *c)
{
    if (!c || c == &empty_content)
        return;
    if (c->shared_refs) {
        if (--c->shared_refs > 0)
            return;
        g_hash_table_remove(shared_empty_tables, columns_shared(c->columns.cols));
    }
    while (c->strings) {
        StringBlock *older = c->strings->next;
        g_free(c->strings);
        c->strings = older;
    }
    ddm_views_columns_clear(&c->columns);
    g_free(c->cells);
    g_free(c->cell_nulls);
    g_free(c->fields);
    if (c->field_index)
        g_hash_table_destroy(c->field_index);
    g_free(c->blob);
    g_free(c->media_type);
    g_free(c);
}

/* Copy @n bytes of @s and a NUL into @c's newest block, or a new block. */
static const char *store_string(Content *c, const char *s, gsize n)
{
    StringBlock *b = c->strings;
    char *out;

    if (!b || b->size - b->used < n + 1) {
        gsize size = b ? MIN(b->size * 2, STRING_BLOCK_MAX) : STRING_BLOCK_FIRST;
        if (size < n + 1)
            size = n + 1;
        b = g_malloc(sizeof(StringBlock) + size);
        b->next = c->strings;
        b->size = size;
        b->used = 0;
        c->strings = b;
    }
    out = b->data + b->used;
    memcpy(out, s, n);
    out[n] = '\0';
    b->used += n + 1;
    c->string_bytes += n + 1;
    return out;
}

const char *ddm_views_content_copy_string(Content *c, const char *s)
{
    gsize n = strlen(s);
    if (c->string_bytes + n + 1 > DDM_VIEW_MAX_STRING_BYTES)
        return NULL;
    return store_string(c, s, n);
}

/* Copy @s into @c's string chunk as valid UTF-8 of at most
 * DDM_VIEW_MAX_STRING bytes. *@truncated tells whether it was cut.
 * NULL when the content's string budget is spent. */
const char *ddm_views_content_intern(Content *c, const char *s, gboolean *truncated)
{
    gsize n = strnlen(s, DDM_VIEW_MAX_STRING + 1);
    const char *end = NULL;
    const char *out;

    *truncated = FALSE;
    if (n > DDM_VIEW_MAX_STRING) {
        *truncated = TRUE;
        n = ddm_utf8_cut(s, n, DDM_VIEW_MAX_STRING);
    }
    if (c->string_bytes + n + 1 > DDM_VIEW_MAX_STRING_BYTES)
        return NULL;
    if (g_utf8_validate(s, (gssize)n, &end)) {
        out = store_string(c, s, n);
    } else {
        char *valid = g_utf8_make_valid(s, (gssize)n);
        gsize vn = strlen(valid);
        if (vn > DDM_VIEW_MAX_STRING) {
            /* Replacement characters made it longer: cut again. */
            vn = ddm_utf8_cut(valid, vn, DDM_VIEW_MAX_STRING);
            *truncated = TRUE;
        }
        if (c->string_bytes + vn + 1 > DDM_VIEW_MAX_STRING_BYTES) {
            g_free(valid);
            return NULL;
        }
        out = store_string(c, valid, vn);
        g_free(valid);
    }
    return out;
}
