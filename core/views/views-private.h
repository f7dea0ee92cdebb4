/* SPDX-License-Identifier: Apache-2.0
 *
 * The view store's objects and the functions its files call in each other,
 * for core/views/ only: everyone else uses views.h. The overview and the
 * invariants are at the top of views.c.
 *
 * The files: views.c (the store: create, destroy, lookup, list; the
 * accessors; listeners and watches), view_content.c (storage of a view's
 * content: columns, cells, fields, blob, the string chunk), view_build.c
 * (the builders from set_columns to commit, and their refusals at the caps)
 * and view_json.c (the JSON form).
 */
#ifndef DDM_VIEWS_PRIVATE_H
#define DDM_VIEWS_PRIVATE_H

#include "core/views/views.h"

/* ------------------------------------------------------------- storage */

typedef union CellValue {
    const char *s; /* in the content's string chunk */
    gint64 i;
    double d;
    gboolean b;
} CellValue;

typedef struct Cell {
    guint8 type; /* 0 = null, else ddm_value_type */
    CellValue u;
} Cell;

/* 24 bytes, not 32: a record's fields (vminfo has 14 a VM) are an array. */
typedef struct Field {
    const char *key; /* in the content's string chunk */
    CellValue u;     /* the value (when value_type is not 0) */
    guint8 value_type; /* 0 = null, else ddm_value_type (a Cell's type) */
    guint8 type;     /* declared ddm_value_type, also when the value is null */
} Field;

/** @f's value as a Cell. */
static inline Cell ddm_views_field_value(const Field *f)
{
    Cell c = {f->value_type, f->u};
    return c;
}

/** Set @f's value to @c. */
static inline void ddm_views_field_set_value(Field *f, const Cell *c)
{
    f->value_type = c->type;
    f->u = c->u;
}

typedef struct Column {
    char *name;
    ddm_value_type type;
    char *unit; /* NULL = none */
} Column;

/* A column set. cols is shared, read-only, by every copy (reference
 * counted: a view's schema, its committed and its building content hold
 * one set, not three); build one with ddm_views_columns_alloc. */
typedef struct Columns {
    Column *cols;
    guint n;
} Columns;

/* A block of a content's strings (view_content.c): blocks double in size
 * from a small first one, so a content with a few short strings costs
 * about what they need, not a fixed chunk. */
typedef struct StringBlock StringBlock;

/* 120 bytes (malloc's block 128, not 160): an idle VM has a few non-empty
 * contents. Counts are 32-bit: the caps (DDM_VIEW_MAX_*) are below 2^32. */
typedef struct Content {
    StringBlock *strings;  /* newest block first; created lazily */
    /* table */
    Columns columns;
    CellValue *cells;  /* n_cells: n_rows * columns.n (the current row may be partial); NULL
                          until the first cell; exactly n_cells once committed. A table
                          cell's type is its column's (or null), so it is not stored: 8
                          bytes a cell, not 16 (ddm_views_content_cell) */
    guint8 *cell_nulls; /* bit i set: cell i is null; NULL until the first null cell */
    const char *bad_reason;
    /* record */
    Field *fields;     /* n_fields; NULL until the first; exactly n_fields once committed */
    GHashTable *field_index; /* key (in strings) -> index + 1; only past a few fields */
    /* blob */
    guint8 *blob;
    char *media_type;
    guint32 string_bytes; /* bytes stored in strings, for the cap (DDM_VIEW_MAX_STRING_BYTES) */
    guint32 n_cells, cap_cells; /* <= DDM_VIEW_MAX_CELLS */
    guint n_rows;
    guint cur_col;     /* cells given for the current row */
    guint shared_refs; /* 0: one view's own; else the views holding this shared empty table */
    guint n_fields, cap_fields;
    guint32 blob_len;  /* <= DDM_VIEW_MAX_BLOB */
    guint in_row : 1;  /* a row was started and accepted */
    guint row_dropped : 1; /* the current row was refused (row cap): its cells are ignored */
    guint bad : 1;     /* a builder error: commit refuses this content */
    guint rows_capped : 1;
} Content;

/* What the same view of every VM has in common: owner, name, title (valid
 * UTF-8, interned GRefStrings) and kind, held once by all of them
 * (views.c: view_desc_get, view_desc_release). */
typedef struct ViewDesc {
    char *owner;
    char *name;
    char *title;
    ddm_view_kind kind;
    guint refs;
    Column *columns; /* the column set ddm_view_set_columns last made for
                        its views (a reference, see view_build.c), or NULL */
} ViewDesc;

/* Laid out without holes in 64 bytes (malloc gives it 80): every VM has
 * some twenty of these. */
struct ddm_view {
    guint32 magic;
    guint busy : 29;      /* notifications in progress for this view */
    guint warned : 1;     /* a failed commit was logged at warning level */
    guint warned_cap : 1; /* the row cap was logged at warning level */
    guint unpublished : 1;
    DdmViews *store; /* NULL for detached views */
    const ViewDesc *desc; /* owner, name, title, kind */
    char *vm_key;    /* NULL = global; an interned GRefString */
    guint64 version;
    Column *schema;     /* table: the columns the next begin starts with, a shared
                           column set (ddm_views_columns_of gives it with its
                           count), or NULL for none */
    Content *committed; /* never NULL; ddm_views_content_empty() until the first commit */
    Content *building;  /* NULL when not between begin and commit */
};

typedef struct Listener {
    guint id;
    DdmViewListenerFn fn; /* NULL once removed */
    gpointer ud;
} Listener;

typedef struct Watch {
    guint id;
    char *name;   /* NULL = every view */
    char *vm_key; /* NULL = every VM (and global views) */
} Watch;

struct DdmViews {
    GHashTable *by_name; /* name (owned) -> set of its ddm_view* (owned), hashed by vm_key */
    guint n_views;       /* views in by_name's sets */
    GArray *listeners;  /* Listener */
    guint next_listener_id;
    guint notifying;    /* nesting depth of notifications */
    gboolean listeners_dirty;
    GList *watches;     /* Watch* */
    guint next_watch_id;
    guint64 watch_gen;  /* ddm_views_watch_generation: bumped when watches may match otherwise */
    DdmViewsMakeFn maker; /* ddm_views_set_maker, or NULL */
    gpointer maker_ud;
    guint making;         /* the maker runs: lookups inside it do not call it again */
    DdmViewsNamesFn namer; /* ddm_views_set_namer, or NULL */
    gpointer namer_ud;
    DdmViewsUnwatchedFn unwatched; /* ddm_views_set_unwatched, or NULL */
    gpointer unwatched_ud;
    DdmViewsWatchGenFn gen_moved; /* ddm_views_set_watch_gen_hook, or NULL */
    gpointer gen_moved_ud;
};

/* view_content.c */
/** @c holds a new set of @n zeroed columns, its own (fill it before any
 *  copy shares it); the strings in it are freed with the last copy. */
void ddm_views_columns_alloc(Columns *c, guint n);
/** Share @c with every equal interned set (then @c's own goes), or make
 *  @c the interned one: the same table of every VM holds one set. */
void ddm_views_columns_intern(Columns *c);
void ddm_views_columns_clear(Columns *c);
void ddm_views_columns_copy(Columns *dst, const Columns *src);
/** The column set whose array is @cols (a ddm_view's schema), with its
 *  count; NULL: none. (transfer none) */
Columns ddm_views_columns_of(Column *cols);
gboolean ddm_views_columns_equal(const Columns *a, const Columns *b);
/** Empty content of @kind; a table starts with a copy of @schema (may be NULL). */
Content *ddm_views_content_new(ddm_view_kind kind, const Columns *schema);
/** The empty content a new view starts with, shared by all (never write
 *  it; ddm_views_content_free ignores it). */
Content *ddm_views_content_empty(void);
void ddm_views_content_free(Content *c);
/** Append @cell (null, or of its column's type) to table content @c (the
 *  cell array comes with the first). */
void ddm_views_content_cell_add(Content *c, const Cell *cell);
/** Cell @i of table content @c. */
Cell ddm_views_content_cell(const Content *c, gsize i);
/** @c is complete (commit): its arrays shrink to what they hold. */
void ddm_views_content_seal(Content *c);
/** Sealed @c, or, when it holds nothing (an empty table, record or blob
 *  without a media type), an equal shared content in its place (then @c
 *  goes): the empty tables that plugins commit for every VM hold one
 *  content per column set, not one each. (transfer full: free the result
 *  with ddm_views_content_free as any content) */
Content *ddm_views_content_share_empty(Content *c);
/** Fields in record content @c. */
guint ddm_views_content_n_fields(const Content *c);
/** The field keyed @key in record content @c, or NULL (valid until the next add). */
Field *ddm_views_content_field_find(Content *c, const char *key);
/** Append @f (its key already in @c's strings, not yet present) to record content @c. */
void ddm_views_content_field_add(Content *c, const Field *f);
/** The string of the cell one row above the next cell of table content
 *  @c, or NULL (none, null, not a string): a cell of a string column
 *  equal to it shares it instead of a copy (the "vms" view's transport,
 *  device, state and VM columns repeat from row to row). */
const char *ddm_views_content_str_above(const Content *c);
/** Blocks holding @c's strings (a sealed small content has at most one). */
guint ddm_views_content_string_blocks(const Content *c);
/** @s copied into @c's strings, capped and made valid UTF-8 (view_content.c). */
const char *ddm_views_content_intern(Content *c, const char *s, gboolean *truncated);

/** @s, a string of another content (valid, within the caps already),
 *  copied into @c's strings as it is; NULL when @c's string budget is
 *  spent. */
const char *ddm_views_content_copy_string(Content *c, const char *s);

/* view_json.c */
/** A column's or field's type as the JSON form names it: "str", "int",
 *  "double", "bool" (jq_text.c writes the same names). (static string) */
const char *ddm_views_type_name(ddm_value_type t);

/* views.c */
/** Tell every listener of @v's change; @v may be freed meanwhile (views.c). */
void ddm_views_notify(DdmViews *s, ddm_view *v, DdmViewChange change);

#endif /* DDM_VIEWS_PRIVATE_H */
