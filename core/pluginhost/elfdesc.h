/* SPDX-License-Identifier: Apache-2.0
 *
 * Reading a plugin's descriptor (ddm_plugin_descriptor, <ddmon/plugin.h>)
 * out of its ELF file's bytes, without loading it: what --check-plugin
 * reports, so that it runs none of the plugin's code (no ELF constructor,
 * no init). A pure function over a buffer, so tests/fuzz/fuzz-elfdesc.c
 * calls it directly; it depends on GLib only.
 *
 * Supported: little-endian ELF64 shared objects with section headers
 * (.dynsym and its string table), the descriptor's pointers given by
 * RELATIVE (or absolute, against a defined symbol) RELA relocations of
 * x86-64 or AArch64, or by the stored value where there is none (which
 * also covers RELR-packed relocations, whose addend is stored in place).
 * Anything else (ELF32, big-endian, no section headers, other machines'
 * relocations at the descriptor) is refused with DDM_ELF_ERROR_UNSUPPORTED
 * naming what it met, never guessed.
 */
#ifndef DDM_ELFDESC_H
#define DDM_ELFDESC_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#define DDM_ELF_ERROR (ddm_elf_error_quark())
GQuark ddm_elf_error_quark(void);

typedef enum {
    DDM_ELF_ERROR_MALFORMED,     /* an offset, size or count does not fit the file */
    DDM_ELF_ERROR_UNSUPPORTED,   /* a valid file this reader does not read (see above) */
    DDM_ELF_ERROR_NO_DESCRIPTOR  /* no defined ddm_plugin_descriptor in .dynsym */
} DdmElfError;

/** The longest descriptor string read (name, version, license, summary). */
#define DDM_ELF_DESC_STRING_MAX 4096u

/** What the file says the descriptor holds. */
typedef struct DdmElfDescriptor {
    /* the frozen prefix */
    uint32_t magic;
    uint16_t abi_major;
    uint16_t abi_minor;
    uint32_t desc_size;
    /* The rest is read only when the magic is DDM_PLUGIN_MAGIC and
     * desc_size covers the 1.0 descriptor (its layout is known then). */
    gboolean has_fields;
    char *name; /* UTF-8, at most DDM_ELF_DESC_STRING_MAX bytes; NULL for a NULL pointer */
    char *version;
    char *license;
    char *summary;
    gboolean has_init; /* init is not NULL (never called, never resolved) */
} DdmElfDescriptor;

/* Free the strings of @d and zero it. */
void ddm_elf_descriptor_clear(DdmElfDescriptor *d);

/* Read the descriptor of the ELF file whose @len bytes are @file into @out
 * (cleared first; ddm_elf_descriptor_clear() it after, also on failure).
 * Every offset is checked against @len, every count against what fits in
 * it, every string capped. FALSE + @error (DDM_ELF_ERROR) otherwise. */
gboolean ddm_elf_read_descriptor(const uint8_t *file, size_t len, DdmElfDescriptor *out,
                                 GError **error);

#endif /* DDM_ELFDESC_H */
