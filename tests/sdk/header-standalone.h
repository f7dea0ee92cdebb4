/* SPDX-License-Identifier: Apache-2.0
 *
 * The body shared by header-standalone.c (C99) and header-standalone.cc
 * (C++11): include every SDK header on its own, pin the descriptor's frozen
 * prefix (magic@0, abi_major@4, abi_minor@6, desc_size@8) at compile time
 * and again at run time, define a descriptor with DDM_PLUGIN_DEFINE, and use
 * a little of bytes.h and chunk.h. Prints TAP. Not a header of the SDK.
 */
#include <ddmon/plugin.h>
#include <ddmon/chunk.h>
#include <ddmon/bytes.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* C99 has no static_assert: a negative array size fails the build. */
#define SDK_CHECK(name, cond) typedef char sdk_check_##name[(cond) ? 1 : -1]
SDK_CHECK(magic_at_0, offsetof(ddm_plugin_desc, magic) == 0);
SDK_CHECK(abi_major_at_4, offsetof(ddm_plugin_desc, abi_major) == 4);
SDK_CHECK(abi_minor_at_6, offsetof(ddm_plugin_desc, abi_minor) == 6);
SDK_CHECK(desc_size_at_8, offsetof(ddm_plugin_desc, desc_size) == 8);
SDK_CHECK(magic_is_u4, sizeof(((ddm_plugin_desc *)0)->magic) == 4);
SDK_CHECK(abi_major_is_u2, sizeof(((ddm_plugin_desc *)0)->abi_major) == 2);
SDK_CHECK(abi_minor_is_u2, sizeof(((ddm_plugin_desc *)0)->abi_minor) == 2);
SDK_CHECK(desc_size_is_u4, sizeof(((ddm_plugin_desc *)0)->desc_size) == 4);
SDK_CHECK(helo_type, DDM_CHUNK_HELO == 0x48454C4Fu);

static int sdk_init(ddm_plugin *self, const ddm_host *host)
{
    (void)self;
    (void)host;
    return DDM_OK;
}

static void sdk_fini(ddm_plugin *self)
{
    (void)self;
}

DDM_PLUGIN_DEFINE("standalone", "1.0", "Apache-2.0", "SDK header check", sdk_init, sdk_fini);

/* Defined in only-*.c(c), each of which includes one SDK header alone. */
int sdk_only_plugin(void);
int sdk_only_chunk(void);
int sdk_only_bytes(void);
int sdk_only_ticklist(void);

static int n_test;
static int n_failed;

static void check(int ok, const char *what)
{
    n_test++;
    if (!ok)
        n_failed++;
    printf("%s %d - %s\n", ok ? "ok" : "not ok", n_test, what);
}

static int run_checks(void)
{
    const ddm_plugin_desc *d = &ddm_plugin_descriptor;
    const unsigned char *raw = (const unsigned char *)d;
    uint32_t magic;
    uint16_t major, minor;
    uint32_t size;
    char name[5];
    uint8_t buf[8];
    ddm_reader r;
    ddm_writer w;
    uint8_t *out;
    size_t out_len = 0;

    printf("1..10\n");
    memcpy(&magic, raw + 0, 4);
    memcpy(&major, raw + 4, 2);
    memcpy(&minor, raw + 6, 2);
    memcpy(&size, raw + 8, 4);
    check(magic == DDM_PLUGIN_MAGIC, "magic at offset 0");
    check(major == DDM_ABI_MAJOR, "abi_major at offset 4");
    check(minor == DDM_ABI_MINOR, "abi_minor at offset 6");
    check(size == sizeof(ddm_plugin_desc), "desc_size at offset 8");
    check(d->init == sdk_init && d->fini == sdk_fini && strcmp(d->name, "standalone") == 0,
          "DDM_PLUGIN_DEFINE fills the descriptor");
    check(strcmp(ddm_chunk_name(DDM_CHUNK('T', 'H', 'C', 'R'), name), "THCR") == 0,
          "chunk.h names a type");

    ddm_writer_init(&w, 16);
    ddm_write_u4(&w, 0x01020304u);
    ddm_write_u2(&w, 0xBEEF);
    out = ddm_writer_take(&w, &out_len);
    check(out != NULL && out_len == 6, "bytes.h writer");
    memset(buf, 0, sizeof buf);
    if (out)
        memcpy(buf, out, out_len);
    free(out);
    ddm_reader_init(&r, buf, 6);
    check(ddm_read_u4(&r) == 0x01020304u && ddm_read_u2(&r) == 0xBEEF && ddm_reader_ok(&r),
          "bytes.h reader");
    (void)ddm_read_u1(&r);
    check(!ddm_reader_ok(&r), "bytes.h reader overrun");
    check(sdk_only_plugin() && sdk_only_chunk() && sdk_only_bytes() && sdk_only_ticklist(),
          "each header compiles alone");
    return n_failed ? 1 : 0;
}
