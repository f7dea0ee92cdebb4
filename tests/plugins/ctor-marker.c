/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin "ctor-marker": proves whether any of its code ran. Its
 * ELF constructor creates the file named by DDM_TEST_CTOR_MARKER, its init
 * the file named by DDM_TEST_INIT_MARKER (either unset: nothing). Plugins
 * must not have constructors (doc/plugin-abi.md); this one breaks the rule
 * on purpose: `ddmon --check-plugin` must leave both files absent, for this
 * file and for a copy of it under another name (refused: name mismatch).
 * tests/integration/check-plugin.sh, tests/unit/pluginhost/test-loader.c.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <ddmon/plugin.h>

static void touch(const char *env)
{
    const char *path = getenv(env);
    if (path && *path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
            close(fd);
    }
}

__attribute__((constructor)) static void ctor_marker_ctor(void)
{
    touch("DDM_TEST_CTOR_MARKER");
}

static int ctor_marker_init(ddm_plugin *self, const ddm_host *host)
{
    (void)self;
    (void)host;
    touch("DDM_TEST_INIT_MARKER");
    return 0;
}

DDM_PLUGIN_DEFINE("ctor-marker", "2.5", "Apache-2.0", "marks what ran", ctor_marker_init, NULL);
