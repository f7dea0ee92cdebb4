/* SPDX-License-Identifier: Apache-2.0
 *
 * The streamed heap-dump generator (see hprof_gen.h). The dump is a
 * sequence of chunks, each made in a small buffer (at most CHUNK_CAP
 * bytes) and optionally followed by a "tail": the data of one big array,
 * computed from its position. A chunk is a run of STRING or LOAD_CLASS
 * records, or one HEAP_DUMP_SEGMENT closed as ART closes them (after 4096
 * bytes or 128 objects, or after a big array). The heap is a walk driven by
 * a PRNG state: what the next object is depends only on the state after
 * the previous one, so the memory is the class table (bounded by
 * MAX_CLASSES) plus one chunk, whatever the total.
 *
 * Exact size: a segment never leaves less room than a filler needs; an
 * object that does not fit closes the segment (and is drawn again for the
 * next one), a big array is cut to fit; when not even an empty segment can
 * take the next object, the rest is one filler segment (HEAP_DUMP_INFO(app)
 * and a byte[]), at most a couple of KiB.
 */
#include "hprof_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_model.h"
#include "rng.h"

#define ID_SIZE 4u
#define HEADER_MAGIC "JAVA PROFILE 1.0.3"
#define HEADER_LEN (sizeof HEADER_MAGIC + 4u + 8u)
#define RECORD_HEADER_LEN 9u                /* u1 tag, u4 time, u4 length */
#define END_RECORD_LEN RECORD_HEADER_LEN    /* HEAP_DUMP_END has no body */
#define INFO_LEN (1u + 4u + ID_SIZE)        /* HEAP_DUMP_INFO sub-record */
#define PRIM_ARRAY_HEADER_LEN (1u + ID_SIZE + 4u + 4u + 1u)
#define OBJ_ARRAY_HEADER_LEN (1u + ID_SIZE + 4u + 4u + ID_SIZE)
#define INSTANCE_HEADER_LEN (1u + ID_SIZE + 4u + ID_SIZE + 4u)
/* a filler segment: record header, HEAP_DUMP_INFO(app), byte[] header */
#define FILLER_OVERHEAD (RECORD_HEADER_LEN + INFO_LEN + PRIM_ARRAY_HEADER_LEN)

/* ART's hprof.cc: a new segment once one holds 4096 bytes or 128 objects */
#define SEG_SOFT 4096u
#define SEG_OBJECTS 128u
/* arrays with more data than this have their data streamed (the tail) */
#define INLINE_DATA_MAX 1024u
#define CHUNK_CAP 8192u                     /* SEG_SOFT + the largest inline object, with room */
#define MAX_NAME 192u
#define MAX_CLASSES 520u
#define MAX_APP_CLASSES 180u
#define MAX_OWN 8u
#define MAX_FLAT 24u
#define MAX_STATICS 4u
#define MAX_EXTRA 8u
#define MAX_THREADS 64u
#define STACK_SERIAL 1u

#define STRING_ID_BASE 0x00001000u          /* "app", "image", "zygote", then field names */
#define CLASS_NAME_ID_BASE 0x00002000u      /* + class index */
#define CLASS_ID_BASE 0x6f000000u           /* + 16 * class index; + 8: its $classOverhead */
#define OBJECT_ID_BASE 0x12c00000u          /* + 8 * object number; + 4: a String's value */
#define FILLER_ID 0x12bffff0u
#define JNI_REF_BASE 0x00100002u

/* ---- names ---- */

/* Boot-image classes, the common ones first (the smallest dumps keep only
 * the first few); "[]" are array classes. */
static const char *const k_framework[] = {
    "java.lang.Object", "java.lang.Class", "java.lang.String", "java.lang.Thread", "java.lang.Object[]",
    "byte[]", "char[]", "int[]", "long[]", "java.lang.String[]",
    "java.lang.Integer", "java.util.HashMap$Node", "java.util.ArrayList", "java.lang.Long",
    "java.util.HashMap", "java.lang.ref.WeakReference", "java.util.LinkedHashMap$LinkedHashMapEntry",
    "android.graphics.Rect", "java.lang.Boolean", "java.lang.ref.FinalizerReference",
    "android.util.ArrayMap", "java.util.concurrent.ConcurrentHashMap$Node", "java.lang.Float",
    "android.view.View", "android.graphics.Bitmap", "java.lang.StringBuilder", "java.lang.Double",
    "short[]", "boolean[]", "float[]", "double[]", "java.util.HashMap$Node[]", "java.lang.Class[]",
    "int[][]", "android.view.View[]",
    "java.lang.Byte", "java.lang.Character", "java.lang.Short", "java.lang.Number", "java.lang.Enum",
    "java.lang.ThreadGroup", "java.lang.ThreadLocal", "java.lang.ThreadLocal$ThreadLocalMap",
    "java.lang.ThreadLocal$ThreadLocalMap$Entry", "java.lang.ClassLoader", "java.lang.BootClassLoader",
    "java.lang.DexCache", "java.lang.ref.SoftReference", "java.lang.ref.PhantomReference",
    "java.lang.ref.ReferenceQueue", "java.lang.ref.Cleaner", "java.lang.reflect.Method",
    "java.lang.reflect.Field", "java.lang.reflect.Constructor", "java.lang.reflect.Proxy",
    "java.lang.Runtime", "java.lang.Throwable", "java.lang.StackTraceElement", "java.lang.Daemons$Daemon",
    "java.util.LinkedHashMap", "java.util.HashSet", "java.util.LinkedList", "java.util.LinkedList$Node",
    "java.util.ArrayDeque", "java.util.TreeMap", "java.util.TreeMap$TreeMapEntry", "java.util.Hashtable",
    "java.util.Hashtable$HashtableEntry", "java.util.WeakHashMap", "java.util.WeakHashMap$Entry",
    "java.util.Collections$UnmodifiableMap", "java.util.Collections$SynchronizedMap",
    "java.util.Collections$EmptyList", "java.util.Arrays$ArrayList", "java.util.Locale",
    "java.util.Date", "java.util.UUID", "java.util.regex.Pattern", "java.util.regex.Matcher",
    "java.util.concurrent.ConcurrentHashMap", "java.util.concurrent.CopyOnWriteArrayList",
    "java.util.concurrent.LinkedBlockingQueue", "java.util.concurrent.LinkedBlockingQueue$Node",
    "java.util.concurrent.ThreadPoolExecutor", "java.util.concurrent.ThreadPoolExecutor$Worker",
    "java.util.concurrent.atomic.AtomicInteger", "java.util.concurrent.atomic.AtomicBoolean",
    "java.util.concurrent.atomic.AtomicReference", "java.util.concurrent.locks.ReentrantLock",
    "java.util.concurrent.locks.ReentrantLock$NonfairSync", "java.util.concurrent.FutureTask",
    "java.math.BigInteger", "java.math.BigDecimal", "java.nio.HeapByteBuffer", "java.nio.DirectByteBuffer",
    "java.nio.charset.CharsetDecoder", "java.io.File", "java.io.FileDescriptor", "java.io.FileInputStream",
    "java.io.BufferedInputStream", "java.io.BufferedReader", "java.net.URI", "java.net.URL",
    "java.net.InetAddress", "java.net.Socket", "java.security.Provider$Service", "javax.net.ssl.SSLContext",
    "sun.misc.Cleaner", "libcore.util.NativeAllocationRegistry", "dalvik.system.PathClassLoader",
    "dalvik.system.DexPathList", "dalvik.system.DexPathList$Element", "dalvik.system.DexFile",
    "dalvik.system.VMRuntime", "dalvik.system.CloseGuard",
    "android.os.Handler", "android.os.Looper", "android.os.Message", "android.os.MessageQueue",
    "android.os.Bundle", "android.os.Binder", "android.os.BinderProxy", "android.os.Parcel",
    "android.os.HandlerThread", "android.os.SystemProperties", "android.os.StrictMode$ThreadPolicy",
    "android.os.IBinder$DeathRecipient", "android.util.SparseArray", "android.util.SparseIntArray",
    "android.util.LongSparseArray", "android.util.ArraySet", "android.util.TypedValue",
    "android.util.DisplayMetrics", "android.util.Log", "android.util.LruCache", "android.util.Pools$SimplePool",
    "android.content.Intent", "android.content.ComponentName", "android.content.ContextWrapper",
    "android.content.res.Resources", "android.content.res.ResourcesImpl", "android.content.res.Configuration",
    "android.content.res.AssetManager", "android.content.res.ColorStateList", "android.content.res.TypedArray",
    "android.content.res.XmlBlock$Parser", "android.content.pm.ApplicationInfo", "android.content.pm.PackageInfo",
    "android.app.ActivityThread", "android.app.ActivityThread$ActivityClientRecord", "android.app.LoadedApk",
    "android.app.ContextImpl", "android.app.Activity", "android.app.Application", "android.app.Fragment",
    "android.app.Instrumentation", "android.app.SharedPreferencesImpl", "android.app.ResourcesManager",
    "android.view.ViewGroup", "android.view.ViewGroup$LayoutParams", "android.view.ViewGroup$MarginLayoutParams",
    "android.view.ViewRootImpl", "android.view.Choreographer", "android.view.Choreographer$FrameDisplayEventReceiver",
    "android.view.Surface", "android.view.SurfaceControl", "android.view.ThreadedRenderer",
    "android.view.RenderNode", "android.view.View$ListenerInfo", "android.view.ViewTreeObserver",
    "android.view.MotionEvent", "android.view.KeyEvent", "android.view.LayoutInflater",
    "android.view.Window", "android.view.WindowManagerImpl", "android.view.WindowManagerGlobal",
    "android.view.accessibility.AccessibilityNodeInfo", "android.view.animation.AnimationUtils",
    "android.view.inputmethod.InputMethodManager", "android.widget.TextView", "android.widget.ImageView",
    "android.widget.Button", "android.widget.LinearLayout", "android.widget.FrameLayout",
    "android.widget.RelativeLayout", "android.widget.ScrollView", "android.widget.EditText",
    "android.widget.ProgressBar", "android.widget.Toast", "android.widget.Editor",
    "android.text.SpannableStringBuilder", "android.text.StaticLayout", "android.text.TextPaint",
    "android.text.SpannableString", "android.graphics.Paint", "android.graphics.Matrix",
    "android.graphics.RectF", "android.graphics.Point", "android.graphics.Path", "android.graphics.Typeface",
    "android.graphics.Canvas", "android.graphics.RecordingCanvas", "android.graphics.Color",
    "android.graphics.Insets", "android.graphics.drawable.BitmapDrawable",
    "android.graphics.drawable.ColorDrawable", "android.graphics.drawable.GradientDrawable",
    "android.graphics.drawable.VectorDrawable", "android.graphics.drawable.RippleDrawable",
    "android.graphics.drawable.StateListDrawable", "android.graphics.drawable.LayerDrawable",
    "android.animation.ValueAnimator", "android.animation.ObjectAnimator", "android.animation.PropertyValuesHolder",
    "android.icu.util.ULocale", "android.icu.text.DecimalFormatSymbols", "android.database.CursorWindow",
    "android.database.sqlite.SQLiteDatabase", "android.database.sqlite.SQLiteConnection",
    "android.database.sqlite.SQLiteStatement", "android.net.Uri$StringUri", "android.net.ConnectivityManager",
    "android.hardware.display.DisplayManagerGlobal", "android.media.AudioManager",
    "com.android.internal.policy.PhoneWindow", "com.android.internal.policy.DecorView",
    "com.android.internal.util.FastPrintWriter", "com.android.org.conscrypt.OpenSSLProvider",
    "java.lang.Integer[]", "java.lang.Object[][]", "java.util.Map$Entry[]", "android.graphics.Rect[]",
    "java.lang.ThreadLocal$ThreadLocalMap$Entry[]", "java.lang.reflect.Method[]",
};
#define N_FRAMEWORK (sizeof k_framework / sizeof k_framework[0])
#define N_ESSENTIAL 10u /* Object .. String[]: always present */

/* App classes: PACKAGE.SUB.NOUN+ROLE */
static const char *const k_nouns[] = {
    "User", "Feed", "Photo", "Message", "Account", "Profile", "Settings", "Search", "Cart", "Product",
    "Order", "Comment", "Notification", "Media", "Session", "Story", "Contact", "Upload",
};
static const struct {
    const char *role, *sub; /* sub: NULL is the lowercase noun */
} k_roles[] = {
    { "Activity", NULL }, { "Fragment", NULL }, { "ViewModel", NULL }, { "Adapter", NULL },
    { "Adapter$ViewHolder", NULL }, { "View", NULL }, { "UiState", NULL },
    { "Fragment$onViewCreated$1", NULL }, { "Repository", "data" }, { "Dao", "data.db" },
    { "Dao_Impl", "data.db" }, { "Entity", "data.db" }, { "Dto", "data.remote" }, { "Api", "data.remote" },
    { "Mapper", "data" }, { "Cache", "data" }, { "Worker", "work" }, { "Manager", "domain" },
};
#define N_NOUNS (sizeof k_nouns / sizeof k_nouns[0])
#define N_ROLES (sizeof k_roles / sizeof k_roles[0])
static const char *const k_app_fixed[] = { "MainActivity", "App", "BuildConfig", "R$id", "R$layout", "R$string",
                                           "di.AppModule", "util.Logger" };
#define N_APP_FIXED (sizeof k_app_fixed / sizeof k_app_fixed[0])

/* Field names and their usual type; one STRING record each that is used. */
static const struct {
    const char *name;
    char type;
} k_fields[] = {
    { "shadow$_klass_", 'O' }, { "shadow$_monitor_", 'I' }, { "count", 'I' }, { "hash", 'I' },
    { "value", 'O' }, { "name", 'O' }, { "priority", 'I' }, { "daemon", 'Z' }, { "tid", 'J' },
    { "key", 'O' }, { "next", 'O' }, { "elementData", 'O' }, { "size", 'I' }, { "table", 'O' },
    { "modCount", 'I' }, { "threshold", 'I' }, { "loadFactor", 'F' }, { "referent", 'O' }, { "queue", 'O' },
    { "contextClassLoader", 'O' }, { "group", 'O' }, { "target", 'O' },
    /* the rest: drawn for the other classes */
    { "mContext", 'O' }, { "mParent", 'O' }, { "mListener", 'O' }, { "mCallback", 'O' }, { "mHandler", 'O' },
    { "mData", 'O' }, { "mItems", 'O' }, { "mName", 'O' }, { "mTitle", 'O' }, { "mView", 'O' },
    { "mChildren", 'O' }, { "mLayoutParams", 'O' }, { "mBackground", 'O' }, { "mResources", 'O' },
    { "mNext", 'O' }, { "this$0", 'O' }, { "head", 'O' }, { "tail", 'O' }, { "map", 'O' }, { "lock", 'O' },
    { "delegate", 'O' }, { "mKeys", 'O' }, { "mValues", 'O' }, { "mHashes", 'O' }, { "mText", 'O' },
    { "mId", 'I' }, { "mFlags", 'I' }, { "mWidth", 'I' }, { "mHeight", 'I' }, { "mLeft", 'I' }, { "mTop", 'I' },
    { "mState", 'I' }, { "mPrivateFlags", 'I' }, { "mViewFlags", 'I' }, { "position", 'I' },
    { "capacity", 'I' }, { "mode", 'I' }, { "mSize", 'I' }, { "mColor", 'I' },
    { "mTime", 'J' }, { "timestamp", 'J' }, { "mNativePtr", 'J' }, { "id", 'J' }, { "when", 'J' },
    { "mAlpha", 'F' }, { "mScaleX", 'F' }, { "mScaleY", 'F' }, { "mDensity", 'F' },
    { "latitude", 'D' }, { "longitude", 'D' },
    { "mVisible", 'Z' }, { "mEnabled", 'Z' }, { "mAttached", 'Z' }, { "isRunning", 'Z' },
    { "accessOrder", 'Z' }, { "mType", 'B' }, { "mGravity", 'S' }, { "separator", 'C' },
    /* statics */
    { "$classOverhead", 'O' }, { "TAG", 'O' }, { "serialVersionUID", 'J' }, { "sInstance", 'O' },
    { "CREATOR", 'O' }, { "DEBUG", 'Z' }, { "sCount", 'I' }, { "EMPTY", 'O' }, { "DEFAULT_CAPACITY", 'I' },
};
#define N_FIELDS (sizeof k_fields / sizeof k_fields[0])
enum { F_KLASS, F_MONITOR, F_COUNT, F_HASH, F_VALUE, F_NAME, F_PRIORITY, F_DAEMON, F_TID, F_KEY, F_NEXT,
       F_ELEMENT_DATA, F_SIZE, F_TABLE, F_MOD_COUNT, F_THRESHOLD, F_LOAD_FACTOR, F_REFERENT, F_QUEUE,
       F_CONTEXT_LOADER, F_GROUP, F_TARGET, F_FIRST_RANDOM };
#define F_FIRST_STATIC (N_FIELDS - 9u)
#define F_CLASS_OVERHEAD F_FIRST_STATIC

/* The classes whose fields are known. */
static const struct {
    const char *cls;
    uint8_t fields[7], types[7]; /* types 0: the field's usual type */
} k_layouts[] = {
    { "java.lang.String", { F_COUNT, F_HASH, F_VALUE }, { 0 } },
    { "java.lang.Thread", { F_NAME, F_PRIORITY, F_DAEMON, F_TID, F_CONTEXT_LOADER, F_GROUP, F_TARGET }, { 0 } },
    { "java.lang.Integer", { F_VALUE }, { 'I' } },
    { "java.lang.Long", { F_VALUE }, { 'J' } },
    { "java.lang.Boolean", { F_VALUE }, { 'Z' } },
    { "java.lang.Float", { F_VALUE }, { 'F' } },
    { "java.lang.Double", { F_VALUE }, { 'D' } },
    { "java.util.HashMap$Node", { F_HASH, F_KEY, F_VALUE, F_NEXT }, { 0 } },
    { "java.util.ArrayList", { F_ELEMENT_DATA, F_SIZE, F_MOD_COUNT }, { 0 } },
    { "java.util.HashMap", { F_TABLE, F_SIZE, F_MOD_COUNT, F_THRESHOLD, F_LOAD_FACTOR }, { 0 } },
    { "java.lang.ref.WeakReference", { F_REFERENT, F_QUEUE, F_NEXT }, { 0 } },
};

/* ---- the model ---- */

enum { CK_PLAIN, CK_STRING, CK_THREAD, CK_OBJ_ARRAY, CK_PRIM_ARRAY, CK_CLASS };
#define T_KLASS 0xff /* flat layout: Object's shadow$_klass_, written as the class id */

typedef struct GClass {
    const char *fixed;           /* framework name, or app-relative name, or NULL */
    uint8_t noun, role;          /* app combination when fixed is NULL */
    uint8_t app, heap, kind;
    uint8_t n_own, n_flat, n_statics;
    uint16_t super;              /* class index; 0xffff: none */
    uint16_t data_size;          /* instance field bytes, the whole chain */
    uint16_t overhead;           /* $classOverhead byte[] length; 0: none */
    uint8_t own_name[MAX_OWN], own_type[MAX_OWN];
    uint8_t flat[MAX_FLAT];
    uint8_t static_name[MAX_STATICS];
} GClass;

typedef enum { PH_HEADER, PH_STRINGS, PH_CLASSES, PH_TRACE, PH_HEAP, PH_FILLER, PH_END, PH_DONE } Phase;
/* heap walk stages */
enum { ST_IMAGE_CLASSES, ST_IMAGE, ST_ZYGOTE_CLASSES, ST_ZYGOTE, ST_APP_CLASSES, ST_APP_START, ST_APP };

/* What changes as the walk goes: saved before an object, restored when it does not fit. */
typedef struct Walk {
    SimRng rng;
    uint32_t objects;            /* objects numbered so far */
    uint32_t cursor;             /* class cursor in the *_CLASSES stages */
    uint32_t threads;
    uint8_t stage, heap;         /* heap: of the last HEAP_DUMP_INFO in this segment; 0: none yet */
} Walk;

struct hprof_gen {
    uint64_t total, offset;
    uint32_t seed;
    char package[HPROF_GEN_PACKAGE_MAX + 1];
    char extra_names[MAX_EXTRA][MAX_NAME]; /* the allocation model's */
    unsigned n_extra;
    unsigned n_classes, n_fw, n_inst_fw, n_inst, n_obj_arrays;
    uint16_t inst[MAX_CLASSES];  /* instantiable classes, the framework's first */
    uint16_t obj_arrays[16];
    uint16_t string_class, thread_class;
    uint8_t field_used[N_FIELDS];
    GClass classes[MAX_CLASSES];

    Phase phase;
    uint32_t cursor;             /* strings / classes emitted */
    Walk w;
    uint64_t image_end, zygote_end; /* stream offsets where those heaps end */

    /* the current chunk: buf, then tail_len computed bytes */
    uint8_t buf[CHUNK_CAP];
    size_t buf_len, buf_pos;
    uint64_t chunk_start;        /* stream offset of buf[0] */
    uint64_t tail_len, tail_off, tail_key;
    uint32_t tail_refs;          /* object arrays: objects that existed before */
    uint8_t tail_kind;           /* TAIL_* */
};

static inline void be2(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void be4(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void be8(uint8_t *p, uint64_t v)
{
    be4(p, (uint32_t)(v >> 32));
    be4(p + 4, (uint32_t)v);
}

static uint8_t type_of(char c)
{
    switch (c) {
    case 'O': return HPROF_TYPE_OBJECT;
    case 'Z': return HPROF_TYPE_BOOLEAN;
    case 'C': return HPROF_TYPE_CHAR;
    case 'F': return HPROF_TYPE_FLOAT;
    case 'D': return HPROF_TYPE_DOUBLE;
    case 'B': return HPROF_TYPE_BYTE;
    case 'S': return HPROF_TYPE_SHORT;
    case 'J': return HPROF_TYPE_LONG;
    default: return HPROF_TYPE_INT;
    }
}

unsigned hprof_type_size(uint8_t type)
{
    switch (type) {
    case HPROF_TYPE_OBJECT:
        return ID_SIZE;
    case HPROF_TYPE_BOOLEAN:
    case HPROF_TYPE_BYTE:
        return 1;
    case HPROF_TYPE_CHAR:
    case HPROF_TYPE_SHORT:
        return 2;
    case HPROF_TYPE_FLOAT:
    case HPROF_TYPE_INT:
        return 4;
    case HPROF_TYPE_DOUBLE:
    case HPROF_TYPE_LONG:
        return 8;
    default:
        return 0;
    }
}

/* "Ljava/lang/String;" -> "java.lang.String", "[[I" -> "int[][]" (hprof's names). */
static void descriptor_to_name(const char *desc, char *out, size_t cap)
{
    static const struct { char c; const char *name; } prims[] = {
        { 'Z', "boolean" }, { 'B', "byte" }, { 'C', "char" }, { 'S', "short" },
        { 'I', "int" }, { 'J', "long" }, { 'F', "float" }, { 'D', "double" },
    };
    unsigned dims = 0, i;
    size_t len = 0;

    out[0] = '\0';
    while (desc[dims] == '[')
        dims++;
    desc += dims;
    if (desc[0] == 'L') {
        for (desc++; *desc && *desc != ';' && len + 1 < cap; desc++)
            out[len++] = *desc == '/' ? '.' : *desc;
        out[len] = '\0';
    } else {
        for (i = 0; i < sizeof prims / sizeof prims[0]; i++)
            if (prims[i].c == desc[0]) {
                strncpy(out, prims[i].name, cap - 1);
                out[cap - 1] = '\0';
            }
        len = strlen(out);
    }
    for (i = 0; i < dims && len + 3 <= cap; i++, len += 2)
        memcpy(out + len, "[]", 3);
}

/* The name of class @i into @out (MAX_NAME); returns its length. */
static size_t class_name(const hprof_gen *g, unsigned i, char *out)
{
    const GClass *c = &g->classes[i];
    int n;

    if (!c->app)
        n = snprintf(out, MAX_NAME, "%s", c->fixed);
    else if (c->fixed)
        n = snprintf(out, MAX_NAME, "%s.%s", g->package, c->fixed);
    else {
        char sub[48], lower[24];
        size_t k;
        snprintf(lower, sizeof lower, "%s", k_nouns[c->noun]);
        for (k = 0; lower[k]; k++)
            if (lower[k] >= 'A' && lower[k] <= 'Z')
                lower[k] = (char)(lower[k] - 'A' + 'a');
        if (k_roles[c->role].sub)
            snprintf(sub, sizeof sub, "%s", k_roles[c->role].sub);
        else
            snprintf(sub, sizeof sub, "ui.%s", lower);
        n = snprintf(out, MAX_NAME, "%s.%s.%s%s", g->package, sub, k_nouns[c->noun], k_roles[c->role].role);
    }
    return n < 0 ? 0 : (size_t)n < MAX_NAME ? (size_t)n : MAX_NAME - 1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int is_prim_array(const char *name)
{
    static const char *const prims[] = { "byte[]", "char[]", "int[]", "long[]", "short[]", "boolean[]",
                                         "float[]", "double[]" };
    unsigned i;
    for (i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (strcmp(name, prims[i]) == 0)
            return 1;
    return 0;
}

static void add_own(hprof_gen *g, GClass *c, uint8_t f, uint8_t type)
{
    unsigned i;
    for (i = 0; i < c->n_own; i++)
        if (c->own_name[i] == f)
            return;
    if (c->n_own < MAX_OWN) {
        c->own_name[c->n_own] = f;
        c->own_type[c->n_own++] = type ? type : type_of(k_fields[f].type);
        g->field_used[f] = 1;
    }
}

/* Own fields, statics, super class and the flattened layout of class @i. */
static void shape_class(hprof_gen *g, unsigned i, SimRng *r, int small)
{
    GClass *c = &g->classes[i];
    char name[MAX_NAME];
    unsigned k, j;

    class_name(g, i, name);
    c->super = i == 0 ? 0xffff : 0;
    if (i == 0) {
        add_own(g, c, F_KLASS, HPROF_TYPE_OBJECT);
        add_own(g, c, F_MONITOR, HPROF_TYPE_INT);
    } else if (c->kind == CK_PLAIN || c->kind == CK_STRING || c->kind == CK_THREAD) {
        int known = 0;
        for (k = 0; k < sizeof k_layouts / sizeof k_layouts[0]; k++)
            if (strcmp(name, k_layouts[k].cls) == 0) {
                for (j = 0; j < 7 && (j == 0 || k_layouts[k].fields[j]); j++) {
                    uint8_t f = k_layouts[k].fields[j];
                    add_own(g, c, f, type_of(k_layouts[k].types[j] ? k_layouts[k].types[j] : k_fields[f].type));
                }
                known = 1;
            }
        if (!known) {
            unsigned n = sim_rng_below(r, 4) + sim_rng_below(r, 4); /* 0..6, mostly 2..4 */
            for (k = 0; k < n; k++)
                add_own(g, c, (uint8_t)sim_rng_range(r, F_FIRST_RANDOM, F_FIRST_STATIC - 1), 0);
            /* a quarter extend another class of theirs (or the framework's) */
            if (i > N_ESSENTIAL && sim_rng_below(r, 4) == 0) {
                unsigned s = sim_rng_below(r, i);
                if (s > 0 && g->classes[s].kind == CK_PLAIN && g->classes[s].n_flat + c->n_own + 2u <= MAX_FLAT)
                    c->super = (uint16_t)s;
            }
        }
    }
    if (c->kind == CK_PLAIN || c->kind == CK_STRING || c->kind == CK_THREAD) {
        unsigned n = small ? 0 : sim_rng_below(r, 3);
        for (k = 0; k < n; k++)
            c->static_name[c->n_statics++] = (uint8_t)sim_rng_range(r, F_FIRST_STATIC + 1, N_FIELDS - 1);
        for (k = 0; k < c->n_statics; k++)
            g->field_used[c->static_name[k]] = 1;
        /* ART's fake byte[] for a class's own storage (statics, vtables) */
        c->overhead = small ? 0 : (uint16_t)(16 + 8 * sim_rng_below(r, 64));
        if (c->overhead)
            g->field_used[F_CLASS_OVERHEAD] = 1;
    }
    /* flattened: own fields, then the super class's, ... Object's last */
    c->n_flat = 0;
    c->data_size = 0;
    for (k = 0; k < c->n_own; k++) {
        c->flat[c->n_flat++] = i == 0 && k == 0 ? T_KLASS : c->own_type[k];
        c->data_size = (uint16_t)(c->data_size + hprof_type_size(c->own_type[k]));
    }
    if (c->super != 0xffff) {
        const GClass *s = &g->classes[c->super];
        for (k = 0; k < s->n_flat && c->n_flat < MAX_FLAT; k++)
            c->flat[c->n_flat++] = s->flat[k];
        c->data_size = (uint16_t)(c->data_size + s->data_size);
    }
}

static void build_model(hprof_gen *g, const char *package)
{
    SimRng r;
    unsigned i, j, n, n_app, n_fw;
    uint64_t budget;
    uint8_t combo[N_NOUNS * N_ROLES];
    const char *desc;
    int small = g->total < 65536;

    snprintf(g->package, sizeof g->package, "%s", package && *package ? package : "com.example.sim");
    sim_rng_seed(&r, sim_rng_mix(g->seed, 0x4850524full /* "HPRO" */));
    /* one class per 16 KiB beyond the minimum: a 4 KiB dump has 10, 1 MiB 73, 8 MiB the most */
    budget = 10 + (g->total - HPROF_GEN_MIN_TOTAL) / 16384;
    n = budget > MAX_CLASSES ? MAX_CLASSES : (unsigned)budget;
    n_app = n / 3 < 1 ? 1 : n / 3;
    if (n_app > MAX_APP_CLASSES)
        n_app = MAX_APP_CLASSES;
    n_fw = n - n_app;
    if (n_fw > N_FRAMEWORK + 8)
        n_fw = N_FRAMEWORK + 8;
    g->n_fw = 0;
    for (i = 0; i < N_FRAMEWORK && g->n_fw < n_fw; i++) {
        GClass *c = &g->classes[g->n_fw++];
        c->fixed = k_framework[i];
    }
    /* then the allocation model's classes not in the table (the names REAL reports) */
    for (i = 0; (desc = sim_alloc_class_name(i)) != NULL && g->n_extra < MAX_EXTRA; i++) {
        char *name = g->extra_names[g->n_extra];
        int dup = 0;
        descriptor_to_name(desc, name, MAX_NAME);
        for (j = 0; j < N_FRAMEWORK; j++)
            dup |= strcmp(name, k_framework[j]) == 0;
        if (!dup && g->n_fw >= N_ESSENTIAL && g->n_fw < n_fw)
            g->classes[g->n_fw++].fixed = g->extra_names[g->n_extra++];
    }
    g->n_classes = g->n_fw;
    /* app classes: the fixed ones, then noun x role combinations in a seeded order */
    for (i = 0; i < N_NOUNS * N_ROLES; i++)
        combo[i] = (uint8_t)i;
    for (i = N_NOUNS * N_ROLES - 1; i > 0; i--) {
        uint8_t t;
        j = sim_rng_below(&r, i + 1);
        t = combo[i];
        combo[i] = combo[j];
        combo[j] = t;
    }
    for (i = 0; i < n_app; i++) {
        GClass *c = &g->classes[g->n_classes++];
        c->app = 1;
        if (i < N_APP_FIXED) {
            c->fixed = k_app_fixed[i];
        } else {
            c->noun = (uint8_t)(combo[i - N_APP_FIXED] / N_ROLES);
            c->role = (uint8_t)(combo[i - N_APP_FIXED] % N_ROLES);
        }
    }
    /* kinds, heaps, shapes */
    g->n_inst_fw = g->n_inst = g->n_obj_arrays = 0;
    g->string_class = 2;
    g->thread_class = 3;
    for (i = 0; i < g->n_classes; i++) {
        GClass *c = &g->classes[i];
        char name[MAX_NAME];
        class_name(g, i, name);
        c->kind = i == 1 ? CK_CLASS : i == 2 ? CK_STRING : i == 3 ? CK_THREAD
                : is_prim_array(name) ? CK_PRIM_ARRAY : ends_with(name, "[]") ? CK_OBJ_ARRAY : CK_PLAIN;
        c->heap = c->app ? HPROF_HEAP_APP : i >= N_ESSENTIAL && i % 5 == 4 ? HPROF_HEAP_ZYGOTE : HPROF_HEAP_IMAGE;
        shape_class(g, i, &r, small);
        if (c->kind == CK_PLAIN)
            g->inst[g->n_inst++] = (uint16_t)i;
        if (!c->app && c->kind == CK_PLAIN)
            g->n_inst_fw = g->n_inst;
        if (c->kind == CK_OBJ_ARRAY && g->n_obj_arrays < 16)
            g->obj_arrays[g->n_obj_arrays++] = (uint16_t)i;
    }
}

/* ---- chunks: strings, classes, the stack trace ---- */

static size_t put_string(uint8_t *p, uint32_t id, const char *s, size_t n)
{
    p[0] = HPROF_TAG_STRING;
    be4(p + 1, 0);
    be4(p + 5, (uint32_t)(ID_SIZE + n));
    be4(p + 9, id);
    memcpy(p + 13, s, n);
    return 13 + n;
}

/* The i-th STRING record (heap names, used field names, class names) into
 * @p; 0 when there is none (an unused field name), -1 past the last. */
static long string_record(const hprof_gen *g, unsigned i, uint8_t *p)
{
    static const char *const heaps[] = { "app", "image", "zygote" };
    char name[MAX_NAME];

    if (i < 3)
        return (long)put_string(p, STRING_ID_BASE + i, heaps[i], strlen(heaps[i]));
    i -= 3;
    if (i < N_FIELDS)
        return g->field_used[i] ? (long)put_string(p, STRING_ID_BASE + 3 + i, k_fields[i].name,
                                                   strlen(k_fields[i].name))
                                : 0;
    i -= N_FIELDS;
    if (i < g->n_classes)
        return (long)put_string(p, CLASS_NAME_ID_BASE + i, name, class_name(g, i, name));
    return -1;
}

static uint32_t field_string(unsigned f) { return STRING_ID_BASE + 3 + f; }
static uint32_t class_id(unsigned i) { return CLASS_ID_BASE + 16u * i; }
static uint32_t object_id(uint32_t k) { return OBJECT_ID_BASE + 8u * k; }

/* ---- the heap walk ---- */

static uint32_t heap_name(uint8_t heap)
{
    return STRING_ID_BASE + (heap == HPROF_HEAP_APP ? 0 : heap == HPROF_HEAP_IMAGE ? 1 : 2);
}

/* Uniform in [0, n) from 32 random bits, without a division. */
static inline uint32_t below(uint64_t x, uint32_t n)
{
    return (uint32_t)(((x & 0xffffffffu) * (uint64_t)n) >> 32);
}

/* An earlier object: mostly a recent one, sometimes any; 0 (null) when there is none. */
static inline uint32_t earlier(uint32_t k, uint64_t x)
{
    uint32_t span;
    if (k == 0)
        return 0;
    span = (x & 0xf) ? (k < 256 ? k : 256) : k;
    return object_id(k - 1 - below(x >> 8, span));
}

/* a reference field's value: null a quarter of the time */
static inline uint32_t ref_value(uint32_t k, uint64_t x)
{
    return (x & 0x300) == 0 ? 0 : earlier(k, x >> 10);
}

static inline uint8_t *put_root(uint8_t *p, uint8_t tag, uint32_t id)
{
    p[0] = tag;
    be4(p + 1, id);
    return p + 5;
}

static inline uint8_t *put_root3(uint8_t *p, uint8_t tag, uint32_t id, uint32_t a, uint32_t b)
{
    p[0] = tag;
    be4(p + 1, id);
    be4(p + 5, a);
    be4(p + 9, b);
    return p + 13;
}

static uint8_t *put_info(hprof_gen *g, uint8_t *p, uint8_t heap)
{
    if (g->w.heap == heap)
        return p;
    g->w.heap = heap;
    p[0] = HPROF_HEAP_DUMP_INFO;
    be4(p + 1, heap);
    be4(p + 5, heap_name(heap));
    return p + INFO_LEN;
}

/* An instance of class @ci with id @id; its reference fields point back. */
static uint8_t *put_instance(hprof_gen *g, uint8_t *p, unsigned ci, uint32_t id, uint32_t value_ref)
{
    const GClass *c = &g->classes[ci];
    uint32_t k = g->w.objects;
    unsigned f;
    uint64_t x = 0;

    p[0] = HPROF_INSTANCE_DUMP;
    be4(p + 1, id);
    be4(p + 5, STACK_SERIAL);
    be4(p + 9, class_id(ci));
    be4(p + 13, c->data_size);
    p += INSTANCE_HEADER_LEN;
    for (f = 0; f < c->n_flat; f++) {
        if ((f & 1) == 0)
            x = sim_rng_next(&g->w.rng);
        else
            x = (x >> 32) | (x << 32);
        switch (c->flat[f]) {
        case T_KLASS:
            be4(p, class_id(ci));
            p += 4;
            break;
        case HPROF_TYPE_OBJECT:
            be4(p, value_ref && f == 2 ? value_ref : ref_value(k, x));
            p += 4;
            break;
        case HPROF_TYPE_BOOLEAN:
            *p++ = (uint8_t)(x & 1);
            break;
        case HPROF_TYPE_BYTE:
            *p++ = (uint8_t)x;
            break;
        case HPROF_TYPE_CHAR:
        case HPROF_TYPE_SHORT:
            be2(p, (uint16_t)(x & 0x7fff));
            p += 2;
            break;
        case HPROF_TYPE_INT:
            be4(p, (uint32_t)(x & 0xffff) >> (x & 0x10000 ? 0 : 8)); /* small numbers, as most ints are */
            p += 4;
            break;
        case HPROF_TYPE_FLOAT:
            be4(p, 0x3f800000u + (uint32_t)(x & 0x7fffff)); /* 1.0 .. 2.0 */
            p += 4;
            break;
        default: /* long, double */
            be8(p, x & 0x3fffffffffffffull);
            p += 8;
            break;
        }
    }
    return p;
}

static uint8_t *put_prim_header(uint8_t *p, uint32_t id, uint32_t len, uint8_t type)
{
    p[0] = HPROF_PRIMITIVE_ARRAY_DUMP;
    be4(p + 1, id);
    be4(p + 5, STACK_SERIAL);
    be4(p + 9, len);
    p[13] = type;
    return p + PRIM_ARRAY_HEADER_LEN;
}

/* Random bytes, 8 per draw. */
static uint8_t *put_random(hprof_gen *g, uint8_t *p, size_t n)
{
    while (n >= 8) {
        uint64_t v = sim_rng_next(&g->w.rng);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap64(v);
#endif
        memcpy(p, &v, 8);
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t v = sim_rng_next(&g->w.rng);
        size_t i;
        for (i = 0; i < n; i++)
            *p++ = (uint8_t)(v >> (8 * i));
    }
    return p;
}

/* A string's text: lowercase letters and digits */
static uint8_t *put_text(hprof_gen *g, uint8_t *p, uint32_t len, int wide)
{
    static const char alphabet[64] = "abcdefghijklmnopqrstuvwxyzeeaaoitn_0123456789ABCDEFGHIJKLMN.:/ -";
    uint32_t i;
    uint64_t x = 0;
    for (i = 0; i < len; i++) {
        if (i % 10 == 0)
            x = sim_rng_next(&g->w.rng);
        if (wide)
            *p++ = 0;
        *p++ = (uint8_t)alphabet[x & 63];
        x >>= 6;
    }
    return p;
}

enum { TAIL_BYTES, TAIL_PIXELS, TAIL_REFS };

static void set_tail(hprof_gen *g, uint64_t len, uint8_t kind)
{
    g->tail_len = len;
    g->tail_off = 0;
    g->tail_key = sim_rng_next(&g->w.rng);
    g->tail_refs = g->w.objects - 1; /* the array itself is the last one numbered */
    g->tail_kind = kind;
}

/* Primitive array lengths: mostly a few elements, a long tail to 8K. */
static uint32_t prim_length(uint64_t x)
{
    unsigned bits = (x & 0x1f) < 30 ? (unsigned)((x >> 5) % 9) : 9 + (unsigned)((x >> 5) % 5);
    return (uint32_t)((x >> 16) & ((1u << bits) - 1));
}

static const uint8_t k_prim_types[16] = {
    HPROF_TYPE_BYTE, HPROF_TYPE_BYTE, HPROF_TYPE_BYTE, HPROF_TYPE_BYTE, HPROF_TYPE_BYTE, HPROF_TYPE_BYTE,
    HPROF_TYPE_INT, HPROF_TYPE_INT, HPROF_TYPE_INT, HPROF_TYPE_CHAR, HPROF_TYPE_LONG, HPROF_TYPE_LONG,
    HPROF_TYPE_SHORT, HPROF_TYPE_BOOLEAN, HPROF_TYPE_FLOAT, HPROF_TYPE_DOUBLE,
};

/* The next object (with its roots and any HEAP_DUMP_INFO) at @p; returns the
 * end of what went in the buffer; a big array sets the tail. @room is what
 * the segment may still take, tail included: a big array is cut to it. */
static uint8_t *put_object(hprof_gen *g, uint8_t *p, uint64_t room)
{
    Walk *w = &g->w;
    uint8_t *start = p;
    uint64_t x = sim_rng_next(&w->rng);
    uint32_t k = w->objects, id = object_id(k);
    uint8_t heap = w->stage == ST_IMAGE ? HPROF_HEAP_IMAGE : w->stage == ST_ZYGOTE ? HPROF_HEAP_ZYGOTE
                 : (x & 0xff) == 0 ? HPROF_HEAP_ZYGOTE /* a zygote large object */ : HPROF_HEAP_APP;
    unsigned u = (unsigned)((x >> 8) & 1023), ci;

    p = put_info(g, p, heap);
    w->objects++;
    if (heap != HPROF_HEAP_APP) /* ART marks every image and zygote object */
        p = put_root(p, HPROF_ROOT_VM_INTERNAL, id);
    if (w->stage == ST_APP_START) {
        /* an empty array without data, the main thread and its frames */
        w->stage = ST_APP;
        p = put_root3(p, HPROF_PRIMITIVE_ARRAY_NODATA, id + 4, STACK_SERIAL, 0);
        *p++ = HPROF_TYPE_BYTE;
        u = 1024; /* a thread */
    } else if (heap == HPROF_HEAP_APP && (x >> 18 & 0xfff) == 0 && w->threads < MAX_THREADS) {
        u = 1024; /* one in 4096 app objects: a thread (at most MAX_THREADS) */
    } else if (heap == HPROF_HEAP_APP && (x >> 18 & 0x1fff) == 0x1fff) {
        /* a bitmap's pixels: RGBA, 32x32 to 480x480 */
        uint32_t wd = 32 + (uint32_t)((x >> 32) % 449), ht = 32 + (uint32_t)((x >> 41) % 449);
        uint64_t len = 4ull * wd * ht, used = (uint64_t)(p - start) + PRIM_ARRAY_HEADER_LEN;
        if (used >= room)
            return NULL;
        if (len > room - used)
            len = room - used;
        p = put_prim_header(p, id, (uint32_t)len, HPROF_TYPE_BYTE);
        set_tail(g, len, TAIL_PIXELS);
        return p;
    }

    if (u < 640 || u == 1024) { /* an instance */
        if (u == 1024) {
            ci = g->thread_class;
        } else if (heap == HPROF_HEAP_APP && g->n_inst > g->n_inst_fw && (x >> 32 & 0xff) < 90) {
            ci = g->inst[g->n_inst_fw + below(x >> 24, g->n_inst - g->n_inst_fw)];
        } else if (g->n_inst_fw == 0) {
            ci = 0;
        } else if (x >> 32 & 1) { /* the common ones */
            ci = g->inst[below(x >> 24, g->n_inst_fw < 16 ? g->n_inst_fw : 16)];
        } else {
            ci = g->inst[below(x >> 24, g->n_inst_fw)];
        }
        if (u == 1024) {
            uint32_t frames = 2 + (uint32_t)((x >> 50) % 10), f, serial = ++w->threads;
            p = put_root3(p, HPROF_ROOT_THREAD_OBJECT, id, serial, STACK_SERIAL);
            for (f = 0; f < frames; f++) {
                uint32_t target = earlier(k, sim_rng_next(&w->rng));
                p = put_root3(p, f % 4 == 3 ? HPROF_ROOT_JNI_LOCAL : HPROF_ROOT_JAVA_FRAME, target ? target : id,
                              serial, f);
            }
            if (serial % 4 == 1)
                p = put_root3(p, HPROF_ROOT_JNI_MONITOR, id, serial, 0);
            if (serial == 1) /* the main thread: the debugger holds it */
                p = put_root(p, HPROF_ROOT_DEBUGGER, id);
        } else {
            unsigned v = (unsigned)(x >> 56);
            if (v < 2) { /* object id, JNI global ref id */
                p = put_root(p, HPROF_ROOT_JNI_GLOBAL, id);
                be4(p, JNI_REF_BASE + 4 * k);
                p += 4;
            } else if (v == 2 && heap == HPROF_HEAP_APP)
                p = put_root(p, HPROF_ROOT_FINALIZING, id);
            else if (v == 3 && (x >> 48 & 0xf) == 0)
                p = put_root(p, HPROF_ROOT_UNKNOWN, id);
            else if (v == 4 && (x >> 48 & 0xff) == 0)
                p = put_root(p, HPROF_ROOT_DEBUGGER, id);
        }
        p = put_instance(g, p, ci, id, 0);
    } else if (u < 820) { /* a String and its value: Latin-1 bytes (compressed) or UTF-16 */
        uint32_t len = 1 + (uint32_t)((x >> 20) % 12) + ((x >> 24 & 3) == 0 ? (uint32_t)((x >> 26) % 60) : 0) +
                       ((x >> 32 & 0x3f) == 0 ? (uint32_t)((x >> 38) % 400) : 0);
        int wide = (x >> 48 & 15) == 0;
        if (heap != HPROF_HEAP_APP ? (x >> 52 & 3) != 0 : (x >> 52 & 31) == 0)
            p = put_root(p, HPROF_ROOT_INTERNED_STRING, id);
        p = put_instance(g, p, g->string_class, id, id + 4);
        /* count and hash are the first two fields: count is the length */
        be4(p - g->classes[g->string_class].data_size, len);
        p = put_prim_header(p, id + 4, len, wide ? HPROF_TYPE_CHAR : HPROF_TYPE_BYTE);
        p = put_text(g, p, len, wide);
    } else if (u < 890) { /* an object array: mostly short, some long */
        uint32_t len = (x >> 20 & 3) != 0 ? (uint32_t)((x >> 22) % 16)
                     : (x >> 24 & 7) != 0 ? 16 + (uint32_t)((x >> 28) % 112) : 128 + (uint32_t)((x >> 28) % 1920);
        uint32_t cls = g->obj_arrays[(x >> 40 & 3) != 0 || g->n_obj_arrays == 0 ? 0 : below(x >> 24, g->n_obj_arrays)];
        uint64_t used = (uint64_t)(p - start) + OBJ_ARRAY_HEADER_LEN;
        if (g->n_obj_arrays == 0)
            cls = 0;
        if (used > room)
            return NULL;
        if ((uint64_t)len * ID_SIZE > room - used)
            len = (uint32_t)((room - used) / ID_SIZE);
        p[0] = HPROF_OBJECT_ARRAY_DUMP;
        be4(p + 1, id);
        be4(p + 5, STACK_SERIAL);
        be4(p + 9, len);
        be4(p + 13, class_id(cls));
        p += OBJ_ARRAY_HEADER_LEN;
        if (len * ID_SIZE > INLINE_DATA_MAX) {
            set_tail(g, (uint64_t)len * ID_SIZE, TAIL_REFS);
            return p;
        }
        for (uint32_t i = 0; i < len; i++) {
            be4(p, ref_value(k, sim_rng_next(&w->rng)));
            p += 4;
        }
    } else { /* a primitive array */
        uint8_t type = k_prim_types[x >> 20 & 15];
        uint32_t len = prim_length(x >> 24), es = hprof_type_size(type);
        uint64_t used = (uint64_t)(p - start) + PRIM_ARRAY_HEADER_LEN;
        if (used > room)
            return NULL;
        if ((uint64_t)len * es > room - used)
            len = (uint32_t)((room - used) / es);
        p = put_prim_header(p, id, len, type);
        if ((uint64_t)len * es > INLINE_DATA_MAX) {
            set_tail(g, (uint64_t)len * es, TAIL_BYTES);
            return p;
        }
        p = put_random(g, p, (size_t)len * es);
    }
    return (uint64_t)(p - start) <= room ? p : NULL;
}

/* CLASS_DUMP of class @ci (with its roots and $classOverhead byte[]). */
static uint8_t *put_class(hprof_gen *g, uint8_t *p, unsigned ci)
{
    const GClass *c = &g->classes[ci];
    unsigned i;

    p = put_info(g, p, c->heap);
    if (c->heap != HPROF_HEAP_APP)
        p = put_root(p, HPROF_ROOT_VM_INTERNAL, class_id(ci));
    if (c->heap == HPROF_HEAP_IMAGE)
        p = put_root(p, HPROF_ROOT_STICKY_CLASS, class_id(ci));
    p[0] = HPROF_CLASS_DUMP;
    be4(p + 1, class_id(ci));
    be4(p + 5, STACK_SERIAL);
    be4(p + 9, c->super == 0xffff ? 0 : class_id(c->super));
    memset(p + 13, 0, 5 * ID_SIZE); /* loader (boot), signers, domain, 2 reserved */
    be4(p + 33, c->data_size);
    be2(p + 37, 0); /* constant pool */
    be2(p + 39, (uint16_t)(c->n_statics + (c->overhead ? 1 : 0)));
    p += 41;
    if (c->overhead) {
        be4(p, field_string(F_CLASS_OVERHEAD));
        p[4] = HPROF_TYPE_OBJECT;
        be4(p + 5, class_id(ci) + 8);
        p += 9;
    }
    for (i = 0; i < c->n_statics; i++) {
        uint8_t f = c->static_name[i], t = type_of(k_fields[f].type);
        uint64_t v = t == HPROF_TYPE_OBJECT ? 0 : sim_rng_next(&g->w.rng) & 0xffff;
        be4(p, field_string(f));
        p[4] = t;
        p += 5;
        switch (hprof_type_size(t)) {
        case 1: *p++ = (uint8_t)(v & 1); break;
        case 4: be4(p, (uint32_t)v); p += 4; break;
        default: be8(p, v); p += 8; break;
        }
    }
    be2(p, c->n_own);
    p += 2;
    for (i = 0; i < c->n_own; i++) {
        be4(p, field_string(c->own_name[i]));
        p[4] = c->own_type[i];
        p += 5;
    }
    if (c->overhead) {
        p = put_prim_header(p, class_id(ci) + 8, c->overhead, HPROF_TYPE_BYTE);
        p = put_random(g, p, c->overhead);
    }
    return p;
}

/* Next class of the current *_CLASSES stage, or -1. */
static int next_class(hprof_gen *g)
{
    uint8_t heap = g->w.stage == ST_IMAGE_CLASSES ? HPROF_HEAP_IMAGE
                 : g->w.stage == ST_ZYGOTE_CLASSES ? HPROF_HEAP_ZYGOTE : HPROF_HEAP_APP;
    while (g->w.cursor < g->n_classes && g->classes[g->w.cursor].heap != heap)
        g->w.cursor++;
    return g->w.cursor < g->n_classes ? (int)g->w.cursor : -1;
}

/* One HEAP_DUMP_SEGMENT into the chunk; 0 when not even one object fits
 * (the rest is filler). */
static int make_segment(hprof_gen *g)
{
    uint64_t left = g->total - END_RECORD_LEN - g->chunk_start; /* for segments */
    uint64_t limit = left - FILLER_OVERHEAD;                     /* this one may take */
    uint8_t *p = g->buf + RECORD_HEADER_LEN, *q;
    unsigned objects = 0;

    if (left < FILLER_OVERHEAD + RECORD_HEADER_LEN + 64)
        return 0;
    if (limit > HPROF_GEN_SEGMENT_MAX)
        limit = HPROF_GEN_SEGMENT_MAX;
    g->w.heap = 0; /* a new segment resets the heap (ART) */
    g->tail_len = 0;
    while (objects < SEG_OBJECTS && (size_t)(p - g->buf) < RECORD_HEADER_LEN + SEG_SOFT && g->tail_len == 0) {
        Walk saved = g->w;
        uint64_t pos = g->chunk_start + (uint64_t)(p - g->buf);
        uint64_t room = limit - (uint64_t)(p - g->buf);
        int ci;

        switch (g->w.stage) {
        case ST_IMAGE_CLASSES:
        case ST_ZYGOTE_CLASSES:
        case ST_APP_CLASSES:
            if ((ci = next_class(g)) < 0) {
                g->w.stage++;
                g->w.cursor = 0;
                continue;
            }
            q = put_class(g, p, (unsigned)ci);
            if ((uint64_t)(q - g->buf) > limit) {
                g->w = saved;
                goto full;
            }
            g->w.cursor++;
            p = q;
            break;
        case ST_IMAGE:
        case ST_ZYGOTE:
            if (pos >= (g->w.stage == ST_IMAGE ? g->image_end : g->zygote_end)) {
                g->w.stage++;
                continue;
            }
            /* fall through */
        default:
            q = put_object(g, p, room);
            if (!q || (uint64_t)(q - g->buf) + g->tail_len > limit) {
                g->w = saved;
                g->tail_len = 0;
                goto full;
            }
            p = q;
            break;
        }
        objects++;
    }
full:
    if (objects == 0)
        return 0;
    g->buf_len = (size_t)(p - g->buf);
    g->buf[0] = HPROF_TAG_HEAP_DUMP_SEGMENT;
    be4(g->buf + 1, 0);
    be4(g->buf + 5, (uint32_t)(g->buf_len - RECORD_HEADER_LEN + g->tail_len));
    return 1;
}

/* The last segment: exactly what is left before HEAP_DUMP_END. */
static void make_filler(hprof_gen *g)
{
    uint64_t len = g->total - END_RECORD_LEN - g->chunk_start;
    uint8_t *p = g->buf;

    p[0] = HPROF_TAG_HEAP_DUMP_SEGMENT;
    be4(p + 1, 0);
    be4(p + 5, (uint32_t)(len - RECORD_HEADER_LEN));
    p += RECORD_HEADER_LEN;
    p[0] = HPROF_HEAP_DUMP_INFO;
    be4(p + 1, HPROF_HEAP_APP);
    be4(p + 5, heap_name(HPROF_HEAP_APP));
    p = put_prim_header(p + INFO_LEN, FILLER_ID, (uint32_t)(len - FILLER_OVERHEAD), HPROF_TYPE_BYTE);
    g->buf_len = (size_t)(p - g->buf);
    g->tail_len = len - FILLER_OVERHEAD;
    g->tail_off = 0;
    g->tail_key = sim_rng_mix(g->seed, g->chunk_start);
    g->tail_refs = 0;
    g->tail_kind = TAIL_BYTES;
}

/* Fill the next chunk; 0 at the end. */
static int next_chunk(hprof_gen *g)
{
    static const uint8_t end_record[END_RECORD_LEN] = { HPROF_TAG_HEAP_DUMP_END, 0, 0, 0, 0, 0, 0, 0, 0 };
    long n;

    g->chunk_start += g->buf_len + g->tail_len;
    g->buf_len = g->buf_pos = 0;
    g->tail_len = g->tail_off = 0;
    for (;;) {
        switch (g->phase) {
        case PH_HEADER:
            memcpy(g->buf, HEADER_MAGIC, sizeof HEADER_MAGIC); /* with its NUL */
            be4(g->buf + sizeof HEADER_MAGIC, ID_SIZE);
            be8(g->buf + sizeof HEADER_MAGIC + 4, 1700000000000ull + (uint64_t)g->seed * 1000u); /* ms */
            g->buf_len = HEADER_LEN;
            g->phase = PH_STRINGS;
            g->cursor = 0;
            return 1;
        case PH_STRINGS:
            while (g->buf_len + 13 + MAX_NAME <= CHUNK_CAP &&
                   (n = string_record(g, g->cursor, g->buf + g->buf_len)) >= 0) {
                g->buf_len += (size_t)n;
                g->cursor++;
            }
            if (g->buf_len + 13 + MAX_NAME <= CHUNK_CAP) {
                g->phase = PH_CLASSES;
                g->cursor = 0;
            }
            if (g->buf_len)
                return 1;
            break;
        case PH_CLASSES:
            while (g->buf_len + 25 <= CHUNK_CAP && g->cursor < g->n_classes) {
                uint8_t *p = g->buf + g->buf_len;
                p[0] = HPROF_TAG_LOAD_CLASS;
                be4(p + 1, 0);
                be4(p + 5, 8 + 2 * ID_SIZE);
                be4(p + 9, g->cursor + 1); /* class serial */
                be4(p + 13, class_id(g->cursor));
                be4(p + 17, STACK_SERIAL);
                be4(p + 21, CLASS_NAME_ID_BASE + g->cursor);
                g->buf_len += 25;
                g->cursor++;
            }
            if (g->cursor == g->n_classes)
                g->phase = PH_TRACE;
            if (g->buf_len)
                return 1;
            break;
        case PH_TRACE: {
            uint64_t body;
            uint8_t *p = g->buf;
            p[0] = HPROF_TAG_STACK_TRACE;
            be4(p + 1, 0);
            be4(p + 5, 12);
            be4(p + 9, STACK_SERIAL);
            be4(p + 13, 1); /* thread serial */
            be4(p + 17, 0); /* no frames */
            g->buf_len = 21;
            g->phase = PH_HEAP;
            /* the image heap is the first tenth of the heap, the zygote's the next 8% */
            body = g->total - (g->chunk_start + 21);
            g->image_end = g->chunk_start + 21 + body / 10;
            g->zygote_end = g->chunk_start + 21 + body / 100 * 18;
            return 1;
        }
        case PH_HEAP:
            if (make_segment(g))
                return 1;
            g->phase = PH_FILLER;
            break;
        case PH_FILLER:
            make_filler(g);
            g->phase = PH_END;
            return 1;
        case PH_END:
            memcpy(g->buf, end_record, END_RECORD_LEN);
            g->buf_len = END_RECORD_LEN;
            g->phase = PH_DONE;
            return 1;
        case PH_DONE:
            return 0;
        }
    }
}

/* Tail bytes [off, off + n): a function of (key, position), so any read
 * pattern gives the same bytes. */
static inline uint64_t tail_word(uint64_t key, uint64_t i)
{
    uint64_t z = key + i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 29);
}

/* Element @i of a streamed object array: null a quarter of the time, else
 * mostly one of the 256 objects before it. */
static inline uint32_t tail_ref(const hprof_gen *g, uint64_t i)
{
    uint32_t r = (uint32_t)(tail_word(g->tail_key, i >> 1) >> (i & 1 ? 32 : 0)), k = g->tail_refs, span;
    if ((r & 3) == 0 || k == 0)
        return 0;
    span = (r & 0x3c) && k > 256 ? 256 : k;
    return object_id(k - 1 - (uint32_t)(((uint64_t)(r & ~0x3fu) * span) >> 32));
}

static void fill_tail(const hprof_gen *g, uint64_t off, uint8_t *out, size_t n)
{
    if (g->tail_kind == TAIL_REFS) { /* 4 bytes each */
        while (n > 0 && (off & 3)) {
            uint8_t e[4];
            be4(e, tail_ref(g, off >> 2));
            *out++ = e[off & 3];
            off++;
            n--;
        }
        for (; n >= 4; n -= 4, off += 4, out += 4)
            be4(out, tail_ref(g, off >> 2));
        if (n > 0) {
            uint8_t e[4];
            be4(e, tail_ref(g, off >> 2));
            memcpy(out, e, n);
        }
        return;
    } else {
        uint64_t mask = g->tail_kind == TAIL_PIXELS ? 0xff000000ff000000ull : 0; /* opaque RGBA */
        while (n > 0 && (off & 7)) {
            uint64_t v = tail_word(g->tail_key, off >> 3) | mask;
            *out++ = (uint8_t)(v >> (8 * (off & 7)));
            off++;
            n--;
        }
        for (; n >= 8; n -= 8, off += 8, out += 8) {
            uint64_t v = tail_word(g->tail_key, off >> 3) | mask;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            v = __builtin_bswap64(v); /* the same bytes on every host */
#endif
            memcpy(out, &v, 8);
        }
        if (n > 0) {
            uint64_t v = tail_word(g->tail_key, off >> 3) | mask;
            unsigned i;
            for (i = 0; i < n; i++)
                out[i] = (uint8_t)(v >> (8 * i));
        }
    }
}

hprof_gen *hprof_gen_new(uint64_t total, uint32_t seed, const char *package)
{
    hprof_gen *g;

    if (total < HPROF_GEN_MIN_TOTAL || total > HPROF_GEN_MAX_TOTAL)
        return NULL;
    g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->total = total;
    g->seed = seed;
    build_model(g, package);
    sim_rng_seed(&g->w.rng, sim_rng_mix(seed, 0x48454150ull /* "HEAP" */));
    g->phase = PH_HEADER;
    next_chunk(g);
    return g;
}

size_t hprof_gen_read(hprof_gen *g, uint8_t *buf, size_t cap)
{
    size_t done = 0;

    while (done < cap) {
        size_t n;
        if (g->buf_pos < g->buf_len) {
            n = g->buf_len - g->buf_pos;
            if (n > cap - done)
                n = cap - done;
            memcpy(buf + done, g->buf + g->buf_pos, n);
            g->buf_pos += n;
        } else if (g->tail_off < g->tail_len) {
            uint64_t left = g->tail_len - g->tail_off;
            n = left < cap - done ? (size_t)left : cap - done;
            fill_tail(g, g->tail_off, buf + done, n);
            g->tail_off += n;
        } else if (!next_chunk(g)) {
            break;
        } else {
            continue;
        }
        done += n;
    }
    g->offset += done;
    return done;
}

uint64_t hprof_gen_total(const hprof_gen *g)
{
    return g->total;
}

uint64_t hprof_gen_offset(const hprof_gen *g)
{
    return g->offset;
}

void hprof_gen_free(hprof_gen *g)
{
    free(g);
}
