/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the relay's remembered-ports file parser (core/relay/portmap.c),
 * a file in the user's state directory that anything may have written.
 *
 * Input: the file's content. Invariants: a parse that succeeds holds at most
 * the map's bound and serializes to a file that parses again to the same
 * text; a parse that fails leaves the map empty.
 */
#include <string.h>

#include "core/relay/portmap.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *p = (char *)fuzz_dup(data, size); /* exactly the input: ASan sees overreads */
    DdmPortMap *m = ddm_portmap_new(16);
    GError *e = NULL;
    if (ddm_portmap_parse(m, p, size, &e)) {
        FUZZ_CHECK(e == NULL);
        FUZZ_CHECK(ddm_portmap_count(m) <= 16);
        gsize len = 0;
        char *text = ddm_portmap_serialize(m, &len);
        FUZZ_CHECK(len == strlen(text));
        DdmPortMap *m2 = ddm_portmap_new(16);
        FUZZ_CHECK(ddm_portmap_parse(m2, text, len, NULL));
        char *text2 = ddm_portmap_serialize(m2, NULL);
        FUZZ_CHECK(strcmp(text, text2) == 0);
        g_free(text2);
        ddm_portmap_free(m2);
        g_free(text);
    } else {
        FUZZ_CHECK(e != NULL);
        FUZZ_CHECK(ddm_portmap_count(m) == 0);
        g_error_free(e);
    }
    ddm_portmap_free(m);
    free(p);
    return 0;
}
