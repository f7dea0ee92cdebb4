/* SPDX-License-Identifier: Apache-2.0
 *
 * The jq form of a table view (jq.h, doc/json.md) written as JSON text
 * straight from the view store, with no json-glib tree in between: the VM
 * list of `ddmon --json vms`, one row a VM with its headline figures
 * merged in, is the largest answer a server with many VMs gives (a tree
 * of it and its serialising cost ~100,000 instructions a VM a request,
 * the client parsing and writing it again as much; issue 16).
 *
 * The contract: the text is byte for byte what json-glib 's generator
 * writes (ddm_ctl_encode, without the newline) for ddm_jq_vms() of the
 * server's forms of the same views (ddm_view_to_json), so a client may
 * print it as it comes. tests/unit/views/test-jq-text.c and
 * tests/fuzz/fuzz-jq-text.c compare the two.
 *  - Strings are escaped as json-glib 1.6 escapes them (ddm_json_text_string:
 *    '"' and '\\' with a backslash; \b \f \n \r \t; the other bytes 0x01 to
 *    0x1e and 0x7f as \u00XX; every other byte, 0x1f and UTF-8 included, as
 *    it is); a view's strings are valid UTF-8 (the store sees to it).
 *  - Numbers: integers as "%" G_GINT64_FORMAT; a double is written by
 *    json-glib's own generator (its format has quirks worth not copying);
 *    NaN and infinities are null, as ddm_view_to_json writes them.
 */
#ifndef DDM_VIEWS_JQ_TEXT_H
#define DDM_VIEWS_JQ_TEXT_H

#include <glib.h>

#include "core/views/views.h"

/** Append @s as a JSON string literal (quotes included), escaped as
 *  json-glib escapes it; NULL is written as null. */
void ddm_json_text_string(GString *out, const char *s);

/** Append @d as json-glib writes a double; null when not finite. */
void ddm_json_text_double(GString *out, double d);

/** Append the jq form of table view @table as a document of its own (with
 *  "schema") where each row whose "key" member is a string gets, after
 *  its own members, the fields of the record view of @records (in order;
 *  a later one for the same VM key wins) whose VM key that is, under
 *  their jq keys, except those the row has already: what
 *  ddm_jq_vms(table, records, TRUE) gives (cli/jsonout.c). Views of
 *  @records that are no record or have no VM key are skipped; @records
 *  may be NULL. @table must be a table. */
void ddm_jq_table_with_figures_text(GString *out, const ddm_view *table, const GPtrArray *records);

#endif /* DDM_VIEWS_JQ_TEXT_H */
