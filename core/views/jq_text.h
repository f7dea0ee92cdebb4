/* SPDX-License-Identifier: Apache-2.0
 *
 * The jq form of a table view (jq.h, doc/json.md) written as JSON text
 * straight from the view store, with no json-glib tree in between: the VM
 * list of `ddmon --json vms`, one row a VM with its headline figures
 * merged in, is the largest answer a server with many VMs gives (a tree
 * of it and its serialising cost ~100,000 instructions a VM a request,
 * the client parsing and writing it again as much; issue 16).
 *
 * The contract: the text is byte for byte what ddm_ctl_encode writes
 * (json-glib's generator with raw 0x1f escaped; without the newline) for ddm_jq_vms() of the
 * server's forms of the same views (ddm_view_to_json), so a client may
 * print it as it comes. tests/unit/views/test-jq-text.c and
 * tests/fuzz/fuzz-jq-text.c compare the two.
 *  - Strings are escaped as json-glib 1.6 escapes them (ddm_json_text_string:
 *    '"' and '\\' with a backslash; \b \f \n \r \t; the other bytes 0x01 to
 *    0x1f and 0x7f as \u00XX; every other byte, UTF-8 included, as it is),
 *    except 0x1f, which json-glib leaves raw (RFC 8259 forbids it) and
 *    ddm_ctl_encode escapes after it; a view's strings are valid UTF-8.
 *  - Numbers: integers as "%" G_GINT64_FORMAT; a double as json-glib 1.6
 *    writes it (g_ascii_dtostr, ".0" when there is no '.'), except that
 *    ".0" is not appended after an exponent (json-glib's 1e+17.0 is no
 *    JSON); NaN and infinities are null, as ddm_view_to_json writes them.
 */
#ifndef DDM_VIEWS_JQ_TEXT_H
#define DDM_VIEWS_JQ_TEXT_H

#include <glib.h>

#include "core/views/views.h"

/** Append @s as a JSON string literal (quotes included), escaped as
 *  ddm_ctl_encode escapes it; NULL is written as null. */
void ddm_json_text_string(GString *out, const char *s);

/** Append @d as json-glib writes a double, valid where json-glib's is
 *  not (exponents); null when not finite. */
void ddm_json_text_double(GString *out, double d);

/** Append @i as "%" G_GINT64_FORMAT writes it, without printf's cost (a
 * number a cell). */
void ddm_json_text_int(GString *out, gint64 i);

/** Append the jq form of table view @table as a document of its own (with
 *  "schema") where each row whose "key" member is a string gets, after
 *  its own members, the fields of the record view of @records (in order;
 *  a later one for the same VM key wins) whose VM key that is, under
 *  their jq keys, except those the row has already: what
 *  ddm_jq_vms(table, records, TRUE) gives (cli/jsonout.c). Views of
 *  @records that are no record or have no VM key are skipped; @records
 *  may be NULL. @table must be a table. */
void ddm_jq_table_with_figures_text(GString *out, const ddm_view *table, const GPtrArray *records);

/** What ddm_jq_table_with_figures_more_text asks for: the figures of VMs
 *  that have no record in @records, put in @figures (VM key, which must
 *  live until the call returns -> its members' text ",\"k\":v...",
 *  g_malloc'd, freed by the table) as a record's would be: under their jq
 *  keys, leaving out those in @row_keys (the row's own members). */
typedef void (*DdmJqMoreFiguresFn)(GHashTable *figures, GHashTable *row_keys, gpointer ud);

/** ddm_jq_table_with_figures_text, then @more (NULL: none) adds the
 *  figures of VMs read without a view (the core's headline figures:
 *  core/pluginhost/registry_headline.c). */
void ddm_jq_table_with_figures_more_text(GString *out, const ddm_view *table,
                                         const GPtrArray *records, DdmJqMoreFiguresFn more,
                                         gpointer ud);

#endif /* DDM_VIEWS_JQ_TEXT_H */
