/* SPDX-License-Identifier: Apache-2.0
 *
 * Identity text that many VMs have in common, held once (vm-private.h):
 * the VM ident, ABI and JVM flags of HELO and the FEAT list are the same
 * for every app of one device (1,000 VMs of one Android build send one
 * FEAT list of ~10 names), so a session keeps a reference to a shared
 * copy instead of a copy of its own (an idle VM: ~300 bytes and ~10
 * malloc blocks fewer).
 *
 * Strings are glib's interned GRefStrings (g_ref_string_new_intern):
 * released with ddm_vm_text_release. A FEAT list is one block (a
 * reference count, the NULL-terminated vector and the strings it points
 * to) in a set of the lists in use, found by content: an equal list from
 * another VM is the same block. A list goes when its last VM releases it,
 * so the set never holds more lists than there are VMs, and each holds at
 * most DDM_VM_FEATURES_MAX names of at most DDM_VM_NAME_MAX bytes (the
 * rest is dropped: real VMs send ~20 short names).
 * The set hashes a list with a random seed drawn once per process
 * (core/wire/seeded_hash.h, as the view store does): an unseeded
 * hash let a VM set choose lists that collide ("aB" and "b!" under DJB2),
 * making each FEAT a walk of every list in use.
 * Single-threaded: only the loop's thread calls these.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/session/vm-private.h"
#include "core/wire/seeded_hash.h"

/* One shared FEAT list. vec[n] is NULL; the strings follow vec in the same
 * block, so vm->features (== vec) is all a session holds. */
typedef struct SharedFeatures {
    guint refs;
    guint n;
    gsize text_len; /* bytes of the strings, each with its NUL */
    guint hash;
    char *vec[];    /* n + 1 pointers, then the text */
} SharedFeatures;

static GHashTable *features_set; /* SharedFeatures* (owned by their references) */

guint ddm_vm_features_hash_seeded(guint32 seed, const char *text, gsize len)
{
    return ddm_hash_bytes(seed, text, len);
}

guint ddm_vm_features_hash(const char *text, gsize len)
{
    return ddm_hash_bytes(ddm_hash_seed(), text, len);
}

/* The block that holds @vec. The step back is counted in pointers, not
 * bytes: the header is a whole number of pointers and a pointer's
 * alignment is the struct's, so the result is as aligned as @vec was
 * (a step in bytes would lose that, and clang's -Wcast-align says so). */
G_STATIC_ASSERT(offsetof(SharedFeatures, vec) % sizeof(char *) == 0);
G_STATIC_ASSERT(G_ALIGNOF(SharedFeatures) <= G_ALIGNOF(char *));

static SharedFeatures *from_vec(char **vec)
{
    return (SharedFeatures *)(vec - offsetof(SharedFeatures, vec) / sizeof(char *));
}

static const char *text_of(const SharedFeatures *f)
{
    return (const char *)&f->vec[f->n + 1];
}

static guint features_hash(gconstpointer p)
{
    return ((const SharedFeatures *)p)->hash;
}

static gboolean features_equal(gconstpointer a, gconstpointer b)
{
    const SharedFeatures *x = a, *y = b;
    return x->n == y->n && x->text_len == y->text_len &&
           memcmp(text_of(x), text_of(y), x->text_len) == 0;
}

char *ddm_vm_text_share(const char *s, gsize max)
{
    g_autofree char *clipped = ddm_vm_clip(s, max);
    return clipped ? g_ref_string_new_intern(clipped) : NULL;
}

void ddm_vm_text_release(char *s)
{
    if (s)
        g_ref_string_release(s);
}

gboolean ddm_vm_features_over_cap(char *const *features, guint *n_out, gsize *longest_out)
{
    guint n = 0;
    gsize longest = 0;
    for (; features && features[n]; n++)
        longest = MAX(longest, strlen(features[n]));
    *n_out = n;
    *longest_out = longest;
    return n > DDM_VM_FEATURES_MAX || longest > DDM_VM_NAME_MAX;
}

/* @features cut to the caps, in place. */
static void features_cut(char **features)
{
    guint i;
    for (i = 0; features[i] && i < DDM_VM_FEATURES_MAX; i++)
        if (strlen(features[i]) > DDM_VM_NAME_MAX) {
            char *clipped = ddm_vm_clip(features[i], DDM_VM_NAME_MAX);
            g_free(features[i]);
            features[i] = clipped;
        }
    if (!features[i])
        return;
    for (guint k = i; features[k]; k++)
        g_free(features[k]);
    features[i] = NULL;
}

char **ddm_vm_features_share(char **features)
{
    SharedFeatures *f, *found;
    gsize text_len = 0;
    guint n, i;
    char *p;

    if (!features)
        return NULL;
    features_cut(features);
    n = g_strv_length(features);
    for (i = 0; i < n; i++)
        text_len += strlen(features[i]) + 1;
    f = g_malloc(sizeof *f + (n + 1) * sizeof(char *) + text_len);
    f->refs = 1;
    f->n = n;
    f->text_len = text_len;
    p = (char *)&f->vec[n + 1];
    for (i = 0; i < n; i++) {
        gsize len = strlen(features[i]) + 1;
        memcpy(p, features[i], len);
        f->vec[i] = p;
        p += len;
    }
    f->vec[n] = NULL;
    f->hash = ddm_vm_features_hash(text_of(f), text_len); /* the strings with their NULs */
    g_strfreev(features);

    if (!features_set)
        features_set = g_hash_table_new(features_hash, features_equal);
    found = g_hash_table_lookup(features_set, f);
    if (found) {
        g_free(f);
        found->refs++;
        return found->vec;
    }
    g_hash_table_add(features_set, f);
    return f->vec;
}

void ddm_vm_features_release(char **shared)
{
    SharedFeatures *f;

    if (!shared)
        return;
    f = from_vec(shared);
    g_return_if_fail(f->refs > 0);
    if (--f->refs > 0)
        return;
    g_hash_table_remove(features_set, f);
    g_free(f);
    if (g_hash_table_size(features_set) == 0) {
        g_hash_table_destroy(features_set);
        features_set = NULL;
    }
}

guint ddm_vm_features_shared_count(void)
{
    return features_set ? g_hash_table_size(features_set) : 0;
}
