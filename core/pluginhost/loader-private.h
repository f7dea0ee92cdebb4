/* SPDX-License-Identifier: Apache-2.0
 *
 * Internals shared by the loader's files: loader_trust.c (trusted
 * directories and files), loader.c (opening, validating and loading one
 * file), loader_path.c (search path, ddm_loader_load_all()) and
 * loader_report.c (--check-plugin, --list-plugins). Nothing else includes
 * this header; the rest of the core uses loader.h. loader_elf.c: the ELF
 * check of a file before dlopen.
 */
#ifndef DDM_LOADER_PRIVATE_H
#define DDM_LOADER_PRIVATE_H

#include "core/pluginhost/elfdesc.h"
#include "core/pluginhost/loader.h"

/* ------------------------------------------------------ loader_trust.c */

/* A directory that passed ddm_loader_open_trusted_dir(). */
typedef struct DdmTrustedDir {
    int fd;     /* the checked directory (readable with fdopendir when scanned) */
    char *real; /* its path without symbolic links: plugins are loaded by it */
} DdmTrustedDir;

void ddm_loader_trusted_dir_clear(DdmTrustedDir *td);

/* Open @dir after checking it and every directory above it, from / down.
 * @scanned: every *.so in @dir will be loaded (a sticky dir is refused
 * too); else @dir only holds a named file. TRUE with @out filled
 * (ddm_loader_trusted_dir_clear() it), or FALSE with @error
 * (DDM_LOADER_ERROR_UNSAFE, or NOT_A_PLUGIN with *@os_errno set when it
 * cannot be opened). */
gboolean ddm_loader_open_trusted_dir(const char *dir, gboolean scanned, DdmTrustedDir *out,
                                     int *os_errno, GError **error);

/* Open entry @name of the trusted directory @dirfd (@path names it in
 * messages) and check it, ELF header and sizes included (ddm_loader_check_elf()):
 * the returned fd (caller closes) is the file that passed. -1 with @error otherwise. */
int ddm_loader_open_checked_file(int dirfd, const char *name, const char *path, GError **error);

/* -------------------------------------------------------- loader_elf.c */

struct stat;

/* Before dlopen: the file open as @fd, @st its fstat, @path naming it in
 * messages, has a whole ELF header of the host's class, byte order and
 * machine, of type ET_DYN, and its program header table, PT_LOAD segments
 * and section header table lie within st_size (dlopen of a truncated file
 * dies of SIGBUS). Bounded preads on @fd only. FALSE with @error
 * (DDM_LOADER_ERROR_NOT_A_PLUGIN) otherwise. */
gboolean ddm_loader_check_elf(int fd, const struct stat *st, const char *path, GError **error);
/* For plugins, after ddm_loader_check_elf() passed: no undefined ddm_
 * symbol in the file's dynamic symbol table, found through PT_DYNAMIC as
 * ld.so finds it (the ddmon binary exports some core functions for the web
 * module; plugins must not bind to them). Bounded preads on @fd only.
 * FALSE with @error (DDM_LOADER_ERROR_ABI_MISMATCH quoting the first
 * names, escaped, each cut at 64 bytes with "..." where it is) otherwise. */
gboolean ddm_loader_check_no_core_refs(int fd, const struct stat *st, const char *path,
                                       GError **error);
/** Read exactly @len bytes at @off of @fd; FALSE (errno set; EIO when the
 *  file is shorter than that) otherwise. (loader_elf.c) */
gboolean ddm_loader_read_at(int fd, void *buf, size_t len, uint64_t off);

/* ------------------------------------------------------------ loader.c */

/* The file name without directory and ".so": the name the descriptor must carry. */
char *ddm_loader_plugin_stem(const char *path);

/* The load rule's checks of a descriptor (doc/plugin-abi.md), the same
 * whether it was read from a loaded plugin or from its file (elfdesc.h):
 * the frozen prefix (magic, ABI, size), then name, version and init
 * present and name == the file's stem. FALSE + @error (DDM_LOADER_ERROR,
 * its message ending "; file @path") otherwise. */
gboolean ddm_loader_check_desc_prefix(uint32_t magic, uint16_t abi_major, uint16_t abi_minor,
                                      uint32_t desc_size, const char *path, GError **error);
gboolean ddm_loader_check_desc_fields(const char *name, const char *version, gboolean has_init,
                                      const char *path, GError **error);

/* --check-plugin's load rule without loading: open the absolute @abs with
 * every check before dlopen (its directory checked as a named file's), read
 * it whole (at most 64 MiB), read its descriptor from the ELF bytes
 * (ddm_elf_read_descriptor()) and check it as the loader would. No plugin
 * code runs. @out receives what was read, also on failure (clear it). */
gboolean ddm_loader_read_desc(const char *abs, DdmElfDescriptor *out, GError **error);

/* @path made absolute against the current directory (transfer full). */
char *ddm_loader_absolute_path(const char *path);

/* ddm_loader_load_file() for the absolute @abs. @td: the trusted directory
 * holding @abs (a search-path directory being scanned), or NULL to open
 * and check the directory of @abs (a file named by the user). */
gboolean ddm_loader_load_file_at(DdmRegistry *reg, const DdmTrustedDir *td, const char *abs,
                                 ddm_plugin **out, GError **error);

/* dlopen(RTLD_NOW | RTLD_LOCAL) the checked file open as @fd (from
 * ddm_loader_open_checked_file()), entry @name of @td, by its real path,
 * then make sure that path still leads to the checked file. The handle
 * (dlclose it), or NULL with @error naming @path (and dlerror()). */
void *ddm_loader_dlopen_checked(int fd, const DdmTrustedDir *td, const char *name,
                                const char *path, GError **error);

#endif /* DDM_LOADER_PRIVATE_H */
