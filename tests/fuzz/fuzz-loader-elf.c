/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the plugin loader's checks of a file before dlopen
 * (core/pluginhost/loader_elf.c): ddm_loader_check_elf() (ELF header,
 * segments and section headers within the file), then, as for a plugin,
 * ddm_loader_check_no_core_refs() (no undefined ddm_ symbol in .dynsym).
 *
 * Input: the file, written to a memfd that the checks read with bounded
 * preads. Invariants: no sanitizer report (every table read is bounded by
 * the file's size and a cap); each check returns FALSE exactly when it sets
 * an error, in DDM_LOADER_ERROR; a refusal for core references
 * (ABI_MISMATCH) quotes a ddm_ name, so it cannot happen for a file with
 * no "ddm_" in it.
 */
#define _GNU_SOURCE
#include <glib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pluginhost/loader-private.h"
#include "tests/fuzz/fuzz.h"

/* loader.c defines it, with dlopen and the registry: not compiled in here. */
G_DEFINE_QUARK(ddm-loader-error-quark, ddm_loader_error)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-loader-elf", 0);
    FUZZ_CHECK(fd >= 0);
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        FUZZ_CHECK(n > 0);
        done += (size_t)n;
    }
    struct stat st;
    FUZZ_CHECK(fstat(fd, &st) == 0);
    GError *error = NULL;
    if (!ddm_loader_check_elf(fd, &st, "fuzz.so", &error)) {
        FUZZ_CHECK(error != NULL && error->domain == DDM_LOADER_ERROR && error->message);
        g_error_free(error);
        close(fd);
        return 0;
    }
    FUZZ_CHECK(error == NULL);
    gboolean ok = ddm_loader_check_no_core_refs(fd, &st, "fuzz.so", &error);
    if (ok) {
        FUZZ_CHECK(error == NULL);
    } else {
        FUZZ_CHECK(error != NULL && error->domain == DDM_LOADER_ERROR && error->message);
        if (error->code == DDM_LOADER_ERROR_ABI_MISMATCH) {
            FUZZ_CHECK(strstr(error->message, "ddm_") != NULL);
            FUZZ_CHECK(size >= 4 && memmem(data, size, "ddm_", 4) != NULL);
        }
        g_error_free(error);
    }
    close(fd);
    return 0;
}
