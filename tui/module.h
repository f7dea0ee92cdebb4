/* SPDX-License-Identifier: Apache-2.0
 *
 * The terminal UI's module: ddmon-tui.so holds the UI of `ddmon watch` on
 * a terminal (tui.h: the run, the drawing, its control-socket client) and
 * links ncursesw (with tinfo), so that only the process that runs the UI
 * maps them and the UI's code: the server and every other command map
 * none of them (doc/memory.md, "The terminal UI as a module"). The pure
 * model (model.h) is also built as tui/libddmtui.la for its unit tests.
 *
 * The module exports one symbol, DDM_TUI_MODULE_SYMBOL, a function that
 * returns the table below. It calls nothing in the ddmon binary: the few
 * codec functions it needs (core/wire/ctlproto.c) are built into it. The
 * client (cli/tui_module.c) still checks, before calling anything in the
 * table, that its version is DDM_TUI_MODULE_VERSION, its size at least the
 * size it knows, and that it comes from the same package version and build
 * (DDM_BUILD_TOKEN, configure.ac), as for the web module (web/module.h):
 * a module and a binary are installed together from one build. Bump
 * DDM_TUI_MODULE_VERSION with any change to the table.
 */
#ifndef DDM_TUI_MODULE_H
#define DDM_TUI_MODULE_H

#include <stdint.h>

#include <glib.h>

/* The module's file name, in the package's library directory (pkglibdir). */
#define DDM_TUI_MODULE_FILE "ddmon-tui.so"
/* The one symbol the module exports: a DdmTuiModuleGetFunc. */
#define DDM_TUI_MODULE_SYMBOL "ddm_tui_module"
#define DDM_TUI_MODULE_VERSION 1u

typedef struct DdmTuiModule {
    uint32_t version;            /* DDM_TUI_MODULE_VERSION */
    uint32_t size;               /* sizeof (DdmTuiModule) of the module's build */
    const char *package_version; /* PACKAGE_VERSION of the module's build */
    const char *build_token;     /* DDM_BUILD_TOKEN of the module's build */
    /* tui.h */
    gboolean (*available)(void);
    int (*run)(const char *socket_path);
} DdmTuiModule;

/** The table (static; transfer none). */
typedef const DdmTuiModule *(*DdmTuiModuleGetFunc)(void);

/* Defined in the module (tui/module.c) only. */
const DdmTuiModule *ddm_tui_module(void);

#endif /* DDM_TUI_MODULE_H */
