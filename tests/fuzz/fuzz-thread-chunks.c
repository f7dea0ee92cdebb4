/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the threads plugin's chunk handlers as the core calls them
 * (plugins/threads, whole, through the SDK's fake host): THCR and THNM
 * (u4 id, u4 name length in UTF-16 units, the name), THDE (u4 id) and THST
 * tables, in any order, into two VMs' thread lists (their hashed index,
 * the first's cap lowered to 64 so tables overflow it) and "threads"
 * views, the second VM going and coming back (a new VM) at any point, so
 * the plugin's list of VMs to publish soon sees VMs leave it. Every view
 * is watched (as by a snapshot), so both VMs keep their tables: the
 * plugin ignores thread events of a VM whose table it does not keep.
 *
 * Input: up to 256 records of u1 op (low 7 bits modulo 6: 0 THCR, 1 THNM,
 * 2 THDE, 3 THST, 4 the timers fire, 5 the second VM goes and a new one
 * takes its place; bit 7 sends the chunk to the second VM), u2 length, that
 * many bytes (fewer at the end). Invariants: a handler returns DDM_OK or a
 * negative errno; the published view has at most the cap's rows, in
 * strictly ascending id order, and every row's thread is found in the
 * list; no state of a VM that went is touched (ASan); the fake host's own
 * checks (views, logs, timers) hold when it is freed.
 */
#include <errno.h>
#include <string.h>

#include <ddmon/plugin.h>
#include <ddmon/testkit.h>

#include "plugins/threads/threads.h"
#include "tests/fuzz/fuzz.h"

extern const ddm_plugin_desc ddm_plugin_descriptor;

#define MAX_RECORDS 256
#define LIST_CAP 64

static const uint32_t types[] = {THREADS_CHUNK_THCR, THREADS_CHUNK_THNM, THREADS_CHUNK_THDE,
                                 THREADS_CHUNK_THST};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    fake_host *fh = fake_host_new();
    ddm_vm_info info = {.key = "127.0.0.1:8000", .pid = 77, .ddm = 1, .app_name = "app",
                        .user_id = -1, .native_debuggable = -1};
    threads_plugin *pl;
    threads_vm *st;
    ddm_vm *vm, *vm2;
    ddm_vm_info info2 = {.key = "127.0.0.1:8001", .pid = 78, .ddm = 1, .app_name = "app2",
                         .user_id = -1, .native_debuggable = -1};
    ddm_view *v;
    int records = 0;

    FUZZ_CHECK(fake_host_load(fh, &ddm_plugin_descriptor) == 0);
    fake_host_set_default_watchers(fh, 1); /* the tables are kept (THEN at READY) */
    vm = fake_host_add_vm(fh, &info);
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    pl = fake_host_table(fh)->get_data(fake_host_plugin(fh));
    st = threads_vm_state(pl, vm);
    FUZZ_CHECK(st != NULL && st->full);
    st->list.max = LIST_CAP;
    vm2 = fake_host_add_vm(fh, &info2);
    fake_host_vm_event(fh, vm2, DDM_VM_READY);

    while (in.n > 0 && records++ < MAX_RECORDS) {
        uint8_t b = fuzz_u8(&in);
        uint8_t op = (b & 0x7f) % 6;
        size_t want = fuzz_u16(&in);
        const uint8_t *p;
        size_t n = fuzz_take(&in, want, &p);
        if (op == 4) {
            fake_host_fire_timers(fh);
        } else if (op == 5) {
            fake_host_vm_event(fh, vm2, DDM_VM_GONE);
            vm2 = fake_host_add_vm(fh, &info2);
            fake_host_vm_event(fh, vm2, DDM_VM_READY);
        } else {
            uint8_t *chunk = fuzz_dup(p, n);
            int rc = fake_host_deliver(fh, b & 0x80 ? vm2 : vm, types[op], DDM_ORIGIN_EVENT, chunk, n);
            FUZZ_CHECK(rc == DDM_OK || rc < 0);
            free(chunk);
        }
        FUZZ_CHECK(st->list.n <= LIST_CAP);
    }
    fake_host_fire_timers(fh);
    threads_publish(st);
    v = fake_view_find(fh, vm, "threads");
    if (v) {
        int rows = fake_view_n_rows(v);
        FUZZ_CHECK(rows >= 0 && rows <= LIST_CAP && (size_t)rows == st->list.n);
        for (int r = 0; r < rows; r++) {
            int64_t id = fake_view_cell_int(v, r, "id");
            if (r)
                FUZZ_CHECK(id > fake_view_cell_int(v, r - 1, "id"));
            FUZZ_CHECK(thread_list_find(&st->list, (uint32_t)id) != NULL);
        }
    }
    fake_host_free(fh);
    return 0;
}
