/* SPDX-License-Identifier: Apache-2.0
 *
 * jvm plugin: `ddmon jvm-stack VM THREAD --suspend`, the stack of one
 * thread of a plain JVM. JDWP gives frames only of a suspended thread, so
 * the command suspends exactly that thread (ThreadReference.Suspend), reads
 * its frames (Frames), resumes it at once (Resume: the thread is stopped for
 * two round trips), then names each frame's class, method, source file and
 * line (ReferenceType.Signature, Methods, SourceFile; Method.LineTable),
 * which needs no suspension. Without --suspend it refuses and says why:
 * nothing is suspended unless the user asks. THREAD is the "id" of the
 * JVM's threads view, or a thread name seen there.
 * The job owns itself: it ends when it is finished and no reply is due.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/plugin.h>

#include "jvm.h"

static const ddm_column k_stack_columns[] = {
    {"thread", DDM_VAL_INT, NULL}, {"frame", DDM_VAL_INT, NULL}, {"class", DDM_VAL_STR, NULL},
    {"method", DDM_VAL_STR, NULL}, {"file", DDM_VAL_STR, NULL},  {"line", DDM_VAL_INT, NULL},
    {"native", DDM_VAL_BOOL, NULL},
};

typedef struct frame_names {
    char *class_name, *method, *file;
    int32_t line;
} frame_names;

typedef struct stack_job {
    jvm_plugin *pl;
    ddm_cmd *cmd;
    ddm_vm *vm;
    uint64_t thread;
    int step;          /* what the next reply answers, for the one-at-a-time steps */
    int finished;      /* cmd_finish called */
    int suspended;     /* Suspend succeeded and no Resume was sent yet */
    size_t outstanding;
    jvm_frame *frames;
    size_t n_frames;
    frame_names *names;
    char *tspec;       /* the thread as the user gave it */
    uint64_t *all;     /* AllThreads of this connection: ids are valid once the VM sent them */
    size_t n_all;
    int matched;
} stack_job;

enum { S_IDSIZES = 1, S_ALL, S_TNAME, S_SUSPEND, S_FRAMES, S_RESUME, S_SIG, S_METHODS, S_FILE, S_LINES };

typedef struct stack_req {
    stack_job *job;
    int kind;
    size_t frame;
} stack_req;

static void job_free(stack_job *j)
{
    for (size_t i = 0; j->names && i < j->n_frames; i++) {
        free(j->names[i].class_name);
        free(j->names[i].method);
        free(j->names[i].file);
    }
    free(j->names);
    free(j->frames);
    free(j->all);
    free(j->tspec);
    free(j);
}

static void job_finish(stack_job *j, ddm_cmd_status status, const char *msg)
{
    if (j->finished)
        return;
    j->finished = 1;
    j->pl->host->cmd_finish(j->cmd, status, msg);
}

static void job_maybe_free(stack_job *j)
{
    if (j->finished && j->outstanding == 0)
        job_free(j);
}

static void on_stack_reply(ddm_plugin *self, ddm_vm *vm, const ddm_jdwp_reply *r, void *ud);

static int job_send(stack_job *j, uint8_t cmdset, uint8_t cmd, const void *data, size_t len,
                    int kind, size_t frame)
{
    stack_req *q = calloc(1, sizeof *q);
    int rc;
    if (!q)
        return -ENOMEM;
    q->job = j;
    q->kind = kind;
    q->frame = frame;
    rc = j->pl->host->jdwp_request(j->pl->self, j->vm, cmdset, cmd, data, len, JVM_REQ_TIMEOUT_MS,
                                   on_stack_reply, q);
    if (rc != 0) {
        free(q);
        return rc;
    }
    j->outstanding++;
    return 0;
}

static jvm_vm *job_state(stack_job *j)
{
    return j->pl->host->vm_get_data(j->pl->self, j->vm);
}

static void fail(stack_job *j, ddm_cmd_status st, const char *what, int err)
{
    char msg[160];
    snprintf(msg, sizeof msg, "%s (%d)", what, err);
    job_finish(j, st, msg);
}

/* No thread of the JVM is the one the user named: say which VM and thread,
 * and where the ids and names are. */
static void no_thread(stack_job *j)
{
    const ddm_vm_info *info = j->pl->host->vm_info(j->vm);
    const char *key = info && info->key ? info->key : "?";
    char msg[512];
    snprintf(msg, sizeof msg,
             "VM %s has no thread '%.80s' (by id or name, among its %zu threads; see ddmon view "
             "threads --vm %s)",
             key, j->tspec, j->n_all, key);
    job_finish(j, DDM_CMD_NOT_FOUND, msg);
}

static void send_thread_cmd(stack_job *j, uint8_t cmd, int kind)
{
    jvm_vm *st = job_state(j);
    uint8_t id[8];
    int rc;
    jvm_put_id(id, j->thread, st->ids.object);
    if (kind == S_FRAMES) {
        uint8_t buf[16];
        memcpy(buf, id, st->ids.object);
        /* startFrame 0, length -1: all of them */
        uint8_t *p = buf + st->ids.object;
        p[0] = p[1] = p[2] = p[3] = 0;
        p[4] = p[5] = p[6] = p[7] = 0xff;
        rc = job_send(j, JVM_THREAD, cmd, buf, st->ids.object + 8, kind, 0);
    } else {
        rc = job_send(j, JVM_THREAD, cmd, id, st->ids.object, kind, 0);
    }
    if (rc != 0)
        fail(j, DDM_CMD_FAILED,
             rc == -EBUSY ? "the JVM is busy (a debugger is attached, or another stack is being read): error"
                          : "cannot send the JDWP command: error",
             rc);
}

static void resume(stack_job *j)
{
    if (!j->suspended)
        return;
    j->suspended = 0;
    jvm_vm *st = job_state(j);
    if (st)
        st->stack_busy = 0;
    send_thread_cmd(j, JVM_THREAD_RESUME, S_RESUME);
}

/* Name every frame: per frame its class signature, source file, methods
 * and line table (the JVM answers from its class data; nothing is held). */
static void ask_names(stack_job *j)
{
    jvm_vm *st = job_state(j);
    uint8_t buf[16];
    j->names = calloc(j->n_frames ? j->n_frames : 1, sizeof *j->names);
    if (!j->names) {
        job_finish(j, DDM_CMD_FAILED, "out of memory");
        return;
    }
    for (size_t i = 0; i < j->n_frames && !j->finished; i++) {
        const jvm_frame *f = &j->frames[i];
        j->names[i].line = -1;
        jvm_put_id(buf, f->class_id, st->ids.reftype);
        if (job_send(j, JVM_REFTYPE, JVM_REFTYPE_SIGNATURE, buf, st->ids.reftype, S_SIG, i) != 0 ||
            job_send(j, JVM_REFTYPE, JVM_REFTYPE_SOURCE_FILE, buf, st->ids.reftype, S_FILE, i) != 0 ||
            job_send(j, JVM_REFTYPE, JVM_REFTYPE_METHODS, buf, st->ids.reftype, S_METHODS, i) != 0)
            break;
        jvm_put_id(buf + st->ids.reftype, f->method_id, st->ids.method);
        if (job_send(j, JVM_METHOD, JVM_METHOD_LINE_TABLE, buf, st->ids.reftype + st->ids.method,
                     S_LINES, i) != 0)
            break;
    }
}

static void publish(stack_job *j)
{
    const ddm_host *h = j->pl->host;
    ddm_view *v = h->cmd_result(j->cmd, DDM_VIEW_TABLE, "Stack (JDWP)");
    char msg[96];
    if (v) {
        h->view_set_columns(v, k_stack_columns, sizeof k_stack_columns / sizeof k_stack_columns[0]);
        h->view_begin(v);
        for (size_t i = 0; i < j->n_frames; i++) {
            const frame_names *n = &j->names[i];
            h->view_row(v);
            h->view_int(v, (int64_t)j->thread);
            h->view_int(v, (int64_t)i);
            h->view_str(v, n->class_name);
            h->view_str(v, n->method);
            h->view_str(v, n->file);
            if (n->line >= 0)
                h->view_int(v, n->line);
            else
                h->view_str(v, NULL); /* unknown or native: null, native says which */
            h->view_bool(v, j->frames[i].index == (uint64_t)-1);
        }
        h->view_commit(v);
    }
    snprintf(msg, sizeof msg, "%zu frames; the thread was suspended for the read and resumed",
             j->n_frames);
    job_finish(j, DDM_CMD_OK, msg);
}

static void start_suspend(stack_job *j, jvm_vm *st)
{
    if (st->stack_busy) {
        job_finish(j, DDM_CMD_FAILED, "another stack of this VM is being read");
        return;
    }
    st->stack_busy = 1;
    j->suspended = 1;
    send_thread_cmd(j, JVM_THREAD_SUSPEND, S_SUSPEND);
    if (j->finished) {
        j->suspended = 0;
        st->stack_busy = 0;
    }
}

static void on_stack_reply(ddm_plugin *self, ddm_vm *vm, const ddm_jdwp_reply *r, void *ud)
{
    stack_req *q = ud;
    stack_job *j = q->job;
    int kind = q->kind;
    size_t fi = q->frame;
    jvm_vm *st;
    (void)self;
    (void)vm;
    free(q);
    j->outstanding--;
    if (r->status == DDM_REPLY_VM_GONE) {
        j->suspended = 0; /* the connection is gone: the JVM's agent resumed everything */
        job_finish(j, DDM_CMD_FAILED, "the VM went away");
        job_maybe_free(j);
        return;
    }
    st = job_state(j);
    if (!st) {
        job_finish(j, DDM_CMD_FAILED, "the VM went away");
        job_maybe_free(j);
        return;
    }
    switch (kind) {
    case S_IDSIZES:
        if (r->status != DDM_REPLY_CHUNK || jvm_parse_idsizes(r->data, r->len, &st->ids) != 0) {
            fail(j, DDM_CMD_FAILED, "VirtualMachine.IDSizes failed: JDWP error", (int)r->jdwp_error);
            break;
        }
        st->ids_known = 1;
        if (job_send(j, JVM_VM, JVM_VM_ALL_THREADS, NULL, 0, S_ALL, 0) != 0)
            fail(j, DDM_CMD_FAILED, "cannot send VirtualMachine.AllThreads", 0);
        break;
    case S_ALL: {
        char *end;
        unsigned long long v;
        if (r->status != DDM_REPLY_CHUNK ||
            jvm_parse_all_threads(r->data, r->len, st->ids.object, JVM_MAX_THREADS, &j->all,
                                  &j->n_all) != 0) {
            fail(j, DDM_CMD_FAILED, "VirtualMachine.AllThreads failed: JDWP error", r->jdwp_error);
            break;
        }
        v = strtoull(j->tspec, &end, 10);
        if (j->tspec[0] && !*end && j->tspec[0] != '-') {
            for (size_t i = 0; i < j->n_all; i++)
                if (j->all[i] == v) {
                    j->thread = v;
                    start_suspend(j, st);
                    goto done;
                }
        }
        /* A name: ask every thread's (the user's spec may also be a name of digits). */
        for (size_t i = 0; i < j->n_all; i++) {
            uint8_t id[8];
            jvm_put_id(id, j->all[i], st->ids.object);
            if (job_send(j, JVM_THREAD, JVM_THREAD_NAME, id, st->ids.object, S_TNAME, i) != 0)
                break;
        }
        if (j->outstanding == 0)
            no_thread(j);
        break;
    }
    case S_TNAME:
        if (r->status == DDM_REPLY_CHUNK && !j->matched && fi < j->n_all) {
            char *name = jvm_parse_string(r->data, r->len);
            if (name && strcmp(name, j->tspec) == 0) {
                j->matched = 1;
                j->thread = j->all[fi];
            }
            free(name);
        }
        if (j->outstanding == 0 && !j->finished) {
            if (j->matched)
                start_suspend(j, st);
            else
                no_thread(j);
        }
        break;
    case S_SUSPEND:
        if (j->finished)
            break;
        if (r->status != DDM_REPLY_CHUNK) {
            j->suspended = 0;
            st->stack_busy = 0;
            if (r->status == DDM_REPLY_ERROR && r->jdwp_error == 10)
                fail(j, DDM_CMD_NOT_FOUND, "no such thread: JDWP error", r->jdwp_error);
            else if (r->status == DDM_REPLY_TIMEOUT) {
                j->suspended = 1; /* may have happened: resume to be sure */
                resume(j);
                fail(j, DDM_CMD_FAILED, "ThreadReference.Suspend timed out", 0);
            } else
                fail(j, DDM_CMD_FAILED, "ThreadReference.Suspend failed: JDWP error", r->jdwp_error);
            break;
        }
        send_thread_cmd(j, JVM_THREAD_FRAMES, S_FRAMES);
        break;
    case S_FRAMES:
        resume(j); /* at once: names need no suspended thread */
        if (r->status != DDM_REPLY_CHUNK ||
            jvm_parse_frames(r->data, r->len, &st->ids, JVM_MAX_FRAMES, &j->frames, &j->n_frames) != 0) {
            fail(j, DDM_CMD_FAILED, "ThreadReference.Frames failed: JDWP error", r->jdwp_error);
            break;
        }
        if (!j->finished)
            ask_names(j);
        break;
    case S_RESUME:
        if (r->status != DDM_REPLY_CHUNK)
            j->pl->host->log(j->pl->self, DDM_LOG_WARNING,
                             "ThreadReference.Resume of thread %llu failed (status %d, error %d)",
                             (unsigned long long)j->thread, (int)r->status, (int)r->jdwp_error);
        break;
    case S_SIG:
    case S_FILE:
    case S_METHODS:
    case S_LINES:
        if (j->names && fi < j->n_frames && r->status == DDM_REPLY_CHUNK) {
            frame_names *n = &j->names[fi];
            if (kind == S_SIG) {
                char *sig = jvm_parse_string(r->data, r->len);
                n->class_name = jvm_class_name(sig);
                free(sig);
            } else if (kind == S_FILE) {
                n->file = jvm_parse_string(r->data, r->len);
            } else if (kind == S_METHODS) {
                n->method = jvm_parse_method_name(r->data, r->len, &st->ids, j->frames[fi].method_id);
            } else {
                n->line = jvm_parse_line(r->data, r->len, j->frames[fi].index);
            }
        }
        if (j->outstanding == 0 && !j->finished)
            publish(j);
        break;
    default:
        break;
    }
    if (kind == S_FRAMES && !j->finished && j->n_frames == 0 && j->outstanding == 0)
        publish(j);
done:
    job_maybe_free(j);
}

static int stack_cmd(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    jvm_plugin *pl = ud;
    const ddm_host *h = pl->host;
    const char *vmspec = NULL, *tspec = NULL;
    int suspend = 0;
    ddm_vm *vm;
    jvm_vm *st;
    stack_job *j;
    (void)self;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--suspend") == 0)
            suspend = 1;
        else if (!vmspec)
            vmspec = argv[i];
        else if (!tspec)
            tspec = argv[i];
        else {
            h->cmd_finish(cmd, DDM_CMD_USAGE, "usage: jvm-stack VM THREAD --suspend");
            return 0;
        }
    }
    if (!vmspec || !tspec) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, "usage: jvm-stack VM THREAD --suspend");
        return 0;
    }
    /* cmd_find_vm: the core's message when none or several match, and
     * the result view names the VM. */
    vm = DDM_HOST_HAS(h, cmd_find_vm) ? h->cmd_find_vm(cmd, vmspec) : h->find_vm(pl->self, vmspec);
    if (!vm && DDM_HOST_HAS(h, cmd_find_vm))
        return 0; /* finished by cmd_find_vm */
    if (!vm) {
        h->cmd_finish(cmd, DDM_CMD_NOT_FOUND, "no plain JVM matches (try 'ddmon vms')");
        return 0;
    }
    if (h->vm_info(vm)->ddm) { /* a VM matched: not a "not found" */
        char msg[320];
        snprintf(msg, sizeof msg,
                 "VM %.120s speaks DDM: its stacks are read with ddmon stack %.120s THREAD_ID",
                 vmspec, vmspec);
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    if (!suspend) {
        h->cmd_finish(cmd, DDM_CMD_USAGE,
                      "JDWP reads the frames of a suspended thread only: add --suspend to suspend "
                      "this one thread for the read (it is resumed right after)");
        return 0;
    }
    if (h->vm_info(vm)->debugger) {
        h->cmd_finish(cmd, DDM_CMD_FAILED, "a debugger is attached: ddmon leaves the VM to it");
        return 0;
    }
    st = jvm_vm_state(pl, vm);
    if (!st) {
        h->cmd_finish(cmd, DDM_CMD_FAILED, "out of memory");
        return 0;
    }
    j = calloc(1, sizeof *j);
    if (!j) {
        h->cmd_finish(cmd, DDM_CMD_FAILED, "out of memory");
        return 0;
    }
    j->pl = pl;
    j->cmd = cmd;
    j->vm = vm;
    j->tspec = strdup(tspec);
    if (!j->tspec) {
        free(j);
        h->cmd_finish(cmd, DDM_CMD_FAILED, "out of memory");
        return 0;
    }
    /* IDSizes (once per connection), then AllThreads: the thread must be one
     * this connection was told of, by id or by name. */
    if (st->ids_known ? job_send(j, JVM_VM, JVM_VM_ALL_THREADS, NULL, 0, S_ALL, 0)
                      : job_send(j, JVM_VM, JVM_VM_ID_SIZES, NULL, 0, S_IDSIZES, 0)) {
        job_free(j);
        h->cmd_finish(cmd, DDM_CMD_FAILED, "cannot ask the VM (a debugger attached?)");
    }
    return 0;
}

int jvm_stack_register(jvm_plugin *pl)
{
    return pl->host->register_command(pl->self, "jvm-stack", "jvm-stack VM THREAD --suspend",
                                      "a plain JVM thread's stack (suspends that thread for the read)",
                                      stack_cmd, pl, NULL);
}
