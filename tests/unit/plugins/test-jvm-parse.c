/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the jvm plugin's JDWP reply decoders (plugins/jvm/jvm-parse.c):
 * the layouts of IDSizes, AllThreads, strings, Status, Version, ClassPaths,
 * CapabilitiesNew, Frames, Methods and LineTable as OpenJDK sends them, and
 * every length from the wire checked before use (short replies refused).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/jvm/jvm.h"

static void test_idsizes_threads(void **state)
{
    static const uint8_t ids[] = {0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8};
    static const uint8_t bad[] = {0, 0, 0, 9, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8};
    static const uint8_t all[] = {0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7};
    jvm_idsizes s;
    uint64_t *t;
    size_t n;
    (void)state;
    assert_int_equal(jvm_parse_idsizes(ids, sizeof ids, &s), 0);
    assert_int_equal(s.object, 8);
    assert_int_equal(jvm_parse_idsizes(bad, sizeof bad, &s), -EBADMSG);
    assert_int_equal(jvm_parse_idsizes(ids, 19, &s), -EBADMSG);
    assert_int_equal(jvm_parse_all_threads(all, sizeof all, 8, 100, &t, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(t[0], 1);
    assert_int_equal(t[1], 7);
    free(t);
    assert_int_equal(jvm_parse_all_threads(all, sizeof all - 1, 8, 100, &t, &n), -EBADMSG);
    assert_int_equal(jvm_parse_all_threads(all, sizeof all, 8, 1, &t, &n), 0); /* capped */
    assert_int_equal(n, 1);
    free(t);
}

static void test_strings_status(void **state)
{
    static const uint8_t name[] = {0, 0, 0, 8, 'w', 'o', 'r', 'k', 'e', 'r', '-', '0'};
    static const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 'x'};
    static const uint8_t st[] = {0, 0, 0, 2, 0, 0, 0, 1};
    int32_t a, b;
    char *s;
    (void)state;
    s = jvm_parse_string(name, sizeof name);
    assert_string_equal(s, "worker-0");
    free(s);
    assert_null(jvm_parse_string(name, sizeof name - 1));
    assert_null(jvm_parse_string(huge, sizeof huge));
    assert_int_equal(jvm_parse_status(st, sizeof st, &a, &b), 0);
    assert_int_equal(a, 2);
    assert_int_equal(b, 1);
    assert_string_equal(jvm_status_name(a), "sleeping");
    assert_string_equal(jvm_status_name(99), "unknown");
    assert_int_equal(jvm_parse_status(st, 7, &a, &b), -EBADMSG);
}

static void test_version_classpaths_caps(void **state)
{
    static const uint8_t ver[] = {0, 0, 0, 1, 'd', 0, 0, 0, 17, 0, 0, 0, 0,
                                  0, 0, 0, 2, '1', '7', 0, 0, 0, 3, 'V', 'M', 'x'};
    static const uint8_t cp[] = {0, 0, 0, 4, '/', 't', 'm', 'p', 0, 0, 0, 2, 0, 0, 0, 1,
                                 'a', 0, 0, 0, 1, 'b', 0, 0, 0, 0};
    uint8_t caps[32] = {1, 0, 1};
    jvm_version v;
    jvm_classpaths c;
    char *s;
    (void)state;
    assert_int_equal(jvm_parse_version(ver, sizeof ver, &v), 0);
    assert_string_equal(v.vm_name, "VMx");
    assert_int_equal(v.major, 17);
    jvm_version_clear(&v);
    assert_int_equal(jvm_parse_version(ver, sizeof ver - 1, &v), -EBADMSG);
    assert_int_equal(jvm_parse_classpaths(cp, sizeof cp, &c), 0);
    assert_string_equal(c.base_dir, "/tmp");
    assert_string_equal(c.classpath, "a:b");
    assert_string_equal(c.bootclasspath, "");
    jvm_classpaths_clear(&c);
    assert_int_equal(jvm_parse_classpaths(cp, sizeof cp - 1, &c), -EBADMSG);
    caps[31] = 1;
    s = jvm_parse_capabilities(caps, sizeof caps, 1);
    assert_string_equal(s, "canWatchFieldModification,canGetBytecodes,reserved32");
    free(s);
    assert_null(jvm_parse_capabilities(caps, 31, 1));
}

static void test_frames_methods_lines(void **state)
{
    jvm_idsizes ids = {8, 8, 8, 8, 8};
    uint8_t fr[4 + 33];
    jvm_frame *f;
    size_t n;
    (void)state;
    memset(fr, 0, sizeof fr);
    fr[3] = 1;
    jvm_put_id(fr + 4, 0x11, 8);
    fr[12] = 1; /* class */
    jvm_put_id(fr + 13, 0x22, 8);
    jvm_put_id(fr + 21, 0x33, 8);
    jvm_put_id(fr + 29, 5, 8);
    assert_int_equal(jvm_parse_frames(fr, sizeof fr, &ids, 10, &f, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(f[0].class_id, 0x22);
    assert_int_equal(f[0].method_id, 0x33);
    assert_int_equal(f[0].index, 5);
    free(f);
    assert_int_equal(jvm_parse_frames(fr, sizeof fr - 1, &ids, 10, &f, &n), -EBADMSG);

    /* Methods: 2 methods, the second is ours */
    uint8_t m[4 + 2 * (8 + 4 + 1 + 4 + 3 + 4)];
    uint8_t *p = m;
    memset(m, 0, sizeof m);
    p[3] = 2;
    p += 4;
    for (int i = 0; i < 2; i++) {
        jvm_put_id(p, i ? 0x33 : 0x44, 8);
        p += 8;
        p[3] = 1;
        p[4] = i ? 'r' : 'x';
        p += 5;
        p[3] = 3;
        memcpy(p + 4, "()V", 3);
        p += 7;
        p += 4;
    }
    char *name = jvm_parse_method_name(m, (size_t)(p - m), &ids, 0x33);
    assert_string_equal(name, "r");
    free(name);
    assert_null(jvm_parse_method_name(m, (size_t)(p - m), &ids, 0x55));

    /* LineTable: lines at index 0 (10) and 4 (11) */
    uint8_t lt[16 + 4 + 24];
    memset(lt, 0, sizeof lt);
    lt[19] = 2;
    lt[20 + 11] = 10;
    lt[32 + 7] = 4;
    lt[32 + 11] = 11;
    assert_int_equal(jvm_parse_line(lt, sizeof lt, 5), 11);
    assert_int_equal(jvm_parse_line(lt, sizeof lt, 3), 10);
    assert_int_equal(jvm_parse_line(lt, sizeof lt - 1, 3), -1);

    char *cn = jvm_class_name("Ljava/lang/Thread;");
    assert_string_equal(cn, "java.lang.Thread");
    free(cn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idsizes_threads),
        cmocka_unit_test(test_strings_status),
        cmocka_unit_test(test_version_classpaths_caps),
        cmocka_unit_test(test_frames_methods_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
