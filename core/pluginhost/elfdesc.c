/* SPDX-License-Identifier: Apache-2.0
 *
 * The descriptor of a plugin read from its ELF file's bytes, without
 * loading it (elfdesc.h). Fields are read byte by byte as little-endian
 * ELF64 (no struct casts: the buffer need not be aligned), and every
 * range is checked with range() before it is touched.
 *
 * The path: ELF header -> program headers (the PT_LOAD segments map
 * addresses to file offsets) -> section headers -> .dynsym and its string
 * table -> the defined symbol ddm_plugin_descriptor -> its frozen prefix
 * -> if the magic and size are right, the pointers name, version, license,
 * summary and init: each the RELA relocation at its address (RELATIVE: the
 * addend; absolute: a defined symbol's value plus the addend) or, without
 * one, the value stored there -> each string read through the segments.
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

#include <inttypes.h>
#include <string.h>

#include "core/pluginhost/elfdesc.h"

G_DEFINE_QUARK(ddm-elf-error-quark, ddm_elf_error)

/* <ddmon/plugin.h>'s ddm_plugin_desc as laid out in an LP64 file. */
#define DESC_MAGIC_PLUGIN 0x44444D50u /* DDM_PLUGIN_MAGIC */
#define DESC_OFF_POINTERS 16u         /* name, version, license, summary, init */
#define DESC_N_POINTERS 5u
#define DESC_SIZE_1_0 64u /* ... and fini */
#define SYMBOL "ddm_plugin_descriptor"

#define EH_SIZE 64u
#define PH_SIZE 56u
#define SH_SIZE 64u
#define SYM_SIZE 24u
#define RELA_SIZE 24u
#define PT_LOAD_ 1u
#define SHT_RELA_ 4u
#define SHT_DYNSYM_ 11u
#define SHT_STRTAB_ 3u
#define SHT_NOBITS_ 8u
#define ET_DYN_ 3u
#define EM_X86_64_ 62u
#define EM_AARCH64_ 183u

static const char *const field_names[DESC_N_POINTERS] = {"name", "version", "license", "summary",
                                                         "init"};

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* [@off, @off + @n) lies within @len bytes. */
static gboolean range(uint64_t off, uint64_t n, size_t len)
{
    return off <= len && n <= (uint64_t)len - off;
}

typedef struct Elf {
    const uint8_t *b;
    size_t len;
    unsigned machine;
    const uint8_t *ph; /* program headers */
    unsigned phnum;
} Elf;

#define FAIL(code, ...)                                                                            \
    do {                                                                                           \
        g_set_error(error, DDM_ELF_ERROR, DDM_ELF_ERROR_##code, __VA_ARGS__);                      \
        return FALSE;                                                                              \
    } while (0)

/* The file offset of the @n bytes at address @addr, if one PT_LOAD
 * segment holds them all in the file (not in its zero-filled tail). *@room:
 * how many bytes from there the segment holds in the file. */
static gboolean addr_to_off(const Elf *e, uint64_t addr, uint64_t n, uint64_t *off,
                            uint64_t *room)
{
    for (unsigned i = 0; i < e->phnum; i++) {
        const uint8_t *p = e->ph + (size_t)i * PH_SIZE;
        if (rd32(p) != PT_LOAD_)
            continue;
        uint64_t p_offset = rd64(p + 8), p_vaddr = rd64(p + 16), p_filesz = rd64(p + 32);
        if (addr < p_vaddr || addr - p_vaddr > p_filesz || n > p_filesz - (addr - p_vaddr))
            continue;
        if (!range(p_offset, p_filesz, e->len))
            continue; /* a segment past the end of the file holds nothing */
        *off = p_offset + (addr - p_vaddr);
        *room = p_filesz - (addr - p_vaddr);
        return TRUE;
    }
    return FALSE;
}

/* A section's header, its type and whole contents within the file. */
typedef struct Section {
    uint32_t type;
    uint64_t addr, off, size, entsize;
    uint32_t link;
} Section;

static gboolean section(const Elf *e, uint64_t shoff, unsigned i, Section *s, GError **error)
{
    const uint8_t *h = e->b + shoff + (uint64_t)i * SH_SIZE;
    s->type = rd32(h + 4);
    s->addr = rd64(h + 16);
    s->off = rd64(h + 24);
    s->size = rd64(h + 32);
    s->link = rd32(h + 40);
    s->entsize = rd64(h + 56);
    if (s->type != SHT_NOBITS_ && !range(s->off, s->size, e->len))
        FAIL(MALFORMED,
             "section %u (offset %" PRIu64 ", %" PRIu64 " bytes) ends past the end of the file "
             "(%zu bytes)",
             i, s->off, s->size, e->len);
    return TRUE;
}

/* The NUL-terminated UTF-8 string at address @addr, for the descriptor's @what. */
static gboolean read_string(const Elf *e, uint64_t addr, const char *what, char **out,
                            GError **error)
{
    uint64_t off, room;
    if (!addr_to_off(e, addr, 1, &off, &room))
        FAIL(MALFORMED, "the descriptor's %s points to 0x%" PRIx64 ", not into the file", what,
             addr);
    uint64_t cap = MIN(room, (uint64_t)DDM_ELF_DESC_STRING_MAX + 1);
    const uint8_t *s = e->b + off;
    const uint8_t *nul = memchr(s, 0, (size_t)cap);
    if (!nul)
        FAIL(MALFORMED, "the descriptor's %s at 0x%" PRIx64 " %s", what, addr,
             cap > DDM_ELF_DESC_STRING_MAX ? "is longer than 4096 bytes"
                                           : "runs past its segment's end in the file");
    if (!g_utf8_validate((const char *)s, nul - s, NULL))
        FAIL(MALFORMED, "the descriptor's %s is not UTF-8", what);
    *out = g_strndup((const char *)s, (gsize)(nul - s));
    return TRUE;
}

/* Machine-specific relocation types: RELATIVE, and the absolute ones. */
static gboolean reloc_kind(unsigned machine, uint32_t type, gboolean *relative)
{
    switch (machine) {
    case EM_X86_64_:
        *relative = type == 8; /* R_X86_64_RELATIVE; R_X86_64_64, R_X86_64_GLOB_DAT */
        return type == 8 || type == 1 || type == 6;
    case EM_AARCH64_:
        *relative = type == 1027; /* R_AARCH64_RELATIVE; ABS64, GLOB_DAT */
        return type == 1027 || type == 257 || type == 1025;
    default:
        return FALSE;
    }
}

void ddm_elf_descriptor_clear(DdmElfDescriptor *d)
{
    g_free(d->name);
    g_free(d->version);
    g_free(d->license);
    g_free(d->summary);
    memset(d, 0, sizeof *d);
}

gboolean ddm_elf_read_descriptor(const uint8_t *file, size_t len, DdmElfDescriptor *out,
                                 GError **error)
{
    g_return_val_if_fail(out != NULL, FALSE);
    memset(out, 0, sizeof *out);
    Elf e = {file, len, 0, NULL, 0};

    /* ELF header */
    if (!file || len < EH_SIZE || memcmp(file, "\177ELF", 4) != 0)
        FAIL(MALFORMED, "no whole ELF header (%zu bytes)", len);
    if (file[4] != 2)
        FAIL(UNSUPPORTED, "a %s ELF file: only 64-bit ELF is read",
             file[4] == 1 ? "32-bit" : "unknown class of");
    if (file[5] != 1)
        FAIL(UNSUPPORTED, "a %s ELF file: only little-endian ELF is read",
             file[5] == 2 ? "big-endian" : "unknown byte order of");
    if (rd16(file + 16) != ET_DYN_)
        FAIL(MALFORMED, "ELF type %u, not a shared object", rd16(file + 16));
    e.machine = rd16(file + 18);
    uint64_t phoff = rd64(file + 32), shoff = rd64(file + 40);
    unsigned phentsize = rd16(file + 54), shentsize = rd16(file + 58);
    e.phnum = rd16(file + 56);
    unsigned shnum = rd16(file + 60);

    /* program headers: addresses to file offsets */
    if (e.phnum == 0 || phentsize != PH_SIZE || !range(phoff, (uint64_t)e.phnum * PH_SIZE, len))
        FAIL(MALFORMED, "%u program headers of %u bytes at %" PRIu64 " do not fit the file (%zu bytes)",
             e.phnum, phentsize, phoff, len);
    e.ph = file + phoff;

    /* section headers: .dynsym and its strings */
    if (shoff == 0 || shnum == 0)
        FAIL(UNSUPPORTED, "no section headers (stripped with sstrip?): the descriptor is found "
                          "through .dynsym");
    if (shentsize != SH_SIZE || !range(shoff, (uint64_t)shnum * SH_SIZE, len))
        FAIL(MALFORMED, "%u section headers of %u bytes at %" PRIu64 " do not fit the file (%zu bytes)",
             shnum, shentsize, shoff, len);
    Section dynsym = {0}, strtab = {0};
    unsigned dynsym_index = 0;
    for (unsigned i = 0; i < shnum && !dynsym_index; i++) {
        Section s;
        if (!section(&e, shoff, i, &s, error))
            return FALSE;
        if (s.type == SHT_DYNSYM_) {
            dynsym = s;
            dynsym_index = i;
        }
    }
    if (!dynsym_index)
        FAIL(NO_DESCRIPTOR, "no .dynsym section");
    if (dynsym.entsize != SYM_SIZE || dynsym.link == 0 || dynsym.link >= shnum)
        FAIL(MALFORMED, ".dynsym has entries of %" PRIu64 " bytes and string table %u",
             dynsym.entsize, dynsym.link);
    if (!section(&e, shoff, dynsym.link, &strtab, error))
        return FALSE;
    if (strtab.type != SHT_STRTAB_)
        FAIL(MALFORMED, ".dynsym's string table (section %u) is of type %u", dynsym.link,
             strtab.type);
    uint64_t nsyms = dynsym.size / SYM_SIZE; /* bounded by the file's size */
    const uint8_t *sym = NULL;
    for (uint64_t i = 1; i < nsyms && !sym; i++) {
        const uint8_t *s = file + dynsym.off + i * SYM_SIZE;
        uint32_t name = rd32(s);
        unsigned bind = s[4] >> 4;
        if (rd16(s + 6) == 0 /* SHN_UNDEF */ || (bind != 1 && bind != 2) /* GLOBAL, WEAK */)
            continue;
        if (range(name, sizeof SYMBOL, strtab.size) &&
            memcmp(file + strtab.off + name, SYMBOL, sizeof SYMBOL) == 0)
            sym = s;
    }
    if (!sym)
        FAIL(NO_DESCRIPTOR, "no %s in .dynsym", SYMBOL);
    uint64_t desc = rd64(sym + 8);

    /* the frozen prefix */
    uint64_t off, room;
    if (!addr_to_off(&e, desc, 12, &off, &room))
        FAIL(MALFORMED, "%s at 0x%" PRIx64 " does not lie in the file (a loaded segment's file bytes)",
             SYMBOL, desc);
    out->magic = rd32(file + off);
    out->abi_major = rd16(file + off + 4);
    out->abi_minor = rd16(file + off + 6);
    out->desc_size = rd32(file + off + 8);
    if (out->magic != DESC_MAGIC_PLUGIN || out->desc_size < DESC_SIZE_1_0)
        return TRUE;

    /* the pointers: relocations first, else the stored values */
    if (!addr_to_off(&e, desc, DESC_SIZE_1_0, &off, &room))
        FAIL(MALFORMED, "%s at 0x%" PRIx64 " (%u bytes) does not lie in the file", SYMBOL, desc,
             DESC_SIZE_1_0);
    uint64_t value[DESC_N_POINTERS];
    gboolean undefined[DESC_N_POINTERS] = {FALSE};
    for (unsigned k = 0; k < DESC_N_POINTERS; k++)
        value[k] = rd64(file + off + DESC_OFF_POINTERS + 8u * k);
    for (unsigned i = 1; i < shnum; i++) {
        Section rs;
        if (!section(&e, shoff, i, &rs, error))
            return FALSE;
        if (rs.type != SHT_RELA_)
            continue;
        if (rs.entsize != RELA_SIZE)
            FAIL(MALFORMED, "relocation section %u has entries of %" PRIu64 " bytes", i,
                 rs.entsize);
        uint64_t n = rs.size / RELA_SIZE; /* bounded by the file's size */
        for (uint64_t j = 0; j < n; j++) {
            const uint8_t *r = file + rs.off + j * RELA_SIZE;
            uint64_t at = rd64(r), info = rd64(r + 8);
            int64_t addend = (int64_t)rd64(r + 16);
            if (at < desc + DESC_OFF_POINTERS || at - desc - DESC_OFF_POINTERS >= 8u * DESC_N_POINTERS)
                continue;
            uint64_t rel = at - desc - DESC_OFF_POINTERS;
            if (rel % 8)
                FAIL(MALFORMED, "a relocation at 0x%" PRIx64 " straddles the descriptor's pointers",
                     at);
            unsigned k = (unsigned)(rel / 8);
            uint32_t type = (uint32_t)info, symi = (uint32_t)(info >> 32);
            gboolean relative;
            if (!reloc_kind(e.machine, type, &relative))
                FAIL(UNSUPPORTED, "relocation type %u (ELF machine %u) at the descriptor's %s",
                     type, e.machine, field_names[k]);
            if (relative) {
                value[k] = (uint64_t)addend;
                continue;
            }
            if (symi == 0 || symi >= nsyms)
                FAIL(MALFORMED, "the relocation of the descriptor's %s names symbol %u of %" PRIu64,
                     field_names[k], symi, nsyms);
            const uint8_t *s = file + dynsym.off + (uint64_t)symi * SYM_SIZE;
            if (rd16(s + 6) == 0) /* defined elsewhere: known only once loaded */
                undefined[k] = TRUE;
            else
                value[k] = rd64(s + 8) + (uint64_t)addend;
        }
    }

    char **strings[4] = {&out->name, &out->version, &out->license, &out->summary};
    for (unsigned k = 0; k < 4; k++) {
        if (undefined[k])
            FAIL(UNSUPPORTED, "the descriptor's %s points into another object", field_names[k]);
        if (value[k] && !read_string(&e, value[k], field_names[k], strings[k], error))
            return FALSE;
    }
    out->has_init = value[4] != 0 || undefined[4];
    out->has_fields = TRUE;
    return TRUE;
}
