/* SPDX-License-Identifier: Apache-2.0
 *
 * Run directories for commands from the web and serving their files
 * (downloads.h): the files of a run, in its subdirectories too, listed
 * and served without following a link out of the run.
 */
#include "web/downloads.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "web/http_server.h"
#include "web/paths.h"

/* How deep a run's subdirectories are listed and served, and how many of
 * its files a reply lists at most. */
#define DOWNLOADS_MAX_DEPTH 8
#define DOWNLOADS_MAX_FILES 1000

struct DdmWebDownloads {
    char *dir;
    guint next_id;
    GQueue runs;   /* char* ids, oldest first */
};

/* Delete the files of @path and its subdirectories, then @path. */
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

/* A name a run's file, or a directory on the way to it, may have: no
 * path, no hidden ("." and ".." included) or unfinished file. */
static gboolean servable_name(const char *name)
{
    return name[0] != '\0' && name[0] != '.' && strchr(name, '/') == NULL &&
           !g_str_has_suffix(name, ".part");
}

/* Add the regular files under @dir (the run's path @rel, "" at its top;
 * @url the escaped one) to @files, keyed "SUB/NAME"; directories to
 * DOWNLOADS_MAX_DEPTH, links never followed. */
static void list_files(JsonObject *files, const char *dir, const char *rel, const char *url,
                       guint depth)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (d == NULL)
        return;
    const char *name;
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    while ((name = g_dir_read_name(d)) != NULL)
        if (servable_name(name))
            g_ptr_array_add(names, g_strdup(name));
    g_dir_close(d);
    g_ptr_array_sort(names, (GCompareFunc)(void (*)(void))g_strcmp0);
    for (guint i = 0; i < names->len && json_object_get_size(files) < DOWNLOADS_MAX_FILES; i++) {
        const char *n = names->pdata[i];
        g_autofree char *f = g_build_filename(dir, n, NULL);
        g_autofree char *key = g_strconcat(rel, n, NULL);
        g_autofree char *en = g_uri_escape_string(n, NULL, FALSE);
        g_autofree char *u = g_strconcat(url, "/", en, NULL);
        struct stat st;
        if (lstat(f, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < DOWNLOADS_MAX_DEPTH) {
            g_autofree char *sub = g_strconcat(key, "/", NULL);
            list_files(files, f, sub, u, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            JsonObject *o = json_object_new();
            json_object_set_int_member(o, "size_bytes", (gint64)st.st_size);
            json_object_set_string_member(o, "url", u);
            json_object_set_object_member(files, key, o);
        }
    }
}

JsonNode *ddm_web_downloads_files(DdmWebDownloads *dl, const char *id)
{
    JsonObject *files = json_object_new();
    if (known_run(dl, id)) {
        g_autofree char *path = g_build_filename(dl->dir, id, NULL);
        g_autofree char *url = g_strconcat("/api/downloads/", id, NULL);
        list_files(files, path, "", url, 0);
    }
    JsonNode *node = json_node_init_object(json_node_alloc(), files);
    json_object_unref(files);
    return node;
}

/* The file @path (names, NULL-terminated) of run directory @run_fd, opened
 * without following a link on the way; -1 if there is no such regular
 * file (a FIFO or device there is not waited on). @st receives its status. */
static int open_in_run(int run_fd, const char *const *path, struct stat *st)
{
    int dir = dup(run_fd);
    for (guint i = 0; dir >= 0 && path[i] != NULL; i++) {
        gboolean last = path[i + 1] == NULL;
        int fd = i < DOWNLOADS_MAX_DEPTH + 1u
                     ? openat(dir, path[i],
                              O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY))
                     : -1;
        close(dir);
        dir = fd;
    }
    /* O_NONBLOCK: a FIFO planted at the last name would block the open
     * (and the server's loop); it is refused here, as a device is, and a
     * regular file is read blocking as before */
    if (dir >= 0 && (fstat(dir, st) != 0 || !S_ISREG(st->st_mode) ||
                     fcntl(dir, F_SETFL, fcntl(dir, F_GETFL) & ~O_NONBLOCK) != 0)) {
        close(dir);
        dir = -1;
    }
    return dir;
}

void ddm_web_downloads_serve(DdmWebDownloads *dl, SoupServerMessage *msg, const char *id,
                             const char *const *path)
{
    gboolean ok = known_run(dl, id) && path != NULL && path[0] != NULL;
    for (guint i = 0; ok && path[i] != NULL; i++)
        ok = servable_name(path[i]);
    if (!ok) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no such download");
        return;
    }
    g_autofree char *run = g_build_filename(dl->dir, id, NULL);
    int run_fd = open(run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    int fd = run_fd >= 0 ? open_in_run(run_fd, path, &st) : -1;
    if (run_fd >= 0)
        close(run_fd);
    if (fd < 0) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no such download");
        return;
    }
    const char *name = path[g_strv_length((char **)path) - 1];
    g_autoptr(GError) error = NULL;
    /* Mapped, not read: a heap dump can be gigabytes. The mapping lives
     * as long as the bytes libsoup holds. */
    GMappedFile *mf = st.st_size > 0 ? g_mapped_file_new_from_fd(fd, FALSE, &error) : NULL;
    close(fd);
    if (st.st_size > 0 && mf == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_INTERNAL_SERVER_ERROR, "%s", error->message);
        return;
    }
    SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
    g_autofree char *disp = ddm_web_content_disposition(name);
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
