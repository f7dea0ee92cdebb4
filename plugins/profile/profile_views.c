/* SPDX-License-Identifier: Apache-2.0
 *
 * What a decoded trace looks like to users: the methods table (the top N
 * by inclusive time and the top N by exclusive time, with their calls and
 * ranks), the threads table and the summary fields. Used for trace-summary
 * and for the views a VM gets after each trace. Times are microseconds of
 * the trace's first clock (doc/trace.md).
 */
#include "build-config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

static const ddm_column method_cols[] = {
    {"method", DDM_VAL_STR, NULL},          {"signature", DDM_VAL_STR, NULL},
    {"calls", DDM_VAL_INT, NULL},           {"inclusive_us", DDM_VAL_INT, "us"},
    {"exclusive_us", DDM_VAL_INT, "us"},    {"inclusive_percent", DDM_VAL_DOUBLE, "%"},
    {"exclusive_percent", DDM_VAL_DOUBLE, "%"}, {"rank_inclusive", DDM_VAL_INT, NULL},
    {"rank_exclusive", DDM_VAL_INT, NULL},
};

static const ddm_column thread_cols[] = {
    {"tid", DDM_VAL_INT, NULL},     {"name", DDM_VAL_STR, NULL},
    {"calls", DDM_VAL_INT, NULL},   {"records", DDM_VAL_INT, NULL},
    {"time_us", DDM_VAL_INT, "us"}, {"max_depth", DDM_VAL_INT, NULL},
};

static size_t rank_of(const trace_method *const *list, size_t n, const trace_method *m)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == m)
            return i + 1;
    return 0;
}

static double percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void profile_fill_methods(const ddm_host *h, ddm_view *v, const trace_decoder *d, size_t top)
{
    const trace_info *in = trace_decoder_info(d);
    const trace_method **incl = calloc(top ? top : 1, sizeof *incl);
    const trace_method **excl = calloc(top ? top : 1, sizeof *excl);
    const trace_method **rows = calloc(2 * (top ? top : 1), sizeof *rows);
    size_t ni, ne, nr = 0;
    char name[512];

    h->view_set_columns(v, method_cols, sizeof method_cols / sizeof method_cols[0]);
    h->view_begin(v);
    if (!incl || !excl || !rows) {
        free(incl);
        free(excl);
        free(rows);
        h->view_commit(v);
        return;
    }
    ni = trace_decoder_top(d, TRACE_BY_INCLUSIVE, incl, top);
    ne = trace_decoder_top(d, TRACE_BY_EXCLUSIVE, excl, top);
    /* rows: the inclusive list, then exclusive-only ones (n <= 2 * top:
     * the rank lookups are O(top^2) with top <= PROFILE_MAX_TOP) */
    for (size_t i = 0; i < ni; i++)
        rows[nr++] = incl[i];
    for (size_t i = 0; i < ne; i++)
        if (!rank_of(incl, ni, excl[i]))
            rows[nr++] = excl[i];
    for (size_t i = 0; i < nr; i++) {
        const trace_method *m = rows[i];
        size_t ri = rank_of(incl, ni, m), re = rank_of(excl, ne, m);
        if (m->name && *m->name)
            snprintf(name, sizeof name, "%s.%s", m->class_name, m->name);
        else
            snprintf(name, sizeof name, "%s", m->class_name);
        h->view_row(v);
        h->view_str(v, name);
        h->view_str(v, m->signature && *m->signature ? m->signature : NULL);
        h->view_int(v, (int64_t)m->calls);
        h->view_int(v, (int64_t)m->inclusive_usec);
        h->view_int(v, (int64_t)m->exclusive_usec);
        h->view_double(v, percent(m->inclusive_usec, in->total_usec));
        h->view_double(v, percent(m->exclusive_usec, in->total_usec));
        if (ri)
            h->view_int(v, (int64_t)ri);
        else
            h->view_str(v, NULL);
        if (re)
            h->view_int(v, (int64_t)re);
        else
            h->view_str(v, NULL);
    }
    h->view_commit(v);
    free(incl);
    free(excl);
    free(rows);
}

void profile_fill_threads(const ddm_host *h, ddm_view *v, const trace_decoder *d)
{
    h->view_set_columns(v, thread_cols, sizeof thread_cols / sizeof thread_cols[0]);
    h->view_begin(v);
    for (size_t i = 0; i < trace_decoder_n_threads(d) && i < DDM_VIEW_MAX_ROWS; i++) {
        const trace_thread *t = trace_decoder_thread(d, i);
        h->view_row(v);
        h->view_int(v, t->tid);
        h->view_str(v, t->name);
        h->view_int(v, (int64_t)t->calls);
        h->view_int(v, (int64_t)t->records);
        h->view_int(v, (int64_t)t->usec);
        h->view_int(v, t->max_depth);
    }
    h->view_commit(v);
}

void profile_summary_fields(const ddm_host *h, ddm_view *v, const trace_decoder *d)
{
    const trace_info *in = trace_decoder_info(d);
    h->view_field_int(v, "version", in->data_version);
    h->view_field_str(v, "clock", trace_clock_name(in->clock));
    h->view_field_int(v, "record_size", in->record_size);
    h->view_field_int(v, "records", (int64_t)in->records);
    h->view_field_int(v, "threads", (int64_t)trace_decoder_n_threads(d));
    h->view_field_int(v, "methods_listed", (int64_t)in->methods_listed);
    h->view_field_int(v, "thread_time_us", (int64_t)in->total_usec);
    if (in->elapsed_usec >= 0)
        h->view_field_int(v, "elapsed_us", in->elapsed_usec);
    else
        h->view_field_str(v, "elapsed_us", NULL);
    h->view_field_str(v, "vm_kind", in->vm[0] ? in->vm : NULL);
    if (in->pid >= 0)
        h->view_field_int(v, "trace_pid", in->pid);
    h->view_field_bool(v, "overflow", in->overflow);
    h->view_field_int(v, "unknown_records", (int64_t)in->unknown_records);
    h->view_field_int(v, "unmatched_exits", (int64_t)in->unmatched_exits);
}

void profile_summary_line(const trace_decoder *d, char *out, size_t n)
{
    const trace_info *in = trace_decoder_info(d);
    snprintf(out, n,
             "version %d, %s clock, %" PRIu64 " records, %zu threads, %zu methods listed, "
             "%.3f s of thread time%s",
             in->data_version, trace_clock_name(in->clock), in->records,
             trace_decoder_n_threads(d), in->methods_listed, (double)in->total_usec / 1e6,
             in->overflow ? " (the VM's buffer overflowed: the trace is cut short)" : "");
}
