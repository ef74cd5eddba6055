/* leakhound - SPDX-License-Identifier: MIT
 *
 * diff.c: `diff LABEL1 LABEL2`: what grew between two snapshots. The per-site live counts
 * at both snapshots come from their live sets (their index files, graphindex.h, written
 * by the first diff when missing) or, with --no-index, from one pass over the trace
 * (stream.h); sites (or functions) whose live bytes grew are listed, largest growth first.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"
#include "shell_int.h"

typedef struct counts {
    uint64_t *blocks, *bytes; /* by stack id */
    size_t n;
} counts_t;

static int
take(counts_t *c, const lh_replay_t *r)
{
    size_t n = lh_replay_n_stacks(r);
    c->blocks = calloc(n ? n : 1, sizeof *c->blocks);
    c->bytes = calloc(n ? n : 1, sizeof *c->bytes);
    if (!c->blocks || !c->bytes) {
        return LH_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const lh_stack_stats_t *st = lh_replay_stack(r, (uint32_t)i);
        c->blocks[i] = st->live_blocks;
        c->bytes[i] = st->live_bytes;
    }
    c->n = n;
    return 0;
}

typedef struct want {
    long ia, ib, idx;  /* the snapshot indices wanted, the last one seen */
    counts_t *a, *b;
} want_t;

/* The consumer of the one pass (stream.h): copies the counts at both snapshots, then ends
 * the pass. */
static int
at_snapshot(void *ctx, const lh_trace_t *t, const lh_replay_t *r, const lh_event_t *ev,
            lh_err_t *err)
{
    want_t *w = ctx;
    (void)t;
    if (ev->type != LH_REC_SNAPSHOT) {
        return 0;
    }
    w->idx++;
    if ((w->idx == w->ia && take(w->a, r) < 0) || (w->idx == w->ib && take(w->b, r) < 0)) {
        return lh_err_set(err, LH_ENOMEM, "diff: out of memory");
    }
    return w->idx >= w->ia && w->idx >= w->ib;
}

static int
collect(const char *path, int salvage, long ia, long ib, counts_t *a, counts_t *b,
        lh_err_t *err)
{
    want_t w = {ia, ib, -1, a, b};
    lh_consumer_t me = {at_snapshot, &w, 0};
    lh_stream_opts_t so = {salvage, &me, 1, NULL, NULL};
    lh_trace_t *t;
    lh_replay_t *r;
    int rc = lh_stream_run(path, &so, &t, &r, err);
    lh_replay_free(r);
    lh_trace_close(t);
    return rc;
}

/* The counts by stack id of a snapshot's live set, from its blocks. */
static int
from_blocks(const lh_heapgraph_t *hg, counts_t *c)
{
    size_t n = 0;
    for (uint32_t b = 0; b < hg->n_blocks; b++) {
        if (hg->blocks[b].stack_id >= n) {
            n = (size_t)hg->blocks[b].stack_id + 1;
        }
    }
    c->blocks = calloc(n ? n : 1, sizeof *c->blocks);
    c->bytes = calloc(n ? n : 1, sizeof *c->bytes);
    if (!c->blocks || !c->bytes) {
        return LH_ENOMEM;
    }
    for (uint32_t b = 0; b < hg->n_blocks; b++) {
        c->blocks[hg->blocks[b].stack_id]++;
        c->bytes[hg->blocks[b].stack_id] += hg->blocks[b].size;
    }
    c->n = n;
    return 0;
}

/* With snapshot indexes: both snapshots' live sets from their indexes (written when there
 * were none), so a later diff reads no trace. sa/sb: the snapshots opened (the shell's
 * own is not), whose sites name what they hold. */
static int
collect_indexed(lh_shell_t *sh, long ia, long ib, counts_t *a, counts_t *b,
                lh_snapshot_t *sa, lh_snapshot_t *sb, lh_err_t *err)
{
    const lh_heapgraph_t *ha = sh->hg, *hb = sh->hg;
    int rc;
    if ((ia != (long)sh->hg->cur && (rc = sh_open_snapshot(sh, NULL, ia, sa, err)) < 0) ||
        (ib != (long)sh->hg->cur && (rc = sh_open_snapshot(sh, NULL, ib, sb, err)) < 0)) {
        return rc;
    }
    ha = sa->hg ? sa->hg : ha;
    hb = sb->hg ? sb->hg : hb;
    if (from_blocks(ha, a) < 0 || from_blocks(hb, b) < 0) {
        return lh_err_set(err, LH_ENOMEM, "diff: out of memory");
    }
    return 0;
}

/* The heapgraph that names stack id i: one whose live set holds it (a loaded graph has the
 * sites of its own blocks only). */
static lh_heapgraph_t *
namer(lh_shell_t *sh, lh_snapshot_t *sa, lh_snapshot_t *sb, const counts_t *b, size_t i)
{
    if (sh->hg->trace) {
        return sh->hg;
    }
    lh_heapgraph_t *hb = sb->hg ? sb->hg : sh->hg, *ha = sa->hg ? sa->hg : sh->hg;
    return i < b->n && b->blocks[i] ? hb : ha;
}

static int
cmp_growth(const void *x, const void *y)
{
    const sh_growth_t *a = x, *b = y;
    int c = SH_DESC(a->dbytes, b->dbytes);
    return c ? c : sh_cmp_key_stack(a->key, a->stack_id, b->key, b->stack_id);
}

int
sh_cmd_diff(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    lh_heapgraph_t *hg = sh->hg;
    const char *la = NULL, *lb = NULL;
    int by_function = 0, by_given = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--by") == 0 && i + 1 < argc) {
            i++;
            by_given = 1;
            if (strcmp(argv[i], "function") == 0) {
                by_function = 1;
            } else if (strcmp(argv[i], "site") != 0) {
                return lh_err_set(err, LH_EINVAL, "diff: cannot group by '%s' (site or "
                                  "function)", argv[i]);
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return lh_err_set(err, LH_EINVAL, "diff: unknown option '%s'", argv[i]);
        } else if (!la) {
            la = argv[i];
        } else if (!lb) {
            lb = argv[i];
        } else {
            return lh_err_set(err, LH_EINVAL, "diff: two snapshots: diff LABEL1 LABEL2");
        }
    }
    if (!lb) {
        return lh_err_set(err, LH_EINVAL, "diff: two snapshots: diff LABEL1 LABEL2");
    }
    long ia = lh_heapgraph_find_snapshot(hg->snaps, hg->n_snaps, la, 0);
    long ib = lh_heapgraph_find_snapshot(hg->snaps, hg->n_snaps, lb, 1);
    if (ia < 0 || ib < 0) {
        return lh_err_set(err, LH_EINVAL, "diff: no snapshot '%s' (see snapshots)",
                          ia < 0 ? la : lb);
    }
    if (sh_obj_mode(sh) && !by_given) {
        return sh_obj_diff(sh, ia, ib, err); /* objects by class */
    }
    sh_note_no_stacks(sh);
    counts_t a = {0}, b = {0};
    sh_growth_t *g = NULL;
    size_t ng = 0;
    lh_snapshot_t sa = {0}, sb = {0};
    int rc = sh->no_index ? collect(sh->trace_path, sh->salvage, ia, ib, &a, &b, err)
                          : collect_indexed(sh, ia, ib, &a, &b, &sa, &sb, err);
    if (rc < 0) {
        goto done;
    }
    size_t n = a.n > b.n ? a.n : b.n;
    if (!(g = calloc(n ? n : 1, sizeof *g))) {
        rc = lh_err_set(err, LH_ENOMEM, "diff: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t ba = i < a.n ? a.blocks[i] : 0, bb = i < b.n ? b.blocks[i] : 0;
        uint64_t ya = i < a.n ? a.bytes[i] : 0, yb = i < b.n ? b.bytes[i] : 0;
        if (ba == bb && ya == yb) {
            continue;
        }
        const char *key = by_function ? lh_heapgraph_site_function(namer(sh, &sa, &sb, &b, i),
                                                                   (uint32_t)i)
                                      : "";
        sh_growth_t *x = NULL;
        for (size_t k = 0; by_function && k < ng; k++) {
            if (strcmp(g[k].key, key) == 0) {
                x = &g[k];
            }
        }
        if (!x) {
            x = &g[ng++];
            x->key = key;
            x->stack_id = (uint32_t)i;
        }
        x->dcount += (int64_t)bb - (int64_t)ba;
        x->dbytes += (int64_t)yb - (int64_t)ya;
        x->count_a += ba;
        x->count_b += bb;
    }
    lh_qsort(g, ng, sizeof *g, cmp_growth);
    fprintf(sh->out, "from snapshot %ld '%s' to %ld '%s':\n", ia + 1, hg->snaps[ia].label,
            ib + 1, hg->snaps[ib].label);
    fprintf(sh->out, "   %10s %10s  %15s  %s\n", "+bytes", "+blocks", "blocks", 
            by_function ? "function" : "site");
    size_t shown = 0;
    sh_rows_reset(sh);
    for (size_t i = 0; i < ng; i++) {
        char site[512];
        if (g[i].dbytes <= 0 && g[i].dcount <= 0) {
            continue;
        }
        fprintf(sh->out, "   %10" PRId64 " %10" PRId64 "  %6" PRIu64 " -> %-6" PRIu64 "  %s\n",
                g[i].dbytes, g[i].dcount, g[i].count_a, g[i].count_b,
                by_function ? g[i].key
                            : lh_heapgraph_site_str(namer(sh, &sa, &sb, &b, g[i].stack_id),
                                                    g[i].stack_id, site, sizeof site));
        shown++;
    }
    if (!shown) {
        fputs("   nothing grew\n", sh->out);
    }
    rc = 0;
done:
    free(a.blocks);
    free(a.bytes);
    free(b.blocks);
    free(b.bytes);
    free(g);
    sh_snapshot_fini(&sa);
    sh_snapshot_fini(&sb);
    return rc;
}
