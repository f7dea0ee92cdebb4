/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: track-app's protobuf AppProcesses decoder
 * (ddm_adb_parse_app_processes, core/wire/adb_proto.c), then what adb
 * discovery does with a list: its debuggable pids and a lookup of each.
 *
 * Input: one update's bytes (the hex4 framing removed). Invariants: the
 * list is sorted by pid, unique, pids in 1..2^31-1, strings NUL-terminated
 * inside their fields and valid UTF-8; on failure *out is untouched; the
 * debuggable pids are exactly the debuggable entries.
 */
#include <string.h>

#include "core/wire/adb_proto.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GArray *apps = NULL, *pids;
    guint n_debuggable = 0;

    if (!ddm_adb_parse_app_processes(data, size, &apps)) {
        FUZZ_CHECK(apps == NULL);
        return 0;
    }
    FUZZ_CHECK(apps != NULL);
    for (guint i = 0; i < apps->len; i++) {
        const DdmAdbApp *a = &g_array_index(apps, DdmAdbApp, i);
        FUZZ_CHECK(a->pid >= 1 && a->pid <= 0x7FFFFFFFu);
        if (i)
            FUZZ_CHECK(g_array_index(apps, DdmAdbApp, i - 1).pid < a->pid);
        FUZZ_CHECK(memchr(a->architecture, 0, sizeof a->architecture) != NULL);
        FUZZ_CHECK(memchr(a->process_name, 0, sizeof a->process_name) != NULL);
        FUZZ_CHECK(g_utf8_validate(a->architecture, -1, NULL));
        FUZZ_CHECK(g_utf8_validate(a->process_name, -1, NULL));
        FUZZ_CHECK(ddm_adb_app_find(apps, a->pid) == a);
        n_debuggable += a->debuggable ? 1 : 0;
    }
    pids = ddm_adb_app_debuggable_pids(apps);
    FUZZ_CHECK(pids->len == n_debuggable);
    for (guint i = 0; i < pids->len; i++) {
        const DdmAdbApp *a = ddm_adb_app_find(apps, g_array_index(pids, guint32, i));
        FUZZ_CHECK(a != NULL && a->debuggable);
    }
    g_array_unref(pids);
    g_array_unref(apps);
    return 0;
}
