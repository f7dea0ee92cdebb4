/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the plugin descriptor read from an ELF file's bytes
 * without loading it (core/pluginhost/elfdesc.c, `ddmon --check-plugin`).
 *
 * Input: the file. Invariants: every read stays inside the input (ASan);
 * on success the strings are NULL unless the magic and size were right,
 * else each at most DDM_ELF_DESC_STRING_MAX bytes of UTF-8; on failure an
 * error is set, in DDM_ELF_ERROR.
 */
#include <glib.h>
#include <string.h>

#include "core/pluginhost/elfdesc.h"
#include "tests/fuzz/fuzz.h"

static void check_string(const char *s)
{
    if (s) {
        FUZZ_CHECK(strlen(s) <= DDM_ELF_DESC_STRING_MAX);
        FUZZ_CHECK(g_utf8_validate(s, -1, NULL));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    DdmElfDescriptor d;
    GError *error = NULL;
    /* A copy of exactly @size bytes: a read past it is a sanitizer report. */
    uint8_t *copy = g_malloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    gboolean ok = ddm_elf_read_descriptor(copy, size, &d, &error);
    if (ok) {
        FUZZ_CHECK(error == NULL);
        if (!d.has_fields)
            FUZZ_CHECK(!d.name && !d.version && !d.license && !d.summary && !d.has_init);
        check_string(d.name);
        check_string(d.version);
        check_string(d.license);
        check_string(d.summary);
    } else {
        FUZZ_CHECK(error != NULL && error->domain == DDM_ELF_ERROR && error->message);
        g_error_free(error);
    }
    ddm_elf_descriptor_clear(&d);
    FUZZ_CHECK(d.name == NULL);
    g_free(copy);
    return 0;
}
