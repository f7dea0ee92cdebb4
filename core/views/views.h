/* SPDX-License-Identifier: Apache-2.0
 *
 * The view store: named data that plugins and the core publish, per VM or
 * global, as tables (typed columns and rows), records (ordered typed
 * fields) or blobs (bytes with a media type). A view has committed content
 * (what frontends see) and, between begin and commit, content being built.
 * Listeners are told when a view is added, changed (committed) or removed.
 * Watches (frontend subscriptions) are counted so producers can poll only
 * while someone looks. JSON (json-glib) is the one serialization; the text
 * renderer works from that JSON, so the client renders what the server sent.
 */
#ifndef DDM_VIEWS_H
#define DDM_VIEWS_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include <ddmon/plugin.h>

typedef struct DdmViews DdmViews;

#define DDM_VIEW_MAGIC 0x56494557u

/* Caps that keep a misbehaving producer from exhausting memory (enforced by
 * view_build.c and view_content.c):
 * DDM_VIEW_MAX_ROWS, _COLUMNS, _CELLS, _FIELDS, _STRING, _STRING_BYTES and
 * _BLOB. They are part of the plugin SDK and defined there only
 * (<ddmon/plugin.h>, "limits", with what happens past each). */

typedef enum { DDM_VIEW_ADDED = 1, DDM_VIEW_CHANGED = 2, DDM_VIEW_REMOVED = 3 } DdmViewChange;

typedef void (*DdmViewListenerFn)(ddm_view *view, DdmViewChange change, gpointer ud);

DdmViews *ddm_views_new(void);
void ddm_views_free(DdmViews *store);

/** Publish a new, empty view. @vm_key NULL = global. NULL if (name, vm_key) exists.
 *  (transfer none: the store owns it) */
ddm_view *ddm_views_create(DdmViews *store, const char *owner, const char *vm_key,
                           const char *name, ddm_view_kind kind, const char *title);
/** A view outside any store (command results). Free with ddm_view_free_detached. */
ddm_view *ddm_view_new_detached(const char *owner, const char *name, ddm_view_kind kind,
                                const char *title);
void ddm_view_free_detached(ddm_view *view);
/** ddm_view_new_detached with a VM key (a VM's view made for one answer:
 *  the core's "headline" records of `ddmon --json vms`). */
ddm_view *ddm_view_new_detached_vm(const char *owner, const char *vm_key, const char *name,
                                   ddm_view_kind kind, const char *title);
/** Name @vm_key as a detached view's VM (a command's result for one VM);
 *  NULL makes it global again. */
void ddm_view_set_detached_vm(ddm_view *view, const char *vm_key);
/** Unpublish and free (listeners see REMOVED first). */
void ddm_views_destroy(DdmViews *store, ddm_view *view);
void ddm_views_destroy_vm(DdmViews *store, const char *vm_key);
void ddm_views_destroy_owner(DdmViews *store, const char *owner);

ddm_view *ddm_views_lookup(DdmViews *store, const char *name, const char *vm_key);
/** Every view, sorted by (vm_key, name). (transfer container) */
GPtrArray *ddm_views_list(DdmViews *store);
/** The views named @name, in ddm_views_list's order (global first, then by
 *  vm_key); O(those views), the others not looked at. (transfer container) */
GPtrArray *ddm_views_list_named(DdmViews *store, const char *name);

/* Views made on demand. A producer may declare a VM's view instead of
 * making it (core/pluginhost: a plugin's vm_view_declare, ABI 1.6): the
 * store then asks its maker to make the views named @name (NULL: every
 * name) of VM @vm_key (NULL: every VM) that were declared and not made
 * yet, before it answers ddm_views_lookup (a VM's view it does not hold),
 * ddm_views_list, ddm_views_list_named and ddm_views_watch. So a view
 * nobody asks for costs nothing, and one asked for is there, made as its
 * producer would have made it. The maker makes them with
 * ddm_views_create; the store does not call it again from inside. */
typedef void (*DdmViewsMakeFn)(DdmViews *store, const char *name, const char *vm_key,
                               gpointer ud);
/** Set (or with @fn NULL remove) the store's maker; one at a time. */
void ddm_views_set_maker(DdmViews *store, DdmViewsMakeFn fn, gpointer ud);
/** Remove the maker if it was set with @ud (another's stays). */
void ddm_views_remove_maker(DdmViews *store, gpointer ud);
/** ddm_views_lookup without asking the maker: only views already made. */
ddm_view *ddm_views_lookup_made(DdmViews *store, const char *name, const char *vm_key);
/** ddm_views_list without asking the maker (counting what exists). (transfer container) */
GPtrArray *ddm_views_list_made(DdmViews *store);
/** The views of VM @vm_key (NULL: the global ones), its declared views
 *  made first (those of no other VM), sorted by name. (transfer container) */
GPtrArray *ddm_views_list_vm(DdmViews *store, const char *vm_key);
/** The namer adds to @names (a set of g_strdup'd names, g_free'd by the
 *  table) the names of the views the maker would make for VM @vm_key
 *  (NULL: for any VM), made or not, without making any. */
typedef void (*DdmViewsNamesFn)(DdmViews *store, const char *vm_key, GHashTable *names,
                                gpointer ud);
/** Set (or with @fn NULL remove) the store's namer; one at a time. */
void ddm_views_set_namer(DdmViews *store, DdmViewsNamesFn fn, gpointer ud);
/** The names of the views of VM @vm_key (NULL: of any VM, and the global
 *  ones) made or declared, made none: a set of names owned by the table
 *  (an error message's list of the views there are). (transfer full) */
GHashTable *ddm_views_names(DdmViews *store, const char *vm_key);
/** Called when a watch of @name (NULL: every name) of VM @vm_key (NULL:
 *  every VM) ends: the views it counted may have no watcher from now. */
typedef void (*DdmViewsUnwatchedFn)(DdmViews *store, const char *name, const char *vm_key,
                                    gpointer ud);
/** Set (or with @fn NULL remove) the store's unwatch hook; one at a time;
 *  ddm_views_remove_maker with the same @ud removes it too. */
void ddm_views_set_unwatched(DdmViews *store, DdmViewsUnwatchedFn fn, gpointer ud);
/** Called after the watch generation moved (ddm_views_watch_generation):
 *  the registry wakes the plugin timers that sleep (ABI 1.7). */
typedef void (*DdmViewsWatchGenFn)(DdmViews *store, gpointer ud);
/** Set (or with @fn NULL remove) the store's watch-generation hook; one at
 *  a time; ddm_views_remove_maker with the same @ud removes it too. It
 *  must not change the store. */
void ddm_views_set_watch_gen_hook(DdmViews *store, DdmViewsWatchGenFn fn, gpointer ud);
/** How many watches would count view @name of VM @vm_key, made or not. */
int ddm_views_watches_matching(const DdmViews *store, const char *name, const char *vm_key);

/* Accessors. */
const char *ddm_view_name(const ddm_view *v);
const char *ddm_view_vm_key(const ddm_view *v);   /* NULL = global */
const char *ddm_view_owner(const ddm_view *v);
const char *ddm_view_title(const ddm_view *v);
ddm_view_kind ddm_view_kind_of(const ddm_view *v);
guint64 ddm_view_version(const ddm_view *v);     /* commits so far */
gboolean ddm_view_is_valid(const ddm_view *v);   /* magic check */

/* Builders: the implementation behind the ddm_host view_* members. 0 or -errno
 * (-EINVAL wrong kind / wrong cell type / too many cells, -EPROTO no begin). */
int ddm_view_set_columns(ddm_view *v, const ddm_column *cols, size_t n);
int ddm_view_begin(ddm_view *v);
int ddm_view_row(ddm_view *v);
int ddm_view_cell_str(ddm_view *v, const char *s);
int ddm_view_cell_int(ddm_view *v, int64_t x);
int ddm_view_cell_double(ddm_view *v, double x);
int ddm_view_cell_bool(ddm_view *v, int b);
int ddm_view_field_str(ddm_view *v, const char *key, const char *s);
int ddm_view_field_int(ddm_view *v, const char *key, int64_t x);
int ddm_view_field_double(ddm_view *v, const char *key, double x);
int ddm_view_field_bool(ddm_view *v, const char *key, int b);
int ddm_view_blob(ddm_view *v, const char *media_type, const void *data, size_t len);
int ddm_view_commit(ddm_view *v);
/** Committed blob bytes (transfer none) or NULL. */
const guint8 *ddm_view_blob_data(const ddm_view *v, gsize *len, const char **media_type);

/* A table's committed rows as the storage of their producer, which then
 * keeps no copy of its own: it reads them back and, building the next
 * content, copies the rows that did not change (the core's "vms" view:
 * core/daemon/vms_rows.c). */
/** Rows in table @v's committed content (0 for a record or blob). */
guint ddm_view_n_rows(const ddm_view *v);
/** The string in committed row @row, column @col of table @v, or NULL (a
 *  null cell, a column of another type, out of range). (transfer none:
 *  valid until @v's next commit or set_columns) */
const char *ddm_view_row_str(const ddm_view *v, guint row, guint col);
/** Between begin and commit: append committed rows [@first, @first + @n)
 *  of table @v to the content being built, cells and nulls as they are
 *  (the strings copied). A row started before it is closed first, as by
 *  ddm_view_row. 0, -EPROTO without begin, -EINVAL when the building
 *  content's columns are not the committed ones or the range is out of
 *  bounds (nothing copied), -E2BIG when the row or cell cap dropped rows
 *  (those before the cap are copied) or when the content's string budget
 *  is spent (a string cell that does not fit becomes null, and copying
 *  goes on: no row is dropped). */
int ddm_view_copy_rows(ddm_view *v, guint first, guint n);

/* Listeners and watches. */
guint ddm_views_add_listener(DdmViews *store, DdmViewListenerFn fn, gpointer ud);
void ddm_views_remove_listener(DdmViews *store, guint id);
/** A frontend watches views named @name (NULL = all) of VM @vm_key (NULL = all). */
guint ddm_views_watch(DdmViews *store, const char *name, const char *vm_key);
void ddm_views_unwatch(DdmViews *store, guint watch_id);
int ddm_view_watchers(const ddm_view *v);
/** A number that changes whenever ddm_view_watchers may answer otherwise
 *  for some view: a watch began or ended, or a view was created while
 *  watches exist. Producers that poll only watched views can skip the
 *  views they found unwatched while it stays the same. */
guint64 ddm_views_watch_generation(const DdmViews *store);

/** Committed content as JSON:
 *  {"name","vm","owner","title","kind":"table|record|blob","version",
 *   table: "columns":[{"name","type","unit"}], "rows":[[...]],
 *   record: "fields":[{"key","type","value"}],
 *   blob: "media_type","size","data_base64" (only with @with_blob_data, or
 *   for an application/json blob up to DDM_JSON_BLOB_MAX: json_blob.h)}
 *  (transfer full) */
JsonNode *ddm_view_to_json(const ddm_view *v, gboolean with_blob_data);
/** Render a view's JSON (as above) as text for a terminal: aligned table,
 *  "key: value" lines, a JSON blob's document as an indented outline, or
 *  a blob summary. (transfer full) */
char *ddm_view_json_to_text(JsonNode *view_json);

/** Options for ddm_view_json_to_text_full (render.c). Zero-initialised = the
 *  defaults of ddm_view_json_to_text. */
typedef struct DdmRenderOptions {
    guint max_width;     /* 0 = unlimited; else string columns shrink (with "…"),
                            then lines are cut, to fit this many terminal cells */
    gboolean show_title; /* first line: the title (and VM key) */
} DdmRenderOptions;

/** As ddm_view_json_to_text with options (@opts NULL = defaults). (transfer full) */
char *ddm_view_json_to_text_full(JsonNode *view_json, const DdmRenderOptions *opts);

#endif /* DDM_VIEWS_H */
