/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the CLI's reading of the server's responses: a response
 * line parsed as a JSON object (ddm_ctl_parse_object, core/wire/ctlproto.c,
 * with its nesting check), its members read with the tolerant helpers, and
 * its "view" (or the whole object) rendered as text for a terminal
 * (ddm_view_json_to_text_full, core/views/render.c), as `ddmon view`,
 * `watch` and `snapshot` do.
 *
 * Input: u1 options (bit 0 title, bits 1..7 the width: 0 unlimited, else
 * 8 + k), then the line. Invariants: the text is valid UTF-8, ends in a
 * newline and holds no control character but newlines (nothing a server
 * or plugin sends can drive the terminal).
 */
#include <string.h>

#include "core/views/views.h"
#include "core/wire/ctlproto.h"
#include "tests/fuzz/fuzz.h"

static void render(JsonNode *view, const DdmRenderOptions *opt)
{
    char *text = ddm_view_json_to_text_full(view, opt);
    size_t len = strlen(text);

    FUZZ_CHECK(g_utf8_validate(text, -1, NULL));
    FUZZ_CHECK(len == 0 || text[len - 1] == '\n');
    for (const char *p = text; *p; p = g_utf8_next_char(p)) {
        gunichar c = g_utf8_get_char(p);
        FUZZ_CHECK(c == '\n' || !(c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)));
    }
    g_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    uint8_t o = fuzz_u8(&in);
    DdmRenderOptions opt = {(o >> 1) ? 8u + (o >> 1) : 0u, (o & 1) != 0};
    char *line = g_strndup((const char *)in.p, in.n); /* the framer's lines are NUL-terminated */
    GError *err = NULL;
    JsonNode *resp = ddm_ctl_parse_object(line, strlen(line), &err);

    if (!resp) {
        FUZZ_CHECK(err != NULL);
        g_error_free(err);
        g_free(line);
        return 0;
    }
    FUZZ_CHECK(JSON_NODE_HOLDS_OBJECT(resp));
    {
        JsonObject *obj = json_node_get_object(resp);
        JsonNode *view = json_object_get_member(obj, "view");
        (void)ddm_json_get_string(obj, "error");
        (void)ddm_json_get_int(obj, "code", 1);
        (void)ddm_json_get_bool(obj, "ok", FALSE);
        render(view ? view : resp, &opt);
    }
    json_node_unref(resp);
    g_free(line);
    return 0;
}
