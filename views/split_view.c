/* leakhound - SPDX-License-Identifier: MIT
 *
 * split_view.c: rendering the lost/reachable split of the report (split_view.h).
 */
#include "split_view.h"

#include <inttypes.h>

#include "leaksplit.h"
#include "text.h"

static const int order[] = {LH_CLASS_DEFINITE, LH_CLASS_INDIRECT, LH_CLASS_POSSIBLE,
                            LH_CLASS_REACHABLE};
static const char *names[] = {"definitely lost", "indirectly lost", "possibly lost",
                              "still reachable"};
static const char *keys[] = {"definitely_lost", "indirectly_lost", "possibly_lost",
                             "still_reachable"};

void
lh_text_leak_split(FILE *out, const lh_report_t *rep)
{
    const lh_leak_split_t *ls = rep->split;
    if (!ls || !ls->present) {
        return;
    }
    fputs("  leak summary:  ", out);
    for (int i = 0; i < 4; i++) {
        fprintf(out, "%s%s: %" PRIu64 " bytes in %" PRIu64 " blocks", i ? "; " : "", names[i],
                ls->total.bytes[order[i]], ls->total.blocks[order[i]]);
    }
    fputs(" (from the exit snapshot's pointers)\n", out);
}

void
lh_text_site_split(FILE *out, const lh_report_t *rep, const lh_site_t *site)
{
    const lh_class_counts_t *c = rep->split ? lh_leak_split_site(rep->split, site->stack_id)
                                            : NULL;
    char h[32];
    int first = 1;
    if (!c) {
        return;
    }
    fputs("    kind:", out);
    for (int i = 0; i < 4; i++) {
        if (c->blocks[order[i]]) {
            fprintf(out, "%s %" PRIu64 " %s (%s)", first ? "" : ",", c->blocks[order[i]],
                    names[i], lh_text_human_bytes(h, sizeof h, c->bytes[order[i]]));
            first = 0;
        }
    }
    fputc('\n', out);
}

static void
json_counts(FILE *out, const lh_class_counts_t *c)
{
    fputc('{', out);
    for (int i = 0; i < 4; i++) {
        fprintf(out, "%s\"%s\": {\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 "}",
                i ? ", " : "", keys[i], c->bytes[order[i]], c->blocks[order[i]]);
    }
    fputc('}', out);
}

void
lh_json_leak_split(FILE *out, const lh_report_t *rep)
{
    if (rep->split && rep->split->present) {
        fputs(",\n \"leak_summary\": ", out);
        json_counts(out, &rep->split->total);
    }
}

void
lh_json_site_split(FILE *out, const lh_report_t *rep, const lh_site_t *site)
{
    if (!rep->split || !rep->split->present) {
        return;
    }
    const lh_class_counts_t *c = lh_leak_split_site(rep->split, site->stack_id);
    fputs(", \"classification\": ", out);
    if (c) {
        json_counts(out, c);
    } else {
        fputs("null", out);
    }
}
