/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the control protocol's server side (core/wire/ctlproto.c)
 * as server/control.c reads a client: a line framer with a cap, fed in
 * pieces whose sizes come from the input, each line parsed as a request.
 *
 * Input: u1 cap selector (cap = 16 << (k % 8), or the real 1 MiB when
 * k >= 128), u1 seed of the piece sizes, then the stream. Invariants: no
 * line over the cap is returned; an overflow is sticky; the framer holds at
 * most the cap plus one piece; a parsed request's strings are within
 * DDM_CTL_MAX_STRING, a command's argv is non-empty and within
 * DDM_CTL_MAX_ARGS, and the request survives the client's encoding
 * (ddm_ctl_request_to_json, ddm_ctl_encode) and a second parse unchanged.
 */
#include <string.h>

#include "core/wire/ctlproto.h"
#include "tests/fuzz/fuzz.h"

static gboolean same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void take_line(const char *line, gsize len)
{
    DdmCtlRequest req, again;
    GError *err = NULL;

    memset(&req, 0, sizeof req);
    memset(&again, 0, sizeof again);
    if (!ddm_ctl_request_parse(line, len, &req, &err)) {
        FUZZ_CHECK(err != NULL && err->domain == DDM_CTL_ERROR);
        g_error_free(err);
        return;
    }
    FUZZ_CHECK(ddm_ctl_op_name(req.op) != NULL);
    FUZZ_CHECK(!req.name || strlen(req.name) <= DDM_CTL_MAX_STRING);
    FUZZ_CHECK(!req.vm || strlen(req.vm) <= DDM_CTL_MAX_STRING);
    FUZZ_CHECK(!req.spec || strlen(req.spec) <= DDM_CTL_MAX_STRING);
    if (req.op == DDM_CTL_OP_COMMAND) {
        FUZZ_CHECK(req.argv && req.argv[0]);
        FUZZ_CHECK(g_strv_length(req.argv) <= DDM_CTL_MAX_ARGS);
    }

    /* what a client would send for it parses back to the same request */
    {
        JsonNode *node = ddm_ctl_request_to_json(&req);
        gsize elen = 0;
        char *enc = ddm_ctl_encode(node, &elen);
        FUZZ_CHECK(elen > 0 && enc[elen - 1] == '\n');
        FUZZ_CHECK(ddm_ctl_request_parse(enc, elen - 1, &again, NULL));
        FUZZ_CHECK(again.op == req.op && again.blobs == req.blobs);
        FUZZ_CHECK(same_str(again.name, req.name) && same_str(again.vm, req.vm) &&
                   same_str(again.spec, req.spec) && same_str(again.cwd, req.cwd));
        FUZZ_CHECK(!again.argv == !req.argv);
        for (size_t i = 0; req.argv && (req.argv[i] || again.argv[i]); i++)
            FUZZ_CHECK(same_str(again.argv[i], req.argv[i]));
        g_free(enc);
        json_node_unref(node);
    }
    ddm_ctl_request_clear(&again);
    ddm_ctl_request_clear(&req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    uint8_t k = fuzz_u8(&in);
    gsize cap = k >= 128 ? DDM_CTL_MAX_REQUEST : (gsize)16 << (k % 8);
    uint32_t step = fuzz_u8(&in) | 1u;
    DdmLineFramer *f = ddm_line_framer_new(cap);
    gboolean overflowed = FALSE;

    while (in.n > 0) {
        const uint8_t *piece;
        size_t n, max_piece = 0;
        char *line;
        gsize len = 0;
        gboolean overflow = FALSE;

        step = step * 1103515245u + 12345u;
        n = fuzz_take(&in, 1 + (step >> 16) % 256, &piece);
        max_piece = MAX(max_piece, n);
        ddm_line_framer_push(f, piece, n);
        while ((line = ddm_line_framer_next(f, &len, &overflow)) != NULL) {
            FUZZ_CHECK(!overflowed && !overflow);
            FUZZ_CHECK(len > 0 && len <= cap && strlen(line) <= len);
            take_line(line, len);
            g_free(line);
        }
        if (overflowed)
            FUZZ_CHECK(overflow);
        overflowed = overflow;
        FUZZ_CHECK(ddm_line_framer_pending(f) <= cap + 1 + 256);
    }
    ddm_line_framer_free(f);
    return 0;
}
