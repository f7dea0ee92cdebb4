/* SPDX-License-Identifier: Apache-2.0
 *
 * The commands that are one request to the server and its answer printed:
 * vms, plugins, view, views, scan, select. Argument counts and --vm are
 * checked by main() from the command table before these run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/jsonout.h"
#include "cli/snapshot.h"
#include "core/pluginhost/registry.h" /* DDM_HEADLINE_VIEW */

/* For --json: the answer to @op (@name) if the server gives one, else NULL
 * and nothing said (what it adds is optional: the VM list beside views,
 * the headline figures beside the VM list). */
static JsonNode *fetch_quietly(DdmCli *cli, DdmCtlOp op, const char *name)
{
    DdmCtlRequest req = {0};
    req.op = op;
    req.name = (char *)name;
    g_autoptr(GError) error = NULL;
    int status = 0;
    DdmClient *c = ddm_cli_client(cli, &status);
    if (c == NULL)
        return NULL;
    JsonNode *resp = ddm_client_call(c, &req, DDM_CLI_CALL_TIMEOUT_MS, &error);
    ddm_client_free(c);
    if (resp != NULL && !ddm_json_get_bool(json_node_get_object(resp), "ok", FALSE))
        g_clear_pointer(&resp, json_node_unref);
    return resp;
}

/* The member @name of answer @resp (transfer none), or NULL. */
static JsonNode *answer_member(JsonNode *resp, const char *name)
{
    return resp != NULL && JSON_NODE_HOLDS_OBJECT(resp)
               ? json_object_get_member(json_node_get_object(resp), name)
               : NULL;
}

/* The VM list's rows with their headline figures from the server's two
 * answers (a server without "jq", or one whose answer was not the
 * document). */
static int vms_json_two_requests(DdmCli *cli, JsonNode *vms_answer)
{
    JsonNode *view = answer_member(vms_answer, "view");
    if (view == NULL) {
        g_printerr("ddmon: the server's answer has no view\n");
        return DDM_EXIT_FAILED;
    }
    g_autoptr(JsonNode) heads = fetch_quietly(cli, DDM_CTL_OP_VIEW, DDM_HEADLINE_VIEW);
    g_autoptr(JsonNode) doc = ddm_jq_vms(view, answer_member(heads, "views"), TRUE);
    ddm_cli_print_json(doc);
    return DDM_EXIT_OK;
}

/* `ddmon --json vms`: one request, {"op":"vms","jq":true}, whose answer
 * {"ok":true,"doc":D} holds the document as the server wrote it from its
 * views (core/views/jq_text.h: byte for byte what ddm_jq_vms of its two
 * answers prints): D is printed as it came, not parsed and written again
 * (52-67 ms with 1,000 VMs before, ~0.6 s with 10,000; issue 16). Any
 * other answer is read as JSON: an error, or an older server's VM list. */
static int vms_json(DdmCli *cli)
{
    static const char head[] = "{\"ok\":true,\"doc\":";
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_VMS;
    req.jq = TRUE;
    int status = 0;
    DdmClient *c = ddm_cli_client(cli, &status);
    if (c == NULL)
        return status;
    g_autoptr(GError) error = NULL;
    gsize len = 0;
    g_autofree char *line = ddm_client_send(c, &req, &error)
                                ? ddm_client_receive_line(c, DDM_CLI_CALL_TIMEOUT_MS, &len, &error)
                                : NULL;
    ddm_client_free(c);
    if (line == NULL) {
        g_printerr("ddmon: %s\n", error->message);
        return DDM_EXIT_FAILED;
    }
    if (len > sizeof head && memcmp(line, head, sizeof head - 1) == 0 && line[len - 1] == '}') {
        fwrite(line + sizeof head - 1, 1, len - sizeof head, stdout);
        putchar('\n');
        return DDM_EXIT_OK;
    }
    g_autoptr(JsonNode) resp = ddm_ctl_parse_object(line, len, &error);
    if (resp == NULL) {
        g_printerr("ddmon: the server sent garbage: %s\n", error->message);
        return DDM_EXIT_FAILED;
    }
    if ((status = ddm_cli_response_status(resp)) != DDM_EXIT_OK)
        return status;
    return vms_json_two_requests(cli, resp);
}

/* vms and plugins: one core view. */
static int core_view(DdmCli *cli, DdmCtlOp op)
{
    if (cli->json && op == DDM_CTL_OP_VMS)
        return vms_json(cli);
    DdmCtlRequest req = {0};
    req.op = op;
    g_autoptr(JsonNode) resp = NULL;
    int status = ddm_cli_request_ok(cli, &req, DDM_CLI_CALL_TIMEOUT_MS, &resp);
    if (status != DDM_EXIT_OK)
        return status;
    JsonNode *view = json_object_get_member(json_node_get_object(resp), "view");
    if (cli->json) {
        g_autoptr(JsonNode) doc = ddm_jq_view(view, TRUE);
        ddm_cli_print_json(doc);
    } else
        ddm_cli_print_view_text(view, FALSE);
    return DDM_EXIT_OK;
}

int ddm_cli_cmd_vms(DdmCli *cli, char **args)
{
    (void)args;
    return core_view(cli, DDM_CTL_OP_VMS);
}

int ddm_cli_cmd_plugins(DdmCli *cli, char **args)
{
    (void)args;
    return core_view(cli, DDM_CTL_OP_PLUGINS);
}

int ddm_cli_cmd_view(DdmCli *cli, char **args)
{
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_VIEW;
    req.name = args[0];
    req.vm = cli->vm;
    req.blobs = cli->out_dir != NULL; /* blob views' data, to write out */
    g_autoptr(JsonNode) resp = NULL;
    int status = ddm_cli_request_ok(cli, &req, DDM_CLI_CALL_TIMEOUT_MS, &resp);
    if (status != DDM_EXIT_OK)
        return status;
    JsonNode *views = json_object_get_member(json_node_get_object(resp), "views");
    if (views == NULL || !JSON_NODE_HOLDS_ARRAY(views)) {
        g_printerr("ddmon: the server's answer has no views\n");
        return DDM_EXIT_FAILED;
    }
    JsonArray *a = json_node_get_array(views);
    guint n = json_array_get_length(a);
    if (cli->out_dir != NULL) {
        if (g_mkdir_with_parents(cli->out_dir, 0700) != 0) {
            g_printerr("ddmon: cannot create %s: %s\n", cli->out_dir, g_strerror(errno));
            return DDM_EXIT_FAILED;
        }
        for (guint i = 0; i < n; i++) {
            JsonNode *v = json_array_get_element(a, i);
            if (JSON_NODE_HOLDS_OBJECT(v) && !ddm_snapshot_write_blob(json_node_get_object(v), cli->out_dir)) {
                json_object_remove_member(json_node_get_object(v), "data_base64"); /* not written */
                status = DDM_EXIT_FAILED;
            }
        }
    }
    if (cli->json) {
        JsonNode *root;
        if (n == 1 && cli->vm != NULL) {
            root = ddm_jq_view(json_array_get_element(a, 0), TRUE);
        } else {
            /* Grouped as the snapshot's, with the VM list's rows and the
             * headline figures beside; only the VMs that have the view. */
            g_autoptr(JsonNode) vms = fetch_quietly(cli, DDM_CTL_OP_VMS, NULL);
            g_autoptr(JsonNode) heads = fetch_quietly(cli, DDM_CTL_OP_VIEW, DDM_HEADLINE_VIEW);
            g_autoptr(GPtrArray) list = g_ptr_array_new();
            for (guint i = 0; i < n; i++)
                g_ptr_array_add(list, json_array_get_element(a, i));
            JsonObject *o = json_object_new();
            json_object_set_int_member(o, "schema", DDM_JSON_SCHEMA);
            ddm_jq_group_views_named(o, answer_member(vms, "view"), list, answer_member(heads, "views"));
            root = json_node_init_object(json_node_alloc(), o);
            json_object_unref(o);
        }
        if (status != DDM_EXIT_OK && JSON_NODE_HOLDS_OBJECT(root)) {
            /* A blob could not be written: still one object, the views
             * with the failure members every --json failure has. */
            ddm_ctl_failure_set(json_node_get_object(root), status, ddm_cli_failure.message);
            ddm_cli_failure.object_printed = TRUE;
        }
        ddm_cli_print_json(root);
        json_node_unref(root);
        return status;
    }
    for (guint i = 0; i < n; i++) {
        if (i > 0)
            putchar('\n');
        ddm_cli_print_view_text(json_array_get_element(a, i), n > 1);
    }
    return status;
}

int ddm_cli_cmd_views(DdmCli *cli, char **args)
{
    (void)args;
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_VIEWS;
    req.vm = cli->vm;
    g_autoptr(JsonNode) resp = NULL;
    int status = ddm_cli_request_ok(cli, &req, DDM_CLI_CALL_TIMEOUT_MS, &resp);
    if (status != DDM_EXIT_OK)
        return status;
    JsonObject *o = json_node_get_object(resp);
    if (cli->json) {
        g_autoptr(JsonNode) doc = ddm_jq_views_list(resp);
        ddm_cli_print_json(doc);
        return DDM_EXIT_OK;
    }
    /* Labels for VM keys. */
    g_autoptr(GHashTable) labels = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    JsonNode *vms = json_object_get_member(o, "vms");
    if (vms != NULL && JSON_NODE_HOLDS_ARRAY(vms)) {
        JsonArray *va = json_node_get_array(vms);
        for (guint i = 0; i < json_array_get_length(va); i++) {
            JsonObject *vo = json_array_get_object_element(va, i);
            const char *key = ddm_json_get_string(vo, "key");
            const char *app = ddm_json_get_string(vo, "app");
            gint64 pid = ddm_json_get_int(vo, "pid", 0);
            if (key == NULL)
                continue;
            char *label = pid > 0 ? g_strdup_printf("%s (pid %" G_GINT64_FORMAT "%s%s)", key, pid,
                                                    app != NULL && *app ? ", " : "",
                                                    app != NULL ? app : "")
                                  : g_strdup(key);
            g_hash_table_replace(labels, (gpointer)key, label);
        }
    }
    JsonNode *views = json_object_get_member(o, "views");
    if (views == NULL || !JSON_NODE_HOLDS_ARRAY(views)) {
        g_printerr("ddmon: the server's answer has no views\n");
        return DDM_EXIT_FAILED;
    }
    JsonArray *a = json_node_get_array(views);
    const char *current = NULL;
    gboolean first = TRUE, started = FALSE;
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *vo = json_array_get_object_element(a, i);
        const char *vm = ddm_json_get_string(vo, "vm");
        const char *name = ddm_json_get_string(vo, "name");
        if (first || g_strcmp0(vm, current) != 0) {
            if (started)
                putchar('\n');
            const char *label = vm != NULL ? g_hash_table_lookup(labels, vm) : NULL;
            printf("%s: ", vm == NULL ? "global" : label != NULL ? label : vm);
            current = vm;
            first = FALSE;
            started = TRUE;
        } else {
            fputs(", ", stdout);
        }
        fputs(name != NULL ? name : "?", stdout);
    }
    if (started)
        putchar('\n');
    return DDM_EXIT_OK;
}

int ddm_cli_cmd_scan(DdmCli *cli, char **args)
{
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_SCAN;
    req.spec = args[0];
    int status = 0;
    g_autoptr(JsonNode) resp = ddm_cli_call(cli, &req, DDM_CLI_CALL_TIMEOUT_MS, &status);
    if (resp == NULL)
        return status;
    return ddm_cli_print_ok_json(cli, ddm_cli_response_status(resp), NULL, FALSE);
}

int ddm_cli_cmd_select(DdmCli *cli, char **args)
{
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_SELECT;
    if (args[0] != NULL)
        req.spec = strcmp(args[0], "none") == 0 ? (char *)"" : args[0];
    g_autoptr(JsonNode) resp = NULL;
    int status = ddm_cli_request_ok(cli, &req, DDM_CLI_CALL_TIMEOUT_MS, &resp);
    if (status != DDM_EXIT_OK)
        return status;
    JsonObject *o = json_node_get_object(resp);
    if (cli->json) {
        json_object_remove_member(o, "ok");
        ddm_cli_print_json(resp);
        return DDM_EXIT_OK;
    }
    const char *sel = ddm_json_get_string(o, "selection");
    gint64 port = ddm_json_get_int(o, "port", 0);
    JsonNode *vmn = json_object_get_member(o, "vm");
    if (sel == NULL) {
        printf("nothing selected\n");
    } else if (vmn != NULL && JSON_NODE_HOLDS_OBJECT(vmn)) {
        JsonObject *vo = json_node_get_object(vmn);
        const char *app = ddm_json_get_string(vo, "app");
        const char *note = ddm_json_get_string(vo, "pid_note");
        gint64 pid = ddm_json_get_int(vo, "pid", 0);
        /* "pid 0" would be a lie: a plain JVM of another user or host has none we know. */
        char *who = pid > 0 ? g_strdup_printf("pid %" G_GINT64_FORMAT, pid)
                            : g_strdup(note != NULL ? note : "pid unknown");
        if (port != 0)
            printf("selected %s: %s (%s%s%s) on port %" G_GINT64_FORMAT "\n", sel,
                   ddm_json_get_string(vo, "key"), who, app != NULL ? ", " : "",
                   app != NULL ? app : "", port);
        else
            printf("selected %s: %s (%s%s%s); the selected-VM port is off "
                   "(--selected-port 0)\n",
                   sel, ddm_json_get_string(vo, "key"), who, app != NULL ? ", " : "",
                   app != NULL ? app : "");
        g_free(who);
    } else if (port == 0) {
        printf("selected %s: no VM matches now (the selected-VM port is off: --selected-port 0)\n", sel);
    } else {
        printf("selected %s: no VM matches now; port %" G_GINT64_FORMAT
               " will reach it when one does\n",
               sel, port);
    }
    /* A debugger that attached through the port before the selection moved
     * stays with its VM (an older server sends no such list). */
    JsonArray *ea = ddm_json_get_array(o, "attached_elsewhere");
    for (guint i = 0; ea != NULL && i < json_array_get_length(ea); i++) {
        JsonNode *vn = json_array_get_element(ea, i);
        if (!JSON_NODE_HOLDS_OBJECT(vn))
            continue;
        JsonObject *vo = json_node_get_object(vn);
        const char *app = ddm_json_get_string(vo, "app");
        gint64 pid = ddm_json_get_int(vo, "pid", 0);
        g_autofree char *who = pid > 0 ? g_strdup_printf("pid %" G_GINT64_FORMAT, pid) : g_strdup("pid unknown");
        /* with nothing selected there is no selection to reattach to */
        printf("a debugger attached through port %" G_GINT64_FORMAT " stays on %s (%s%s%s)%s\n",
               port, ddm_json_get_string(vo, "key"), who, app != NULL ? ", " : "", app != NULL ? app : "",
               sel != NULL ? "; reattach it to reach the selection" : "");
    }
    return DDM_EXIT_OK;
}
