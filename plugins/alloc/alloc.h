/* SPDX-License-Identifier: Apache-2.0
 *
 * alloc plugin (the DDMS Allocation Tracker), internal interface shared by
 * its files (never installed):
 *  - real.c:      the REAL decoder (header, entries, frames, string tables),
 *                 every count, offset and index checked against the chunk;
 *                 JVM descriptor to Java name; a frame as "cls.m(File:line)";
 *  - group.c:     allocation rows from a decoded table, and groups of rows
 *                 (by class, site or thread) sorted by bytes, O(n log n);
 *  - alloc.c:     descriptor, init, options, VM listener (REAQ when a VM
 *                 becomes ready, as ddmlib asks at client creation), the
 *                 REAQ/REAL owners, per-VM views and the "alloc" headline,
 *                 the poll timer (REAL only while a view is watched), the
 *                 stopping hook (REAE 0 where tracking is on, 1.8);
 *  - alloc-cmd.c: `ddmon alloc VM start|stop|status|show`.
 * Ownership: alloc_plugin is the plugin data (host->set_data); alloc_vm is
 * per-VM data (host->vm_set_data), made only while the VM has something
 * beyond REAQ's answer (views, a poll's REAL in flight, a place on the
 * tick list) and freed by alloc_vm_settle when it
 * goes back to that, or by the core at VM gone. A VM that holds nothing
 * else keeps REAQ's answer in its data pointer: NULL for "off" (the usual
 * idle VM: no entry at all), or one of the shared markers (alloc.c) for
 * "on" and "not known" (and for each answer, "a failed poll was logged",
 * so that it is logged once per VM). Reply callbacks never hold an
 * alloc_vm: they look it up with alloc_vm_find (or make it with
 * alloc_vm_state).
 * Facts of the wire: doc/protocol.md, "REAE, REAQ, REAL".
 */
#ifndef DDM_PLUGIN_ALLOC_H
#define DDM_PLUGIN_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/chunk.h>
#include <ddmon/plugin.h>
#include <ddmon/ticklist.h>

#define ALLOC_CHUNK_REAE DDM_CHUNK('R', 'E', 'A', 'E')
#define ALLOC_CHUNK_REAQ DDM_CHUNK('R', 'E', 'A', 'Q')
#define ALLOC_CHUNK_REAL DDM_CHUNK('R', 'E', 'A', 'L')

/* The smallest lengths a REAL may declare: the fields this decoder reads. */
#define ALLOC_REAL_HEADER_MIN 15u
#define ALLOC_REAL_ENTRY_MIN 9u
#define ALLOC_REAL_FRAME_MIN 8u
/* Longer strings are cut (the rest is skipped, not decoded). */
#define ALLOC_NAME_MAX_UNITS 4096u

#define ALLOC_DEFAULT_INTERVAL_MS 2000u /* option alloc.interval; 0 = only on `show` */
#define ALLOC_MIN_INTERVAL_MS 200u
#define ALLOC_TICK_MS 250u
#define ALLOC_REAQ_TIMEOUT_MS 5000u
#define ALLOC_REAE_TIMEOUT_MS 2000u /* ART's adbconnection never answers REAE */

/* ------------------------------------------------------------ decoder */

typedef struct alloc_frame {
    uint16_t cls, method, file; /* string table indices, checked */
    int16_t line;               /* -2 native, -1 unknown */
} alloc_frame;

typedef struct alloc_entry {
    uint32_t size;
    uint16_t tid;
    uint16_t cls;
    uint8_t depth;
    uint32_t first; /* index of its top frame in alloc_table.f */
} alloc_entry;

/** A decoded REAL, most recent allocation first. Strings are UTF-8 as sent
 *  (class names are JVM descriptors); all malloc'd (alloc_real_clear). */
typedef struct alloc_table {
    unsigned header_len, entry_len, frame_len;
    uint32_t n;           /* entries */
    alloc_entry *e;
    uint32_t n_frames;
    alloc_frame *f;
    uint32_t n_classes, n_methods, n_files;
    char **classes, **methods, **files;
} alloc_table;

/**
 * Decode a REAL payload into @out. The three length bytes are honoured
 * (longer ones: unknown trailing bytes skipped; shorter than the known
 * fields: rejected). Every count, offset and string index is checked
 * against the chunk, and nothing is allocated beyond what the chunk's own
 * length can hold. Returns 0, -EBADMSG with a reason in @why, or -ENOMEM.
 * @out is zeroed on failure.
 */
int alloc_parse_real(const uint8_t *data, size_t len, alloc_table *out, char *why, size_t whylen);
void alloc_real_clear(alloc_table *t);

/** "Ljava/lang/String;" -> "java.lang.String", "[I" -> "int[]"; anything
 *  else is copied unchanged. malloc'd, NULL on out of memory. */
char *alloc_descriptor_to_name(const char *desc);
/** A frame as "cls.method(File.java:12)", "(Native Method)",
 *  "(File.java)" (no line) or "(Unknown Source)"; @cls is a Java name. malloc'd. */
char *alloc_frame_text(const char *cls, const char *method, const char *file, int line);

/* ------------------------------------------------------------- groups */

/** One allocation as shown: strings owned by the alloc_rows. */
typedef struct alloc_row {
    const char *cls;  /* Java name */
    uint32_t size;
    uint32_t tid;
    const char *site; /* top frame, NULL when the VM sent no stack */
} alloc_row;

typedef struct alloc_rows {
    size_t n;
    alloc_row *r;
    char **names; /* Java names per class index, then one site text per entry */
    size_t n_names;
} alloc_rows;

/** Rows of @t in its order. 0 or -ENOMEM. */
int alloc_rows_build(const alloc_table *t, alloc_rows *out);
void alloc_rows_clear(alloc_rows *rows);

typedef enum alloc_by { ALLOC_BY_NONE = 0, ALLOC_BY_CLASS, ALLOC_BY_SITE, ALLOC_BY_THREAD } alloc_by;

typedef struct alloc_group {
    const char *key; /* class or site (NULL: no stack); unused for threads */
    uint32_t tid;
    uint64_t count, bytes;
} alloc_group;

/** Group @rows by @by (not NONE), sorted by bytes, then count (both
 *  descending), then key. *@out malloc'd (free it); returns the number of
 *  groups, or -ENOMEM. */
long alloc_group_rows(const alloc_rows *rows, alloc_by by, alloc_group **out);

/* -------------------------------------------------------------- views */

typedef struct alloc_plugin {
    ddm_plugin *self;
    const ddm_host *host;
    unsigned interval_ms; /* 0: no polling */
    uint32_t poll_timer;
    double (*now)(void);  /* monotonic seconds; tests may replace it */
    ddm_tick_list ticks;  /* the VMs a tick visits while the watches stay the same */
    int lazy_views;       /* the views are declared (vm_view_declare, 1.6): a VM's are made
                             when asked for or at its first REAL */
    int views_on_demand;  /* no view is made with a VM's state: @lazy_views, or REAL
                             disabled (--chunks: no views at all); an idle VM then
                             holds REAQ's answer in its data pointer, no state */
} alloc_plugin;

/* A VM's state while it has more than REAQ's answer (see Ownership). */
typedef struct alloc_vm {
    alloc_plugin *pl;
    ddm_vm *vm;
    ddm_view *list, *by_class, *by_site, *by_thread;
    double last_poll;
    ddm_tick_node tick;      /* on pl->ticks while watched */
    int8_t enabled;          /* -1 unknown, 0 off, 1 on (from REAQ) */
    uint8_t real_in_flight;  /* a poll's REAL */
    uint8_t was_watched : 1;
    uint8_t fail_logged : 1; /* a failed poll was logged (kept in the marker after) */
    uint8_t views_made : 1;  /* alloc_views_ensure ran */
} alloc_vm;

/** The VM's state, made on first use (with its views on a core before
 *  1.6) from what its data pointer says. NULL on no memory. */
alloc_vm *alloc_vm_state(alloc_plugin *pl, ddm_vm *vm);
/** The VM's state if it has one (NULL when it holds only REAQ's answer). */
alloc_vm *alloc_vm_find(alloc_plugin *pl, ddm_vm *vm);
/** Free @av if it holds nothing but REAQ's answer, which goes back into
 *  the VM's data pointer; @av must not be used after. 1 if freed. */
int alloc_vm_settle(alloc_vm *av);
/** States alive in this process (tests: an idle VM has none). */
size_t alloc_vm_states_alive(void);
/** Record a REAQ answer (0/1, -1 unknown) for @vm and update the headline. */
void alloc_set_enabled(alloc_plugin *pl, ddm_vm *vm, int enabled);
/** Decode @data as REAL and publish the VM's views: those that exist, or
 *  (@make_views: a command's REAL) all four, made if missing; on success
 *  *@rows_out (if not NULL) gets the rows (caller clears). 0, -EBADMSG
 *  (reason in @why), -ENOMEM. */
int alloc_handle_real(alloc_vm *av, const uint8_t *data, size_t len, int make_views,
                      alloc_rows *rows_out, char *why, size_t whylen);
/** Fill a table view: allocations (@by NONE) or groups, at most @top rows (0 = all). */
int alloc_fill_view(const ddm_host *h, ddm_view *v, const alloc_rows *rows, alloc_by by, size_t top,
                    int set_columns);
/** Decode a REAQ payload: 0/1, or -1 if malformed. */
int alloc_parse_reaq(const uint8_t *data, size_t len);
/** A label for logs: the VM's key or pid. */
const char *alloc_vm_label(alloc_plugin *pl, ddm_vm *vm, char *buf, size_t n);

void alloc_poll_once(alloc_plugin *pl);
int alloc_commands_register(alloc_plugin *pl);
double alloc_monotonic_now(void);

#endif /* DDM_PLUGIN_ALLOC_H */
