/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_log.c: `leakhound log FILE`: the raw event history, in time order, filtered by
 * address, site or thread; each allocation with the first frames of its stack.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "pass.h"

const char lh_cmd_log_usage[] =
    "usage: leakhound log FILE [--addr ADDR] [--site N] [--thread TID] [--limit N]\n"
    "                     [--frames N] [--format text|json] [--salvage]\n"
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
    "  --frames N     text: frames shown per allocation (default 4)\n"
    "  --format F     text (default) or json\n"
    "  --salvage      read a truncated or damaged trace up to the damage\n";

typedef struct log_args {
    const char *path;
    lh_hist_filter_t f;
    unsigned long frames;
    int json, salvage, help;
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
    unsigned long n;
    a->f.limit = 1000;
    a->frames = 4;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        int missing = 0;
        if (arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (a->path) {
                return lh_err_set(err, LH_EINVAL, "log: one trace at a time (got '%s' and '%s')",
                                  a->path, arg);
            }
            a->path = arg;
        } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            a->help = 1;
        } else if (strcmp(arg, "--salvage") == 0) {
            a->salvage = 1;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--addr", &missing))) {
            if (parse_addr(v, &a->f.addr) < 0) {
                return lh_err_set(err, LH_EINVAL, "log: --addr: expected an address such as "
                                  "0x55d0c0a012a0, got '%s'", v);
            }
            a->f.has_addr = 1;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--site", &missing))) {
            if (lh_cli_parse_uint("--site", v, 0, 1u << 24, &n, err) < 0) {
                return LH_EINVAL;
            }
            a->f.has_site = 1;
            a->f.site = (uint32_t)n;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--thread", &missing))) {
            if (lh_cli_parse_uint("--thread", v, 1, 0xffffffffu, &n, err) < 0) {
                return LH_EINVAL;
            }
            a->f.has_tid = 1;
            a->f.tid = (uint32_t)n;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--limit", &missing))) {
            if (lh_cli_parse_uint("--limit", v, 0, 100000000, &n, err) < 0) {
                return LH_EINVAL;
            }
            a->f.limit = n;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--frames", &missing))) {
            if (lh_cli_parse_uint("--frames", v, 1, 1000, &a->frames, err) < 0) {
                return LH_EINVAL;
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--format", &missing))) {
            if (strcmp(v, "json") != 0 && strcmp(v, "text") != 0) {
                return lh_err_set(err, LH_EINVAL, "log: unknown format '%s' (text or json)", v);
            }
            a->json = strcmp(v, "json") == 0;
        } else if (missing) {
            return lh_err_set(err, LH_EINVAL, "log: option '%s' needs a value", arg);
        } else {
            return lh_err_set(err, LH_EINVAL, "log: unknown option '%s' (see leakhound help log)",
                              arg);
        }
    }
    if (!a->path && !a->help) {
        return lh_err_set(err, LH_EINVAL, "log: which trace? usage: leakhound log FILE");
    }
    return 0;
}

static int
cmp_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : a > b;
}

int
lh_cmd_log(int argc, char **argv, lh_err_t *err)
{
    log_args_t a = {0};
    lh_pass_t p;
    lh_history_t h;
    lh_site_t *sites = NULL;
    uint32_t *ids = NULL;
    size_t n_ids = 0;
    int rc = parse_args(argc, argv, &a, err);
    if (rc < 0 || a.help) {
        if (a.help) {
            fputs(lh_cmd_log_usage, stdout);
        }
        return rc;
    }
    lh_history_init(&h, &a.f);
    if ((rc = lh_pass_run(&p, a.path, a.salvage, NULL, &h, err)) < 0) {
        lh_history_fini(&h);
        return rc;
    }
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
    lh_qsort(ids, n_ids, sizeof *ids, cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n_ids; i++) {
        if (i == 0 || ids[i] != ids[k - 1]) {
            ids[k++] = ids[i];
        }
    }
    n_ids = k;
    if ((rc = lh_pass_sites(&p, ids, n_ids, &sites, err)) < 0) {
        goto done;
    }
    lh_pass_warnings(&p);
    lh_tl_view_t v;
    lh_pass_view(&p, a.json, &v);
    v.max_frames = a.frames;
    rc = lh_view_log(stdout, &v, &h, sites, n_ids, err);
done:
    lh_pass_sites_free(sites, n_ids);
    free(ids);
    lh_history_fini(&h);
    lh_pass_close(&p);
    return rc < 0 ? rc : 0;
}
