/* SPDX-License-Identifier: Apache-2.0
 *
 * The dashboard's static files, served from disk (static_files.h).
 */
#include <build-config.h>

#include "web/static_files.h"

#include <string.h>
#include <sys/stat.h>

#ifndef DDM_WEBDIR
#define DDM_WEBDIR "/usr/share/ddmon/web"
#endif

struct DdmWebStatic {
    char *dir;
};

static const struct {
    const char *suffix, *type;
} media_types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
};

char *ddm_web_static_dir(void)
{
    const char *env = g_getenv("DDMON_WEB_DIR");
    return g_strdup(env != NULL && *env != '\0' ? env : DDM_WEBDIR);
}

static void serve_file(DdmWebStatic *st, SoupServerMessage *msg, const char *name)
{
    const char *type = NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(media_types) && type == NULL; i++)
        if (g_str_has_suffix(name, media_types[i].suffix))
            type = media_types[i].type;
    if (type == NULL || name[0] == '.' || strchr(name, '/') != NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no such file");
        return;
    }
    g_autofree char *path = g_build_filename(st->dir, name, NULL);
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > DDM_WEB_STATIC_MAX_FILE) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND,
                             "%s not found in %s (the dashboard's files; DDMON_WEB_DIR "
                             "names another directory)",
                             name, st->dir);
        return;
    }
    char *data = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &data, &len, NULL) || len > DDM_WEB_STATIC_MAX_FILE) {
        g_free(data);
        ddm_http_reply_error(msg, SOUP_STATUS_INTERNAL_SERVER_ERROR, "cannot read %s", path);
        return;
    }
    soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
    soup_server_message_set_response(msg, type, SOUP_MEMORY_TAKE, data, len);
}

static void route_index(SoupServerMessage *msg, const char *path, gpointer ud)
{
    serve_file(ud, msg, "index.html");
}

static void route_static(SoupServerMessage *msg, const char *path, gpointer ud)
{
    g_auto(GStrv) seg = ddm_http_path_segments(path);
    if (seg == NULL || g_strv_length(seg) != 2) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no such file");
        return;
    }
    serve_file(ud, msg, seg[1]);
}

DdmWebStatic *ddm_web_static_new(DdmHttpServer *srv, const char *dir)
{
    DdmWebStatic *st = g_new0(DdmWebStatic, 1);
    st->dir = g_strdup(dir);
    ddm_http_server_add_route(srv, "/", DDM_HTTP_GET | DDM_HTTP_PAGE, route_index, st);
    ddm_http_server_add_route(srv, "/static/*", DDM_HTTP_GET, route_static, st);
    return st;
}

void ddm_web_static_free(DdmWebStatic *st)
{
    if (st == NULL)
        return;
    g_free(st->dir);
    g_free(st);
}
