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
 * table must not ask for a ddm_ symbol it does not define. That table is
 * found as the dynamic linker finds it, through PT_DYNAMIC (DT_SYMTAB,
 * DT_STRTAB, DT_STRSZ, and DT_HASH or DT_GNU_HASH for its size), never
 * through section headers, which a file need not have. The ddmon binary
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

/* Reads ELF header eh's program header table into *out (caller frees),
 * refusing a table or a PT_LOAD segment's file range that does not fit
 * the file's size bytes: what dlopen maps, and what both checks below
 * start from. */
static gboolean read_program_headers(int fd, const HostEhdr *eh, uint64_t size, const char *path,
                                     HostPhdr **out, GError **error)
{
    uint64_t end;
    if (eh->e_phnum == 0 || eh->e_phnum == PN_XNUM)
        NOT_AN_OBJECT("%s program headers", eh->e_phnum == 0 ? "no" : "too many");
    if (eh->e_phentsize != sizeof(HostPhdr))
        NOT_AN_OBJECT("program header entries of %u bytes, not %zu", (unsigned)eh->e_phentsize,
                      sizeof(HostPhdr));
    uint64_t ph_len = (uint64_t)eh->e_phnum * sizeof(HostPhdr); /* < 4 MiB */
    if (!within(eh->e_phoff, ph_len, size, &end))
        NOT_AN_OBJECT("truncated ELF file: the program headers end at %" PRIu64
                      ", file has %" PRIu64 " bytes",
                      end, size);
    g_autofree HostPhdr *ph = g_new(HostPhdr, eh->e_phnum);
    if (!ddm_loader_read_at(fd, ph, (size_t)ph_len, eh->e_phoff))
        UNREADABLE("program headers");
    for (unsigned i = 0; i < eh->e_phnum; i++) {
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
    *out = g_steal_pointer(&ph);
    return TRUE;
}

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
    g_autofree HostPhdr *ph = NULL;
    if (!read_program_headers(fd, &eh, size, path, &ph, error))
        return FALSE;

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
#define CORE_REFS_MAX_DYNAMIC 4096u /* entries of PT_DYNAMIC read */
#define CORE_REFS_MAX_TABLE ((uint64_t)16 * 1024 * 1024)
#define CORE_REFS_MAX_CHAIN 65536u /* symbols in one DT_GNU_HASH chain */
/* At most this many names are quoted in the refusal. */
#define CORE_REFS_QUOTED 4u

#if HOST_BITS == 64
typedef Elf64_Dyn HostDyn;
#else
typedef Elf32_Dyn HostDyn;
#endif

/* The file offset of the @len bytes at address @addr: they must lie in the
 * file bytes of one PT_LOAD segment (what dlopen maps from the file). */
static gboolean addr_to_offset(const HostPhdr *ph, unsigned phnum, uint64_t addr, uint64_t len,
                               uint64_t *off)
{
    for (unsigned i = 0; i < phnum; i++) {
        if (ph[i].p_type != PT_LOAD || addr < ph[i].p_vaddr)
            continue;
        uint64_t rel = addr - ph[i].p_vaddr, end;
        if (!within(rel, len, ph[i].p_filesz, &end))
            continue;
        *off = ph[i].p_offset + rel; /* p_offset + p_filesz <= size: checked */
        return TRUE;
    }
    return FALSE;
}

/* How many file bytes of a PT_LOAD segment follow address @addr (0 when
 * no segment maps it from the file). */
static uint64_t addr_room(const HostPhdr *ph, unsigned phnum, uint64_t addr)
{
    for (unsigned i = 0; i < phnum; i++) {
        if (ph[i].p_type == PT_LOAD && addr >= ph[i].p_vaddr &&
            addr - ph[i].p_vaddr < ph[i].p_filesz)
            return ph[i].p_filesz - (addr - ph[i].p_vaddr);
    }
    return 0;
}

/* The @len bytes at address @addr (g_free; one NUL after them), or NULL
 * with @error: at most CORE_REFS_MAX_TABLE, within the file. */
static char *read_table(int fd, const HostPhdr *ph, unsigned phnum, uint64_t addr, uint64_t len,
                        const char *what, const char *path, GError **error)
{
    uint64_t off;
    if (len > CORE_REFS_MAX_TABLE) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is not a plugin (its %s has %" PRIu64 " bytes, more than %" PRIu64 ")",
                    path, what, len, CORE_REFS_MAX_TABLE);
        return NULL;
    }
    if (!addr_to_offset(ph, phnum, addr, len, &off)) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is not a shared object (its %s, %" PRIu64 " bytes at address 0x%" PRIx64
                    ", is not within the file bytes of a loadable segment)",
                    path, what, len, addr);
        return NULL;
    }
    char *buf = g_malloc((size_t)len + 1);
    if (!ddm_loader_read_at(fd, buf, (size_t)len, off)) {
        int e = errno;
        g_free(buf);
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "cannot read the %s of %s: %s", what, path, g_strerror(e));
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/* One 32-bit word of a hash table at address @addr. */
static gboolean read_word(int fd, const HostPhdr *ph, unsigned phnum, uint64_t addr,
                          uint32_t *out)
{
    uint64_t off;
    return addr_to_offset(ph, phnum, addr, sizeof *out, &off) &&
           ddm_loader_read_at(fd, out, sizeof *out, off);
}

/* How many entries the dynamic symbol table has, from DT_HASH (its nchain)
 * or DT_GNU_HASH (past the last symbol of the longest-indexed chain), as
 * the dynamic linker sees it; FALSE when the table cannot be read. The
 * count is capped at @cap (the caller refuses a larger table). */
static gboolean count_symbols(int fd, const HostPhdr *ph, unsigned phnum, uint64_t hash,
                              uint64_t gnu_hash, uint64_t cap, uint64_t *count)
{
    if (hash != 0) {
        uint32_t nchain;
        if (!read_word(fd, ph, phnum, hash + 4, &nchain))
            return FALSE;
        *count = nchain;
        return TRUE;
    }
    /* nbuckets, symoffset, bloom_size, bloom_shift; bloom words; buckets;
     * chains (one per symbol from symoffset, the last of a chain odd). */
    uint32_t hdr[4];
    for (unsigned i = 0; i < 4; i++)
        if (!read_word(fd, ph, phnum, gnu_hash + 4 * i, &hdr[i]))
            return FALSE;
    uint64_t buckets = gnu_hash + 16 + (uint64_t)hdr[2] * sizeof(uintptr_t);
    uint64_t len = (uint64_t)hdr[0] * 4;
    if (len > CORE_REFS_MAX_TABLE)
        return FALSE;
    g_autofree char *b = len ? read_table(fd, ph, phnum, buckets, len, "", "", NULL) : NULL;
    if (len != 0 && b == NULL)
        return FALSE;
    uint32_t last = 0;
    for (uint64_t i = 0; i < hdr[0]; i++) {
        uint32_t v;
        memcpy(&v, b + 4 * i, sizeof v);
        last = MAX(last, v);
    }
    if (last < hdr[1]) { /* no defined symbol hashed */
        *count = hdr[1];
        return TRUE;
    }
    uint64_t chains = buckets + len;
    for (uint64_t i = last; i < cap && i - last < CORE_REFS_MAX_CHAIN; i++) {
        uint32_t v;
        if (!read_word(fd, ph, phnum, chains + 4 * (i - hdr[1]), &v))
            return FALSE;
        if (v & 1) {
            *count = i + 1;
            return TRUE;
        }
    }
    return FALSE; /* past the cap: not a table a linker makes */
}

/* @name as it may be quoted in a message (JSON, a terminal): at most
 * QUOTED_NAME_MAX bytes of it, every byte but [A-Za-z0-9_] as \xNN, and
 * "..." after a name cut there (so a cut name is not taken for the whole). */
#define QUOTED_NAME_MAX 64u
static void append_escaped(GString *out, const char *name)
{
    unsigned i;
    for (i = 0; name[i] != '\0' && i < QUOTED_NAME_MAX; i++) {
        unsigned char c = (unsigned char)name[i];
        if (g_ascii_isalnum(c) || c == '_')
            g_string_append_c(out, (char)c);
        else
            g_string_append_printf(out, "\\x%02X", c);
    }
    if (name[i] != '\0')
        g_string_append(out, "...");
}

gboolean ddm_loader_check_no_core_refs(int fd, const struct stat *st, const char *path,
                                       GError **error)
{
    const uint64_t size = st->st_size > 0 ? (uint64_t)st->st_size : 0;
    HostEhdr eh;
    if (!ddm_loader_read_at(fd, &eh, sizeof eh, 0))
        UNREADABLE("ELF header");
    /* What the dynamic linker reads: the program headers and PT_DYNAMIC,
     * never the section headers (a file may have none). */
    g_autofree HostPhdr *ph = NULL;
    if (!read_program_headers(fd, &eh, size, path, &ph, error))
        return FALSE;
    const HostPhdr *dyn = NULL;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type == PT_DYNAMIC)
            dyn = &ph[i]; /* the last one, as ld.so takes it */
    }
    if (dyn == NULL)
        NOT_AN_OBJECT("no dynamic segment (PT_DYNAMIC)");
    /* ld.so reads it where it is mapped (p_vaddr), not at p_offset, and up
     * to its DT_NULL whatever p_filesz says (it only refuses a size of 0):
     * read what the segment mapping it holds from there, and require the
     * DT_NULL in it. */
    if (dyn->p_filesz == 0)
        NOT_AN_OBJECT("an empty dynamic segment (PT_DYNAMIC)");
    uint64_t ndyn = MIN(addr_room(ph, eh.e_phnum, dyn->p_vaddr) / sizeof(HostDyn),
                        (uint64_t)CORE_REFS_MAX_DYNAMIC);
    g_autofree HostDyn *dt = g_new0(HostDyn, ndyn + 1);
    uint64_t dyn_off;
    if (ndyn != 0 && !addr_to_offset(ph, eh.e_phnum, dyn->p_vaddr, ndyn * sizeof(HostDyn), &dyn_off))
        NOT_AN_OBJECT("its dynamic segment (%" PRIu64 " entries at address 0x%" PRIx64
                      ") is not within the file bytes of a loadable segment",
                      ndyn, (uint64_t)dyn->p_vaddr);
    if (ndyn != 0 && !ddm_loader_read_at(fd, dt, (size_t)(ndyn * sizeof(HostDyn)), dyn_off))
        UNREADABLE("dynamic segment");
    uint64_t symtab = 0, strtab = 0, strsz = 0, syment = sizeof(HostSym), hash = 0, gnu_hash = 0;
    uint64_t d;
    for (d = 0; d < ndyn && dt[d].d_tag != DT_NULL; d++) {
        uint64_t v = dt[d].d_un.d_val;
        switch (dt[d].d_tag) {
        case DT_SYMTAB: symtab = v; break;
        case DT_STRTAB: strtab = v; break;
        case DT_STRSZ: strsz = v; break;
        case DT_SYMENT: syment = v; break;
        case DT_HASH: hash = v; break;
        case DT_GNU_HASH: gnu_hash = v; break;
        default: break;
        }
    }
    if (d == ndyn)
        NOT_AN_OBJECT(ndyn == CORE_REFS_MAX_DYNAMIC
                          ? "more than %u dynamic entries"
                          : "no DT_NULL ends its dynamic segment (%u entries read)",
                      ndyn == CORE_REFS_MAX_DYNAMIC ? CORE_REFS_MAX_DYNAMIC : (unsigned)ndyn);
    if (symtab == 0)
        return TRUE; /* no dynamic symbols: nothing to bind */
    if (strtab == 0 || syment != sizeof(HostSym))
        NOT_AN_OBJECT("its dynamic symbol table has entries of %" PRIu64
                      " bytes and %s string table",
                      syment, strtab == 0 ? "no" : "a");
    if (hash == 0 && gnu_hash == 0)
        NOT_AN_OBJECT("its dynamic symbol table has no hash table (DT_HASH, DT_GNU_HASH)");
    const uint64_t max_syms = CORE_REFS_MAX_TABLE / sizeof(HostSym);
    uint64_t nsyms;
    if (!count_symbols(fd, ph, eh.e_phnum, hash, gnu_hash, max_syms, &nsyms))
        NOT_AN_OBJECT("its symbol hash table is not within the file");
    if (nsyms > max_syms)
        NOT_AN_OBJECT("its dynamic symbol table has more than %" PRIu64 " entries", max_syms);
    g_autofree char *syms =
        read_table(fd, ph, eh.e_phnum, symtab, nsyms * sizeof(HostSym), "dynamic symbol table",
                   path, error);
    if (syms == NULL)
        return FALSE;
    g_autofree char *names =
        read_table(fd, ph, eh.e_phnum, strtab, strsz, "dynamic string table", path, error);
    if (names == NULL)
        return FALSE;

    /* Undefined ddm_ names: what dlopen would bind to the ddmon binary. */
    uint64_t refs = 0;
    g_autoptr(GString) quoted = g_string_new(NULL);
    for (uint64_t i = 1; i < nsyms; i++) {
        HostSym sym;
        memcpy(&sym, syms + i * sizeof sym, sizeof sym);
        if (sym.st_shndx != SHN_UNDEF || sym.st_name >= strsz)
            continue;
        const char *name = names + sym.st_name; /* names[strsz] is a NUL */
        if (strncmp(name, "ddm_", 4) != 0)
            continue;
        if (refs++ < CORE_REFS_QUOTED) {
            if (refs > 1)
                g_string_append(quoted, ", ");
            append_escaped(quoted, name);
        }
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
