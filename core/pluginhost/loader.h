/* SPDX-License-Identifier: Apache-2.0
 *
 * Finding and validating plugin files. Steps, each refusing with a
 * DDM_LOADER_ERROR and moving on: the directory and every directory above
 * it owned by us or root and not writable by group/others (a sticky one
 * like /tmp is fine above, never as a search-path directory itself) ->
 * lstat (regular file, not a symlink, not writable by group/others, owned
 * by us or root) -> ".so" suffix -> open + fstat (the same file) ->
 * dlopen(RTLD_NOW|RTLD_LOCAL) by its real path, which must still name the
 * checked file -> dlsym(ddm_plugin_descriptor) -> magic -> ABI (major equal, minor <= ours)
 * -> size -> name/version/init present -> name == basename. No plugin
 * function is called before all checks pass (ELF constructors, which
 * plugins must not have, run at dlopen). --check-plugin reads the
 * descriptor from the file instead (elfdesc.h) and loads nothing.
 * Search path: --plugin-dir (in order), then DDMON_PLUGIN_PATH (colon list,
 * ignored when setuid), then the installed plugin directory. The first file
 * of a name that loads wins; a refused file does not hide a later one of
 * the same name (a warning names both). An unsafe directory is skipped with
 * a warning and its plugins are recorded as refused.
 */
#ifndef DDM_LOADER_H
#define DDM_LOADER_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include <ddmon/plugin.h>

#include "core/config/config.h"
#include "core/pluginhost/registry.h"

#define DDM_LOADER_ERROR (ddm_loader_error_quark())
GQuark ddm_loader_error_quark(void);

typedef enum {
    DDM_LOADER_ERROR_NOT_A_PLUGIN,   /* not a regular .so, unreadable, no descriptor, dlopen failed */
    DDM_LOADER_ERROR_UNSAFE,         /* symlink, writable by others, foreign owner */
    DDM_LOADER_ERROR_ABI_MISMATCH,
    DDM_LOADER_ERROR_BAD_DESCRIPTOR, /* magic, size, missing fields, name != basename */
    DDM_LOADER_ERROR_INIT_FAILED,
    DDM_LOADER_ERROR_DUPLICATE,      /* a plugin of that name is already loaded */
    DDM_LOADER_ERROR_CHUNK_CONFLICT,
    DDM_LOADER_ERROR_NOT_FOUND       /* a plugin named with --plugins is nowhere on the path */
} DdmLoaderError;

/** Open and validate @path; no plugin code runs. On success returns the
 *  descriptor and the dlopen handle in @dl (caller dlcloses). */
const ddm_plugin_desc *ddm_loader_open(const char *path, void **dl, GError **error);
/** Whether @dir would be searched: it and every directory above it are
 *  owned by root or the effective user and not writable by group or others
 *  (directories above it may be sticky, like /tmp; @dir may not). FALSE +
 *  @error (DDM_LOADER_ERROR_UNSAFE naming the directory at fault, mode and
 *  fix; NOT_A_PLUGIN when it cannot be opened) otherwise. */
gboolean ddm_loader_check_dir(const char *dir, GError **error);
/** The effective search path. (transfer full, g_strfreev) */
char **ddm_loader_search_path(const DdmConfig *config);
/** Load every plugin on the search path into @reg according to the config
 *  (--plugins / --disable-plugin). Refusals are logged and recorded; FALSE
 *  with @error only when a plugin the user named explicitly failed. */
gboolean ddm_loader_load_all(DdmRegistry *reg, const DdmConfig *config, GError **error);

/* Added by the plugin host (used by tests and the CLI). */

/** Validate @path (made absolute), record it in @reg under its basename and
 *  run its init. *@out (if not NULL) always receives the record, also when
 *  the plugin is refused (status REFUSED, reason set). FALSE + @error on
 *  refusal. Nothing about policy: callers decide whether a failure matters. */
gboolean ddm_loader_load_file(DdmRegistry *reg, const char *path, ddm_plugin **out,
                              GError **error);
/** `ddmon --check-plugin FILE`: validate @path as the loader would, with
 *  its descriptor read from the ELF file's bytes (elfdesc.h) instead of
 *  loading it: no dlopen, no plugin code (constructor or init) runs, so an
 *  init that would fail is not caught. Appends a human report ("file:",
 *  "name:", "version:", "license:", "summary:", "ABI:", "result:" lines) to
 *  @report if not NULL. TRUE when the descriptor passes; FALSE + @error
 *  (the refusal, a DDM_LOADER_ERROR) otherwise. Exit status: 0 / 1. */
gboolean ddm_loader_check_file(const char *path, GString *report, GError **error);
/** ddm_loader_check_file(), also setting in @members (if not NULL) what
 *  the report says as JSON: "name", "version", "license",
 *  "summary" (strings, null when unread) and "abi" ("MAJOR.MINOR" the
 *  file asks for, null when it has no descriptor). */
gboolean ddm_loader_check_file_json(const char *path, GString *report, JsonObject *members,
                                    GError **error);
/** `ddmon --list-plugins`: load every plugin on @config's search path (as
 *  the server would, with --plugins / --disable-plugin / --chunks) into a
 *  throwaway registry, describe them, unload. *@out always receives the JSON
 *  array of ddm_registry_plugins_to_json() (render it as text with
 *  ddm_registry_plugins_json_to_text()). FALSE + @error when a plugin named
 *  with --plugins failed or is missing (the list still says why). */
gboolean ddm_loader_list_plugins(const DdmConfig *config, JsonNode **out, GError **error);
/** Load the module @name (a file name ending in .so) of the directory
 *  @dir, which is not a plugin (the web module, web/module.h), by the
 *  plugins' load rule (loader_module.c): @dir and every directory above it
 *  trusted, the file checked, then dlopen(RTLD_NOW | RTLD_LOCAL) by its
 *  real path. No descriptor is looked for: the caller dlsyms what it needs.
 *  The dlopen handle (caller dlcloses), or NULL with @error (a
 *  DDM_LOADER_ERROR naming the path; dlerror()'s text when dlopen failed). */
void *ddm_loader_open_module(const char *dir, const char *name, GError **error);

/* A module's loader (server/web_module.c, cli/tui_module.c) is these three
 * steps and its own check of its table's entries, loaded at most once by
 * ddm_loader_module_load_once(). */

/** The directory a module built in @subdir of the build tree is loaded
 *  from: @top_builddir/@subdir/.libs when this process is the binary of
 *  the build tree @top_builddir (it, or libtool's .libs, is the directory
 *  of /proc/self/exe; @top_builddir may be NULL), else @installed_dir
 *  (pkglibdir, where `make install` puts modules). No environment
 *  variable changes it. (transfer full) */
char *ddm_loader_module_dir(const char *top_builddir, const char *subdir, const char *installed_dir);
/** ddm_loader_open_module(@dir, @name), then the address of its exported
 *  @symbol (the function that returns the module's table). The address,
 *  with the handle in *@dl (the caller dlcloses it when it refuses the
 *  table), or NULL (*@dl NULL) with @error naming the path and why. */
void *ddm_loader_module_symbol(const char *dir, const char *name, const char *symbol, void **dl,
                               GError **error);
/** The header every module table starts with fits this binary: @version
 *  is @want_version and @size at least @want_size (the table's layout),
 *  then @package_version is PACKAGE_VERSION and @build_token
 *  DDM_BUILD_TOKEN (the build it came from). TRUE, or FALSE with @error
 *  (DDM_LOADER_ERROR_ABI_MISMATCH) naming @path, which check failed and
 *  both sides. A missing table is version 0, size 0. */
gboolean ddm_loader_check_module_header(const char *path, guint32 version, guint32 size,
                                        const char *package_version, const char *build_token,
                                        guint32 want_version, gsize want_size, GError **error);

/* What a module's loader keeps between its calls (a static, zeroed): the
 * table it loaded, or why loading it failed. */
typedef struct {
    const void *table;
    GError *failed;
} DdmLoaderModuleOnce;

/** @load_from(@dir()) on the first call; every later call returns what
 *  that gave without looking again: the same table (transfer none), or
 *  NULL with a copy of the same error in @error. Main thread only.
 *  Ownership: @dir() returns a string (transfer full) that this frees
 *  after @load_from; @once keeps the table and the first failure's error
 *  for the process's life (never freed); the error set in @error is a
 *  copy the caller owns and frees. */
const void *ddm_loader_module_load_once(DdmLoaderModuleOnce *once, char *(*dir)(void),
                                        const void *(*load_from)(const char *dir, GError **error),
                                        GError **error);

#endif /* DDM_LOADER_H */
