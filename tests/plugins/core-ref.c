/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin "core-ref": a well-formed descriptor, but its init calls
 * ddm_daemon_views(), a function of the ddmon core, as an out-of-tree
 * plugin built without -z defs could. The ddmon binary exports a few core
 * functions for the web module (web/binary-exports.list); the loader must
 * refuse a plugin that would bind to them, before dlopen, naming the
 * symbol (core/pluginhost/loader_elf.c; tests/unit/pluginhost/test-loader.c
 * and tests/integration/web-module.sh).
 */
#include <ddmon/plugin.h>

/* Not in the SDK: what the plugin must not do (core/daemon/daemon.h; the
 * type is not visible here). Kept in a pointer, never called: the point is
 * the undefined symbol in the plugin's .dynsym. */
int ddm_daemon_views(void *daemon);
static int (*volatile core_function)(void *) = ddm_daemon_views;

static int core_ref_init(ddm_plugin *self, const ddm_host *host)
{
    (void)self;
    (void)host;
    return core_function != NULL ? 0 : -1;
}

static void core_ref_fini(ddm_plugin *self)
{
    (void)self;
}

DDM_PLUGIN_DEFINE("core-ref", "1.0", "Apache-2.0", "test plugin that calls the core", core_ref_init,
                  core_ref_fini);
