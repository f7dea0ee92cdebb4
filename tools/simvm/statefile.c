/* SPDX-License-Identifier: Apache-2.0
 *
 * The ground truth (--state-file): per VM its identity, its threads now,
 * the last THST table it sent, and for each heap what it last SENT (HPIF
 * figures and the statistics of the last segment dump: bytes and counts
 * per kind, free bytes, largest free run): exactly what a correct decoder
 * computes; the last heap dump (size and sha256 of what was sent).
 * Integration tests compare ddmon's views with this file.
 * Built with json-glib; written atomically (temporary file + rename) by
 * filewriter.c's thread.
 * Non-goal: computing anything not yet sent (that would cost a heap walk).
 */
#include "simvm-private.h"
#include "profiling.h"
#include "viewdebug.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void add_seg_stats(JsonBuilder *b, const SimSegStats *s, uint32_t generation)
{
    unsigned k;

    json_builder_begin_object(b);
    json_builder_set_member_name(b, "generation");
    json_builder_add_int_value(b, generation);
    json_builder_set_member_name(b, "pieces");
    json_builder_add_int_value(b, s->pieces);
    json_builder_set_member_name(b, "total_bytes");
    json_builder_add_int_value(b, (gint64)(s->total_units * SIM_HEAP_UNIT));
    json_builder_set_member_name(b, "free_bytes");
    json_builder_add_int_value(b, (gint64)s->free_bytes);
    json_builder_set_member_name(b, "free_count");
    json_builder_add_int_value(b, s->free_count);
    json_builder_set_member_name(b, "largest_free");
    json_builder_add_int_value(b, (gint64)s->largest_free);
    json_builder_set_member_name(b, "kinds");
    json_builder_begin_object(b);
    for (k = 0; k < SIM_KIND_COUNT; k++) {
        json_builder_set_member_name(b, sim_kind_name(k));
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "bytes");
        json_builder_add_int_value(b, (gint64)s->bytes[k]);
        json_builder_set_member_name(b, "count");
        json_builder_add_int_value(b, s->count[k]);
        json_builder_end_object(b);
    }
    json_builder_end_object(b);
    json_builder_end_object(b);
}

static void add_threads(JsonBuilder *b, const SimThreads *ts)
{
    uint32_t i;

    json_builder_begin_array(b);
    for (i = 0; i < ts->n; i++) {
        const SimThread *t = &ts->v[i];
        uint8_t st = sim_thread_wire_status(ts, t);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "id");
        json_builder_add_int_value(b, t->id);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, t->name);
        json_builder_set_member_name(b, "state");
        json_builder_add_int_value(b, st);
        json_builder_set_member_name(b, "state_name");
        json_builder_add_string_value(b, sim_thread_status_name(st, ts->art));
        json_builder_set_member_name(b, "tid");
        json_builder_add_int_value(b, t->tid);
        json_builder_set_member_name(b, "utime");
        json_builder_add_int_value(b, (gint64)(t->utime_milli / 1000));
        json_builder_set_member_name(b, "stime");
        json_builder_add_int_value(b, (gint64)(t->stime_milli / 1000));
        json_builder_set_member_name(b, "daemon");
        json_builder_add_boolean_value(b, t->daemon != 0);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

/* Decode our own THST payload back into objects (it is well-formed). */
static void add_thst(JsonBuilder *b, GBytes *thst)
{
    ddm_reader r;
    gsize len;
    const uint8_t *d;
    unsigned hl, el, n, i;

    if (!thst) {
        json_builder_add_null_value(b);
        return;
    }
    d = g_bytes_get_data(thst, &len);
    ddm_reader_init(&r, d, len);
    hl = ddm_read_u1(&r);
    el = ddm_read_u1(&r);
    n = ddm_read_u2(&r);
    ddm_read_skip(&r, hl > 4 ? hl - 4 : 0);
    json_builder_begin_array(b);
    for (i = 0; i < n && ddm_reader_ok(&r); i++) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "id");
        json_builder_add_int_value(b, ddm_read_u4(&r));
        json_builder_set_member_name(b, "state");
        json_builder_add_int_value(b, ddm_read_u1(&r));
        json_builder_set_member_name(b, "tid");
        json_builder_add_int_value(b, ddm_read_u4(&r));
        json_builder_set_member_name(b, "utime");
        json_builder_add_int_value(b, ddm_read_u4(&r));
        json_builder_set_member_name(b, "stime");
        json_builder_add_int_value(b, ddm_read_u4(&r));
        json_builder_set_member_name(b, "daemon");
        json_builder_add_boolean_value(b, ddm_read_u1(&r) != 0);
        ddm_read_skip(&r, el > 18 ? el - 18 : 0);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

void sim_json_member_int(JsonBuilder *b, const char *name, gint64 v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, v);
}

void sim_json_member_str(JsonBuilder *b, const char *name, const char *v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_string_value(b, v);
}

void sim_json_member_bool(JsonBuilder *b, const char *name, gboolean v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_boolean_value(b, v);
}

/* Heap dumps: how many were fully sent (HPDS) or written (HPDU), and the
 * last one: via, size, sha256 of the bytes sent, HPDU's device path. */
static void add_hprof(JsonBuilder *b, const SimHprofSent *h)
{
    json_builder_begin_object(b);
    sim_json_member_int(b, "dumps", (gint64)h->dumps);
    json_builder_set_member_name(b, "last");
    if (h->valid) {
        json_builder_begin_object(b);
        sim_json_member_str(b, "via", h->via_hpdu ? "hpdu" : "hpds");
        sim_json_member_int(b, "bytes", (gint64)h->bytes);
        sim_json_member_str(b, "sha256", h->sha256);
        json_builder_set_member_name(b, "path");
        if (h->path)
            json_builder_add_string_value(b, h->path);
        else
            json_builder_add_null_value(b);
        if (h->fault != SIM_HPROF_FAULT_NONE)
            sim_json_member_str(b, "fault", sim_hprof_fault_name(h->fault));
        /* ddmon-simvm --write-hprof F --hprof-size BYTES --hprof-gen-seed
         * GEN_SEED --hprof-package PACKAGE writes these very bytes again */
        sim_json_member_int(b, "gen_seed", (gint64)h->gen_seed);
        json_builder_set_member_name(b, "package");
        if (h->package)
            json_builder_add_string_value(b, h->package);
        else
            json_builder_add_null_value(b);
        json_builder_end_object(b);
    } else {
        json_builder_add_null_value(b);
    }
    json_builder_end_object(b);
}

/* The allocation tracker: its state and the records a REAL would send now
 * (most recent first; class names as the JVM descriptors sent). */
static void add_alloc(JsonBuilder *b, const SimAlloc *a)
{
    uint32_t i, d;

    json_builder_begin_object(b);
    sim_json_member_bool(b, "enabled", a->enabled != 0);
    json_builder_set_member_name(b, "records");
    json_builder_begin_array(b);
    for (i = 0; i < a->n; i++) {
        const SimAllocRecord *r = &a->rec[i];
        json_builder_begin_object(b);
        sim_json_member_str(b, "class", sim_alloc_class_name(r->cls));
        sim_json_member_int(b, "size", r->size);
        sim_json_member_int(b, "thread", r->tid);
        json_builder_set_member_name(b, "frames");
        json_builder_begin_array(b);
        for (d = 0; d < r->depth; d++) {
            json_builder_begin_object(b);
            sim_json_member_str(b, "class", sim_alloc_class_name(r->f[d].cls));
            sim_json_member_str(b, "method", sim_alloc_method_name(r->f[d].method));
            sim_json_member_str(b, "file", sim_alloc_file_name(r->f[d].file));
            sim_json_member_int(b, "line", r->f[d].line);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

static void add_vm(JsonBuilder *b, SimVm *vm)
{
    unsigned i;

    json_builder_begin_object(b);
    sim_json_member_int(b, "pid", vm->pid);
    sim_json_member_int(b, "port", vm->port);
    sim_json_member_str(b, "app", vm->mode == SIM_MODE_JVM ? "" : sim_vm_current_name(vm));
    sim_json_member_str(b, "final_app", vm->real_name);
    sim_json_member_str(b, "package", vm->package_name);
    sim_json_member_int(b, "user_id", vm->user_id);
    sim_json_member_str(b, "mode", sim_mode_name(vm->mode));
    sim_json_member_bool(b, "ddm", vm->mode != SIM_MODE_JVM);
    sim_json_member_str(b, "abi", sim_vm_abi(vm));
    sim_json_member_bool(b, "native_debuggable", vm->native_debuggable != 0);
    sim_json_member_bool(b, "waiting", vm->waiting);
    sim_json_member_bool(b, "debugger_active", vm->debugger_active);
    sim_json_member_bool(b, "connected", vm->conn != NULL);
    sim_json_member_int(b, "connections", (gint64)vm->connections);
    sim_json_member_int(b, "refused", (gint64)vm->refused);
    json_builder_set_member_name(b, "threads");
    add_threads(b, &vm->threads);
    json_builder_set_member_name(b, "alloc");
    add_alloc(b, &vm->alloc);
    json_builder_set_member_name(b, "hprof");
    add_hprof(b, &vm->hprof_sent);
    json_builder_set_member_name(b, "profiling");
    sim_profiling_add_state(b, vm);
    json_builder_set_member_name(b, "views");
    sim_viewdebug_add_state(b, vm);
    sim_json_member_bool(b, "thread_events", vm->conn != NULL && vm->conn->then_on);
    json_builder_set_member_name(b, "thst_sent");
    add_thst(b, vm->thst_recent[0]);
    json_builder_set_member_name(b, "thst_recent");
    json_builder_begin_array(b);
    for (i = 0; i < SIM_THST_RECENT && vm->thst_recent[i]; i++)
        add_thst(b, vm->thst_recent[i]);
    json_builder_end_array(b);

    json_builder_set_member_name(b, "heaps");
    json_builder_begin_array(b);
    for (i = 0; i < vm->n_heaps; i++) {
        const SimHeap *h = &vm->heaps[i];
        const SimHpifSent *s = &vm->hpif_sent[i];
        json_builder_begin_object(b);
        sim_json_member_int(b, "id", h->heap_id);
        sim_json_member_int(b, "generation", h->generation);
        sim_json_member_int(b, "max", (gint64)h->max_units * SIM_HEAP_UNIT);
        sim_json_member_int(b, "size", (gint64)h->size_units * SIM_HEAP_UNIT);
        json_builder_set_member_name(b, "hpif_sent");
        if (s->valid) {
            json_builder_begin_object(b);
            sim_json_member_int(b, "timestamp_ms", (gint64)s->timestamp_ms);
            sim_json_member_int(b, "reason", s->reason);
            sim_json_member_int(b, "max", s->max);
            sim_json_member_int(b, "size", s->size);
            sim_json_member_int(b, "allocated_bytes", s->allocated);
            sim_json_member_int(b, "allocated_objects", s->objects);
            json_builder_end_object(b);
        } else {
            json_builder_add_null_value(b);
        }
        json_builder_set_member_name(b, "segments_sent");
        if (vm->seg_sent_valid[i])
            add_seg_stats(b, &vm->seg_sent[i], vm->seg_sent_generation[i]);
        else
            json_builder_add_null_value(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);

    json_builder_set_member_name(b, "native");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "segments_sent");
    if (vm->native_seg_sent_valid)
        add_seg_stats(b, &vm->native_seg_sent, vm->native.generation);
    else
        json_builder_add_null_value(b);
    json_builder_set_member_name(b, "nhgt_sent");
    if (vm->nhgt_sent_valid) {
        const SimNhgtStats *n = &vm->nhgt_sent;
        json_builder_begin_object(b);
        sim_json_member_int(b, "version", n->version);
        sim_json_member_int(b, "ptr_size", n->ptr_size);
        sim_json_member_int(b, "map_bytes", (gint64)n->map_bytes);
        sim_json_member_int(b, "records", n->records);
        sim_json_member_int(b, "total_memory", (gint64)n->total_memory);
        sim_json_member_int(b, "zygote_bytes", (gint64)n->zygote_bytes);
        sim_json_member_int(b, "backtrace_size", n->backtrace_size);
        json_builder_end_object(b);
    } else {
        json_builder_add_null_value(b);
    }
    json_builder_end_object(b);
    json_builder_end_object(b);
}

/* One VM as pretty JSON text. */
static char *vm_to_json(SimVm *vm)
{
    JsonBuilder *b = json_builder_new();
    JsonGenerator *gen = json_generator_new();
    JsonNode *root;
    char *text;

    add_vm(b, vm);
    root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    json_generator_set_pretty(gen, TRUE);
    text = json_generator_to_data(gen, NULL);
    json_node_unref(root);
    g_object_unref(gen);
    g_object_unref(b);
    return text;
}

char *sim_state_to_json(SimWorld *w)
{
    /* VM by VM, so 5000 VMs never hold one big JSON tree in memory */
    GString *s = g_string_sized_new(4096 + (gsize)w->vms->len * 4096);
    guint i;

    g_string_append_printf(s, "{\n  \"simvm_pid\" : %d,\n  \"seed\" : %" G_GUINT64_FORMAT
                              ",\n  \"time_ms\" : %" G_GINT64_FORMAT ",\n  \"vms\" : [",
                           (int)getpid(), w->cfg.seed, sim_world_now_ms(w));
    for (i = 0; i < w->vms->len; i++) {
        char *one = vm_to_json(g_ptr_array_index(w->vms, i));
        g_string_append(s, i ? ",\n" : "\n");
        g_string_append(s, one);
        g_free(one);
    }
    g_string_append(s, "\n  ]\n}\n");
    return g_string_free(s, FALSE);
}

gboolean sim_write_atomically(const char *path, const char *text, GError **error)
{
    /* no fsync (g_file_set_contents does one per call): readers only need
     * to never see a half-written file, which the rename guarantees */
    char *tmp = g_strdup_printf("%s.tmp.%d", path, (int)getpid());
    size_t len = strlen(text);
    FILE *f = fopen(tmp, "w");
    gboolean ok = f && fwrite(text, 1, len, f) == len;

    if (f && fclose(f) != 0)
        ok = FALSE;
    if (ok && rename(tmp, path) != 0)
        ok = FALSE;
    if (!ok) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write %s: %s", path,
                    g_strerror(e));
        (void)unlink(tmp);
    }
    g_free(tmp);
    return ok;
}
