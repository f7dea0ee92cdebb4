/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the plugin loader (core/pluginhost/loader.c) with real shared objects:
 * the test-only plugins in DDM_TEST_PLUGIN_DIR (good, bad-magic,
 * abi-other-major, abi-newer-minor, no-desc, init-fails, dup-chunk,
 * name-mismatch) and hostile files made in a temporary directory (empty,
 * garbage, mode 000, symlink, group-writable, wrong suffix, directory).
 * Each refusal is checked for its GError code and message text. Also: the
 * search order (--plugin-dir > DDMON_PLUGIN_PATH > installed dir), first
 * file of a name wins, required (--plugins) vs optional failures,
 * --disable-plugin, --check-plugin and --list-plugins.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* dladdr */
#endif
#include "build-config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <grp.h>
#include <link.h> /* ElfW: the host's ELF header and program header types */
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "core/config/config.h"
#include "core/pluginhost/elfdesc.h"
#include "core/pluginhost/loader.h"
#include "tests/harness/hand-monitor.h"
#include "tests/harness/private-dir.h"
#include "core/pluginhost/registry.h"
#include "core/views/views.h"
#include "core/session/vm.h"

/* ------------------------------------------------------------ log capture */

static GPtrArray *logs; /* char* "LEVEL message" */

static GLogWriterOutput capture_writer(GLogLevelFlags level, const GLogField *fields, gsize n,
                                       gpointer ud)
{
    const char *msg = "";
    for (gsize i = 0; i < n; i++)
        if (strcmp(fields[i].key, "MESSAGE") == 0)
            msg = fields[i].value;
    const char *lv = (level & G_LOG_LEVEL_WARNING) ? "W" : (level & G_LOG_LEVEL_MESSAGE) ? "M"
                     : (level & G_LOG_LEVEL_CRITICAL)                           ? "C"
                                                                                : "D";
    g_ptr_array_add(logs, g_strdup_printf("%s %s", lv, msg));
    if (level & (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR))
        g_log_writer_default(level, fields, n, ud);
    return G_LOG_WRITER_HANDLED;
}

static guint count_logs(const char *prefix, const char *needle)
{
    guint c = 0;
    for (guint i = 0; i < logs->len; i++) {
        const char *l = g_ptr_array_index(logs, i);
        if (g_str_has_prefix(l, prefix) && strstr(l, needle))
            c++;
    }
    return c;
}

/* ---------------------------------------------------------------- fixture */

typedef struct Fixture {
    TestParts mon;
    char *plugin_dir; /* DDM_TEST_PLUGIN_DIR */
    char *tmp;        /* scratch directory, removed at teardown */
} Fixture;

static int setup(void **state)
{
    Fixture *f = g_new0(Fixture, 1);
    const char *dir = g_getenv("DDM_TEST_PLUGIN_DIR");
    if (dir == NULL)
        dir = "tests/plugins/.libs"; /* run by hand from the build directory */
    /* Absolute, as the loader names the files it refuses (run by hand, the
     * relative default made test_loader_bad_descriptors fail). */
    if (g_path_is_absolute(dir)) {
        f->plugin_dir = g_strdup(dir);
    } else {
        g_autofree char *cwd = g_get_current_dir();
        f->plugin_dir = g_build_filename(cwd, dir, NULL);
    }
    f->mon.config = ddm_config_new();
    /* Only what a test puts there: no stray installed plugins. */
    g_free(f->mon.config->installed_plugin_dir);
    f->mon.config->installed_plugin_dir = g_strdup("/nonexistent/ddmon-test");
    f->mon.config->use_env_plugin_path = TRUE;
    f->mon.views = ddm_views_new();
    f->mon.monitor = test_monitor_new(f->mon.config);
    f->mon.registry = ddm_registry_new(f->mon.monitor, f->mon.views, f->mon.config);
    f->tmp = test_private_dir_new("ddmon-test-loader-XXXXXX");
    g_unsetenv("DDMON_PLUGIN_PATH");
    g_ptr_array_set_size(logs, 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    ddm_registry_free(f->mon.registry);
    test_monitor_free(f->mon.monitor);
    ddm_views_free(f->mon.views);
    ddm_config_free(f->mon.config);
    test_private_dir_free(f->tmp);
    g_free(f->plugin_dir);
    g_free(f);
    g_unsetenv("DDMON_PLUGIN_PATH");
    return 0;
}

static char *test_plugin(Fixture *f, const char *name)
{
    char *p = g_strdup_printf("%s/%s.so", f->plugin_dir, name);
    if (!g_file_test(p, G_FILE_TEST_EXISTS))
        fail_msg("test plugin %s missing (build with make check)", p);
    return p;
}

/* Copy test plugin @name into @dir (made if needed) with mode 0644. */
static char *copy_plugin(Fixture *f, const char *dir, const char *name)
{
    g_autofree char *src = test_plugin(f, name);
    g_mkdir_with_parents(dir, 0755);
    char *dst = g_strdup_printf("%s/%s.so", dir, name);
    gchar *contents;
    gsize len;
    assert_true(g_file_get_contents(src, &contents, &len, NULL));
    assert_true(g_file_set_contents(dst, contents, (gssize)len, NULL));
    g_free(contents);
    assert_int_equal(chmod(dst, 0644), 0);
    return dst;
}

/* Copy test plugin @name into the fixture's @subdir (made), change its
 * bytes with @patch (which checks what it changes), mode 0644; the path
 * (g_free). */
static char *copy_patched(Fixture *f, const char *subdir, const char *name,
                          void (*patch)(char *bytes, gsize len))
{
    g_autofree char *dir = g_build_filename(f->tmp, subdir, NULL);
    char *path = copy_plugin(f, dir, name);
    gchar *bytes;
    gsize len;
    assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    patch(bytes, len);
    assert_true(g_file_set_contents(path, bytes, (gssize)len, NULL));
    g_free(bytes);
    assert_int_equal(chmod(path, 0644), 0);
    return path;
}

static char *write_file(Fixture *f, const char *name, const void *data, gsize len, mode_t mode)
{
    char *path = g_build_filename(f->tmp, name, NULL);
    assert_true(g_file_set_contents(path, data, (gssize)len, NULL));
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

/* Load @path into the fixture's registry; expect refusal with @code and
 * every needle in the message. */
static void expect_refused(Fixture *f, const char *path, int code, const char *needle1,
                           const char *needle2)
{
    GError *err = NULL;
    ddm_plugin *p = NULL;
    assert_false(ddm_loader_load_file(f->mon.registry, path, &p, &err));
    assert_non_null(err);
    assert_int_equal(err->domain, DDM_LOADER_ERROR);
    if (err->code != code)
        fail_msg("%s: code %d, expected %d (%s)", path, err->code, code, err->message);
    if (!strstr(err->message, needle1) || (needle2 && !strstr(err->message, needle2)))
        fail_msg("message '%s' lacks '%s' / '%s'", err->message, needle1, needle2 ? needle2 : "");
    assert_non_null(p);
    assert_int_equal(p->status, DDM_PLUGIN_REFUSED);
    assert_non_null(p->reason);
    assert_non_null(strstr(err->message, p->reason));
    assert_null(p->dl);
    assert_int_equal(ddm_registry_count_registrations(f->mon.registry, p), 0);
    g_error_free(err);
}

/* ------------------------------------------------------------------ tests */

static uid_t other_uid(void)
{
    struct passwd *pw = getpwnam("nobody");
    return pw ? pw->pw_uid : 65534;
}

static gboolean can_chown(void)
{
    return geteuid() == 0;
}

/* A group shared by several users, or by none (not a user private group):
 * what makes group-writable unsafe. */
static gid_t shared_gid(void)
{
    struct group *g = getgrnam("nogroup");
    if (g == NULL)
        g = getgrnam("users");
    return g ? g->gr_gid : 65534;
}

/* As root, give @path the shared group, so group-write means others. */
static void share_group(const char *path)
{
    if (can_chown())
        assert_int_equal(chown(path, (uid_t)-1, shared_gid()), 0);
}

static void test_loader_good(void **state)
{
    Fixture *f = *state;
    g_autofree char *path = test_plugin(f, "good");
    ddm_plugin *p = NULL;
    GError *err = NULL;
    assert_true(ddm_loader_load_file(f->mon.registry, path, &p, &err));
    assert_null(err);
    assert_int_equal(p->status, DDM_PLUGIN_LOADED);
    assert_string_equal(p->name, "good");
    assert_string_equal(p->version, "1.2.3");
    assert_string_equal(p->license, "Apache-2.0");
    assert_int_equal(p->abi_major, DDM_ABI_MAJOR);
    assert_non_null(p->dl);
    /* chunk, tap, listener, command, plugin data */
    assert_int_equal(ddm_registry_count_registrations(f->mon.registry, p), 5);
    assert_ptr_equal(ddm_registry_find_plugin(f->mon.registry, "good"), p);

    /* The same name again: refused, the first stays. */
    g_autofree char *copy = copy_plugin(f, f->tmp, "good");
    expect_refused(f, copy, DDM_LOADER_ERROR_DUPLICATE, "a plugin named good is already loaded",
                   path);
    assert_ptr_equal(ddm_registry_find_plugin(f->mon.registry, "good"), p);

    /* ddm_loader_open alone: validated, no init. */
    void *dl = NULL;
    const ddm_plugin_desc *d = ddm_loader_open(path, &dl, &err);
    assert_non_null(d);
    assert_string_equal(d->name, "good");
    assert_non_null(dl);
    dlclose(dl);
}

static void test_loader_bad_descriptors(void **state)
{
    Fixture *f = *state;
    g_autofree char *magic = test_plugin(f, "bad-magic");
    expect_refused(f, magic, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                   "bad descriptor magic 0xdeadbeef (expected 0x44444d50)", "bad-magic.so");
    g_autofree char *major = test_plugin(f, "abi-other-major");
    g_autofree char *want_major = g_strdup_printf("plugin wants ABI %d.0, core provides %d.%d; file %s",
                                                  DDM_ABI_MAJOR + 1, DDM_ABI_MAJOR,
                                                  DDM_ABI_MINOR, major);
    expect_refused(f, major, DDM_LOADER_ERROR_ABI_MISMATCH, want_major, NULL);
    g_autofree char *minor = test_plugin(f, "abi-newer-minor");
    g_autofree char *want_minor = g_strdup_printf("plugin wants ABI %d.%d, core provides %d.%d",
                                                  DDM_ABI_MAJOR, DDM_ABI_MINOR + 1,
                                                  DDM_ABI_MAJOR, DDM_ABI_MINOR);
    expect_refused(f, minor, DDM_LOADER_ERROR_ABI_MISMATCH, want_minor, "abi-newer-minor.so");
    ddm_plugin *rec = ddm_registry_find_plugin(f->mon.registry, "abi-newer-minor");
    assert_int_equal(rec->abi_minor, DDM_ABI_MINOR + 1); /* for --list-plugins */
    g_autofree char *nodesc = test_plugin(f, "no-desc");
    expect_refused(f, nodesc, DDM_LOADER_ERROR_NOT_A_PLUGIN, "exports no ddm_plugin_descriptor",
                   "no-desc.so");
    g_autofree char *mismatch = test_plugin(f, "name-mismatch");
    expect_refused(f, mismatch, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                   "descriptor name 'other-name' does not match the file name name-mismatch.so",
                   NULL);
}

/* Section headers gone (e_shoff, e_shnum, e_shstrndx zeroed). */
static void strip_section_headers(char *bytes, gsize len)
{
    ElfW(Ehdr) eh;
    assert_true(len > sizeof eh);
    memcpy(&eh, bytes, sizeof eh);
    assert_int_not_equal(eh.e_shoff, 0);
    eh.e_shoff = 0;
    eh.e_shnum = 0;
    eh.e_shstrndx = 0;
    memcpy(bytes, &eh, sizeof eh);
}

/* The one PT_DYNAMIC's p_filesz and p_memsz say one entry. */
static void shorten_dynamic(char *bytes, gsize len)
{
    ElfW(Ehdr) eh;
    guint dynamics = 0;
    memcpy(&eh, bytes, sizeof eh);
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        gsize at = eh.e_phoff + (gsize)i * sizeof(ElfW(Phdr));
        assert_true(at + sizeof(ElfW(Phdr)) <= len);
        ElfW(Phdr) ph;
        memcpy(&ph, bytes + at, sizeof ph);
        if (ph.p_type != PT_DYNAMIC)
            continue;
        ph.p_filesz = ph.p_memsz = sizeof(ElfW(Dyn));
        memcpy(bytes + at, &ph, sizeof ph);
        dynamics++;
    }
    assert_int_equal(dynamics, 1);
}

/* Every "ddm_daemon_views" made "ddm_<FF><ESC><LF>mon_views". */
static void escape_core_name(char *bytes, gsize len)
{
    static const char from[] = "ddm_daemon_views", to[] = "ddm_\xff\x1b\nmon_views";
    G_STATIC_ASSERT(sizeof from == sizeof to);
    guint replaced = 0;
    for (char *at = bytes; (at = memmem(at, len - (gsize)(at - bytes), from, sizeof from)) != NULL;
         at += sizeof from, replaced++)
        memcpy(at, to, sizeof to);
    assert_true(replaced > 0);
}

/* A plugin whose .dynsym asks for a ddm_ symbol it does not define would
 * bind to the core functions the ddmon binary exports for the web module:
 * refused before dlopen (its init would succeed), by the load and by
 * --check-plugin, naming the symbol. */
static void test_loader_core_refs_refused(void **state)
{
    Fixture *f = *state;
    g_autofree char *path = test_plugin(f, "core-ref");
    expect_refused(f, path, DDM_LOADER_ERROR_ABI_MISMATCH,
                   "calls 1 function of the ddmon core (ddm_daemon_views), which are not "
                   "part of the plugin ABI",
                   "core-ref.so");
    GError *err = NULL;
    g_autoptr(GString) report = g_string_new(NULL);
    assert_false(ddm_loader_check_file(path, report, &err));
    assert_true(g_error_matches(err, DDM_LOADER_ERROR, DDM_LOADER_ERROR_ABI_MISMATCH));
    assert_non_null(strstr(err->message, "(ddm_daemon_views)"));
    g_clear_error(&err);
    assert_non_null(strstr(report->str, "REFUSED"));
    assert_non_null(strstr(report->str, "ddm_daemon_views"));
    /* The check reads names, not bytes: the good plugin passes it. */
    g_autofree char *good = test_plugin(f, "good");
    assert_true(ddm_loader_check_file(good, NULL, NULL));

    /* Without section headers (e_shoff, e_shnum, e_shstrndx zeroed)
     * dlopen still binds through PT_DYNAMIC: so does the check. */
    g_autofree char *stripped = copy_patched(f, "stripped", "core-ref", strip_section_headers);
    expect_refused(f, stripped, DDM_LOADER_ERROR_ABI_MISMATCH,
                   "calls 1 function of the ddmon core (ddm_daemon_views)", "stripped/core-ref.so");

    /* A PT_DYNAMIC whose p_filesz says one entry: ld.so reads on to the
     * DT_NULL whatever the size says and binds the name, so the check
     * reads on too (it read p_filesz's entries and found no DT_SYMTAB). */
    g_autofree char *shortdyn = copy_patched(f, "shortdyn", "core-ref", shorten_dynamic);
    expect_refused(f, shortdyn, DDM_LOADER_ERROR_ABI_MISMATCH,
                   "calls 1 function of the ddmon core (ddm_daemon_views)", "shortdyn/core-ref.so");

    /* A name is quoted escaped (it reaches JSON and terminals): the
     * undefined name made "ddm_<FF><ESC><LF>mon_views" in a copy. */
    g_autofree char *odd = copy_patched(f, "odd", "core-ref", escape_core_name);
    expect_refused(f, odd, DDM_LOADER_ERROR_ABI_MISMATCH,
                   "calls 1 function of the ddmon core (ddm_\\xFF\\x1B\\x0Amon_views)", NULL);
}

static void test_loader_init_fails_leaves_nothing(void **state)
{
    Fixture *f = *state;
    g_autofree char *path = test_plugin(f, "init-fails");
    expect_refused(f, path, DDM_LOADER_ERROR_INIT_FAILED, "plugin init-fails refused",
                   "init failed");
    ddm_plugin *p = ddm_registry_find_plugin(f->mon.registry, "init-fails");
    assert_int_equal(ddm_registry_count_registrations(f->mon.registry, p), 0);
    g_autoptr(GArray) cmds = ddm_registry_commands(f->mon.registry);
    assert_int_equal(cmds->len, 0);
    assert_null(ddm_views_lookup(f->mon.views, "init-fails.view", NULL));
    g_autoptr(GArray) types = ddm_registry_owned_types(f->mon.registry, p);
    assert_int_equal(types->len, 0);
}

static void test_loader_dup_chunk(void **state)
{
    Fixture *f = *state;
    g_autofree char *good = test_plugin(f, "good");
    g_autofree char *dup = test_plugin(f, "dup-chunk");
    ddm_plugin *g = NULL;
    assert_true(ddm_loader_load_file(f->mon.registry, good, &g, NULL));
    expect_refused(f, dup, DDM_LOADER_ERROR_CHUNK_CONFLICT,
                   "chunk type GOOD is already owned by plugin good", "plugin dup-chunk");
    assert_int_equal(count_logs("W", "GOOD is already owned by plugin good; plugin dup-chunk"), 1);
    /* good keeps its type; dup-chunk's own DUPC is gone. */
    g_autoptr(GArray) types = ddm_registry_owned_types(f->mon.registry, g);
    assert_int_equal(types->len, 1);
    assert_int_equal(g_array_index(types, uint32_t, 0), DDM_CHUNK('G', 'O', 'O', 'D'));
    g_autoptr(JsonNode) json = ddm_registry_plugins_to_json(f->mon.registry);
    JsonArray *arr = json_node_get_array(json);
    assert_int_equal(json_array_get_length(arr), 2);
    JsonObject *o = json_array_get_object_element(arr, 1);
    assert_string_equal(json_object_get_string_member(o, "status"), "refused");
    assert_int_equal(json_array_get_length(json_object_get_array_member(o, "chunks")), 0);
}

static void test_loader_hostile_files(void **state)
{
    Fixture *f = *state;
    static const char garbage[] = "this is not an ELF file, just some text\n\x01\x02\x03";
    g_autofree char *empty = write_file(f, "empty.so", "", 0, 0644);
    expect_refused(f, empty, DDM_LOADER_ERROR_NOT_A_PLUGIN, "not a shared object", "empty");
    g_autofree char *junk = write_file(f, "garbage.so", garbage, sizeof garbage, 0644);
    expect_refused(f, junk, DDM_LOADER_ERROR_NOT_A_PLUGIN, "not a shared object", "garbage.so");
    /* ELF magic, then nonsense: refused before dlopen. */
    static const char elfjunk[] = "\177ELF\002\001\001\000garbage garbage garbage garbage garbage";
    g_autofree char *fake = write_file(f, "fake-elf.so", elfjunk, sizeof elfjunk, 0644);
    expect_refused(f, fake, DDM_LOADER_ERROR_NOT_A_PLUGIN, "truncated ELF file", "fake-elf.so");
    /* A real plugin copied with mode 000: not readable (even for root). */
    g_autofree char *locked = copy_plugin(f, f->tmp, "good");
    assert_int_equal(chmod(locked, 0), 0);
    expect_refused(f, locked, DDM_LOADER_ERROR_NOT_A_PLUGIN, "is not readable (mode 0000)", NULL);
    assert_int_equal(chmod(locked, 0664), 0);
    share_group(locked);
    if (can_chown()) {
        expect_refused(f, locked, DDM_LOADER_ERROR_UNSAFE, "writable by group or others (mode 0664)",
                       NULL);
        /* The group is the reason: named. */
        expect_refused(f, locked, DDM_LOADER_ERROR_UNSAFE, "(mode 0664), by g", NULL);
    }
    assert_int_equal(chmod(locked, 0646), 0);
    expect_refused(f, locked, DDM_LOADER_ERROR_UNSAFE, "writable by group or others", NULL);
    assert_int_equal(chmod(locked, 0644), 0);
    g_autofree char *link = g_build_filename(f->tmp, "link.so", NULL);
    assert_int_equal(symlink(locked, link), 0);
    expect_refused(f, link, DDM_LOADER_ERROR_UNSAFE, "is a symbolic link", NULL);
    g_autofree char *txt = write_file(f, "good.txt", garbage, sizeof garbage, 0644);
    expect_refused(f, txt, DDM_LOADER_ERROR_NOT_A_PLUGIN, "plugin file names end in .so", NULL);
    g_autofree char *dir = g_build_filename(f->tmp, "dir.so", NULL);
    assert_int_equal(g_mkdir(dir, 0755), 0);
    expect_refused(f, dir, DDM_LOADER_ERROR_NOT_A_PLUGIN, "is not a regular file", NULL);
    g_autofree char *missing = g_build_filename(f->tmp, "missing.so", NULL);
    expect_refused(f, missing, DDM_LOADER_ERROR_NOT_A_PLUGIN, "cannot read plugin file",
                   "No such file");
    /* And the copy, made safe again, loads. */
    ddm_plugin *p = NULL;
    assert_true(ddm_loader_load_file(f->mon.registry, locked, &p, NULL));
    assert_int_equal(p->status, DDM_PLUGIN_LOADED);
}

static ddm_plugin *find_by_path(DdmRegistry *reg, const char *path);

/* Copy test plugin good.so into @dir as @name, cut to @len bytes (0644). */
static char *copy_truncated(Fixture *f, const char *dir, const char *name, gsize len)
{
    g_autofree char *src = test_plugin(f, "good");
    g_mkdir_with_parents(dir, 0755);
    char *dst = g_build_filename(dir, name, NULL);
    gchar *contents;
    gsize full;
    assert_true(g_file_get_contents(src, &contents, &full, NULL));
    assert_true(len < full);
    assert_true(g_file_set_contents(dst, contents, (gssize)len, NULL));
    g_free(contents);
    assert_int_equal(chmod(dst, 0644), 0);
    return dst;
}

/* The last PT_LOAD segment of the shared object at @path: its index in the
 * program header table and the file range [*start, *end) of its bytes. */
static void last_load_segment(const char *path, unsigned *index, guint64 *start, guint64 *end)
{
    gchar *b;
    gsize len;
    assert_true(g_file_get_contents(path, &b, &len, NULL));
    assert_true(len >= sizeof(ElfW(Ehdr)));
    ElfW(Ehdr) eh;
    memcpy(&eh, b, sizeof eh);
    assert_int_equal(eh.e_phentsize, sizeof(ElfW(Phdr)));
    assert_true(eh.e_phoff <= len && eh.e_phnum <= (len - eh.e_phoff) / sizeof(ElfW(Phdr)));
    gboolean found = FALSE;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        ElfW(Phdr) ph;
        memcpy(&ph, b + eh.e_phoff + (gsize)i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_LOAD)
            continue;
        *index = i;
        *start = ph.p_offset;
        *end = (guint64)ph.p_offset + ph.p_filesz;
        found = TRUE;
    }
    g_free(b);
    assert_true(found);
    assert_true(*start < *end && *end <= len);
}

/* A plugin file cut short (a copy interrupted, a full disk) is refused
 * before dlopen, which would map pages past its end and die of SIGBUS
 * touching them: by load, by --check-plugin and by the directory scan. */
static void test_loader_truncated_elf(void **state)
{
    Fixture *f = *state;
    g_autofree char *good = test_plugin(f, "good");
    struct stat st;
    assert_int_equal(stat(good, &st), 0);
    gsize size = (gsize)st.st_size;
    g_autofree char *dir = g_build_filename(f->tmp, "cut", NULL);
    static const struct {
        const char *name;
        gsize len; /* 0: mid last segment; 1: one page and a byte; 2: all but a byte */
        const char *needle;
    } cases[] = {
        /* the pages past the first are past the end: SIGBUS in dlopen */
        {"one-page.so", 1, "truncated ELF file"},
        /* dlopen took this one, zeros for the data past the end.  Cut
         * where the last loaded segment's bytes are, not at half the file:
         * the debug sections (past every segment) grow with the SDK's
         * headers, and half of good.so moved past its last segment when
         * SDK 1.3 added the metric families. */
        {"mid-segment.so", 0, "truncated ELF file: segment "},
        /* the section header table comes last */
        {"but-a-byte.so", 2, "truncated ELF file: the section headers end at"},
        {"past-header.so", 64 + 8, "truncated ELF file"},
        {"header-only.so", 64, "truncated ELF file"},
        {"short-header.so", 63, "truncated ELF file"},
    };
    unsigned seg;
    guint64 seg_start, seg_end;
    last_load_segment(good, &seg, &seg_start, &seg_end);
    gsize mid_segment = (gsize)(seg_start + (seg_end - seg_start) / 2);
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        gsize len = cases[i].len > 2    ? cases[i].len
                    : cases[i].len == 2 ? size - 1
                    : cases[i].len == 1 ? (gsize)sysconf(_SC_PAGESIZE) + 1
                                        : mid_segment;
        g_autofree char *path = copy_truncated(f, dir, cases[i].name, len);
        g_autofree char *has = g_strdup_printf("file has %" G_GSIZE_FORMAT " bytes", len);
        expect_refused(f, path, DDM_LOADER_ERROR_NOT_A_PLUGIN, cases[i].needle, has);
        /* --check-plugin: the same refusal, reported. */
        g_autoptr(GString) report = g_string_new(NULL);
        GError *err = NULL;
        assert_false(ddm_loader_check_file(path, report, &err));
        assert_true(g_error_matches(err, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN));
        if (!strstr(err->message, cases[i].needle) || !strstr(err->message, path))
            fail_msg("check_file: '%s'", err->message);
        g_clear_error(&err);
        assert_non_null(strstr(report->str, "REFUSED"));
    }
    /* Cut inside the last segment: the message names that segment and
     * where its bytes end, not the section headers further on. */
    {
        g_autofree char *path = g_build_filename(dir, "mid-segment.so", NULL);
        g_autofree char *want = g_strdup_printf(
            "truncated ELF file: segment %u ends at %" G_GUINT64_FORMAT ", file has %" G_GSIZE_FORMAT
            " bytes",
            seg, seg_end, mid_segment);
        GError *err = NULL;
        assert_false(ddm_loader_check_file(path, NULL, &err));
        gboolean named = strstr(err->message, want) != NULL;
        if (!named)
            print_error("mid-segment: '%s', expected '%s'\n", err->message, want);
        g_clear_error(&err);
        assert_true(named);
    }
    /* --list-plugins and the server's directory scan refuse them all and
     * load the intact copy. */
    g_autofree char *intact = copy_plugin(f, dir, "good");
    g_ptr_array_add(f->mon.config->plugin_dirs, g_strdup(dir));
    JsonNode *json = NULL;
    assert_true(ddm_loader_list_plugins(f->mon.config, &json, NULL));
    JsonArray *arr = json_node_get_array(json);
    assert_int_equal(json_array_get_length(arr), G_N_ELEMENTS(cases) + 1);
    guint refused = 0;
    for (guint i = 0; i < json_array_get_length(arr); i++) {
        JsonObject *o = json_array_get_object_element(arr, i);
        const char *status = json_object_get_string_member(o, "status");
        if (g_strcmp0(json_object_get_string_member(o, "name"), "good") == 0) {
            assert_string_equal(status, "loaded");
            continue;
        }
        assert_string_equal(status, "refused");
        assert_non_null(strstr(json_object_get_string_member(o, "reason"), "truncated ELF file"));
        refused++;
    }
    assert_int_equal(refused, G_N_ELEMENTS(cases));
    json_node_unref(json);
    assert_true(ddm_loader_load_all(f->mon.registry, f->mon.config, NULL));
    ddm_plugin *p = find_by_path(f->mon.registry, intact);
    assert_non_null(p);
    assert_int_equal(p->status, DDM_PLUGIN_LOADED);
}

static void test_loader_search_path_order(void **state)
{
    Fixture *f = *state;
    DdmConfig *c = f->mon.config;
    g_ptr_array_add(c->plugin_dirs, g_strdup("/d/one"));
    g_ptr_array_add(c->plugin_dirs, g_strdup("/d/two"));
    g_setenv("DDMON_PLUGIN_PATH", "/e/one::/e/two:/d/one", TRUE);
    g_free(c->installed_plugin_dir);
    c->installed_plugin_dir = g_strdup("/inst");
    g_auto(GStrv) path = ddm_loader_search_path(c);
    g_autofree char *joined = g_strjoinv(":", path);
    assert_string_equal(joined, "/d/one:/d/two:/e/one:/e/two:/inst");
    c->use_env_plugin_path = FALSE;
    g_auto(GStrv) noenv = ddm_loader_search_path(c);
    g_autofree char *joined2 = g_strjoinv(":", noenv);
    assert_string_equal(joined2, "/d/one:/d/two:/inst");
}

static ddm_plugin *find_by_path(DdmRegistry *reg, const char *path)
{
    GPtrArray *all = ddm_registry_plugins(reg);
    for (guint i = 0; i < all->len; i++) {
        ddm_plugin *p = g_ptr_array_index(all, i);
        if (g_strcmp0(p->path, path) == 0)
            return p;
    }
    return NULL;
}

static void test_loader_first_file_wins(void **state)
{
    Fixture *f = *state;
    DdmConfig *c = f->mon.config;
    g_autofree char *cli = g_build_filename(f->tmp, "cli", NULL);
    g_autofree char *env = g_build_filename(f->tmp, "env", NULL);
    g_autofree char *inst = g_build_filename(f->tmp, "inst", NULL);
    g_autofree char *a = copy_plugin(f, env, "good");
    g_autofree char *b = copy_plugin(f, inst, "good");
    g_autofree char *x = copy_plugin(f, inst, "init-fails");
    g_mkdir_with_parents(cli, 0755);
    g_ptr_array_add(c->plugin_dirs, g_strdup(cli));
    g_setenv("DDMON_PLUGIN_PATH", env, TRUE);
    g_free(c->installed_plugin_dir);
    c->installed_plugin_dir = g_strdup(inst);

    GError *err = NULL;
    assert_true(ddm_loader_load_all(f->mon.registry, c, &err)); /* init-fails is optional */
    assert_null(err);
    ddm_plugin *pa = find_by_path(f->mon.registry, a);
    ddm_plugin *pb = find_by_path(f->mon.registry, b);
    ddm_plugin *px = find_by_path(f->mon.registry, x);
    assert_non_null(pa);
    assert_non_null(pb);
    assert_non_null(px);
    assert_int_equal(pa->status, DDM_PLUGIN_LOADED);
    assert_int_equal(pb->status, DDM_PLUGIN_DISABLED);
    g_autofree char *shadow = g_strdup_printf("shadowed by %s", a);
    assert_string_equal(pb->reason, shadow);
    assert_int_equal(px->status, DDM_PLUGIN_REFUSED);
    assert_int_equal(count_logs("W", "plugin init-fails refused"), 1);
    assert_ptr_equal(ddm_registry_find_plugin(f->mon.registry, "good"), pa);
}

static void test_loader_env_ignored_when_disabled(void **state)
{
    Fixture *f = *state;
    DdmConfig *c = f->mon.config;
    g_autofree char *env = g_build_filename(f->tmp, "env", NULL);
    g_free(copy_plugin(f, env, "good"));
    g_setenv("DDMON_PLUGIN_PATH", env, TRUE);
    c->use_env_plugin_path = FALSE;
    assert_true(ddm_loader_load_all(f->mon.registry, c, NULL));
    assert_null(ddm_registry_find_plugin(f->mon.registry, "good"));
}

static void test_loader_required_and_disabled(void **state)
{
    Fixture *f = *state;
    DdmConfig *c = f->mon.config;
    g_autofree char *dir = g_build_filename(f->tmp, "p", NULL);
    g_free(copy_plugin(f, dir, "good"));
    g_free(copy_plugin(f, dir, "init-fails"));
    g_free(copy_plugin(f, dir, "dup-chunk"));
    g_ptr_array_add(c->plugin_dirs, g_strdup(dir));

    /* --plugins=good,missing: good loads, the others are left out, missing stops startup. */
    g_ptr_array_add(c->plugins_only, g_strdup("good"));
    g_ptr_array_add(c->plugins_only, g_strdup("missing"));
    GError *err = NULL;
    assert_false(ddm_loader_load_all(f->mon.registry, c, &err));
    assert_non_null(err);
    assert_int_equal(err->code, DDM_LOADER_ERROR_NOT_FOUND);
    assert_non_null(strstr(err->message, "required plugin missing was not found"));
    g_clear_error(&err);
    assert_int_equal(ddm_registry_find_plugin(f->mon.registry, "good")->status,
                     DDM_PLUGIN_LOADED);
    ddm_plugin *pd = ddm_registry_find_plugin(f->mon.registry, "dup-chunk");
    assert_int_equal(pd->status, DDM_PLUGIN_DISABLED);
    assert_string_equal(pd->reason, "not named in --plugins");
    ddm_plugin *pm = ddm_registry_find_plugin(f->mon.registry, "missing");
    assert_int_equal(pm->status, DDM_PLUGIN_REFUSED);
    assert_true(pm->required);
    ddm_registry_free(f->mon.registry);

    /* --plugins=init-fails: a named plugin whose init fails stops startup, naming it. */
    f->mon.registry = ddm_registry_new(f->mon.monitor, f->mon.views, f->mon.config);
    g_ptr_array_set_size(c->plugins_only, 0);
    g_ptr_array_add(c->plugins_only, g_strdup("init-fails"));
    assert_false(ddm_loader_load_all(f->mon.registry, c, &err));
    assert_int_equal(err->code, DDM_LOADER_ERROR_INIT_FAILED);
    assert_true(g_str_has_prefix(err->message, "required plugin init-fails: "));
    g_clear_error(&err);
    ddm_registry_free(f->mon.registry);

    /* No --plugins, --disable-plugin=dup-chunk: init-fails is optional now. */
    f->mon.registry = ddm_registry_new(f->mon.monitor, f->mon.views, f->mon.config);
    g_ptr_array_set_size(c->plugins_only, 0);
    g_ptr_array_add(c->plugins_disabled, g_strdup("dup-chunk"));
    assert_true(ddm_loader_load_all(f->mon.registry, c, &err));
    assert_null(err);
    pd = ddm_registry_find_plugin(f->mon.registry, "dup-chunk");
    assert_int_equal(pd->status, DDM_PLUGIN_DISABLED);
    assert_string_equal(pd->reason, "disabled by --disable-plugin");
    assert_null(pd->dl);
    assert_int_equal(ddm_registry_find_plugin(f->mon.registry, "good")->status,
                     DDM_PLUGIN_LOADED);
    assert_int_equal(ddm_registry_find_plugin(f->mon.registry, "init-fails")->status,
                     DDM_PLUGIN_REFUSED);
}

static void test_loader_chunks_all_disabled_notice(void **state)
{
    Fixture *f = *state;
    DdmConfig *c = f->mon.config;
    g_autofree char *dir = g_build_filename(f->tmp, "p", NULL);
    g_free(copy_plugin(f, dir, "good"));
    g_ptr_array_add(c->plugin_dirs, g_strdup(dir));
    c->chunks = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(c->chunks, g_strdup("THCR"));
    assert_true(ddm_loader_load_all(f->mon.registry, c, NULL));
    assert_int_equal(count_logs("M", "plugin good: all its chunk types are disabled (--chunks); "
                                     "it stays idle"),
                     1);
}

static void test_loader_check_file(void **state)
{
    Fixture *f = *state;
    g_autofree char *good = test_plugin(f, "good");
    g_autoptr(GString) report = g_string_new(NULL);
    GError *err = NULL;
    assert_true(ddm_loader_check_file(good, report, &err));
    assert_null(err);
    assert_non_null(strstr(report->str, "name:     good"));
    /* init does not run: what it registers is not known (--list-plugins) */
    assert_null(strstr(report->str, "chunks:"));
    assert_null(strstr(report->str, "commands:"));
    assert_non_null(strstr(report->str, "result:   OK (descriptor read from the file; no plugin "
                                        "code ran"));

    g_string_truncate(report, 0);
    g_autofree char *major = test_plugin(f, "abi-other-major");
    assert_false(ddm_loader_check_file(major, report, &err));
    assert_int_equal(err->code, DDM_LOADER_ERROR_ABI_MISMATCH);
    g_clear_error(&err);
    assert_non_null(strstr(report->str, "result:   REFUSED: plugin wants ABI"));
    assert_non_null(strstr(report->str, "ABI:      2.0 (core "));

    /* The descriptor checks are the loader's own, read from the file. */
    static const struct {
        const char *name;
        int code;
        const char *needle;
    } refused[] = {
        {"bad-magic", DDM_LOADER_ERROR_BAD_DESCRIPTOR, "bad descriptor magic 0xdeadbeef"},
        {"abi-newer-minor", DDM_LOADER_ERROR_ABI_MISMATCH, "plugin wants ABI"},
        {"no-desc", DDM_LOADER_ERROR_NOT_A_PLUGIN, "exports no ddm_plugin_descriptor symbol"},
        {"name-mismatch", DDM_LOADER_ERROR_BAD_DESCRIPTOR,
         "descriptor name 'other-name' does not match the file name name-mismatch.so"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(refused); i++) {
        g_autofree char *path = test_plugin(f, refused[i].name);
        assert_false(ddm_loader_check_file(path, NULL, &err));
        if (!g_error_matches(err, DDM_LOADER_ERROR, refused[i].code) ||
            !strstr(err->message, refused[i].needle))
            fail_msg("%s: '%s'", refused[i].name, err->message);
        g_clear_error(&err);
    }
    /* A failing init is not run, so the file itself is fine. */
    g_autofree char *init_fails = test_plugin(f, "init-fails");
    assert_true(ddm_loader_check_file(init_fails, NULL, NULL));

    /* A relative path works like an absolute one. */
    g_autofree char *cwd = g_get_current_dir();
    assert_int_equal(chdir(f->plugin_dir), 0);
    gboolean ok = ddm_loader_check_file("good.so", NULL, NULL);
    assert_int_equal(chdir(cwd), 0);
    assert_true(ok);
}

/* --check-plugin runs no plugin code: ctor-marker's ELF constructor and
 * init each create a file, and neither appears, whether the file passes or
 * is refused (a copy under another name). Loading it creates both. */
static void test_loader_check_file_runs_nothing(void **state)
{
    Fixture *f = *state;
    g_autofree char *ctor = g_build_filename(f->tmp, "ctor-ran", NULL);
    g_autofree char *init = g_build_filename(f->tmp, "init-ran", NULL);
    g_setenv("DDM_TEST_CTOR_MARKER", ctor, TRUE);
    g_setenv("DDM_TEST_INIT_MARKER", init, TRUE);
    g_autofree char *dir = g_build_filename(f->tmp, "cm", NULL);
    g_autofree char *good = copy_plugin(f, dir, "ctor-marker");
    g_autofree char *renamed = g_build_filename(dir, "renamed.so", NULL);
    assert_int_equal(link(good, renamed), 0);

    g_autoptr(GString) report = g_string_new(NULL);
    GError *err = NULL;
    assert_true(ddm_loader_check_file(good, report, &err));
    assert_null(err);
    g_autofree char *abi = g_strdup_printf("ABI:      %d.%d (core %d.%d)", DDM_ABI_MAJOR,
                                           DDM_ABI_MINOR, DDM_ABI_MAJOR, DDM_ABI_MINOR);
    if (!strstr(report->str, "name:     ctor-marker\nversion:  2.5\nlicense:  Apache-2.0\n"
                             "summary:  marks what ran\n") ||
        !strstr(report->str, abi))
        fail_msg("report:\n%s", report->str);
    assert_false(g_file_test(ctor, G_FILE_TEST_EXISTS));
    assert_false(g_file_test(init, G_FILE_TEST_EXISTS));

    g_string_truncate(report, 0);
    assert_false(ddm_loader_check_file(renamed, report, &err));
    assert_true(g_error_matches(err, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR));
    g_clear_error(&err);
    assert_non_null(strstr(report->str, "name:     ctor-marker"));
    assert_false(g_file_test(ctor, G_FILE_TEST_EXISTS));
    assert_false(g_file_test(init, G_FILE_TEST_EXISTS));

    /* Loading it is what runs its code (the marker files prove they work). */
    assert_true(ddm_loader_load_file(f->mon.registry, good, NULL, NULL));
    assert_true(g_file_test(ctor, G_FILE_TEST_EXISTS));
    assert_true(g_file_test(init, G_FILE_TEST_EXISTS));
    g_unsetenv("DDM_TEST_CTOR_MARKER");
    g_unsetenv("DDM_TEST_INIT_MARKER");
}

/* ------------------------------------------------ the ELF descriptor reader */

/* A test plugin's bytes (transfer full, g_free). */
static uint8_t *plugin_bytes(Fixture *f, const char *name, gsize *len)
{
    g_autofree char *path = test_plugin(f, name);
    gchar *contents;
    assert_true(g_file_get_contents(path, &contents, len, NULL));
    return (uint8_t *)contents;
}

/* Read @len bytes of @b through a copy of exactly that size (so ASan sees
 * any read past it). */
static gboolean read_desc(const uint8_t *b, gsize len, DdmElfDescriptor *d, GError **error)
{
    uint8_t *copy = g_memdup2(b, len ? len : 1);
    gboolean ok = ddm_elf_read_descriptor(len ? copy : NULL, len, d, error);
    g_free(copy);
    return ok;
}

static void expect_elf_error(const uint8_t *b, gsize len, int code, const char *needle)
{
    DdmElfDescriptor d;
    GError *err = NULL;
    gboolean ok = read_desc(b, len, &d, &err);
    ddm_elf_descriptor_clear(&d);
    if (ok || !g_error_matches(err, DDM_ELF_ERROR, code) || !strstr(err->message, needle))
        fail_msg("expected error %d '%s', got %d: %s", code, needle, ok,
                 err ? err->message : "(none)");
    g_clear_error(&err);
}

#if UINTPTR_MAX > 0xffffffffu && G_BYTE_ORDER == G_LITTLE_ENDIAN
#include <elf.h>
#define HAVE_ELF64_TESTS 1

/* The ELF structure at @off in @b, a heap copy of a test plugin: malloc's
 * alignment, and ELF64 places its headers, symbols and relocations at
 * multiples of 8. Checked here, not assumed through a cast. */
static void *elf_at(uint8_t *b, guint64 off)
{
    assert_int_equal(((uintptr_t)b + off) % 8, 0);
    return b + off;
}

/* The section header table of @b. */
static Elf64_Shdr *section_headers(uint8_t *b)
{
    Elf64_Ehdr *eh = elf_at(b, 0);
    return elf_at(b, eh->e_shoff);
}

/* The section of type @type in @b, or NULL. */
static Elf64_Shdr *find_section(uint8_t *b, uint32_t type)
{
    Elf64_Ehdr *eh = elf_at(b, 0);
    Elf64_Shdr *sh = section_headers(b);
    for (unsigned i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type == type)
            return &sh[i];
    return NULL;
}

/* The descriptor's .dynsym entry. */
static Elf64_Sym *desc_sym(uint8_t *b)
{
    Elf64_Shdr *ds = find_section(b, SHT_DYNSYM);
    Elf64_Shdr *str = section_headers(b) + ds->sh_link;
    Elf64_Sym *s = elf_at(b, ds->sh_offset);
    for (gsize i = 0; i < ds->sh_size / sizeof *s; i++)
        if (s[i].st_shndx != SHN_UNDEF &&
            strcmp((char *)b + str->sh_offset + s[i].st_name, "ddm_plugin_descriptor") == 0)
            return &s[i];
    fail_msg("no descriptor symbol");
    return NULL;
}

/* The file offset of the descriptor's bytes, through its section. */
static gsize desc_file_offset(uint8_t *b)
{
    Elf64_Addr v = desc_sym(b)->st_value;
    Elf64_Ehdr *eh = elf_at(b, 0);
    Elf64_Shdr *sh = section_headers(b);
    for (unsigned i = 1; i < eh->e_shnum; i++)
        if (sh[i].sh_type != SHT_NOBITS && sh[i].sh_addr <= v && v - sh[i].sh_addr < sh[i].sh_size)
            return (gsize)(sh[i].sh_offset + (v - sh[i].sh_addr));
    fail_msg("the descriptor is in no section");
    return 0;
}

/* The RELA relocation of the descriptor's pointer @k (0: name), or NULL. */
static Elf64_Rela *desc_rela(uint8_t *b, unsigned k)
{
    Elf64_Addr at = desc_sym(b)->st_value + offsetof(ddm_plugin_desc, name) + 8 * k;
    Elf64_Shdr *rs = find_section(b, SHT_RELA);
    Elf64_Rela *r = elf_at(b, rs->sh_offset);
    for (gsize i = 0; i < rs->sh_size / sizeof *r; i++)
        if (r[i].r_offset == at)
            return &r[i];
    return NULL;
}

/* The undefined "ddm_daemon_views" renamed LONG_CORE_NAME: written at
 * .dynstr offset 1 (over other names: the check refuses before dlopen)
 * and the symbol pointed there; other symbols named from those bytes get
 * the empty name. */
#define LONG_CORE_NAME                                                                  \
    "ddm_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 64 bytes */ \
    "_and_its_tail"
static void lengthen_core_name(char *bytes, gsize len)
{
    uint8_t *b = (uint8_t *)bytes;
    Elf64_Shdr *ds = find_section(b, SHT_DYNSYM);
    assert_non_null(ds);
    Elf64_Shdr *str = section_headers(b) + ds->sh_link;
    assert_true(str->sh_offset + str->sh_size <= len);
    assert_true(str->sh_size > sizeof LONG_CORE_NAME + 1);
    Elf64_Sym *s = elf_at(b, ds->sh_offset);
    guint renamed = 0;
    for (gsize i = 0; i < ds->sh_size / sizeof *s; i++) {
        if (s[i].st_shndx == SHN_UNDEF &&
            strcmp((char *)b + str->sh_offset + s[i].st_name, "ddm_daemon_views") == 0) {
            s[i].st_name = 1;
            renamed++;
        } else if (s[i].st_name >= 1 && s[i].st_name <= sizeof LONG_CORE_NAME) {
            s[i].st_name = 0;
        }
    }
    assert_int_equal(renamed, 1);
    memcpy(b + str->sh_offset + 1, LONG_CORE_NAME, sizeof LONG_CORE_NAME);
}

/* A core name longer than a message quotes is cut at 64 bytes, and says so. */
static void test_loader_core_ref_long_name(void **state)
{
    Fixture *f = *state;
    G_STATIC_ASSERT(sizeof LONG_CORE_NAME - 1 > 64);
    g_autofree char *path = copy_patched(f, "long", "core-ref", lengthen_core_name);
    expect_refused(f, path, DDM_LOADER_ERROR_ABI_MISMATCH,
                   "calls 1 function of the ddmon core (ddm_"
                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...), which",
                   "long/core-ref.so");
    /* a name of exactly 64 bytes is whole: no marker */
    GError *err = NULL;
    g_autofree char *dir = g_build_filename(f->tmp, "long", NULL);
    g_autofree char *again = g_build_filename(dir, "core-ref.so", NULL);
    gchar *bytes;
    gsize len;
    assert_true(g_file_get_contents(again, &bytes, &len, NULL));
    char *tail = memmem(bytes, len, "_and_its_tail", sizeof "_and_its_tail");
    assert_non_null(tail);
    tail[0] = '\0';
    assert_true(g_file_set_contents(again, bytes, (gssize)len, NULL));
    g_free(bytes);
    assert_false(ddm_loader_check_file(again, NULL, &err));
    assert_non_null(strstr(err->message, "xxxx), which"));
    assert_null(strstr(err->message, "xxxx..."));
    g_clear_error(&err);
}
#endif

/* The reader on every test plugin: the same answers dlopen gives. */
static void test_elfdesc_plugins(void **state)
{
    Fixture *f = *state;
    gsize len;
    g_autofree uint8_t *b = plugin_bytes(f, "ctor-marker", &len);
    DdmElfDescriptor d;
    GError *err = NULL;
    assert_true(read_desc(b, len, &d, &err));
    assert_int_equal(d.magic, DDM_PLUGIN_MAGIC);
    assert_int_equal(d.abi_major, DDM_ABI_MAJOR);
    assert_int_equal(d.abi_minor, DDM_ABI_MINOR);
    assert_int_equal(d.desc_size, sizeof(ddm_plugin_desc));
    assert_true(d.has_fields);
    assert_string_equal(d.name, "ctor-marker");
    assert_string_equal(d.version, "2.5");
    assert_string_equal(d.license, "Apache-2.0");
    assert_string_equal(d.summary, "marks what ran");
    assert_true(d.has_init);
    ddm_elf_descriptor_clear(&d);

    static const char *const names[] = {"good", "bad-magic", "abi-other-major",
                                        "abi-newer-minor", "init-fails", "dup-chunk",
                                        "name-mismatch", "hello", "host-has"};
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *path = test_plugin(f, names[i]);
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        assert_non_null(dl);
        const ddm_plugin_desc *live = dlsym(dl, DDM_PLUGIN_SYMBOL);
        assert_non_null(live);
        g_autofree uint8_t *pb = plugin_bytes(f, names[i], &len);
        if (!read_desc(pb, len, &d, &err))
            fail_msg("%s: %s", names[i], err->message);
        assert_int_equal(d.magic, live->magic);
        assert_int_equal(d.abi_major, live->abi_major);
        assert_int_equal(d.abi_minor, live->abi_minor);
        assert_int_equal(d.desc_size, live->desc_size);
        if (live->magic == DDM_PLUGIN_MAGIC && live->desc_size >= 64) {
            assert_true(d.has_fields);
            assert_string_equal(d.name, live->name);
            assert_string_equal(d.version, live->version);
            assert_int_equal(d.has_init, live->init != NULL);
        } else {
            assert_false(d.has_fields);
        }
        ddm_elf_descriptor_clear(&d);
        dlclose(dl);
    }
    g_autofree uint8_t *nb = plugin_bytes(f, "no-desc", &len);
    expect_elf_error(nb, len, DDM_ELF_ERROR_NO_DESCRIPTOR, "ddm_plugin_descriptor");
}

/* Hostile files: every prefix of a plugin, and plugins with offsets,
 * addresses and counts that point past the file. Errors, never a read
 * past the buffer (ASan). */
static void test_elfdesc_hostile(void **state)
{
    Fixture *f = *state;
    gsize len;
    g_autofree uint8_t *good = plugin_bytes(f, "ctor-marker", &len);
    DdmElfDescriptor d;
    GError *err = NULL;
    /* every truncation: the section headers come last, so all fail */
    for (gsize n = 0; n < len; n++) {
        if (read_desc(good, n, &d, &err))
            fail_msg("a file cut to %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " bytes was read",
                     n, len);
        g_clear_error(&err);
        ddm_elf_descriptor_clear(&d);
    }
    expect_elf_error(good, 63, DDM_ELF_ERROR_MALFORMED, "no whole ELF header");
#ifdef HAVE_ELF64_TESTS
    g_autofree uint8_t *b = g_memdup2(good, len);
#define RESET() memcpy(b, good, len)
    Elf64_Ehdr *eh = elf_at(b, 0);

    RESET();
    eh->e_ident[EI_CLASS] = ELFCLASS32;
    expect_elf_error(b, len, DDM_ELF_ERROR_UNSUPPORTED, "only 64-bit ELF");
    RESET();
    eh->e_ident[EI_DATA] = ELFDATA2MSB;
    expect_elf_error(b, len, DDM_ELF_ERROR_UNSUPPORTED, "only little-endian");
    RESET();
    eh->e_shoff = 0;
    expect_elf_error(b, len, DDM_ELF_ERROR_UNSUPPORTED, "no section headers");
    /* huge counts and offsets */
    RESET();
    eh->e_phnum = 0xffff;
    expect_elf_error(b, len, DDM_ELF_ERROR_MALFORMED, "program headers");
    RESET();
    eh->e_shnum = 0xffff;
    expect_elf_error(b, len, DDM_ELF_ERROR_MALFORMED, "section headers");
    RESET();
    eh->e_shoff = UINT64_MAX - 10;
    expect_elf_error(b, len, DDM_ELF_ERROR_MALFORMED, "section headers");
    RESET();
    find_section(b, SHT_DYNSYM)->sh_size = UINT64_MAX / 2;
    expect_elf_error(b, len, DDM_ELF_ERROR_MALFORMED, "ends past the end of the file");
    RESET();
    find_section(b, SHT_RELA)->sh_offset = len - 8;
    expect_elf_error(b, len, DDM_ELF_ERROR_MALFORMED, "ends past the end of the file");
    RESET();
    find_section(b, SHT_DYNSYM)->sh_link = 0xffff;
    expect_elf_error(b, len, DDM_ELF_ERROR_MALFORMED, "string table");
    /* the symbol past the file, or in no segment's file bytes */
    RESET();
    desc_sym(b)->st_value = (Elf64_Addr)len * 16;
    expect_elf_error(b, len, DDM_ELF_ERROR_MALFORMED, "does not lie in the file");
    RESET();
    desc_sym(b)->st_value = UINT64_MAX - 4;
    expect_elf_error(b, len, DDM_ELF_ERROR_MALFORMED, "does not lie in the file");
    /* the name's relocation pointing past the file */
    RESET();
    desc_rela(b, 0)->r_addend = (Elf64_Sxword)len * 16;
    expect_elf_error(b, len, DDM_ELF_ERROR_MALFORMED, "the descriptor's name points to");
    RESET();
    desc_rela(b, 3)->r_addend = -1;
    expect_elf_error(b, len, DDM_ELF_ERROR_MALFORMED, "the descriptor's summary points to");
    /* a symbolic relocation naming a symbol past .dynsym */
    RESET();
    desc_rela(b, 1)->r_info = ELF64_R_INFO(0x7fffffffu, R_X86_64_64);
    if (eh->e_machine == EM_X86_64)
        expect_elf_error(b, len, DDM_ELF_ERROR_MALFORMED, "names symbol");
    /* a relocation type the reader does not know */
    RESET();
    desc_rela(b, 1)->r_info = ELF64_R_INFO(0, 0x7777);
    expect_elf_error(b, len, DDM_ELF_ERROR_UNSUPPORTED, "relocation type 30583");
    /* the name's relocation moved away: the stored value is the name (GNU
     * ld stores the addend in place too; here it is made NULL) */
    RESET();
    desc_rela(b, 0)->r_offset = UINT64_MAX;
    assert_true(read_desc(b, len, &d, &err));
    assert_string_equal(d.name, "ctor-marker");
    ddm_elf_descriptor_clear(&d);
    uint64_t zero = 0;
    memcpy(b + desc_file_offset(b) + offsetof(ddm_plugin_desc, name), &zero, sizeof zero);
    assert_true(read_desc(b, len, &d, &err));
    assert_null(d.name);
    assert_string_equal(d.version, "2.5");
    ddm_elf_descriptor_clear(&d);
#undef RESET
#endif
}

static void test_loader_list_plugins(void **state)
{
    Fixture *f = *state;
    DdmConfig *c = f->mon.config;
    g_autofree char *dir = g_build_filename(f->tmp, "p", NULL);
    g_free(copy_plugin(f, dir, "good"));
    g_free(copy_plugin(f, dir, "abi-other-major"));
    g_ptr_array_add(c->plugin_dirs, g_strdup(dir));
    JsonNode *json = NULL;
    assert_true(ddm_loader_list_plugins(c, &json, NULL));
    JsonArray *arr = json_node_get_array(json);
    assert_int_equal(json_array_get_length(arr), 2);
    JsonObject *o0 = json_array_get_object_element(arr, 0);
    JsonObject *o1 = json_array_get_object_element(arr, 1);
    assert_string_equal(json_object_get_string_member(o0, "name"), "abi-other-major");
    assert_string_equal(json_object_get_string_member(o0, "status"), "refused");
    assert_string_equal(json_object_get_string_member(o0, "abi"), "2.0");
    assert_non_null(strstr(json_object_get_string_member(o0, "reason"), "plugin wants ABI 2.0"));
    assert_string_equal(json_object_get_string_member(o1, "name"), "good");
    assert_string_equal(json_object_get_string_member(o1, "status"), "loaded");
    assert_string_equal(json_object_get_string_member(o1, "version"), "1.2.3");
    g_autofree char *text = ddm_registry_plugins_json_to_text(json);
    assert_non_null(strstr(text, "NAME"));
    assert_non_null(strstr(text, "why: plugin wants ABI 2.0"));
    json_node_unref(json);
}

/* ------------------------------------------- trusted plugin directories */

/* The uid and gid of "nobody": someone who is neither us nor root. */
/* Make directory @path with exactly @mode, owned by @uid (-1: keep). */
static void make_dir(const char *path, mode_t mode, uid_t uid)
{
    assert_int_equal(g_mkdir_with_parents(path, 0700), 0);
    assert_int_equal(chmod(path, mode), 0);
    if (uid != (uid_t)-1)
        assert_int_equal(chown(path, uid, (gid_t)-1), 0);
    share_group(path);
}

typedef struct DirCase {
    const char *what;
    mode_t parent_mode;  /* of TMP/parent */
    gboolean parent_other; /* TMP/parent owned by nobody */
    mode_t dir_mode;     /* of TMP/parent/plugins, the search-path directory */
    gboolean dir_other;  /* ... owned by nobody */
    gboolean via_symlink; /* searched as TMP/link -> TMP/parent/plugins */
    gboolean scan_ok;    /* good.so in it loads from the search path */
    gboolean file_ok;    /* ddm_loader_load_file(TMP/parent/plugins/good.so) loads */
    const char *needle;  /* in the refusal; {dir}, {parent}, {uid} (nobody's) filled in */
    gboolean private_group; /* the plugin dir's group is root's private group (needs root) */
} DirCase;

static const DirCase dir_cases[] = {
    {"private 0700", 0700, FALSE, 0700, FALSE, FALSE, TRUE, TRUE, NULL},
    {"0755", 0755, FALSE, 0755, FALSE, FALSE, TRUE, TRUE, NULL},
    {"world-writable 0777", 0755, FALSE, 0777, FALSE, FALSE, FALSE, FALSE,
     "plugin directory {dir} is writable by others (mode 0777); chmod go-w {dir}"},
    {"others-writable 0757", 0755, FALSE, 0757, FALSE, FALSE, FALSE, FALSE,
     "plugin directory {dir} is writable by others (mode 0757); chmod go-w {dir}"},
    {"group-writable 0775", 0755, FALSE, 0775, FALSE, FALSE, FALSE, FALSE,
     "plugin directory {dir} is writable by its group (mode 0775); chmod go-w {dir}"},
    /* Debian's user private groups (umask 002): the group is the owner alone. */
    {"group-writable 0775, owner's private group", 0755, FALSE, 0775, FALSE, FALSE, TRUE, TRUE, NULL,
     TRUE},
    /* Others cannot replace good.so in a sticky dir, but can add evil.so. */
    {"sticky 1777", 0755, FALSE, 01777, FALSE, FALSE, FALSE, TRUE,
     "plugin directory {dir} is a shared directory (mode 1777): others can add files to it"},
    {"owned by nobody", 0755, FALSE, 0755, TRUE, FALSE, FALSE, FALSE,
     "plugin directory {dir} is owned by uid {uid}, neither you"},
    {"parent 0777", 0777, FALSE, 0755, FALSE, FALSE, FALSE, FALSE,
     "plugin directory {dir} is inside {parent}, which is writable by others (mode 0777); "
     "chmod go-w {parent}"},
    {"parent group-writable 0770", 0770, FALSE, 0700, FALSE, FALSE, FALSE, FALSE,
     "is inside {parent}, which is writable by its group (mode 0770)"},
    {"parent sticky 1777 (like /tmp)", 01777, FALSE, 0755, FALSE, FALSE, TRUE, TRUE, NULL},
    {"parent owned by nobody", 0755, TRUE, 0755, FALSE, FALSE, FALSE, FALSE,
     "plugin directory {dir} is inside {parent}, which is owned by uid {uid}"},
    {"symlink to a 0777 dir", 0755, FALSE, 0777, FALSE, TRUE, FALSE, FALSE,
     "plugin directory {dir} is writable by others (mode 0777)"},
    {"symlink to a 0755 dir", 0755, FALSE, 0755, FALSE, TRUE, TRUE, TRUE, NULL},
};

static char *replace_all(char *s, const char *key, const char *value)
{
    g_auto(GStrv) parts = g_strsplit(s, key, -1);
    g_free(s);
    return g_strjoinv(value, parts);
}

static char *expected_refusal(const DirCase *c, const char *dir, const char *parent)
{
    g_autofree char *uid = g_strdup_printf("%u", (unsigned)other_uid());
    char *s = replace_all(g_strdup(c->needle), "{dir}", dir);
    s = replace_all(s, "{parent}", parent);
    return replace_all(s, "{uid}", uid);
}

static void test_loader_unsafe_dirs(void **state)
{
    Fixture *f = *state;
    for (gsize i = 0; i < G_N_ELEMENTS(dir_cases); i++) {
        const DirCase *c = &dir_cases[i];
        if ((c->dir_other || c->parent_other || (c->dir_mode & S_IWGRP) || (c->parent_mode & S_IWGRP)) &&
            !can_chown()) {
            print_message("# skipped '%s': needs root to chown\n", c->what);
            continue;
        }
        g_autofree char *base = g_strdup_printf("%s/case%zu", f->tmp, i);
        g_autofree char *parent = g_build_filename(base, "parent", NULL);
        g_autofree char *dir = g_build_filename(parent, "plugins", NULL);
        g_autofree char *link = g_build_filename(base, "link", NULL);
        make_dir(base, 0700, (uid_t)-1);
        make_dir(dir, 0755, (uid_t)-1);
        g_autofree char *good = copy_plugin(f, dir, "good");
        make_dir(dir, c->dir_mode, c->dir_other ? other_uid() : (uid_t)-1);
        make_dir(parent, c->parent_mode, c->parent_other ? other_uid() : (uid_t)-1);
        if (c->private_group) /* root's group 0: root is its only member */
            assert_int_equal(chown(dir, (uid_t)-1, 0), 0);
        if (c->via_symlink)
            assert_int_equal(symlink(dir, link), 0);
        const char *searched = c->via_symlink ? link : dir;
        g_autofree char *want = c->needle ? expected_refusal(c, dir, parent) : NULL;

        /* ddm_loader_check_dir */
        GError *err = NULL;
        gboolean ok = ddm_loader_check_dir(searched, &err);
        if (ok != c->scan_ok)
            fail_msg("%s: check_dir said %d (%s)", c->what, ok, err ? err->message : "");
        if (!ok) {
            assert_int_equal(err->code, DDM_LOADER_ERROR_UNSAFE);
            if (!strstr(err->message, want))
                fail_msg("%s: '%s' lacks '%s'", c->what, err->message, want);
        }
        g_clear_error(&err);

        /* The search path: skipped with one warning, good.so recorded as refused. */
        ddm_registry_free(f->mon.registry);
        f->mon.registry = ddm_registry_new(f->mon.monitor, f->mon.views, f->mon.config);
        g_ptr_array_set_size(f->mon.config->plugin_dirs, 0);
        g_ptr_array_add(f->mon.config->plugin_dirs, g_strdup(searched));
        g_ptr_array_set_size(logs, 0);
        assert_true(ddm_loader_load_all(f->mon.registry, f->mon.config, &err));
        ddm_plugin *p = ddm_registry_find_plugin(f->mon.registry, "good");
        assert_non_null(p);
        if (c->scan_ok) {
            if (p->status != DDM_PLUGIN_LOADED)
                fail_msg("%s: not loaded: %s", c->what, p->reason);
            assert_int_equal(count_logs("W", ""), 0);
        } else {
            assert_int_equal(p->status, DDM_PLUGIN_REFUSED);
            if (!strstr(p->reason, want))
                fail_msg("%s: reason '%s' lacks '%s'", c->what, p->reason, want);
            assert_null(p->dl);
            assert_int_equal(count_logs("W", want), 1);
            assert_int_equal(count_logs("W", "skipping it"), 1);
        }

        /* Named with --plugins: a refusal stops startup with the reason. */
        ddm_registry_free(f->mon.registry);
        f->mon.registry = ddm_registry_new(f->mon.monitor, f->mon.views, f->mon.config);
        g_ptr_array_add(f->mon.config->plugins_only, g_strdup("good"));
        ok = ddm_loader_load_all(f->mon.registry, f->mon.config, &err);
        g_ptr_array_set_size(f->mon.config->plugins_only, 0);
        assert_int_equal(ok, c->scan_ok);
        if (!ok) {
            assert_int_equal(err->code, DDM_LOADER_ERROR_UNSAFE);
            assert_true(g_str_has_prefix(err->message, "required plugin good: "));
            assert_non_null(strstr(err->message, want));
        }
        g_clear_error(&err);

        /* The file by name (--check-plugin): its directory may be sticky. */
        ddm_registry_free(f->mon.registry);
        f->mon.registry = ddm_registry_new(f->mon.monitor, f->mon.views, f->mon.config);
        g_autoptr(GString) report = g_string_new(NULL);
        ok = ddm_loader_check_file(good, report, &err);
        if (ok != c->file_ok)
            fail_msg("%s: check_file said %d (%s)", c->what, ok, report->str);
        if (!ok) {
            assert_int_equal(err->code, DDM_LOADER_ERROR_UNSAFE);
            const char *line = strstr(report->str, "result:   REFUSED: plugin directory ");
            if (!line || !strstr(line, want))
                fail_msg("%s: report lacks '%s':\n%s", c->what, want, report->str);
        }
        g_clear_error(&err);
    }
}

/* The first file of a name is refused: the next file of that name loads, a
 * warning names both, and the refused record says what loaded instead. */
typedef struct ShadowCase {
    const char *what;
    const char *first_plugin; /* copied as FIRST/good.so */
    mode_t first_file_mode;
    mode_t first_dir_mode;
    const char *needle; /* in the first record's reason */
} ShadowCase;

static const ShadowCase shadow_cases[] = {
    {"group-writable file", "good", 0664, 0755, "writable by group or others (mode 0664)"},
    {"ABI mismatch", "abi-other-major", 0644, 0755, "plugin wants ABI"},
    {"name mismatch", "name-mismatch", 0644, 0755, "does not match the file name good.so"},
    {"unsafe directory", "good", 0644, 0777, "writable by others (mode 0777)"},
};

static void test_loader_refused_does_not_shadow(void **state)
{
    Fixture *f = *state;
    DdmConfig *c = f->mon.config;
    for (gsize i = 0; i < G_N_ELEMENTS(shadow_cases); i++) {
        const ShadowCase *sc = &shadow_cases[i];
        g_autofree char *first = g_strdup_printf("%s/first%zu", f->tmp, i);
        g_autofree char *second = g_strdup_printf("%s/second%zu", f->tmp, i);
        g_autofree char *third = g_strdup_printf("%s/third%zu", f->tmp, i);
        g_autofree char *src = copy_plugin(f, first, sc->first_plugin);
        g_autofree char *bad = g_build_filename(first, "good.so", NULL);
        if (strcmp(sc->first_plugin, "good") != 0)
            assert_int_equal(rename(src, bad), 0);
        assert_int_equal(chmod(bad, sc->first_file_mode), 0);
        assert_int_equal(chmod(first, sc->first_dir_mode), 0);
        share_group(bad);
        g_autofree char *ok_file = copy_plugin(f, second, "good");
        g_autofree char *later = copy_plugin(f, third, "good");

        for (int named = 0; named <= 1; named++) {
            ddm_registry_free(f->mon.registry);
            f->mon.registry = ddm_registry_new(f->mon.monitor, f->mon.views, f->mon.config);
            g_ptr_array_set_size(c->plugin_dirs, 0);
            g_ptr_array_add(c->plugin_dirs, g_strdup(first));
            g_ptr_array_add(c->plugin_dirs, g_strdup(second));
            g_ptr_array_add(c->plugin_dirs, g_strdup(third));
            g_ptr_array_set_size(c->plugins_only, 0);
            if (named)
                g_ptr_array_add(c->plugins_only, g_strdup("good"));
            g_ptr_array_set_size(logs, 0);
            GError *err = NULL;
            if (!ddm_loader_load_all(f->mon.registry, c, &err))
                fail_msg("%s: load_all failed: %s", sc->what, err->message);
            ddm_plugin *pb = find_by_path(f->mon.registry, bad);
            ddm_plugin *pg = find_by_path(f->mon.registry, ok_file);
            ddm_plugin *pl = find_by_path(f->mon.registry, later);
            assert_non_null(pb);
            assert_non_null(pg);
            assert_non_null(pl);
            assert_int_equal(pb->status, DDM_PLUGIN_REFUSED);
            if (!strstr(pb->reason, sc->needle))
                fail_msg("%s: reason '%s' lacks '%s'", sc->what, pb->reason, sc->needle);
            g_autofree char *instead = g_strdup_printf("(%s loaded instead)", ok_file);
            assert_true(g_str_has_suffix(pb->reason, instead));
            if (pg->status != DDM_PLUGIN_LOADED)
                fail_msg("%s: second copy not loaded: %s", sc->what, pg->reason);
            assert_ptr_equal(ddm_registry_find_plugin(f->mon.registry, "good"), pg);
            assert_int_equal(pl->status, DDM_PLUGIN_DISABLED);
            g_autofree char *shadow = g_strdup_printf("shadowed by %s", ok_file);
            assert_string_equal(pl->reason, shadow);
            g_autofree char *warn = g_strdup_printf(
                "plugin good: loaded %s instead of %s, which was refused", ok_file, bad);
            assert_int_equal(count_logs("W", warn), 1);
            assert_int_equal(count_logs("W", sc->needle), 1); /* the refusal itself */
        }

        /* Without the good copies, the refusal stands (and fails --plugins). */
        ddm_registry_free(f->mon.registry);
        f->mon.registry = ddm_registry_new(f->mon.monitor, f->mon.views, f->mon.config);
        g_ptr_array_set_size(c->plugin_dirs, 0);
        g_ptr_array_add(c->plugin_dirs, g_strdup(first));
        GError *err = NULL;
        assert_false(ddm_loader_load_all(f->mon.registry, c, &err));
        assert_true(g_str_has_prefix(err->message, "required plugin good: "));
        assert_non_null(strstr(err->message, sc->needle));
        g_clear_error(&err);
        g_ptr_array_set_size(c->plugins_only, 0);
        ddm_plugin *p = ddm_registry_find_plugin(f->mon.registry, "good");
        assert_int_equal(p->status, DDM_PLUGIN_REFUSED);
        assert_null(strstr(p->reason, "instead"));
    }
}

static void test_loader_foreign_owned_file(void **state)
{
    Fixture *f = *state;
    if (!can_chown()) {
        print_message("# skipped: needs root to chown\n");
        return;
    }
    g_autofree char *path = copy_plugin(f, f->tmp, "good");
    assert_int_equal(chown(path, other_uid(), (gid_t)-1), 0);
    g_autofree char *want = g_strdup_printf("is owned by uid %u, neither you (uid 0) nor root",
                                            (unsigned)other_uid());
    expect_refused(f, path, DDM_LOADER_ERROR_UNSAFE, want, path);
    assert_int_equal(chown(path, 0, (gid_t)-1), 0);
    assert_true(ddm_loader_load_file(f->mon.registry, path, NULL, NULL));
}

/* Plugins are dlopen()ed by their real path: sanitizer reports, gdb and
 * dladdr() name the file, also when the search path goes through a link. */
static void test_loader_loaded_by_real_path(void **state)
{
    Fixture *f = *state;
    g_autofree char *real_tmp = realpath(f->tmp, NULL);
    g_autofree char *real = g_build_filename(real_tmp, "real", NULL);
    g_autofree char *link = g_build_filename(f->tmp, "link", NULL);
    g_autofree char *copy = copy_plugin(f, real, "good");
    assert_int_equal(symlink(real, link), 0);
    g_autofree char *via_link = g_build_filename(link, "good.so", NULL);

    ddm_plugin *p = NULL;
    GError *err = NULL;
    if (!ddm_loader_load_file(f->mon.registry, via_link, &p, &err))
        fail_msg("refused: %s", err->message);
    assert_string_equal(p->path, via_link); /* what the user named */
    Dl_info info;
    assert_true(dladdr(p->desc, &info) != 0);
    assert_string_equal(info.dli_fname, copy);

    /* Opening the loaded file again gives its object; the next plugin its own. */
    void *again = NULL;
    assert_ptr_equal(ddm_loader_open(via_link, &again, NULL), p->desc);
    dlclose(again);
    g_autofree char *hello = test_plugin(f, "hello");
    ddm_plugin *h = NULL;
    if (!ddm_loader_load_file(f->mon.registry, hello, &h, &err))
        fail_msg("hello refused: %s", err->message);
    assert_string_equal(h->desc->name, "hello");
}

/* ------------------------------------------------ the SDK example plugin */

static struct {
    guint calls;
    ddm_cmd_status status;
    JsonNode *result;
} done;

static void hello_done(ddm_cmd_status status, const char *message, ddm_view *result, gpointer ud)
{
    done.calls++;
    done.status = status;
    if (done.result)
        json_node_unref(done.result);
    done.result = result ? ddm_view_to_json(result, FALSE) : NULL;
}

/* Field @key of a record view's JSON, as an integer (-1 if absent). */
static gint64 record_int(JsonNode *view, const char *key)
{
    JsonArray *fields = json_object_get_array_member(json_node_get_object(view), "fields");
    for (guint i = 0; fields && i < json_array_get_length(fields); i++) {
        JsonObject *fo = json_array_get_object_element(fields, i);
        if (g_strcmp0(json_object_get_string_member(fo, "key"), key) == 0)
            return json_object_get_int_member(fo, "value");
    }
    return -1;
}

/* A file directly under "/" (whose path splits into no components) is
 * refused for what it is, not by a crash walking the directories. */
static void test_loader_file_in_root(void **state)
{
    (void)state;
    GError *err = NULL;
    GString *report = g_string_new(NULL);
    assert_false(ddm_loader_check_file("/nonexistent-ddmon-plugin.so", report, &err));
    assert_non_null(err);
    assert_true(g_error_matches(err, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN));
    assert_non_null(strstr(report->str, "REFUSED"));
    g_clear_error(&err);
    assert_true(ddm_loader_check_dir("/", &err));
    assert_null(err);
    g_string_free(report, TRUE);
}

static void test_loader_hello_example(void **state)
{
    Fixture *f = *state;
    DdmRegistry *reg = f->mon.registry;
    g_hash_table_insert(f->mon.config->plugin_opts, g_strdup("hello.interval_ms"),
                        g_strdup("10"));
    g_autofree char *path = test_plugin(f, "hello");
    ddm_plugin *p = NULL;
    assert_true(ddm_loader_load_file(reg, path, &p, NULL));
    assert_string_equal(p->version, "1.0.0");

    DdmVm vm;
    memset(&vm, 0, sizeof vm);
    vm.magic = DDM_VM_MAGIC;
    vm.ref_count = 1;
    vm.monitor = f->mon.monitor;
    vm.state = DDM_VM_STATE_READY;
    vm.fd = -1;
    vm.pending = ddm_correlate_new(16);
    vm.info.size = sizeof vm.info;
    vm.info.key = "127.0.0.1:8001";
    vm.info.app_name = "com.example.app";
    vm.info.ddm = 1;
    g_hash_table_insert(f->mon.monitor->vms, (gpointer)vm.info.key, &vm);

    ddm_registry_vm_event(reg, &vm, DDM_VM_READY);
    ddm_view *view = ddm_views_lookup(f->mon.views, "hello", vm.info.key);
    assert_non_null(view);
    ddm_chunk_info ci = {DDM_CHUNK('X', 'Y', 'Z', 'W'), 1, DDM_ORIGIN_EVENT, 0};
    ddm_registry_dispatch(reg, &vm, &ci, (const uint8_t *)"abc", 3);
    ddm_registry_dispatch(reg, &vm, &ci, (const uint8_t *)"defgh", 5);

    const char *argv_vm[] = {"hello", "127.0.0.1:8001", NULL};
    assert_true(ddm_registry_run_command(reg, 2, argv_vm, hello_done, NULL));
    assert_int_equal(done.calls, 1);
    assert_int_equal(done.status, DDM_CMD_OK);
    assert_non_null(done.result);
    assert_int_equal(record_int(done.result, "chunks"), 2);
    assert_int_equal(record_int(done.result, "bytes"), 8);
    const char *argv_none[] = {"hello", "4242", NULL};
    assert_true(ddm_registry_run_command(reg, 2, argv_none, hello_done, NULL));
    assert_int_equal(done.calls, 2);
    assert_int_equal(done.status, DDM_CMD_NOT_FOUND);
    assert_null(done.result);

    /* Its timer publishes the view and the headline. */
    gint64 deadline = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
    while (ddm_view_version(view) == 0 && g_get_monotonic_time() < deadline)
        g_main_context_iteration(NULL, TRUE);
    g_autoptr(JsonNode) vj = ddm_view_to_json(view, FALSE);
    assert_int_equal(record_int(vj, "chunks"), 2);
    assert_string_equal(ddm_vm_headline_get(&vm, "chunks"), "2");

    /* Gone: per-VM data freed by the core; the plugin forgot the VM. */
    ddm_registry_vm_event(reg, &vm, DDM_VM_GONE);
    ddm_views_destroy_vm(f->mon.views, vm.info.key);
    g_hash_table_remove(f->mon.monitor->vms, vm.info.key);
    const char *argv_all[] = {"hello", NULL};
    assert_true(ddm_registry_run_command(reg, 1, argv_all, hello_done, NULL));
    assert_int_equal(record_int(done.result, "vms"), 0);
    assert_int_equal(record_int(done.result, "chunks"), 2);
    g_clear_pointer(&done.result, json_node_unref);

    ddm_vm_plugin_data_free_list(ddm_vm_plugin_data_take_all(&vm));
    ddm_vm_headlines_clear(&vm);
    g_clear_pointer(&vm.unknown_logged, g_hash_table_unref);
    ddm_correlate_free(vm.pending);
}

int main(void)
{
    logs = g_ptr_array_new_with_free_func(g_free);
    g_log_set_writer_func(capture_writer, NULL, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_loader_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_bad_descriptors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_core_refs_refused, setup, teardown),
#ifdef HAVE_ELF64_TESTS
        cmocka_unit_test_setup_teardown(test_loader_core_ref_long_name, setup, teardown),
#endif
        cmocka_unit_test_setup_teardown(test_loader_init_fails_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_dup_chunk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_hostile_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_truncated_elf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_search_path_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_first_file_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_env_ignored_when_disabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_required_and_disabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_chunks_all_disabled_notice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_check_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_check_file_runs_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elfdesc_plugins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elfdesc_hostile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_list_plugins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_unsafe_dirs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_refused_does_not_shadow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_foreign_owned_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_hello_example, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_file_in_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_loaded_by_real_path, setup, teardown),
    };
    int rc = cmocka_run_group_tests_name("loader", tests, NULL, NULL);
    g_ptr_array_unref(logs);
    return rc;
}
