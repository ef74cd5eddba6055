/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_log.c: `leakhound log FILE`: the raw event history, in time order, filtered by
 * address, site or thread; each allocation with the first frames of its stack.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "pass.h"

const char lh_cmd_log_usage[] =
    "usage: leakhound log FILE [--addr ADDR] [--site N] [--thread TID] [--limit N]\n"
    "                     [--frames N]\n"
    "\n"
    "The events of a trace in time order: time since start, thread, event, address, size and\n"
    "site (the stack id that `report`, `leaks` and `report --growth` show as [site N]). A\n"
    "free names the block it ended and how long that block lived. With no filter, every\n"
    "allocation, free, mark and snapshot.\n"
    "\n"
    "  --addr ADDR    only events that allocated, freed or reallocated ADDR (0x... or decimal)\n"
    "  --site N       only blocks allocated at site N, and their frees\n"
    "  --thread TID   only events of this thread\n"
    "  --limit N      show the first N matching events (default 1000; 0: all)\n"
    "  --frames N     text: frames shown per allocation (default 4)\n";

typedef struct log_args {
    lh_trace_args_t load;
    lh_hist_filter_t f;
    unsigned long frames;
} log_args_t;

static int
parse_addr(const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *s == '-' || !end || *end || errno || v == 0) {
        return -1;
    }
    *out = v;
    return 0;
}

static int
parse_args(int argc, char **argv, log_args_t *a, lh_err_t *err)
{
    const char *addr = NULL;
    unsigned long site = ULONG_MAX, tid = ULONG_MAX, limit = 1000;
    int rc;
    const lh_opt_t opts[] = {
        {"--addr", NULL, LH_OPT_STR, &addr, 0, 0, NULL},
        {"--site", NULL, LH_OPT_UINT, &site, 0, 1u << 24, NULL},
        {"--thread", NULL, LH_OPT_UINT, &tid, 1, 0xffffffffu, NULL},
        {"--limit", NULL, LH_OPT_UINT, &limit, 0, 100000000, NULL},
        {"--frames", NULL, LH_OPT_UINT, &a->frames, 1, 1000, NULL},
    };
    a->frames = 4;
    if ((rc = LH_ARGS_PARSE(log, LH_ARGS_FORMAT, opts, argc, argv, &a->load, err)) != 0) {
        return rc;
    }
    if (addr && parse_addr(addr, &a->f.addr) < 0) {
        return lh_err_set(err, LH_EINVAL, "log: --addr: expected an address such as "
                          "0x55d0c0a012a0, got '%s'", addr);
    }
    a->f.has_addr = addr != NULL;
    a->f.has_site = site != ULONG_MAX;
    a->f.site = (uint32_t)site;
    a->f.has_tid = tid != ULONG_MAX;
    a->f.tid = (uint32_t)tid;
    a->f.limit = limit;
    return 0;
}

/* The stack that allocated an event's block: its own for an allocation, the freed block's
 * for a free; UINT32_MAX for neither. */
static uint32_t
event_stack(const void *row)
{
    const lh_hist_entry_t *e = row;
    if (e->type == LH_REC_ALLOC || e->type == LH_REC_REALLOC) {
        return e->stack_id;
    }
    return e->has_block ? e->block_stack : UINT32_MAX;
}

static void
free_event(void *row)
{
    free(((lh_hist_entry_t *)row)->label);
}

int
lh_cmd_log(int argc, char **argv, lh_err_t *err)
{
    log_args_t a = {0};
    lh_pass_t p;
    lh_history_t h;
    uint32_t *ids = NULL;
    size_t n_ids = 0;
    int rc = parse_args(argc, argv, &a, err);
    if (rc != 0) {
        return rc < 0 ? rc : 0;
    }
    lh_history_init(&h, &a.f);
    if ((rc = lh_pass_run(&p, &a.load, NULL, &h, NULL, err)) < 0) {
        lh_history_fini(&h);
        return rc;
    }
    size_t n_kept = h.n;
    if ((rc = lh_pass_drop_suppressed(&p, h.v, &h.n, sizeof *h.v, event_stack, free_event,
                                      err)) < 0) {
        goto done;
    }
    h.n_matched -= n_kept - h.n;
    /* The distinct stacks of the allocations shown, sorted, for the view's lookup. */
    if (!(ids = malloc((h.n ? h.n : 1) * sizeof *ids))) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < h.n; i++) {
        if (h.v[i].type == LH_REC_ALLOC || h.v[i].type == LH_REC_REALLOC) {
            ids[n_ids++] = h.v[i].stack_id;
        }
    }
    lh_qsort(ids, n_ids, sizeof *ids, lh_cli_cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n_ids; i++) {
        if (i == 0 || ids[i] != ids[k - 1]) {
            ids[k++] = ids[i];
        }
    }
    n_ids = k;
    if ((rc = lh_pass_show(&p, ids, sizeof *ids, 0, n_ids, err)) < 0) {
        goto done;
    }
    p.view.max_frames = a.frames;
    rc = lh_view_log(stdout, &p.view, &h, p.sites, n_ids, err);
done:
    free(ids);
    lh_history_fini(&h);
    lh_pass_close(&p);
    return rc < 0 ? rc : 0;
}
