/* SPDX-License-Identifier: Apache-2.0
 *
 * The per-VM tables plugins fill through the host (vm.h): each plugin's
 * data, the headlines ("label" -> "text") and the headline figures (label
 * -> typed figures). A VM has a handful of entries in each, so each is a
 * singly linked list of one-block entries (headlines and figures sorted by
 * label, so the VM list and the "headline" view read them in order), not a
 * hash table: an idle VM with every plugin saved ~200 bytes and 3 blocks a
 * table, and a few blocks an entry. Bounded: one data entry a plugin (the
 * registry caps the plugins), DDM_VM_HEADLINES_MAX labels of each kind.
 *
 * A VM's headlines, and its figures, are one block each, shared by every
 * VM whose list is the same (issue 16: with 1,000 VMs, ~120 bytes and 3
 * blocks a VM were the same few lists again and again, "alloc: off" on
 * nearly all): the block is read-only, its entries linked inside it as
 * readers expect, and a change makes (or finds) the VM's new list and lets
 * the old one go. The sets of lists hash with the process's seeded hash
 * (the texts may come from the wire); a list leaves with its last VM.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "core/session/vm.h"
#include "core/wire/seeded_hash.h"

/* In front of a shared list's first entry (8 bytes: the entries stay
 * 8-aligned). */
typedef struct SharedHead {
    guint refs;
    guint hash;
} SharedHead;

static SharedHead *head_of(const void *first)
{
    return (SharedHead *)first - 1;
}

static guint shared_hash(gconstpointer p)
{
    return ((const SharedHead *)p)->hash;
}

/* A list being made: on the stack when it fits (nearly always: a list
 * found shared then costs no block at all; a block made and freed at once
 * for every change was a hole among the long-lived blocks of a start-up). */
#define CANDIDATE_STACK 1024u
typedef union Candidate {
    SharedHead head;
    gpointer align; /* the entries hold pointers */
    gint64 align64;
    char bytes[CANDIDATE_STACK];
} Candidate;

static SharedHead *candidate_get(Candidate *stack, gsize size)
{
    return size <= sizeof *stack ? &stack->head : g_malloc(size);
}

/* The list in @cand (a SharedHead, hash set, and @size bytes in all), or
 * the equal list already shared, referenced. A new one is moved into a
 * block of its own, its pointers moved by @relink(first entry, the first
 * entry it was copied from).
 * @cand is freed unless it is @stack. Returns the list's first entry. */
G_GNUC_NO_INLINE /* inlined into its one caller, gcc takes @stack's address for a return value */
static gpointer shared_intern(GHashTable **set, GEqualFunc equal, SharedHead *cand, gsize size,
                              Candidate *stack, void (*relink)(gpointer first, gconstpointer was))
{
    SharedHead *found, *block = cand;

    if (!*set)
        *set = g_hash_table_new(shared_hash, equal);
    found = g_hash_table_lookup(*set, cand);
    if (found) {
        found->refs++;
        if (cand != &stack->head)
            g_free(cand);
        return found + 1;
    }
    if (cand == &stack->head) {
        block = g_memdup2(cand, size);
        relink(block + 1, cand + 1);
    }
    block->refs = 1;
    g_hash_table_add(*set, block);
    return block + 1;
}

static void shared_release(GHashTable *set, const void *first)
{
    SharedHead *h;
    if (!first)
        return;
    h = head_of(first);
    if (--h->refs == 0) {
        g_hash_table_remove(set, h);
        g_free(h);
    }
}

/* Where @p, a pointer into the list whose first entry is @was, stands in
 * its copy whose first entry is @first: its offset in the one list, from
 * the other's start (no difference of pointers into two objects). */
static gpointer moved(gconstpointer p, gconstpointer was, gpointer first)
{
    return (char *)first + ((const char *)p - (const char *)was);
}

static gsize align8(gsize n)
{
    return (n + 7) & ~(gsize)7;
}

/* What a kind of shared list (headlines, figures) needs to be made from
 * an array of parts, one an entry. */
typedef struct SharedListKind {
    GHashTable **set;
    GEqualFunc equal;
    void (*relink)(gpointer first, gconstpointer was);
    /* the bytes entry @i of @parts takes */
    gsize (*entry_size)(const void *parts, guint i);
    /* lay entry @i out at @entry, link it after @prev (NULL: the first) and
     * mix its contents into *@hash */
    void (*fill)(gpointer entry, gpointer prev, const void *parts, guint i, guint32 seed, guint *hash);
} SharedListKind;

/* The shared list of @n (> 0) parts, in order: its block's size counted,
 * its entries laid out 8-aligned after the SharedHead, then found shared
 * or kept. (a reference: shared_release) */
static gpointer shared_list_make(const SharedListKind *kind, const void *parts, guint n)
{
    gsize size = sizeof(SharedHead), at = sizeof(SharedHead);
    Candidate stack;
    SharedHead *block;
    gpointer prev = NULL;
    guint32 seed = ddm_hash_seed();
    guint hash = n;

    for (guint i = 0; i < n; i++)
        size = align8(size + kind->entry_size(parts, i));
    block = candidate_get(&stack, size);
    for (guint i = 0; i < n; i++) {
        gpointer entry = (char *)block + at;
        kind->fill(entry, prev, parts, i, seed, &hash);
        prev = entry;
        at = align8(at + kind->entry_size(parts, i));
    }
    block->hash = hash;
    return shared_intern(kind->set, kind->equal, block, size, &stack, kind->relink);
}

DdmVmPluginData *ddm_vm_plugin_data_find(DdmVm *vm, gconstpointer plugin)
{
    for (DdmVmPluginData *d = vm->plugin_data; d; d = d->next)
        if (d->plugin == plugin)
            return d;
    return NULL;
}

DdmVmPluginData *ddm_vm_plugin_data_take(DdmVm *vm, gconstpointer plugin)
{
    for (DdmVmPluginData **at = &vm->plugin_data; *at; at = &(*at)->next)
        if ((*at)->plugin == plugin) {
            DdmVmPluginData *d = *at;
            *at = d->next;
            d->next = NULL;
            return d;
        }
    return NULL;
}

DdmVmPluginData *ddm_vm_plugin_data_take_all(DdmVm *vm)
{
    DdmVmPluginData *list = vm->plugin_data;
    vm->plugin_data = NULL;
    return list;
}

void ddm_vm_plugin_data_free_list(DdmVmPluginData *list)
{
    while (list) {
        DdmVmPluginData *d = list;
        list = d->next;
        if (d->data_free && d->data)
            d->data_free(d->data);
        g_free(d);
    }
}

/* The largest encoding: a label, DDM_HEADLINE_FIGURES_MAX names, values. */
#define FIGURES_DATA_MAX                                                              \
    (DDM_HEADLINE_LABEL_MAX + 1 +                                                     \
     DDM_HEADLINE_FIGURES_MAX * (DDM_HEADLINE_FIGURE_NAME_MAX + 1 + 1 + 8))

/* @label and @figs as DdmVmFigures.data into @buf (FIGURES_DATA_MAX bytes);
 * returns the size. */
static gsize figures_encode(char *buf, const char *label, const DdmHeadlineFigure *figs, guint n)
{
    gsize at = strnlen(label, DDM_HEADLINE_LABEL_MAX);
    memcpy(buf, label, at);
    buf[at++] = '\0';
    for (guint i = 0; i < n; i++) {
        gsize len = strnlen(figs[i].name, DDM_HEADLINE_FIGURE_NAME_MAX);
        memcpy(buf + at, figs[i].name, len);
        at += len;
        buf[at++] = '\0';
    }
    for (guint i = 0; i < n; i++) {
        buf[at] = (char)figs[i].type;
        if (figs[i].type == DDM_VAL_INT)
            memcpy(buf + at + 1, &figs[i].i, 8);
        else
            memcpy(buf + at + 1, &figs[i].d, 8);
        at += 9;
    }
    return at;
}

void ddm_vm_figures_get(const DdmVmFigures *f, guint i, DdmHeadlineFigure *out)
{
    const char *p = f->data + strlen(f->data) + 1, *name = p;

    memset(out, 0, sizeof *out);
    g_return_if_fail(i < f->n);
    for (guint k = 0; k < f->n; k++) { /* the names, then the values */
        if (k == i)
            name = p;
        p += strlen(p) + 1;
    }
    g_strlcpy(out->name, name, sizeof out->name);
    p += (gsize)i * 9;
    out->type = (ddm_value_type)(guchar)p[0];
    if (out->type == DDM_VAL_INT)
        memcpy(&out->i, p + 1, 8);
    else
        memcpy(&out->d, p + 1, 8);
}

const char *ddm_vm_headline_get(const DdmVm *vm, const char *label)
{
    for (const DdmVmHeadline *h = vm->headlines; h; h = h->next)
        if (strcmp(h->label, label) == 0)
            return h->text;
    return NULL;
}

guint ddm_vm_headlines_count(const DdmVm *vm)
{
    guint n = 0;
    for (const DdmVmHeadline *h = vm->headlines; h; h = h->next)
        n++;
    return n;
}

/* The shared headline lists (SharedHead*, their first entry after them). */
static GHashTable *shared_headlines;

static gboolean headlines_equal(gconstpointer pa, gconstpointer pb)
{
    const DdmVmHeadline *a = (const void *)((const SharedHead *)pa + 1);
    const DdmVmHeadline *b = (const void *)((const SharedHead *)pb + 1);
    for (; a && b; a = a->next, b = b->next)
        if (strcmp(a->label, b->label) != 0 || strcmp(a->text, b->text) != 0)
            return FALSE;
    return a == b; /* both ended */
}

typedef struct HeadlinePair {
    const char *label, *text;
} HeadlinePair;

static void headlines_relink(gpointer first, gconstpointer was)
{
    for (DdmVmHeadline *h = first; h; h = h->next) {
        h->text = moved(h->text, was, first);
        if (h->next)
            h->next = moved(h->next, was, first);
    }
}

static gsize headline_size(const void *parts, guint i)
{
    const HeadlinePair *pair = (const HeadlinePair *)parts + i;
    return sizeof(DdmVmHeadline) + strlen(pair->label) + 1 + strlen(pair->text) + 1;
}

static void headline_fill(gpointer entry, gpointer prev, const void *parts, guint i, guint32 seed,
                          guint *hash)
{
    const HeadlinePair *pair = (const HeadlinePair *)parts + i;
    DdmVmHeadline *h = entry;
    gsize ll = strlen(pair->label) + 1, tl = strlen(pair->text) + 1;

    memcpy(h->label, pair->label, ll);
    h->text = memcpy(h->label + ll, pair->text, tl);
    h->next = NULL;
    if (prev)
        ((DdmVmHeadline *)prev)->next = h;
    *hash = *hash * 31u + ddm_hash_bytes(seed, pair->label, ll);
    *hash = *hash * 31u + ddm_hash_bytes(seed, pair->text, tl);
}

static const SharedListKind headline_lists = {&shared_headlines, headlines_equal, headlines_relink,
                                              headline_size, headline_fill};

int ddm_vm_headline_set(DdmVm *vm, const char *label, const char *text)
{
    HeadlinePair pairs[DDM_VM_HEADLINES_MAX + 1];
    guint n = 0;
    gboolean placed = FALSE;
    const char *cur = ddm_vm_headline_get(vm, label);
    DdmVmHeadline *old = vm->headlines;

    if (g_strcmp0(cur, text) == 0)
        return 0;
    if (!cur && ddm_vm_headlines_count(vm) >= DDM_VM_HEADLINES_MAX)
        return -ENOSPC;
    /* the list again, sorted by label, with @label's text replaced, added or gone */
    for (const DdmVmHeadline *h = old; h; h = h->next) {
        int c = strcmp(h->label, label);
        if (c >= 0 && !placed) {
            placed = TRUE;
            if (text)
                pairs[n++] = (HeadlinePair){label, text};
            if (c == 0)
                continue;
        }
        pairs[n++] = (HeadlinePair){h->label, h->text};
    }
    if (!placed && text)
        pairs[n++] = (HeadlinePair){label, text};
    /* made before the old one goes: pairs borrow it */
    vm->headlines = n ? shared_list_make(&headline_lists, pairs, n) : NULL;
    shared_release(shared_headlines, old);
    return 1;
}

/* The shared figure lists (SharedHead*, their first entry after them). */
static GHashTable *shared_figures;

static gboolean figures_equal(gconstpointer pa, gconstpointer pb)
{
    const DdmVmFigures *a = (const void *)((const SharedHead *)pa + 1);
    const DdmVmFigures *b = (const void *)((const SharedHead *)pb + 1);
    for (; a && b; a = a->next, b = b->next)
        if (a->n != b->n || a->size != b->size || memcmp(a->data, b->data, a->size) != 0)
            return FALSE;
    return a == b;
}

typedef struct FiguresPart {
    guint8 n;
    guint16 size;
    const char *data; /* DdmVmFigures.data: size bytes */
} FiguresPart;

static void figures_relink(gpointer first, gconstpointer was)
{
    for (DdmVmFigures *f = first; f; f = f->next)
        if (f->next)
            f->next = moved(f->next, was, first);
}

static gsize figures_size(const void *parts, guint i)
{
    return offsetof(DdmVmFigures, data) + ((const FiguresPart *)parts)[i].size;
}

static void figures_fill(gpointer entry, gpointer prev, const void *parts, guint i, guint32 seed, guint *hash)
{
    const FiguresPart *part = (const FiguresPart *)parts + i;
    DdmVmFigures *f = entry;

    f->next = NULL;
    f->n = part->n;
    f->size = part->size;
    memcpy(f->data, part->data, part->size);
    if (prev)
        ((DdmVmFigures *)prev)->next = f;
    *hash = *hash * 31u + part->n;
    *hash = *hash * 31u + ddm_hash_bytes(seed, part->data, part->size);
}

static const SharedListKind figures_lists = {&shared_figures, figures_equal, figures_relink, figures_size,
                                             figures_fill};

int ddm_vm_figures_set(DdmVm *vm, const char *label, const DdmHeadlineFigure *figs, guint n)
{
    FiguresPart parts[DDM_VM_HEADLINES_MAX + 1];
    guint count = 0, k = 0;
    gboolean placed = FALSE;
    const DdmVmFigures *cur = NULL;
    DdmVmFigures *old = vm->headline_figures;
    char data[FIGURES_DATA_MAX];
    gsize size;

    g_return_val_if_fail(strlen(label) <= DDM_HEADLINE_LABEL_MAX, -EMSGSIZE);
    g_return_val_if_fail(n <= DDM_HEADLINE_FIGURES_MAX, -EINVAL);
    size = figures_encode(data, label, figs, n);
    for (const DdmVmFigures *f = old; f; f = f->next) {
        count++;
        if (strcmp(ddm_vm_figures_label(f), label) == 0)
            cur = f;
    }
    if (cur && cur->n == n && cur->size == size && memcmp(cur->data, data, size) == 0)
        return 0;
    if (!cur && n == 0)
        return 0;
    if (!cur && count >= DDM_VM_HEADLINES_MAX)
        return -ENOSPC;
    /* the list again, sorted by label, with @label's figures replaced, added or gone */
    for (const DdmVmFigures *f = old; f; f = f->next) {
        int c = strcmp(ddm_vm_figures_label(f), label);
        if (c >= 0 && !placed) {
            placed = TRUE;
            if (n > 0)
                parts[k++] = (FiguresPart){(guint8)n, (guint16)size, data};
            if (c == 0)
                continue;
        }
        parts[k++] = (FiguresPart){f->n, f->size, f->data};
    }
    if (!placed && n > 0)
        parts[k++] = (FiguresPart){(guint8)n, (guint16)size, data};
    /* made before the old one goes: parts borrow it */
    vm->headline_figures = k ? shared_list_make(&figures_lists, parts, k) : NULL;
    shared_release(shared_figures, old);
    return 1;
}

void ddm_vm_headlines_clear(DdmVm *vm)
{
    shared_release(shared_headlines, vm->headlines);
    vm->headlines = NULL;
    shared_release(shared_figures, vm->headline_figures);
    vm->headline_figures = NULL;
}
