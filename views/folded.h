/* leakhound - SPDX-License-Identifier: MIT
 *
 * folded.h: folded stacks, one line per distinct path: `frame;frame;frame value`, root
 * (outermost, `main` when it is on the stack) first, the value being the metric in bytes
 * (growth: bytes per mark, rounded). The input of flamegraph.pl, speedscope and inferno.
 *
 * Frames are function names (funcs.h), inlined ones included; ';' inside a name becomes
 * ':' and control characters '?', so that every line splits back the same way. Identical
 * paths are merged; lines are sorted by path. Paths whose value is 0 are left out.
 */
#ifndef LH_VIEW_FOLDED_H
#define LH_VIEW_FOLDED_H

#include <stdio.h>

#include "collect.h"
#include "err.h"
#include "funcs.h"

int lh_view_folded(FILE *out, lh_collect_t *c, const lh_funcs_t *f, const lh_supp_t *supp,
                   lh_metric_t m, lh_err_t *err);

#endif /* LH_VIEW_FOLDED_H */
