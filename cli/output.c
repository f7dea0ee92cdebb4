/* SPDX-License-Identifier: Apache-2.0
 *
 * What the ddmon program prints besides a command's own output: JSON
 * lines, views as text, usage errors, and the record of failures for
 * --json.
 *
 * Failures: every failure is reported on stderr as one "ddmon: MESSAGE"
 * g_printerr call (in the cli/ files, and in watch.c, snapshot.c,
 * server.c). With --json the printerr handler installed here also keeps
 * the first such message, and main() prints one
 * {"ok":false,"error":...,"code":STATUS,"kind":...} object on stdout when
 * the command exits non-zero, unless the command printed its own failure
 * object (ddm_cli_failure.object_printed: plugin commands, --check-plugin,
 * --list-plugins, a view or snapshot whose blobs could not be written:
 * their object gets the failure members added).
 */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/jsonout.h"
#include "core/views/views.h"

DdmCliFailure ddm_cli_failure;

static void on_printerr(const char *text)
{
    fputs(text, stderr);
    if (ddm_cli_failure.message == NULL)
        ddm_cli_failure.message = ddm_ctl_failure_message(text);
}

void ddm_cli_capture_failures(void)
{
    if (ddm_cli_failure.capturing)
        return;
    /* Unbuffered stderr as before; the handler only adds the record. */
    g_set_printerr_handler(on_printerr);
    ddm_cli_failure.capturing = TRUE;
}

void ddm_cli_print_json(JsonNode *node)
{
    /* every document says its shapes' version (doc/json.md) */
    g_autoptr(JsonNode) doc = ddm_jq_stamped(node);
    gsize len = 0;
    g_autofree char *line = ddm_ctl_encode(doc, &len);
    fwrite(line, 1, len, stdout);
}

int ddm_cli_print_ok_json(const DdmCli *cli, int status, const char *member, gboolean value)
{
    if (!cli->json || status != DDM_EXIT_OK)
        return status;
    JsonBuilder *b = ddm_ctl_ok_begin();
    if (member != NULL) {
        json_builder_set_member_name(b, member);
        json_builder_add_boolean_value(b, value);
    }
    g_autoptr(JsonNode) root = ddm_ctl_ok_end(b);
    ddm_cli_print_json(root);
    return status;
}

void ddm_cli_print_view_text(JsonNode *view, gboolean title)
{
    DdmRenderOptions opt = {0, title};
    g_autofree char *text = ddm_view_json_to_text_full(view, &opt);
    fputs(text, stdout);
}

int ddm_cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_printerr("ddmon: %s (try 'ddmon help')\n", msg);
    return DDM_EXIT_USAGE;
}
