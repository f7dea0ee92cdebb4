/* SPDX-License-Identifier: Apache-2.0
 *
 * The ground-truth files (--port-file, --state-file) written by a thread of
 * their own, so that the simulated VMs never wait on the disk: a create or
 * rename on a busy file system (a journal commit behind gigabytes written
 * and deleted by the tests next door) can take seconds, and a VM that
 * stops answering for that long looks hung to ddmon (a method trace's stop
 * times out, say).
 *
 * The world builds each text on its own thread (the state must be read
 * where it changes) and hands it over; the writer keeps the newest text per
 * path, so a slow disk coalesces rewrites instead of queueing them. Each
 * file is still replaced atomically (sim_write_atomically: temporary file
 * and rename), so a reader never sees half of one.
 *
 * Owns: the thread, the texts not yet written (at most one per path) and
 * their paths. Freeing the writer writes what is queued, then joins.
 */
#include "simvm-private.h"

#include <string.h>

typedef struct Pending {
    char *path; /* owned */
    char *text; /* owned; NULL once taken by the thread */
} Pending;

struct SimFileWriter {
    GThread *thread;
    GMutex lock;
    GCond wake;
    GArray *pending; /* Pending, one per path ever written (two at most) */
    gboolean stopping;
    gint busy;       /* texts taken but not yet written (sim_file_writer_idle) */
};

static gboolean take_one(SimFileWriter *fw, char **path, char **text)
{
    for (guint i = 0; i < fw->pending->len; i++) {
        Pending *p = &g_array_index(fw->pending, Pending, i);
        if (p->text) {
            *path = g_strdup(p->path);
            *text = p->text;
            p->text = NULL;
            return TRUE;
        }
    }
    return FALSE;
}

static gpointer writer_main(gpointer ud)
{
    SimFileWriter *fw = ud;
    char *path, *text;

    g_mutex_lock(&fw->lock);
    for (;;) {
        if (!take_one(fw, &path, &text)) {
            if (fw->stopping)
                break;
            g_cond_wait(&fw->wake, &fw->lock);
            continue;
        }
        fw->busy++;
        g_mutex_unlock(&fw->lock);
        GError *err = NULL;
        if (!sim_write_atomically(path, text, &err)) {
            g_warning("%s", err->message);
            g_error_free(err);
        }
        g_free(path);
        g_free(text);
        g_mutex_lock(&fw->lock);
        fw->busy--;
        g_cond_broadcast(&fw->wake);
    }
    g_mutex_unlock(&fw->lock);
    return NULL;
}

SimFileWriter *sim_file_writer_new(void)
{
    SimFileWriter *fw = g_new0(SimFileWriter, 1);

    g_mutex_init(&fw->lock);
    g_cond_init(&fw->wake);
    fw->pending = g_array_new(FALSE, TRUE, sizeof(Pending));
    fw->thread = g_thread_new("simvm-files", writer_main, fw);
    return fw;
}

void sim_file_writer_put(SimFileWriter *fw, const char *path, char *text)
{
    Pending *slot = NULL;

    g_mutex_lock(&fw->lock);
    for (guint i = 0; i < fw->pending->len && !slot; i++)
        if (strcmp(g_array_index(fw->pending, Pending, i).path, path) == 0)
            slot = &g_array_index(fw->pending, Pending, i);
    if (!slot) {
        Pending fresh = { g_strdup(path), NULL };
        g_array_append_val(fw->pending, fresh);
        slot = &g_array_index(fw->pending, Pending, fw->pending->len - 1);
    }
    g_free(slot->text); /* an older text nobody wrote yet: the newer one replaces it */
    slot->text = text;
    g_cond_broadcast(&fw->wake);
    g_mutex_unlock(&fw->lock);
}

void sim_file_writer_flush(SimFileWriter *fw)
{
    gboolean queued;

    g_mutex_lock(&fw->lock);
    for (;;) {
        queued = FALSE;
        for (guint i = 0; i < fw->pending->len; i++)
            queued |= g_array_index(fw->pending, Pending, i).text != NULL;
        if (!queued && fw->busy == 0)
            break;
        g_cond_wait(&fw->wake, &fw->lock);
    }
    g_mutex_unlock(&fw->lock);
}

void sim_file_writer_free(SimFileWriter *fw)
{
    if (!fw)
        return;
    g_mutex_lock(&fw->lock);
    fw->stopping = TRUE; /* the thread writes what is queued, then ends */
    g_cond_broadcast(&fw->wake);
    g_mutex_unlock(&fw->lock);
    g_thread_join(fw->thread);
    for (guint i = 0; i < fw->pending->len; i++) {
        Pending *p = &g_array_index(fw->pending, Pending, i);
        g_free(p->path);
        g_free(p->text);
    }
    g_array_free(fw->pending, TRUE);
    g_cond_clear(&fw->wake);
    g_mutex_clear(&fw->lock);
    g_free(fw);
}
