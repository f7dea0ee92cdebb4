/* SPDX-License-Identifier: Apache-2.0
 *
 * Run directories for commands from the web and serving their files
 * (downloads.h).
 */
#include "web/downloads.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

#include "web/http_server.h"

struct DdmWebDownloads {
    char *dir;
    guint next_id;
    GQueue runs;   /* char* ids, oldest first */
};

/* Delete the regular files of @path, then @path (runs hold no subdirectories). */
static void remove_dir(const char *path)
{
    GDir *d = g_dir_open(path, 0, NULL);
    if (d != NULL) {
        const char *name;
        while ((name = g_dir_read_name(d)) != NULL) {
            g_autofree char *f = g_build_filename(path, name, NULL);
            if (g_unlink(f) != 0 && errno == EISDIR)
                remove_dir(f);
        }
        g_dir_close(d);
    }
    g_rmdir(path);
}

DdmWebDownloads *ddm_web_downloads_new(const char *dir, GError **error)
{
    struct stat st;
    if (lstat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                        "%s is not a directory of ours; not using it for downloads", dir);
            return NULL;
        }
        remove_dir(dir); /* left by a server that did not stop cleanly */
    }
    if (g_mkdir(dir, 0700) != 0) {
        int e = errno;
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot create %s: %s", dir,
                    g_strerror(e));
        return NULL;
    }
    DdmWebDownloads *dl = g_new0(DdmWebDownloads, 1);
    dl->dir = g_strdup(dir);
    dl->next_id = 1;
    g_queue_init(&dl->runs);
    return dl;
}

void ddm_web_downloads_free(DdmWebDownloads *dl)
{
    if (dl == NULL)
        return;
    g_queue_clear_full(&dl->runs, g_free);
    remove_dir(dl->dir);
    g_free(dl->dir);
    g_free(dl);
}

static gboolean known_run(DdmWebDownloads *dl, const char *id)
{
    for (GList *l = dl->runs.head; l != NULL; l = l->next)
        if (strcmp(l->data, id) == 0)
            return TRUE;
    return FALSE;
}

char *ddm_web_downloads_new_run(DdmWebDownloads *dl, const char *name, char **id,
                                GError **error)
{
    while (dl->runs.length >= DDM_WEB_DOWNLOADS_KEEP) {
        g_autofree char *old = g_queue_pop_head(&dl->runs);
        g_autofree char *path = g_build_filename(dl->dir, old, NULL);
        remove_dir(path);
    }
    /* The command name only as far as it is harmless in a file name. */
    g_autofree char *safe = g_strndup(name, 32);
    g_strcanon(safe, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", '_');
    char *run = g_strdup_printf("%u-%s", dl->next_id++, safe);
    char *path = g_build_filename(dl->dir, run, NULL);
    if (g_mkdir(path, 0700) != 0) {
        int e = errno;
        /* The run's name only: clients are not told where the server keeps files. */
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot create run %s: %s", run,
                    g_strerror(e));
        g_free(run);
        g_free(path);
        return NULL;
    }
    g_queue_push_tail(&dl->runs, g_strdup(run));
    *id = run;
    return path;
}

/* A name a run's file may have: no path, no hidden or unfinished file. */
static gboolean servable_name(const char *name)
{
    return name[0] != '\0' && name[0] != '.' && strchr(name, '/') == NULL &&
           !g_str_has_suffix(name, ".part");
}

JsonNode *ddm_web_downloads_files(DdmWebDownloads *dl, const char *id)
{
    JsonObject *files = json_object_new();
    g_autofree char *path = g_build_filename(dl->dir, id, NULL);
    GDir *d = known_run(dl, id) ? g_dir_open(path, 0, NULL) : NULL;
    if (d != NULL) {
        const char *name;
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        while ((name = g_dir_read_name(d)) != NULL)
            if (servable_name(name))
                g_ptr_array_add(names, g_strdup(name));
        g_dir_close(d);
        g_ptr_array_sort(names, (GCompareFunc)(void (*)(void))g_strcmp0);
        for (guint i = 0; i < names->len; i++) {
            const char *n = names->pdata[i];
            g_autofree char *f = g_build_filename(path, n, NULL);
            struct stat st;
            if (lstat(f, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            JsonObject *o = json_object_new();
            json_object_set_int_member(o, "size_bytes", (gint64)st.st_size);
            g_autofree char *en = g_uri_escape_string(n, NULL, FALSE);
            g_autofree char *url = g_strdup_printf("/api/downloads/%s/%s", id, en);
            json_object_set_string_member(o, "url", url);
            json_object_set_object_member(files, n, o);
        }
        g_ptr_array_unref(names);
    }
    JsonNode *node = json_node_init_object(json_node_alloc(), files);
    json_object_unref(files);
    return node;
}

void ddm_web_downloads_serve(DdmWebDownloads *dl, SoupServerMessage *msg, const char *id,
                             const char *name)
{
    if (!known_run(dl, id) || !servable_name(name)) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no such download");
        return;
    }
    g_autofree char *path = g_build_filename(dl->dir, id, name, NULL);
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no such download");
        return;
    }
    g_autoptr(GError) error = NULL;
    /* Mapped, not read: a heap dump can be gigabytes. The mapping lives
     * as long as the bytes libsoup holds. */
    GMappedFile *mf = st.st_size > 0 ? g_mapped_file_new(path, FALSE, &error) : NULL;
    if (st.st_size > 0 && mf == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_INTERNAL_SERVER_ERROR, "%s", error->message);
        return;
    }
    SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
    g_autofree char *disp = g_strdup_printf("attachment; filename=\"%s\"", name);
    g_strdelimit(disp + 22, "\"\\\r\n", '_');
    disp[strlen(disp) - 1] = '"';
    soup_message_headers_replace(h, "Content-Disposition", disp);
    soup_message_headers_set_content_type(h, "application/octet-stream", NULL);
    soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
    if (mf != NULL) {
        GBytes *b = g_mapped_file_get_bytes(mf);
        g_mapped_file_unref(mf);
        soup_message_body_append_bytes(soup_server_message_get_response_body(msg), b);
        g_bytes_unref(b);
    }
    soup_message_body_complete(soup_server_message_get_response_body(msg));
}
