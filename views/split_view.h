/* leakhound - SPDX-License-Identifier: MIT
 *
 * split_view.h: the report's lost/reachable split (leaksplit.h) as text and JSON, hooked
 * into text.c and json.c; each prints nothing when the report has no split.
 *
 * Text: "  leak summary:  definitely lost: X bytes in N blocks; indirectly lost: ...;
 * possibly lost: ...; still reachable: ..." after the summary, and per site a line
 * "    kind: 1 definitely lost (56 B), 4 indirectly lost (224 B)".
 * JSON: ", \"leak_summary\": {\"definitely_lost\": {\"bytes\", \"blocks\"},
 * \"indirectly_lost\", \"possibly_lost\", \"still_reachable\"}" as a member of the top
 * object, and ", \"classification\": {same four members}" in each site (null when none of
 * its blocks was live at the snapshot).
 */
#ifndef LH_SPLIT_VIEW_H
#define LH_SPLIT_VIEW_H

#include <stdio.h>

#include "report.h"

void lh_text_leak_split(FILE *out, const lh_report_t *rep);
void lh_text_site_split(FILE *out, const lh_report_t *rep, const lh_site_t *site);
void lh_json_leak_split(FILE *out, const lh_report_t *rep);
void lh_json_site_split(FILE *out, const lh_report_t *rep, const lh_site_t *site);

#endif /* LH_SPLIT_VIEW_H */
