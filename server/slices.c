/* SPDX-License-Identifier: Apache-2.0
 *
 * GLib's slices from malloc in every process of the ddmon binary, set
 * before the first slice. Linked into ddmon itself (cli/local.mk) and
 * test-server, never into a library: a .preinit_array entry is only
 * allowed in an executable, and only there does it run early enough.
 *
 * Why: GLib 2.74's slice allocator (GHashTable, GList, GQueue and
 * json-glib's nodes come from it) keeps what it frees in per-thread
 * magazines and page-sized slabs instead of handing it back to malloc.
 * With 1,000 idle VMs that cost about 295 bytes a VM more than malloc
 * (bench/vmmem.sh, doc/memory.md), and a large control reply (a json-glib
 * tree) stayed "in use" for good.
 *
 * How: GLib copies the always-malloc flag at its first slice, and its
 * own constructors make slices before main() runs, so neither main() nor
 * a constructor of ours is early enough. An executable's .preinit_array
 * functions run before any shared library's constructor: there the flag
 * is set. G_SLICE=debug-blocks in the environment still adds its checks;
 * G_SLICE only adds flags, so it cannot bring the slabs back (an A/B
 * against them needs a build without this file).
 *
 * Whether the slab allocator exists is a run-time fact (the GLib the
 * program loads, not the one it was built against): from GLib 2.76 on
 * slices are plain malloc and g_slice_set_config does nothing, so the
 * entry is compiled whatever the headers' version.
 */
#include <build-config.h>

#include <glib.h>

#if defined(__ELF__)
static void slices_from_malloc(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    (void)envp;
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    g_slice_set_config(G_SLICE_CONFIG_ALWAYS_MALLOC, TRUE);
    G_GNUC_END_IGNORE_DEPRECATIONS
}

/* The name tests/unit/server/ddmon-preinit.sh looks for in ddmon's
 * .preinit_array: keep them in step. */
typedef void PreinitFn(int argc, char **argv, char **envp);
__attribute__((section(".preinit_array"), used)) static PreinitFn *const ddm_preinit_slices = slices_from_malloc;
#endif
