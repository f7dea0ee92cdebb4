/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the decoders of the standard JDWP replies
 * (plugins/jvm/jvm-parse.c): VirtualMachine.Version (the reply every TCP
 * VM is probed with), IDSizes, AllThreads, a string reply, Status, an id or
 * int reply, Capabilities(New), ClassPaths, Frames, Methods, LineTable.
 *
 * Input: u1 selector (which decoder; 0..10), u1 id size (1..8, from its
 * low 3 bits), then the reply's data. Invariants: strings are
 * NUL-terminated and hold no NUL, counts never exceed what the bytes can
 * hold or the cap asked for, ids fit their size, a failure allocates nothing.
 */
#include <errno.h>
#include <string.h>

#include "plugins/jvm/jvm.h"
#include "tests/fuzz/fuzz.h"

#define MAX_ITEMS 1024u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    uint8_t sel = fuzz_u8(&in) % 11;
    uint32_t idsize = (uint32_t)(fuzz_u8(&in) & 7) + 1;
    uint8_t *p = fuzz_dup(in.p, in.n);
    size_t n = in.n;
    jvm_idsizes ids = {idsize, idsize, idsize, idsize, idsize};

    switch (sel) {
    case 0: {
        jvm_version v;
        memset(&v, 0, sizeof v);
        if (jvm_parse_version(p, n, &v) == 0) {
            FUZZ_CHECK(v.description && v.vm_version && v.vm_name);
            FUZZ_CHECK(strlen(v.description) + strlen(v.vm_version) + strlen(v.vm_name) + 20 <= n);
        }
        jvm_version_clear(&v);
        break;
    }
    case 1: {
        jvm_idsizes s;
        if (jvm_parse_idsizes(p, n, &s) == 0)
            FUZZ_CHECK(s.field >= 1 && s.field <= 8 && s.frame >= 1 && s.frame <= 8);
        break;
    }
    case 2: {
        uint64_t *t = NULL;
        size_t count = 0;
        if (jvm_parse_all_threads(p, n, idsize, MAX_ITEMS, &t, &count) == 0) {
            FUZZ_CHECK(count <= MAX_ITEMS && count * idsize + 4 <= n);
            for (size_t i = 0; i < count && idsize < 8; i++)
                FUZZ_CHECK(t[i] < ((uint64_t)1 << (8 * idsize)));
        }
        free(t);
        break;
    }
    case 3: {
        char *s = jvm_parse_string(p, n);
        if (s)
            FUZZ_CHECK(strlen(s) + 4 <= n);
        free(s);
        break;
    }
    case 4: {
        int32_t st, su, v;
        uint64_t id;
        if (jvm_parse_status(p, n, &st, &su) == 0)
            FUZZ_CHECK(jvm_status_name(st) != NULL);
        if (jvm_parse_id(p, n, idsize, &id) == 0 && idsize < 8)
            FUZZ_CHECK(id < ((uint64_t)1 << (8 * idsize)));
        (void)jvm_parse_int(p, n, &v);
        break;
    }
    case 5:
    case 6: {
        char *caps = jvm_parse_capabilities(p, n, sel == 6);
        free(caps);
        break;
    }
    case 7: {
        jvm_classpaths c;
        memset(&c, 0, sizeof c);
        (void)jvm_parse_classpaths(p, n, &c);
        jvm_classpaths_clear(&c);
        break;
    }
    case 8: {
        jvm_frame *f = NULL;
        size_t count = 0;
        if (jvm_parse_frames(p, n, &ids, MAX_ITEMS, &f, &count) == 0)
            FUZZ_CHECK(count <= MAX_ITEMS);
        free(f);
        break;
    }
    case 9: {
        char *name = jvm_parse_method_name(p, n, &ids, 1);
        free(name);
        break;
    }
    default: {
        (void)jvm_parse_line(p, n, 0);
        (void)jvm_parse_line(p, n, UINT64_MAX);
        break;
    }
    }
    free(p);
    return 0;
}
