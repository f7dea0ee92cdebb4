/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of core/wire/seeded_hash.c: the seed takes part (two seeds,
 * two hashes), the string form is the byte form with the process seed, the
 * process seed stays put, and keys that all collide under DJB2 spread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/wire/seeded_hash.h"

static void test_seed_takes_part(void **state)
{
    static const guint32 seeds[] = {0, 1, 0x80000000u, 0x9E3779B9u, 0xFFFFFFFFu};
    static const char *const texts[] = {"", "a", "127.0.0.1:8600", "emulator-5554/1234"};
    (void)state;

    for (gsize t = 0; t < G_N_ELEMENTS(texts); t++) {
        g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (gsize i = 0; i < G_N_ELEMENTS(seeds); i++) {
            guint h = ddm_hash_bytes(seeds[i], texts[t], strlen(texts[t]));
            assert_int_equal(h, ddm_hash_bytes(seeds[i], texts[t], strlen(texts[t])));
            g_hash_table_add(seen, GUINT_TO_POINTER(h));
        }
        assert_int_equal(g_hash_table_size(seen), G_N_ELEMENTS(seeds));
    }
    /* the length counts: a NUL inside is hashed, not an end */
    assert_int_not_equal(ddm_hash_bytes(7, "ab\0", 3), ddm_hash_bytes(7, "ab", 2));
}

static void test_str_hash_is_bytes_with_process_seed(void **state)
{
    static const char *const texts[] = {"", "x", "threads", "tcp:127.0.0.1:8700", "\xc3\xa9t\xc3\xa9"};
    guint32 seed = ddm_hash_seed();
    (void)state;

    assert_int_equal(ddm_hash_seed(), seed);
    for (gsize t = 0; t < G_N_ELEMENTS(texts); t++)
        assert_int_equal(ddm_str_hash(texts[t]), ddm_hash_bytes(seed, texts[t], strlen(texts[t])));
    assert_int_not_equal(ddm_str_hash("aB"), ddm_str_hash("b!"));
}

/* 2^BLOCKS strings of "aB" / "b!" blocks: one DJB2 value for all. */
static void test_djb2_collisions_spread(void **state)
{
    enum { BLOCKS = 10, N = 1 << BLOCKS };
    g_autoptr(GHashTable) full = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_autoptr(GHashTable) slots = g_hash_table_new(g_direct_hash, g_direct_equal);
    char text[2 * BLOCKS + 1];
    (void)state;

    for (int i = 0; i < N; i++) {
        for (int k = 0; k < BLOCKS; k++)
            memcpy(&text[2 * k], i >> k & 1 ? "b!" : "aB", 2);
        text[2 * BLOCKS] = '\0';
        if (i > 0)
            assert_int_equal(g_str_hash(text), g_str_hash("aBaBaBaBaBaBaBaBaBaB"));
        g_hash_table_add(full, GUINT_TO_POINTER(ddm_str_hash(text)));
        g_hash_table_add(slots, GUINT_TO_POINTER(ddm_str_hash(text) & (N - 1)));
    }
    /* 1,024 random 32-bit values: a repeat has odds of ~1 in 8,000; in
     * 1,024 slots they fill ~647 */
    assert_true(g_hash_table_size(full) >= N - 2);
    assert_true(g_hash_table_size(slots) >= N / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_takes_part),
        cmocka_unit_test(test_str_hash_is_bytes_with_process_seed),
        cmocka_unit_test(test_djb2_collisions_spread),
    };
    return cmocka_run_group_tests_name("seeded-hash", tests, NULL, NULL);
}
