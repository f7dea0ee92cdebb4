/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for ddmon-simvm's NHGT reply (tools/simvm/native.c): v1 and
 * v2 headers, 4- and 8-byte pointers, parsed back little-endian with
 * <ddmon/bytes.h>: sizes agree, the maps text is whole lines, records add
 * up to totalMemory, backtrace addresses fall in the listed mappings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "native.h"

typedef struct Range {
    uint64_t lo, hi;
} Range;

static void check_nhgt(unsigned version, unsigned ptr, unsigned want_ptr)
{
    ddm_writer w;
    ddm_reader r;
    SimNhgtStats st;
    uint64_t map_size, alloc_size, info_size, total, bt, sum = 0, zygote = 0, top;
    const uint8_t *maps;
    Range ranges[64];
    size_t nranges = 0, i;
    char *text, *line, *save = NULL;
    uint32_t rec, nrec;

    ddm_writer_init(&w, 0);
    sim_native_write_nhgt(&w, 1234, 3, version, ptr, &st);
    assert_false(w.error);
    assert_int_equal(st.ptr_size, want_ptr);
    assert_int_equal(st.version, version == 1 ? 1 : 2);
    ddm_reader_init(&r, w.data, w.len);
    if (version == 2) {
        assert_int_equal(ddm_read_le(&r, 4), 0x812345DDu);
        assert_int_equal(ddm_read_le(&r, 2), 2);
        assert_int_equal(ddm_read_le(&r, 2), want_ptr);
    }
    map_size = ddm_read_le(&r, want_ptr);
    alloc_size = ddm_read_le(&r, want_ptr);
    info_size = ddm_read_le(&r, want_ptr);
    total = ddm_read_le(&r, want_ptr);
    bt = ddm_read_le(&r, want_ptr);
    assert_true(ddm_reader_ok(&r));
    assert_int_equal(bt, SIM_NHGT_BACKTRACE);
    assert_int_equal(info_size, (2 + bt) * want_ptr);
    assert_int_equal(map_size, st.map_bytes);
    assert_int_equal(ddm_reader_remaining(&r), map_size + alloc_size);
    assert_int_equal(alloc_size % info_size, 0);
    nrec = (uint32_t)(alloc_size / info_size);
    assert_int_equal(nrec, st.records);

    maps = ddm_read_bytes(&r, map_size);
    assert_non_null(maps);
    assert_int_equal(maps[map_size - 1], '\n');
    text = malloc(map_size + 1);
    memcpy(text, maps, map_size);
    text[map_size] = '\0';
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long lo, hi;
        char perms[5];
        assert_int_equal(sscanf(line, "%llx-%llx %4s", &lo, &hi, perms), 3);
        assert_true(lo < hi);
        if (strcmp(perms, "r-xp") == 0 && nranges < 64) {
            ranges[nranges].lo = lo;
            ranges[nranges].hi = hi;
            nranges++;
        }
    }
    free(text);
    assert_true(nranges >= 3);

    top = (uint64_t)1 << (want_ptr * 8 - 1);
    for (rec = 0; rec < nrec; rec++) {
        uint64_t size = ddm_read_le(&r, want_ptr), count = ddm_read_le(&r, want_ptr);
        int zero_seen = 0;
        assert_true(count >= 1);
        sum += (size & ~top) * count;
        if (size & top)
            zygote += (size & ~top) * count;
        for (i = 0; i < bt; i++) {
            uint64_t pc = ddm_read_le(&r, want_ptr);
            size_t k;
            int inside = 0;
            if (pc == 0) {
                zero_seen = 1;
                continue;
            }
            assert_false(zero_seen); /* unused slots only at the end */
            for (k = 0; k < nranges; k++)
                inside |= pc >= ranges[k].lo && pc < ranges[k].hi;
            assert_true(inside);
        }
    }
    assert_true(ddm_reader_ok(&r));
    assert_int_equal(ddm_reader_remaining(&r), 0);
    assert_int_equal(sum, total);
    assert_int_equal(sum, st.total_memory);
    assert_int_equal(zygote, st.zygote_bytes);
    ddm_writer_reset(&w);
}

static void test_simvm_native_v2_64(void **state)
{
    (void)state;
    check_nhgt(2, 8, 8);
}

static void test_simvm_native_v2_32(void **state)
{
    (void)state;
    check_nhgt(2, 4, 4);
}

static void test_simvm_native_v1_forces_32(void **state)
{
    (void)state;
    check_nhgt(1, 4, 4);
    check_nhgt(1, 8, 4);
}

static void test_simvm_native_deterministic(void **state)
{
    ddm_writer a, b;

    (void)state;
    ddm_writer_init(&a, 0);
    ddm_writer_init(&b, 0);
    sim_native_write_nhgt(&a, 9, 1, 2, 8, NULL);
    sim_native_write_nhgt(&b, 9, 1, 2, 8, NULL);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    ddm_writer_reset(&b);
    sim_native_write_nhgt(&b, 9, 2, 2, 8, NULL); /* next generation: other records */
    assert_true(a.len != b.len || memcmp(a.data, b.data, a.len) != 0);
    ddm_writer_reset(&a);
    ddm_writer_reset(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simvm_native_v2_64),
        cmocka_unit_test(test_simvm_native_v2_32),
        cmocka_unit_test(test_simvm_native_v1_forces_32),
        cmocka_unit_test(test_simvm_native_deterministic),
    };
    return cmocka_run_group_tests_name("simvm-native", tests, NULL, NULL);
}
