/* SPDX-License-Identifier: Apache-2.0
 *
 * The JDWP object model of a simulated VM (see jdwp_model.h): class and
 * method tables built once per model from the STKL stack templates, the
 * live threads read from the VM's SimThreads at each command, per-thread
 * suspend counts, and event request ids. Every length and ID from the wire
 * is checked; a short or malformed command gets ILLEGAL_ARGUMENT.
 */
#include "jdwp_model.h"

#include <glib.h>
#include <string.h>

#include "simvm-private.h"

#define GROUP_SYSTEM 0x100u
#define GROUP_MAIN 0x101u
#define CLASS_BASE 0x2000u
#define METHOD_BASE 0x3000u
#define CLASS_OBJECT_BASE 0x4000u
#define MAX_LINES 16     /* distinct lines per method */
#define MAX_TEMPLATES 64 /* stack kinds probed */
#define MAX_SEEN 4096    /* dead threads remembered (their names) */
#define TAG_CLASS 1
#define CLASS_STATUS_INITIALIZED 7 /* VERIFIED | PREPARED | INITIALIZED */
#define ACC_PUBLIC 0x0001
#define ACC_NATIVE 0x0100

typedef struct ModelClass {
    char *name;      /* java.lang.Thread */
    char *signature; /* Ljava/lang/Thread; */
    char *file;      /* Thread.java, or NULL: no source information */
} ModelClass;

typedef struct ModelMethod {
    guint cls;
    char *name;
    gboolean native;
    int32_t lines[MAX_LINES]; /* ascending; code index = line */
    guint n_lines;
} ModelMethod;

typedef struct ModelFrame {
    guint cls, method;
    int32_t line;
} ModelFrame;

struct SimJdwpModel {
    GPtrArray *classes; /* ModelClass* (owned) */
    GPtrArray *methods; /* ModelMethod* (owned) */
    GHashTable *suspend; /* thread id -> suspend count */
    GHashTable *seen;    /* thread id -> name (owned) of every thread seen alive */
    int32_t next_request_id;
};

/* ------------------------------------------------------------ tables */

static void class_free(gpointer p)
{
    ModelClass *k = p;

    g_free(k->name);
    g_free(k->signature);
    g_free(k->file);
    g_free(k);
}

static void method_free(gpointer p)
{
    ModelMethod *mm = p;

    g_free(mm->name);
    g_free(mm);
}

static guint find_class(const SimJdwpModel *m, const char *name)
{
    guint i;

    for (i = 0; i < m->classes->len; i++)
        if (strcmp(((ModelClass *)m->classes->pdata[i])->name, name) == 0)
            return i;
    return G_MAXUINT;
}

/** The class @name, added when new; @file ("" = none) is kept from the first frame that has one. */
static guint intern_class(SimJdwpModel *m, const char *name, const char *file)
{
    guint i = find_class(m, name);
    ModelClass *k;

    if (i != G_MAXUINT) {
        k = m->classes->pdata[i];
        if (!k->file && file && *file)
            k->file = g_strdup(file);
        return i;
    }
    k = g_new0(ModelClass, 1);
    k->name = g_strdup(name);
    k->signature = g_strdup_printf("L%s;", name);
    g_strdelimit(k->signature, ".", '/');
    k->file = file && *file ? g_strdup(file) : NULL;
    g_ptr_array_add(m->classes, k);
    return m->classes->len - 1;
}

static guint find_method(const SimJdwpModel *m, guint cls, const char *name, gboolean native)
{
    guint i;

    for (i = 0; i < m->methods->len; i++) {
        const ModelMethod *mm = m->methods->pdata[i];
        if (mm->cls == cls && mm->native == native && strcmp(mm->name, name) == 0)
            return i;
    }
    return G_MAXUINT;
}

static guint intern_method(SimJdwpModel *m, guint cls, const char *name, int32_t line)
{
    gboolean native = line == -2;
    guint i = find_method(m, cls, name, native), j;
    ModelMethod *mm;

    if (i == G_MAXUINT) {
        mm = g_new0(ModelMethod, 1);
        mm->cls = cls;
        mm->name = g_strdup(name);
        mm->native = native;
        g_ptr_array_add(m->methods, mm);
        i = m->methods->len - 1;
    }
    mm = m->methods->pdata[i];
    if (line <= 0 || mm->n_lines == MAX_LINES)
        return i;
    for (j = 0; j < mm->n_lines && mm->lines[j] < line; j++)
        ;
    if (j < mm->n_lines && mm->lines[j] == line)
        return i;
    memmove(&mm->lines[j + 1], &mm->lines[j], (mm->n_lines - j) * sizeof mm->lines[0]);
    mm->lines[j] = line;
    mm->n_lines++;
    return i;
}

typedef void (*FrameFn)(const char *cls, const char *method, const char *file, int32_t line, void *ud);

/** Walk an STKL payload (u4 0, u4 id, u4 n, n x (lstr cls, lstr method, lstr file, i4 line)). */
static gboolean walk_stkl(const uint8_t *p, size_t len, FrameFn fn, void *ud)
{
    ddm_reader r;
    uint32_t n, i;

    ddm_reader_init(&r, p, len);
    (void)ddm_read_u4(&r);
    (void)ddm_read_u4(&r);
    n = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r) || n > ddm_reader_remaining(&r) / 16)
        return FALSE;
    for (i = 0; i < n; i++) {
        char *cls = ddm_read_lstr(&r), *method = ddm_read_lstr(&r), *file = ddm_read_lstr(&r);
        int32_t line = ddm_read_i4(&r);
        gboolean ok = cls && method && file && ddm_reader_ok(&r);

        if (ok)
            fn(cls, method, file, line, ud);
        free(cls);
        free(method);
        free(file);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

static void learn_frame(const char *cls, const char *method, const char *file, int32_t line, void *ud)
{
    SimJdwpModel *m = ud;

    intern_method(m, intern_class(m, cls, file), method, line);
}

/* Every stack template threads.c has, probed through its public STKL encoder. */
static void learn_templates(SimJdwpModel *m)
{
    unsigned kind;

    for (kind = 0; kind < MAX_TEMPLATES; kind++) {
        char probe_name[] = "probe";
        SimThread t;
        SimThreads ts;
        ddm_writer w;
        uint8_t *p;
        size_t len;

        memset(&t, 0, sizeof t);
        memset(&ts, 0, sizeof ts);
        t.id = 1;
        t.name = probe_name;
        t.stack = (uint8_t)kind;
        ts.v = &t;
        ts.n = ts.cap = 1;
        ddm_writer_init(&w, 1 << 16);
        if (sim_threads_write_stkl(&ts, 1, &w) < 0) {
            ddm_writer_reset(&w);
            continue;
        }
        p = ddm_writer_take(&w, &len);
        if (p)
            walk_stkl(p, len, learn_frame, m);
        free(p);
    }
}

SimJdwpModel *sim_jdwp_model_new(const char *package_name)
{
    static const char *const base[][2] = {
        { "java.lang.Object", "Object.java" }, { "java.lang.String", "String.java" },
        { "java.lang.Class", "Class.java" },   { "java.lang.Thread", "Thread.java" },
        { "java.lang.ThreadGroup", "ThreadGroup.java" }, { "java.lang.Throwable", "Throwable.java" },
    };
    SimJdwpModel *m = g_new0(SimJdwpModel, 1);
    char *activity;
    guint i;

    m->classes = g_ptr_array_new_with_free_func(class_free);
    m->methods = g_ptr_array_new_with_free_func(method_free);
    m->suspend = g_hash_table_new(g_direct_hash, g_direct_equal);
    m->seen = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    m->next_request_id = 1;
    for (i = 0; i < G_N_ELEMENTS(base); i++)
        intern_method(m, intern_class(m, base[i][0], base[i][1]), "<init>", 1);
    activity = g_strdup_printf("%s.MainActivity",
                               package_name && *package_name ? package_name : "com.example.app");
    intern_method(m, intern_class(m, activity, "MainActivity.java"), "onCreate", 42);
    g_free(activity);
    learn_templates(m);
    return m;
}

void sim_jdwp_model_free(SimJdwpModel *m)
{
    if (!m)
        return;
    g_ptr_array_unref(m->classes);
    g_ptr_array_unref(m->methods);
    g_hash_table_unref(m->suspend);
    g_hash_table_unref(m->seen);
    g_free(m);
}

void sim_jdwp_model_reset(SimJdwpModel *m)
{
    g_hash_table_remove_all(m->suspend);
    m->next_request_id = 1;
}

/* ------------------------------------------------------------ helpers */

static void write_string(ddm_writer *w, const char *s)
{
    size_t n = strlen(s);

    ddm_write_u4(w, (uint32_t)n); /* JDWP strings: u4 byte count, (modified) UTF-8 */
    ddm_write_bytes(w, s, n);
}

static const ModelClass *class_by_id(const SimJdwpModel *m, uint64_t id, guint *index)
{
    if (id < CLASS_BASE || id - CLASS_BASE >= m->classes->len)
        return NULL;
    if (index)
        *index = (guint)(id - CLASS_BASE);
    return m->classes->pdata[id - CLASS_BASE];
}

static const ModelMethod *method_by_id(const SimJdwpModel *m, guint cls, uint64_t id)
{
    const ModelMethod *mm;

    if (id < METHOD_BASE || id - METHOD_BASE >= m->methods->len)
        return NULL;
    mm = m->methods->pdata[id - METHOD_BASE];
    return mm->cls == cls ? mm : NULL;
}

/* Remember the names of the live threads, so that a thread that dies while
 * a debugger holds its ID stays a terminated Thread (Name works, status
 * ZOMBIE) as on a real VM; forget dead threads past MAX_SEEN. */
static void note_live_threads(SimJdwpModel *m, const SimThreads *ts)
{
    uint32_t i;

    if (g_hash_table_size(m->seen) > MAX_SEEN + ts->n) {
        g_hash_table_remove_all(m->seen);
        g_hash_table_remove_all(m->suspend); /* of dead threads mostly; bounded either way */
    }
    for (i = 0; i < ts->n; i++) {
        const SimThread *t = &ts->v[i];
        const char *old = g_hash_table_lookup(m->seen, GUINT_TO_POINTER(t->id));
        const char *name = t->name ? t->name : "";
        if (!old || strcmp(old, name) != 0)
            g_hash_table_replace(m->seen, GUINT_TO_POINTER(t->id), g_strdup(name));
    }
}

/* The live thread @id, or NULL with *@ghost set to the name of a thread that
 * has died since the model saw it (or NULL, and *@error set). */
static const SimThread *thread_by_id(const SimJdwpModel *m, const SimThreads *ts, uint64_t id,
                                     const char **ghost, int *error)
{
    const SimThread *t = NULL;
    gboolean ours = id > SIM_JDWP_THREAD_BASE && id - SIM_JDWP_THREAD_BASE <= UINT32_MAX;

    *ghost = NULL;
    if (ours)
        t = sim_threads_find(ts, (uint32_t)(id - SIM_JDWP_THREAD_BASE));
    if (t)
        return t;
    if (ours)
        *ghost = g_hash_table_lookup(m->seen, GUINT_TO_POINTER((uint32_t)(id - SIM_JDWP_THREAD_BASE)));
    /* an ID of ours that nobody saw: a thread that has gone (collected) */
    *error = ours && id - SIM_JDWP_THREAD_BASE < ts->next_id ? SIM_JDWP_INVALID_OBJECT
                                                              : SIM_JDWP_INVALID_THREAD;
    return NULL;
}

static uint64_t thread_object(const SimThread *t)
{
    return SIM_JDWP_THREAD_BASE + (uint64_t)t->id;
}

static uint64_t thread_group(const SimThread *t)
{
    return t->core && t->daemon ? GROUP_SYSTEM : GROUP_MAIN;
}

/* JDWP ThreadStatus from the model's Dalvik status. */
static int32_t thread_status(const SimThread *t)
{
    static const int32_t map[10] = {
        0, /* zombie */ 1, /* running */ 2, /* timed-wait: SLEEPING */ 3, /* monitor */
        4, /* wait */   1, /* initializing */ 1, /* starting */ 1, /* native */
        4, /* vmwait */ 1, /* suspended (by the VM itself) */
    };
    return t->status < 10 ? map[t->status] : 1;
}

static guint suspend_count(const SimJdwpModel *m, const SimThread *t)
{
    return GPOINTER_TO_UINT(g_hash_table_lookup(m->suspend, GUINT_TO_POINTER(t->id)));
}

static void set_suspend_count(SimJdwpModel *m, const SimThread *t, guint n)
{
    if (n)
        g_hash_table_insert(m->suspend, GUINT_TO_POINTER(t->id), GUINT_TO_POINTER(n));
    else
        g_hash_table_remove(m->suspend, GUINT_TO_POINTER(t->id));
}

typedef struct FrameCollect {
    SimJdwpModel *m;
    GArray *frames;
} FrameCollect;

static void collect_frame(const char *cls, const char *method, const char *file, int32_t line, void *ud)
{
    FrameCollect *fc = ud;
    ModelFrame f;

    (void)file;
    f.cls = find_class(fc->m, cls);
    if (f.cls == G_MAXUINT)
        return; /* the templates are fixed: cannot happen */
    f.method = find_method(fc->m, f.cls, method, line == -2);
    if (f.method == G_MAXUINT)
        return;
    f.line = line;
    g_array_append_val(fc->frames, f);
}

/** The frames of @t, innermost first. (transfer full) */
static GArray *thread_frames(SimJdwpModel *m, const SimThreads *ts, const SimThread *t)
{
    FrameCollect fc = { m, g_array_new(FALSE, FALSE, sizeof(ModelFrame)) };
    ddm_writer w;
    uint8_t *p;
    size_t len;

    ddm_writer_init(&w, 1 << 20);
    if (sim_threads_write_stkl(ts, t->id, &w) < 0) {
        ddm_writer_reset(&w);
        return fc.frames;
    }
    p = ddm_writer_take(&w, &len);
    if (p)
        walk_stkl(p, len, collect_frame, &fc);
    free(p);
    return fc.frames;
}

static void write_class_entry(const SimJdwpModel *m, ddm_writer *w, guint i, gboolean signature,
                              gboolean generic)
{
    const ModelClass *k = m->classes->pdata[i];

    ddm_write_u1(w, TAG_CLASS);
    ddm_write_u8(w, CLASS_BASE + i);
    if (signature)
        write_string(w, k->signature);
    if (generic)
        write_string(w, "");
    ddm_write_u4(w, CLASS_STATUS_INITIALIZED);
}

/* ------------------------------------------------------------ command sets */

static int vm_command(SimJdwpModel *m, const SimThreads *ts, uint8_t cmd, ddm_reader *r, ddm_writer *w)
{
    uint32_t i, n;

    switch (cmd) {
    case 2: { /* ClassesBySignature */
        uint32_t slen = ddm_read_u4(r);
        const uint8_t *s = ddm_read_bytes(r, slen);
        guint found = G_MAXUINT;
        if (!ddm_reader_ok(r) || !s)
            return SIM_JDWP_ILLEGAL_ARGUMENT;
        for (i = 0; i < m->classes->len && found == G_MAXUINT; i++) {
            const char *sig = ((ModelClass *)m->classes->pdata[i])->signature;
            if (strlen(sig) == slen && memcmp(sig, s, slen) == 0)
                found = i;
        }
        ddm_write_u4(w, found == G_MAXUINT ? 0 : 1);
        if (found != G_MAXUINT)
            write_class_entry(m, w, found, FALSE, FALSE);
        return SIM_JDWP_OK;
    }
    case 3:  /* AllClasses */
    case 20: /* AllClassesWithGeneric */
        ddm_write_u4(w, m->classes->len);
        for (i = 0; i < m->classes->len; i++)
            write_class_entry(m, w, i, TRUE, cmd == 20);
        return SIM_JDWP_OK;
    case 4: /* AllThreads */
        ddm_write_u4(w, ts->n);
        for (i = 0; i < ts->n; i++)
            ddm_write_u8(w, thread_object(&ts->v[i]));
        return SIM_JDWP_OK;
    case 5: /* TopLevelThreadGroups */
        ddm_write_u4(w, 1);
        ddm_write_u8(w, GROUP_SYSTEM);
        return SIM_JDWP_OK;
    case 8: /* Suspend */
    case 9: /* Resume */
        for (i = 0; i < ts->n; i++) {
            guint c = suspend_count(m, &ts->v[i]);
            set_suspend_count(m, &ts->v[i], cmd == 8 ? c + 1 : (c ? c - 1 : 0));
        }
        return SIM_JDWP_OK;
    case 12: /* Capabilities: 7 booleans */
        for (i = 0; i < 7; i++)
            ddm_write_u1(w, 0);
        return SIM_JDWP_OK;
    case 17: /* CapabilitiesNew: 32 booleans */
        for (i = 0; i < 32; i++)
            ddm_write_u1(w, 0);
        return SIM_JDWP_OK;
    case 13: /* ClassPaths */
        write_string(w, "/");
        ddm_write_u4(w, 1);
        write_string(w, "/data/app/base.apk");
        ddm_write_u4(w, 0);
        return SIM_JDWP_OK;
    case 14: /* DisposeObjects: int requests, (objectID, int refCnt)* */
        n = ddm_read_u4(r);
        if (!ddm_reader_ok(r) || n > ddm_reader_remaining(r) / 12)
            return SIM_JDWP_ILLEGAL_ARGUMENT;
        return SIM_JDWP_OK;
    case 15: /* HoldEvents */
    case 16: /* ReleaseEvents */
        return SIM_JDWP_OK;
    case 19: /* SetDefaultStratum */
        n = ddm_read_u4(r);
        if (!ddm_reader_ok(r) || !ddm_read_bytes(r, n))
            return SIM_JDWP_ILLEGAL_ARGUMENT;
        return SIM_JDWP_OK;
    default: /* Version, IDSizes, Dispose, Exit: the caller's; the rest: not implemented */
        return SIM_JDWP_UNHANDLED;
    }
}

static int reference_type_command(SimJdwpModel *m, uint8_t cmdset, uint8_t cmd, ddm_reader *r,
                                  ddm_writer *w)
{
    uint64_t id = ddm_read_u8(r);
    const ModelClass *k;
    guint ci = 0, i, n;

    if (!ddm_reader_ok(r))
        return SIM_JDWP_ILLEGAL_ARGUMENT;
    k = class_by_id(m, id, &ci);
    if (cmdset == 3) { /* ClassType */
        if (cmd != 1)
            return SIM_JDWP_UNHANDLED;
        if (!k)
            return SIM_JDWP_INVALID_CLASS;
        ddm_write_u8(w, ci == 0 ? 0 : CLASS_BASE); /* Superclass: java.lang.Object (index 0) */
        return SIM_JDWP_OK;
    }
    switch (cmd) {
    case 1: case 2: case 3: case 4: case 5: case 7: case 9: case 10: case 11: case 12:
    case 13: case 14: case 15:
        break;
    default:
        return SIM_JDWP_UNHANDLED;
    }
    if (!k)
        return SIM_JDWP_INVALID_CLASS;
    switch (cmd) {
    case 1: /* Signature */
        write_string(w, k->signature);
        break;
    case 13: /* SignatureWithGeneric */
        write_string(w, k->signature);
        write_string(w, "");
        break;
    case 2: /* ClassLoader: the bootstrap loader */
        ddm_write_u8(w, 0);
        break;
    case 3: /* Modifiers */
        ddm_write_u4(w, ACC_PUBLIC);
        break;
    case 4:  /* Fields */
    case 14: /* FieldsWithGeneric */
    case 10: /* Interfaces */
        ddm_write_u4(w, 0);
        break;
    case 5:  /* Methods */
    case 15: /* MethodsWithGeneric */
        for (i = 0, n = 0; i < m->methods->len; i++)
            n += ((ModelMethod *)m->methods->pdata[i])->cls == ci;
        ddm_write_u4(w, n);
        for (i = 0; i < m->methods->len; i++) {
            const ModelMethod *mm = m->methods->pdata[i];
            if (mm->cls != ci)
                continue;
            ddm_write_u8(w, METHOD_BASE + i);
            write_string(w, mm->name);
            write_string(w, mm->native ? "(J)V" : "()V");
            if (cmd == 15)
                write_string(w, "");
            ddm_write_u4(w, mm->native ? ACC_PUBLIC | ACC_NATIVE : ACC_PUBLIC);
        }
        break;
    case 7: /* SourceFile */
        if (!k->file)
            return SIM_JDWP_ABSENT_INFORMATION;
        write_string(w, k->file);
        break;
    case 9: /* Status */
        ddm_write_u4(w, CLASS_STATUS_INITIALIZED);
        break;
    case 11: /* ClassObject */
        ddm_write_u8(w, CLASS_OBJECT_BASE + ci);
        break;
    case 12: /* SourceDebugExtension */
        return SIM_JDWP_ABSENT_INFORMATION;
    }
    return SIM_JDWP_OK;
}

static int method_command(SimJdwpModel *m, uint8_t cmd, ddm_reader *r, ddm_writer *w)
{
    uint64_t cid = ddm_read_u8(r), mid = ddm_read_u8(r);
    const ModelMethod *mm;
    guint ci = 0, i;

    if (cmd < 1 || cmd > 5 || cmd == 3)
        return SIM_JDWP_UNHANDLED;
    if (!ddm_reader_ok(r))
        return SIM_JDWP_ILLEGAL_ARGUMENT;
    if (!class_by_id(m, cid, &ci))
        return SIM_JDWP_INVALID_CLASS;
    mm = method_by_id(m, ci, mid);
    if (!mm)
        return SIM_JDWP_INVALID_METHODID;
    switch (cmd) {
    case 1: /* LineTable: code index = line number */
        if (mm->native)
            return SIM_JDWP_NATIVE_METHOD;
        ddm_write_u8(w, 0);
        ddm_write_u8(w, mm->n_lines ? (uint64_t)mm->lines[mm->n_lines - 1] : 0);
        ddm_write_u4(w, mm->n_lines);
        for (i = 0; i < mm->n_lines; i++) {
            ddm_write_u8(w, (uint64_t)mm->lines[i]);
            ddm_write_u4(w, (uint32_t)mm->lines[i]);
        }
        return SIM_JDWP_OK;
    case 2: /* VariableTable */
    case 5: /* VariableTableWithGeneric */
        return mm->native ? SIM_JDWP_NATIVE_METHOD : SIM_JDWP_ABSENT_INFORMATION;
    case 4: /* IsObsolete */
        ddm_write_u1(w, 0);
        return SIM_JDWP_OK;
    }
    return SIM_JDWP_UNHANDLED;
}

static int object_command(SimJdwpModel *m, const SimThreads *ts, uint8_t cmd, ddm_reader *r, ddm_writer *w)
{
    uint64_t id = ddm_read_u8(r);
    const char *cls = NULL, *ghost;
    int error = 0;

    if (cmd != 1 && cmd != 7 && cmd != 8 && cmd != 9)
        return SIM_JDWP_UNHANDLED;
    if (!ddm_reader_ok(r))
        return SIM_JDWP_ILLEGAL_ARGUMENT;
    if (id == GROUP_SYSTEM || id == GROUP_MAIN)
        cls = "java.lang.ThreadGroup";
    else if (id >= CLASS_OBJECT_BASE && id - CLASS_OBJECT_BASE < m->classes->len)
        cls = "java.lang.Class";
    else if (thread_by_id(m, ts, id, &ghost, &error) || ghost)
        cls = "java.lang.Thread";
    if (!cls)
        return SIM_JDWP_INVALID_OBJECT;
    switch (cmd) {
    case 1: /* ReferenceType */
        ddm_write_u1(w, TAG_CLASS);
        ddm_write_u8(w, CLASS_BASE + find_class(m, cls));
        break;
    case 9: /* IsCollected */
        ddm_write_u1(w, 0);
        break;
    default: /* DisableCollection, EnableCollection: nothing to do */
        break;
    }
    return SIM_JDWP_OK;
}

static int thread_command(SimJdwpModel *m, const SimThreads *ts, uint8_t cmd, ddm_reader *r, ddm_writer *w)
{
    uint64_t id = ddm_read_u8(r);
    const SimThread *t;
    const char *ghost;
    int error = 0;
    guint count, i;

    switch (cmd) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 12:
        break;
    default:
        return SIM_JDWP_UNHANDLED;
    }
    if (!ddm_reader_ok(r))
        return SIM_JDWP_ILLEGAL_ARGUMENT;
    t = thread_by_id(m, ts, id, &ghost, &error);
    if (!t && ghost) { /* terminated: a name, status ZOMBIE, no group, nothing to suspend */
        switch (cmd) {
        case 1:
            write_string(w, ghost);
            return SIM_JDWP_OK;
        case 4:
            ddm_write_u4(w, 0);
            ddm_write_u4(w, 0);
            return SIM_JDWP_OK;
        case 5:
            ddm_write_u8(w, 0);
            return SIM_JDWP_OK;
        case 12:
            ddm_write_u4(w, 0);
            return SIM_JDWP_OK;
        default:
            return SIM_JDWP_INVALID_THREAD;
        }
    }
    if (!t)
        return error;
    count = suspend_count(m, t);
    switch (cmd) {
    case 1: /* Name */
        write_string(w, t->name ? t->name : "");
        break;
    case 2: /* Suspend */
        set_suspend_count(m, t, count + 1);
        break;
    case 3: /* Resume */
        set_suspend_count(m, t, count ? count - 1 : 0);
        break;
    case 4: /* Status: threadStatus, suspendStatus */
        ddm_write_u4(w, (uint32_t)thread_status(t));
        ddm_write_u4(w, count ? 1 : 0);
        break;
    case 5: /* ThreadGroup */
        ddm_write_u8(w, thread_group(t));
        break;
    case 12: /* SuspendCount */
        ddm_write_u4(w, count);
        break;
    case 6:   /* Frames: int startFrame, int length (-1: all) */
    case 7: { /* FrameCount */
        GArray *frames;
        int32_t start = 0, length = -1;
        if (cmd == 6) {
            start = ddm_read_i4(r);
            length = ddm_read_i4(r);
            if (!ddm_reader_ok(r))
                return SIM_JDWP_ILLEGAL_ARGUMENT;
        }
        if (!count)
            return SIM_JDWP_THREAD_NOT_SUSPENDED;
        frames = thread_frames(m, ts, t);
        if (cmd == 7) {
            ddm_write_u4(w, frames->len);
            g_array_free(frames, TRUE);
            break;
        }
        if (start < 0 || (guint)start > frames->len) {
            g_array_free(frames, TRUE);
            return SIM_JDWP_INVALID_INDEX;
        }
        if (length == -1)
            length = (int32_t)(frames->len - (guint)start);
        if (length < 0 || (guint)length > frames->len - (guint)start) {
            g_array_free(frames, TRUE);
            return SIM_JDWP_INVALID_LENGTH;
        }
        ddm_write_u4(w, (uint32_t)length);
        for (i = (guint)start; i < (guint)start + (guint)length; i++) {
            const ModelFrame *f = &g_array_index(frames, ModelFrame, i);
            /* frameID: thread and depth; valid while the thread stays suspended */
            ddm_write_u8(w, ((uint64_t)t->id << 16) | i);
            ddm_write_u1(w, TAG_CLASS);
            ddm_write_u8(w, CLASS_BASE + f->cls);
            ddm_write_u8(w, METHOD_BASE + f->method);
            ddm_write_u8(w, f->line == -2 ? UINT64_MAX : f->line > 0 ? (uint64_t)f->line : 0);
        }
        g_array_free(frames, TRUE);
        break;
    }
    }
    return SIM_JDWP_OK;
}

static int group_command(const SimThreads *ts, uint8_t cmd, ddm_reader *r, ddm_writer *w)
{
    uint64_t id = ddm_read_u8(r);
    uint32_t i, n = 0;

    if (cmd < 1 || cmd > 3)
        return SIM_JDWP_UNHANDLED;
    if (!ddm_reader_ok(r))
        return SIM_JDWP_ILLEGAL_ARGUMENT;
    if (id != GROUP_SYSTEM && id != GROUP_MAIN)
        return SIM_JDWP_INVALID_THREAD_GROUP;
    switch (cmd) {
    case 1: /* Name */
        write_string(w, id == GROUP_SYSTEM ? "system" : "main");
        break;
    case 2: /* Parent */
        ddm_write_u8(w, id == GROUP_SYSTEM ? 0 : GROUP_SYSTEM);
        break;
    case 3: /* Children: threads, then groups */
        for (i = 0; i < ts->n; i++)
            n += thread_group(&ts->v[i]) == id;
        ddm_write_u4(w, n);
        for (i = 0; i < ts->n; i++)
            if (thread_group(&ts->v[i]) == id)
                ddm_write_u8(w, thread_object(&ts->v[i]));
        ddm_write_u4(w, id == GROUP_SYSTEM ? 1 : 0);
        if (id == GROUP_SYSTEM)
            ddm_write_u8(w, GROUP_MAIN);
        break;
    }
    return SIM_JDWP_OK;
}

static gboolean valid_event_kind(uint8_t kind)
{
    static const uint8_t kinds[] = { 1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 20, 21,
                                     30, 40, 41, 42, 43, 44, 45, 46, 90, 99 };
    size_t i;

    for (i = 0; i < sizeof kinds; i++)
        if (kinds[i] == kind)
            return TRUE;
    return FALSE;
}

static int event_request_command(SimJdwpModel *m, uint8_t cmd, ddm_reader *r, ddm_writer *w)
{
    uint8_t kind;

    switch (cmd) {
    case 1: /* Set: u1 eventKind, u1 suspendPolicy, int modifiers, ... (accepted, never fires) */
        kind = ddm_read_u1(r);
        (void)ddm_read_u1(r);
        (void)ddm_read_u4(r);
        if (!ddm_reader_ok(r))
            return SIM_JDWP_ILLEGAL_ARGUMENT;
        if (!valid_event_kind(kind))
            return SIM_JDWP_INVALID_EVENT_TYPE;
        ddm_write_u4(w, (uint32_t)m->next_request_id);
        m->next_request_id = m->next_request_id == INT32_MAX ? 1 : m->next_request_id + 1;
        return SIM_JDWP_OK;
    case 2: /* Clear: u1 eventKind, int requestID */
        kind = ddm_read_u1(r);
        (void)ddm_read_u4(r);
        if (!ddm_reader_ok(r))
            return SIM_JDWP_ILLEGAL_ARGUMENT;
        return valid_event_kind(kind) ? SIM_JDWP_OK : SIM_JDWP_INVALID_EVENT_TYPE;
    case 3: /* ClearAllBreakpoints */
        return SIM_JDWP_OK;
    default:
        return SIM_JDWP_UNHANDLED;
    }
}

int sim_jdwp_model_answer(SimJdwpModel *m, const SimThreads *ts, uint8_t cmdset, uint8_t cmd,
                          const uint8_t *data, size_t len, ddm_writer *w)
{
    ddm_reader r;

    ddm_reader_init(&r, data, len);
    if (cmdset == 1 || cmdset == 9 || cmdset == 11 || cmdset == 12)
        note_live_threads(m, ts);
    switch (cmdset) {
    case 1:
        return vm_command(m, ts, cmd, &r, w);
    case 2: /* ReferenceType */
    case 3: /* ClassType */
        return reference_type_command(m, cmdset, cmd, &r, w);
    case 6:
        return method_command(m, cmd, &r, w);
    case 9:
        return object_command(m, ts, cmd, &r, w);
    case 11:
        return thread_command(m, ts, cmd, &r, w);
    case 12:
        return group_command(ts, cmd, &r, w);
    case 15:
        return event_request_command(m, cmd, &r, w);
    default:
        return SIM_JDWP_UNHANDLED;
    }
}

/* ------------------------------------------------------------ the hook */

int sim_jdwp_handle(SimConn *c, const DdmJdwpPacket *pkt)
{
    const DdmJdwpHeader *h = &pkt->header;
    ddm_writer w;
    uint8_t *p;
    size_t len;
    int error;

    if (!c->jdwp)
        c->jdwp = sim_jdwp_model_new(c->vm->package_name);
    if (h->cmdset == DDM_JDWP_CMDSET_VM && h->cmd == DDM_JDWP_CMD_VM_DISPOSE) { /* forget, then the caller replies */
        sim_jdwp_model_reset(c->jdwp);
        return 0;
    }
    ddm_writer_init(&w, 1 << 20);
    error = sim_jdwp_model_answer(c->jdwp, &c->vm->threads, h->cmdset, h->cmd, pkt->data,
                                  pkt->data_len, &w);
    if (error == SIM_JDWP_UNHANDLED) {
        ddm_writer_reset(&w);
        return 0;
    }
    if (w.error) /* cannot happen below the cap */
        error = SIM_JDWP_INTERNAL;
    p = ddm_writer_take(&w, &len);
    if (error != SIM_JDWP_OK)
        g_debug("pid %u: JDWP %u/%u -> error %d", c->vm->pid, h->cmdset, h->cmd, error);
    sim_conn_send_jdwp_reply(c, h->id, (uint16_t)error, error == SIM_JDWP_OK ? p : NULL,
                             error == SIM_JDWP_OK ? len : 0);
    free(p);
    return 1;
}
