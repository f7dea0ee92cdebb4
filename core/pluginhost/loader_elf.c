/* SPDX-License-Identifier: Apache-2.0
 *
 * The ELF check of a plugin file before dlopen (doc/plugin-abi.md, "The
 * load rule"). dlopen maps each PT_LOAD segment by its file range without
 * comparing it with the file's size, and the first touch of a page past
 * the end of a truncated file (an interrupted copy, a full disk) kills the
 * process with SIGBUS inside the dynamic linker. So the file that passed
 * the trust checks is read here, through the fd it was opened as (no
 * second path lookup), with bounded preads only: an ELF header of the
 * host's class, byte order and machine, of type ET_DYN, whose program
 * header table, PT_LOAD segments and section header table all lie within
 * the file's size.
 *
 * Then, for plugins only (not the web module, which is built with the
 * binary), ddm_loader_check_no_core_refs(): the plugin's dynamic symbol
 * table must not ask for a ddm_ symbol it does not define. The ddmon binary
 * exports a few core functions for the web module (web/binary-exports.list);
 * a plugin binding to them would bypass the plugin ABI (doc/plugin-abi.md).
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-loader"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pluginhost/loader-private.h"

/* The host's ELF flavour: the one the dynamic linker accepts. */
#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr HostEhdr;
typedef Elf64_Phdr HostPhdr;
typedef Elf64_Shdr HostShdr;
typedef Elf64_Sym HostSym;
#define HOST_CLASS ELFCLASS64
#define HOST_BITS 64
#else
typedef Elf32_Ehdr HostEhdr;
typedef Elf32_Phdr HostPhdr;
typedef Elf32_Shdr HostShdr;
typedef Elf32_Sym HostSym;
#define HOST_CLASS ELFCLASS32
#define HOST_BITS 32
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_DATA ELFDATA2MSB
#else
#define HOST_DATA ELFDATA2LSB
#endif

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__i386__)
#define HOST_MACHINE EM_386
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__arm__)
#define HOST_MACHINE EM_ARM
#elif defined(__riscv) && defined(EM_RISCV)
#define HOST_MACHINE EM_RISCV
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#elif defined(__powerpc__)
#define HOST_MACHINE EM_PPC
#elif defined(__s390__)
#define HOST_MACHINE EM_S390
#elif defined(__mips__)
#define HOST_MACHINE EM_MIPS
#elif defined(__loongarch__) && defined(EM_LOONGARCH)
#define HOST_MACHINE EM_LOONGARCH
#elif defined(__sparc__) && HOST_BITS == 64
#define HOST_MACHINE EM_SPARCV9
#endif

/* ddmon's own ELF header (GNU ld, gold, lld and mold define it): the host
 * machine where the table above does not know it. */
extern const HostEhdr __ehdr_start __attribute__((weak, visibility("hidden")));

static unsigned host_machine(void)
{
#ifdef HOST_MACHINE
    return HOST_MACHINE;
#else
    return &__ehdr_start != NULL ? __ehdr_start.e_machine : EM_NONE;
#endif
}

gboolean ddm_loader_read_at(int fd, void *buf, size_t len, uint64_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t got = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0)
                errno = EIO; /* shorter than fstat said: changed meanwhile */
            return FALSE;
        }
        done += (size_t)got;
    }
    return TRUE;
}

/* TRUE if [@off, @off + @len) lies within @size bytes; *@end is where it
 * ends (UINT64_MAX when that overflows). */
static gboolean within(uint64_t off, uint64_t len, uint64_t size, uint64_t *end)
{
    if (off > UINT64_MAX - len) {
        *end = UINT64_MAX;
        return FALSE;
    }
    *end = off + len;
    return *end <= size;
}

#define NOT_AN_OBJECT(...)                                                                         \
    do {                                                                                           \
        g_autofree char *why_ = g_strdup_printf(__VA_ARGS__);                                      \
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,                        \
                    "%s is not a shared object (%s)", path, why_);                                 \
        return FALSE;                                                                              \
    } while (0)

#define WRONG_HOST(...)                                                                            \
    do {                                                                                           \
        g_autofree char *why_ = g_strdup_printf(__VA_ARGS__);                                      \
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,                        \
                    "%s is not a plugin for this machine (%s)", path, why_);                       \
        return FALSE;                                                                              \
    } while (0)

#define UNREADABLE(what)                                                                           \
    do {                                                                                           \
        int e_ = errno;                                                                            \
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,                        \
                    "cannot read the %s of %s: %s", what, path, g_strerror(e_));                   \
        return FALSE;                                                                              \
    } while (0)

gboolean ddm_loader_check_elf(int fd, const struct stat *st, const char *path, GError **error)
{
    const uint64_t size = st->st_size > 0 ? (uint64_t)st->st_size : 0;
    uint64_t end;

    /* The ELF header: whole, and of the host's flavour. */
    HostEhdr eh;
    if (size < sizeof eh)
        NOT_AN_OBJECT("truncated ELF file: the ELF header ends at %zu, file has %" PRIu64
                      " bytes",
                      sizeof eh, size);
    if (!ddm_loader_read_at(fd, &eh, sizeof eh, 0))
        UNREADABLE("ELF header");
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        NOT_AN_OBJECT("no ELF header");
    if (eh.e_ident[EI_CLASS] != HOST_CLASS)
        WRONG_HOST("%s ELF file, ddmon is %d-bit",
                   eh.e_ident[EI_CLASS] == ELFCLASS32   ? "a 32-bit"
                   : eh.e_ident[EI_CLASS] == ELFCLASS64 ? "a 64-bit"
                                                        : "an unknown class of",
                   HOST_BITS);
    if (eh.e_ident[EI_DATA] != HOST_DATA)
        WRONG_HOST("%s ELF file, ddmon is %s",
                   eh.e_ident[EI_DATA] == ELFDATA2LSB   ? "a little-endian"
                   : eh.e_ident[EI_DATA] == ELFDATA2MSB ? "a big-endian"
                                                        : "an unknown byte order of",
                   HOST_DATA == ELFDATA2LSB ? "little-endian" : "big-endian");
    if (eh.e_ident[EI_VERSION] != EV_CURRENT || eh.e_version != EV_CURRENT)
        NOT_AN_OBJECT("unknown ELF version %u", (unsigned)eh.e_ident[EI_VERSION]);
    if (eh.e_type != ET_DYN)
        NOT_AN_OBJECT("ELF type %u, %s", (unsigned)eh.e_type,
                      eh.e_type == ET_EXEC  ? "an executable"
                      : eh.e_type == ET_REL ? "an object file: link it with -shared"
                      : eh.e_type == ET_CORE ? "a core dump"
                                             : "not ET_DYN");
    unsigned machine = host_machine();
    if (machine != EM_NONE && eh.e_machine != machine)
        WRONG_HOST("built for ELF machine %u, ddmon runs on %u", (unsigned)eh.e_machine,
                   machine);

    /* The program header table, then every PT_LOAD segment's file range:
     * what dlopen maps. */
    if (eh.e_phnum == 0 || eh.e_phnum == PN_XNUM)
        NOT_AN_OBJECT("%s program headers", eh.e_phnum == 0 ? "no" : "too many");
    if (eh.e_phentsize != sizeof(HostPhdr))
        NOT_AN_OBJECT("program header entries of %u bytes, not %zu", (unsigned)eh.e_phentsize,
                      sizeof(HostPhdr));
    uint64_t ph_len = (uint64_t)eh.e_phnum * sizeof(HostPhdr); /* < 4 MiB */
    if (!within(eh.e_phoff, ph_len, size, &end))
        NOT_AN_OBJECT("truncated ELF file: the program headers end at %" PRIu64
                      ", file has %" PRIu64 " bytes",
                      end, size);
    g_autofree HostPhdr *ph = g_new(HostPhdr, eh.e_phnum);
    if (!ddm_loader_read_at(fd, ph, (size_t)ph_len, eh.e_phoff))
        UNREADABLE("program headers");
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD)
            continue;
        if (!within(ph[i].p_offset, ph[i].p_filesz, size, &end)) {
            if (end == UINT64_MAX)
                NOT_AN_OBJECT("truncated ELF file: segment %u (offset %" PRIu64
                              ", %" PRIu64 " bytes) ends past any file, file has %" PRIu64
                              " bytes",
                              i, (uint64_t)ph[i].p_offset, (uint64_t)ph[i].p_filesz, size);
            NOT_AN_OBJECT("truncated ELF file: segment %u ends at %" PRIu64
                          ", file has %" PRIu64 " bytes",
                          i, end, size);
        }
    }

    /* The section header table, if any: the count is in section 0's
     * sh_size when e_shnum is 0 (SHN_LORESERVE sections or more). */
    if (eh.e_shoff != 0) {
        if (eh.e_shentsize != sizeof(HostShdr))
            NOT_AN_OBJECT("section header entries of %u bytes, not %zu",
                          (unsigned)eh.e_shentsize, sizeof(HostShdr));
        uint64_t shnum = eh.e_shnum;
        if (shnum == 0) {
            HostShdr s0;
            if (!within(eh.e_shoff, sizeof s0, size, &end))
                NOT_AN_OBJECT("truncated ELF file: the section headers end at %" PRIu64
                              ", file has %" PRIu64 " bytes",
                              end, size);
            if (!ddm_loader_read_at(fd, &s0, sizeof s0, eh.e_shoff))
                UNREADABLE("section headers");
            shnum = s0.sh_size;
        }
        uint64_t sh_len = shnum > UINT64_MAX / sizeof(HostShdr) ? UINT64_MAX
                                                                 : shnum * sizeof(HostShdr);
        if (!within(eh.e_shoff, sh_len, size, &end))
            NOT_AN_OBJECT("truncated ELF file: the section headers end at %" PRIu64
                          ", file has %" PRIu64 " bytes",
                          end, size);
    }
    return TRUE;
}

/* Bounds of what ddm_loader_check_no_core_refs() reads: plugins are small;
 * a larger table is refused, not read. */
#define CORE_REFS_MAX_SECTIONS 65536u
#define CORE_REFS_MAX_TABLE ((uint64_t)16 * 1024 * 1024)
/* At most this many names are quoted in the refusal. */
#define CORE_REFS_QUOTED 4u

/* Read section @i's header (the table was bounded by ddm_loader_check_elf()). */
static gboolean read_section(int fd, const HostEhdr *eh, uint64_t i, HostShdr *out)
{
    return ddm_loader_read_at(fd, out, sizeof *out, eh->e_shoff + i * sizeof(HostShdr));
}

/* The @sh's bytes, whole and within @size, at most CORE_REFS_MAX_TABLE
 * (g_free), or NULL with @error. */
static char *read_table(int fd, const HostShdr *sh, uint64_t size, const char *what,
                        const char *path, GError **error)
{
    uint64_t end;
    if (sh->sh_size > CORE_REFS_MAX_TABLE) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is not a plugin (its %s has %" PRIu64 " bytes, more than %" PRIu64 ")",
                    path, what, (uint64_t)sh->sh_size, CORE_REFS_MAX_TABLE);
        return NULL;
    }
    if (!within(sh->sh_offset, sh->sh_size, size, &end)) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is not a shared object (truncated ELF file: its %s ends at %" PRIu64
                    ", file has %" PRIu64 " bytes)",
                    path, what, end, size);
        return NULL;
    }
    char *buf = g_malloc((size_t)sh->sh_size + 1);
    if (!ddm_loader_read_at(fd, buf, (size_t)sh->sh_size, sh->sh_offset)) {
        int e = errno;
        g_free(buf);
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "cannot read the %s of %s: %s", what, path, g_strerror(e));
        return NULL;
    }
    buf[sh->sh_size] = '\0';
    return buf;
}

gboolean ddm_loader_check_no_core_refs(int fd, const struct stat *st, const char *path,
                                       GError **error)
{
    const uint64_t size = st->st_size > 0 ? (uint64_t)st->st_size : 0;
    HostEhdr eh;
    if (!ddm_loader_read_at(fd, &eh, sizeof eh, 0))
        UNREADABLE("ELF header");
    if (eh.e_shoff == 0)
        return TRUE; /* no sections: dlopen finds symbols through DT_ entries, and
                      * a file stripped that far was not built by a linker we know */
    uint64_t shnum = eh.e_shnum;
    if (shnum == 0) {
        HostShdr s0;
        if (!read_section(fd, &eh, 0, &s0))
            UNREADABLE("section headers");
        shnum = s0.sh_size;
    }
    if (shnum > CORE_REFS_MAX_SECTIONS)
        NOT_AN_OBJECT("%" PRIu64 " sections, more than %u", shnum, CORE_REFS_MAX_SECTIONS);
    HostShdr dynsym = {0}, strtab = {0};
    gboolean found = FALSE;
    for (uint64_t i = 0; i < shnum && !found; i++) {
        if (!read_section(fd, &eh, i, &dynsym))
            UNREADABLE("section headers");
        found = dynsym.sh_type == SHT_DYNSYM;
    }
    if (!found)
        return TRUE; /* nothing to bind */
    if (dynsym.sh_entsize != sizeof(HostSym) || dynsym.sh_link == 0 || dynsym.sh_link >= shnum)
        NOT_AN_OBJECT(".dynsym has entries of %" PRIu64 " bytes and string table %u",
                      (uint64_t)dynsym.sh_entsize, (unsigned)dynsym.sh_link);
    if (!read_section(fd, &eh, dynsym.sh_link, &strtab))
        UNREADABLE("section headers");
    if (strtab.sh_type != SHT_STRTAB)
        NOT_AN_OBJECT(".dynsym's string table is a section of type %u", (unsigned)strtab.sh_type);
    g_autofree char *syms = read_table(fd, &dynsym, size, ".dynsym", path, error);
    if (syms == NULL)
        return FALSE;
    g_autofree char *names = read_table(fd, &strtab, size, ".dynstr", path, error);
    if (names == NULL)
        return FALSE;

    /* Undefined ddm_ names: what dlopen would bind to the ddmon binary. */
    uint64_t nsyms = dynsym.sh_size / sizeof(HostSym), refs = 0;
    g_autoptr(GString) quoted = g_string_new(NULL);
    for (uint64_t i = 1; i < nsyms; i++) {
        HostSym sym;
        memcpy(&sym, syms + i * sizeof sym, sizeof sym);
        if (sym.st_shndx != SHN_UNDEF || sym.st_name >= strtab.sh_size)
            continue;
        const char *name = names + sym.st_name; /* names[sh_size] is a NUL */
        if (strncmp(name, "ddm_", 4) != 0)
            continue;
        if (refs++ < CORE_REFS_QUOTED)
            g_string_append_printf(quoted, "%s%.64s", refs > 1 ? ", " : "", name);
    }
    if (refs == 0)
        return TRUE;
    g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_ABI_MISMATCH,
                "%s calls %" PRIu64 " function%s of the ddmon core (%s%s), which are not "
                "part of the plugin ABI; a plugin may only use the host table it is given "
                "(doc/plugin-abi.md)",
                path, refs, refs == 1 ? "" : "s", quoted->str, refs > CORE_REFS_QUOTED ? ", ..." : "");
    return FALSE;
}
