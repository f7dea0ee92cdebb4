/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the adb host protocol codec (core/wire/adb_proto.c) as the
 * adb transport and discovery read a socket: a status (OKAY/FAIL), then
 * hex4-framed updates arriving in pieces, each parsed as a track-devices
 * list and as a track-jdwp pid list, diffed against the previous one.
 * (track-app's protobuf updates are fuzz-adb-app.)
 *
 * Input: u1 seed of the piece sizes, then the stream. Invariants: frames
 * never exceed the max or the bytes present; pid lists are sorted, unique
 * and in 1..2^31-1; a diff is consistent with both lists; device serials
 * and states are non-empty and unique by serial.
 */
#include <string.h>

#include "core/wire/adb_proto.h"
#include "tests/fuzz/fuzz.h"

static void check_pids(const GArray *pids)
{
    for (guint i = 0; i < pids->len; i++) {
        guint32 pid = g_array_index(pids, guint32, i);
        FUZZ_CHECK(pid >= 1 && pid <= 0x7FFFFFFFu);
        if (i)
            FUZZ_CHECK(g_array_index(pids, guint32, i - 1) < pid);
    }
}

static gboolean has_pid(const GArray *pids, guint32 pid)
{
    for (guint i = 0; i < pids->len; i++)
        if (g_array_index(pids, guint32, i) == pid)
            return TRUE;
    return FALSE;
}

static void take_frame(const uint8_t *payload, size_t len, GArray **last_pids)
{
    GPtrArray *devs = ddm_adb_parse_devices((const char *)payload, len);
    GArray *pids = ddm_adb_parse_pids((const char *)payload, len);
    GArray *added = g_array_new(FALSE, FALSE, sizeof(guint32));
    GArray *removed = g_array_new(FALSE, FALSE, sizeof(guint32));

    for (guint i = 0; i < devs->len; i++) {
        const DdmAdbDevice *d = g_ptr_array_index(devs, i);
        FUZZ_CHECK(d->serial && *d->serial && d->state);
        for (guint j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(d->serial, ((DdmAdbDevice *)g_ptr_array_index(devs, j))->serial));
    }
    check_pids(pids);
    ddm_adb_diff_pids(*last_pids, pids, added, removed);
    check_pids(added);
    check_pids(removed);
    for (guint i = 0; i < added->len; i++) {
        guint32 pid = g_array_index(added, guint32, i);
        FUZZ_CHECK(has_pid(pids, pid) && !has_pid(*last_pids, pid));
    }
    for (guint i = 0; i < removed->len; i++) {
        guint32 pid = g_array_index(removed, guint32, i);
        FUZZ_CHECK(!has_pid(pids, pid) && has_pid(*last_pids, pid));
    }
    FUZZ_CHECK((*last_pids)->len + added->len - removed->len == pids->len);
    g_array_unref(*last_pids);
    *last_pids = pids;
    g_array_unref(added);
    g_array_unref(removed);
    g_ptr_array_unref(devs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    uint32_t step = fuzz_u8(&in) | 1u;
    GByteArray *buf = g_byte_array_new();
    GArray *last = g_array_new(FALSE, FALSE, sizeof(guint32));
    gboolean have_status = FALSE;

    while (in.n > 0) {
        const uint8_t *piece;
        size_t n;

        step = step * 1103515245u + 12345u;
        n = fuzz_take(&in, 1 + (step >> 16) % 48, &piece);
        g_byte_array_append(buf, piece, (guint)n);

        if (!have_status) {
            size_t consumed = 0;
            char *reason = NULL;
            DdmAdbStatus st = ddm_adb_parse_status(buf->data, buf->len, &consumed, &reason);
            if (st == DDM_ADB_NEED_MORE)
                continue;
            if (st == DDM_ADB_ERR_PROTOCOL)
                break;
            FUZZ_CHECK(consumed >= 4 && consumed <= buf->len);
            if (st == DDM_ADB_FAIL) {
                FUZZ_CHECK(reason && g_utf8_validate(reason, -1, NULL));
                g_free(reason);
                break;
            }
            FUZZ_CHECK(reason == NULL);
            g_byte_array_remove_range(buf, 0, (guint)consumed);
            have_status = TRUE;
        }
        for (;;) {
            size_t consumed = 0, plen = 0;
            const uint8_t *payload = NULL;
            DdmAdbFrameResult fr = ddm_adb_next_frame(buf->data, buf->len, 4096, &consumed,
                                                      &payload, &plen);
            if (fr != DDM_ADB_FRAME_OK) {
                if (fr == DDM_ADB_FRAME_ERR)
                    in.n = 0; /* the transport closes */
                break;
            }
            FUZZ_CHECK(plen <= 4096 && consumed == 4 + plen && consumed <= buf->len);
            FUZZ_CHECK(payload == buf->data + 4);
            {
                uint8_t *copy = fuzz_dup(payload, plen);
                take_frame(copy, plen, &last);
                free(copy);
            }
            g_byte_array_remove_range(buf, 0, (guint)consumed);
        }
    }
    g_array_unref(last);
    g_byte_array_unref(buf);
    return 0;
}
