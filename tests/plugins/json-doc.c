/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin "json-doc": the command `json-doc KIND` finishes with an
 * application/json result (a JSON document, core/views/json_blob.h) of the
 * kind asked, so that tests/integration/json-doc.sh sees what any plugin's
 * document becomes through the real server and CLI:
 *   tree    a small nested document with odd strings
 *   bad     not JSON (cut short)
 *   deep    arrays nested 2049 levels (one past ddmon's cap)
 *   big     valid JSON of 32 MiB + 1 byte (one past the cap)
 *   png     a blob of another media type (left as bytes)
 */
#include <string.h>

#include <ddmon/plugin.h>

#define JD_DEPTH 2049u
#define JD_BIG ((size_t)32u * 1024u * 1024u + 1u)

static const char k_tree[] =
    "{\"schema\":1,\"name\":\"t\\\"ree\\u0007\",\"root\":{\"class\":\"a.Root\",\"n\":3,"
    "\"ok\":true,\"children\":[{\"class\":\"b.Kid\",\"x\":1.5,\"children\":[]}]}}";

/* The document of @kind in a malloc'ed buffer (*@len bytes), or NULL. */
static char *make(const char *kind, size_t *len, const char **media_type)
{
    char *p = NULL;

    *media_type = "application/json";
    if (strcmp(kind, "tree") == 0 || strcmp(kind, "png") == 0) {
        *len = sizeof k_tree - 1;
        p = malloc(*len);
        if (p)
            memcpy(p, k_tree, *len);
        if (kind[0] == 'p')
            *media_type = "image/png";
    } else if (strcmp(kind, "bad") == 0) {
        *len = 5;
        p = malloc(*len);
        if (p)
            memcpy(p, "{\"a\":", 5);
    } else if (strcmp(kind, "deep") == 0) {
        *len = 2 * JD_DEPTH;
        p = malloc(*len);
        if (p) {
            memset(p, '[', JD_DEPTH);
            memset(p + JD_DEPTH, ']', JD_DEPTH);
        }
    } else if (strcmp(kind, "big") == 0) {
        *len = JD_BIG;
        p = malloc(*len);
        if (p) {
            memset(p, ' ', *len);
            p[0] = '1';
        }
    }
    return p;
}

static int on_cmd(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    const ddm_host *host = ud;
    const char *media_type;
    size_t len = 0;
    char *doc;
    ddm_view *res;

    (void)self;
    if (argc != 2 || !(doc = make(argv[1], &len, &media_type))) {
        host->cmd_finish(cmd, DDM_CMD_USAGE, "usage: ddmon json-doc tree|bad|deep|big|png");
        return 0;
    }
    res = host->cmd_result(cmd, DDM_VIEW_BLOB, "Document");
    if (res) {
        host->view_begin(res);
        host->view_blob(res, media_type, doc, len);
        host->view_commit(res);
    }
    free(doc);
    host->cmd_finish(cmd, DDM_CMD_OK, argv[1]);
    return 0;
}

static int jd_init(ddm_plugin *self, const ddm_host *host)
{
    return host->register_command(self, "json-doc", "json-doc KIND",
                                  "a JSON document result (tests)", on_cmd, (void *)host, NULL);
}

DDM_PLUGIN_DEFINE("json-doc", "1.0", "Apache-2.0", "test plugin: JSON document results", jd_init,
                  NULL);
