/* leakhound - SPDX-License-Identifier: MIT
 *
 * profile.c: a collecting pass turned into profile data (see profile.h). Strings,
 * functions and locations are interned with open-addressing hashes so that a frame seen in
 * a thousand stacks is symbolized and stored once.
 */
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dupstr.h"
#include "funcs.h"
#include "grow.h"
#include "hash.h"
#include "report.h"

/* An open-addressing index over the n entries of a table, holding entry positions
 * (UINT32_MAX: empty); the entries' keys come from key(ctx, i). */
typedef struct hindex {
    uint32_t *slot;
    size_t mask;
} hindex_t;

typedef struct builder {
    hindex_t str_ix;
    size_t str_cap;
    uint64_t *fn_key; /* name id << 32 | file id, per function */
    size_t fn_key_cap, functions_cap;
    hindex_t fn_ix;
    /* every address (or script frame) met: its key, epoch and location id (0: the agent's) */
    struct met {
        uint64_t key, epoch;
        uint32_t id;
    } *met;
    size_t n_met, met_cap;
    hindex_t loc_ix;
    size_t locations_cap, lines_cap, samples_cap, sample_locs_cap;
    lh_collect_t *c;
    lh_err_t *err;
} builder_t;

/* Keeps the index at most half full for n + 1 entries. */
static int
index_grow(hindex_t *ix, size_t n, uint64_t (*key)(const void *, size_t), const void *ctx)
{
    if ((n + 1) * 2 <= ix->mask + 1 && ix->slot) {
        return 0;
    }
    size_t cap = ix->slot ? (ix->mask + 1) * 2 : 1024;
    return lh_index_rebuild(&ix->slot, &ix->mask, cap, 0, n, key, ctx);
}

static uint64_t
str_key(const void *ctx, size_t i)
{
    return lh_hash_str(((const lh_profile_t *)ctx)->strings[i]);
}

long
lh_profile_string(lh_profile_t *p, const char *s)
{
    builder_t *b = p->priv;
    if (!s) {
        s = "";
    }
    if (index_grow(&b->str_ix, p->n_strings, str_key, p) < 0) {
        return -1;
    }
    size_t j = lh_hash_str(s) & b->str_ix.mask;
    while (b->str_ix.slot[j] != UINT32_MAX) {
        if (strcmp(p->strings[b->str_ix.slot[j]], s) == 0) {
            return b->str_ix.slot[j];
        }
        j = (j + 1) & b->str_ix.mask;
    }
    if (lh_grow(&p->strings, &b->str_cap, p->n_strings, sizeof *p->strings, 256) < 0 ||
        !(p->strings[p->n_strings] = strdup(s))) {
        return -1;
    }
    b->str_ix.slot[j] = (uint32_t)p->n_strings;
    return (long)p->n_strings++;
}

static uint64_t
fn_key(const void *ctx, size_t i)
{
    return lh_hash_mix(((const builder_t *)ctx)->fn_key[i]);
}

/* The function id of (name, file), added when new; 0 when out of memory. */
static uint64_t
function(lh_profile_t *p, const char *name, const char *file)
{
    builder_t *b = p->priv;
    long ns = lh_profile_string(p, name), fs = lh_profile_string(p, file);
    if (ns < 0 || fs < 0 || index_grow(&b->fn_ix, p->n_functions, fn_key, b) < 0) {
        return 0;
    }
    uint64_t key = (uint64_t)ns << 32 | (uint64_t)fs;
    size_t j = lh_hash_mix(key) & b->fn_ix.mask;
    while (b->fn_ix.slot[j] != UINT32_MAX) {
        if (b->fn_key[b->fn_ix.slot[j]] == key) {
            return b->fn_ix.slot[j] + 1;
        }
        j = (j + 1) & b->fn_ix.mask;
    }
    if (lh_grow(&b->fn_key, &b->fn_key_cap, p->n_functions, sizeof *b->fn_key, 256) < 0 ||
        lh_grow(&p->functions, &b->functions_cap, p->n_functions, sizeof *p->functions, 256) <
            0) {
        return 0;
    }
    b->fn_key[p->n_functions] = key;
    p->functions[p->n_functions] = (lh_profile_function_t){(size_t)ns, (size_t)fs};
    b->fn_ix.slot[j] = (uint32_t)p->n_functions;
    return ++p->n_functions;
}

static uint64_t
loc_key(const void *ctx, size_t i)
{
    const struct met *m = &((const builder_t *)ctx)->met[i];
    return lh_hash_mix(m->key ^ lh_hash_mix(m->epoch));
}

/* Looks (key, epoch) up among the addresses met. Returns 1 with *id set when known; 0 with
 * *slot where it goes when new; -1 when out of memory. */
static int
loc_find(builder_t *b, uint64_t key, uint64_t epoch, long *id, size_t *slot)
{
    if (index_grow(&b->loc_ix, b->n_met, loc_key, b) < 0) {
        return -1;
    }
    size_t j = lh_hash_mix(key ^ lh_hash_mix(epoch)) & b->loc_ix.mask;
    while (b->loc_ix.slot[j] != UINT32_MAX) {
        const struct met *m = &b->met[b->loc_ix.slot[j]];
        if (m->key == key && m->epoch == epoch) {
            *id = m->id;
            return 1;
        }
        j = (j + 1) & b->loc_ix.mask;
    }
    *slot = j;
    return 0;
}

/* Records (key, epoch) at slot with location id (0: dropped); starts a location with
 * that id when id != 0. Returns 0 or -1. */
static int
loc_add(lh_profile_t *p, uint64_t key, uint64_t epoch, size_t slot, uint64_t mapping,
        uint64_t address, int dropped)
{
    builder_t *b = p->priv;
    if (lh_grow(&b->met, &b->met_cap, b->n_met, sizeof *b->met, 1024) < 0 ||
        (!dropped && lh_grow(&p->locations, &b->locations_cap, p->n_locations,
                             sizeof *p->locations, 1024) < 0)) {
        return -1;
    }
    b->met[b->n_met] = (struct met){key, epoch, dropped ? 0 : (uint32_t)p->n_locations + 1};
    b->loc_ix.slot[slot] = (uint32_t)b->n_met++;
    if (!dropped) {
        p->locations[p->n_locations++] =
            (lh_profile_location_t){mapping, address, p->n_lines, 0};
    }
    return 0;
}

/* Adds a line to the last location. Returns 0 or -1. */
static int
add_line(lh_profile_t *p, const char *name, const char *file, uint32_t line)
{
    builder_t *b = p->priv;
    uint64_t fid = function(p, name, file);
    if (!fid || lh_grow(&p->lines, &b->lines_cap, p->n_lines, sizeof *p->lines, 1024) < 0) {
        return -1;
    }
    p->lines[p->n_lines++] = (lh_profile_line_t){fid, line};
    p->locations[p->n_locations - 1].n_lines++;
    return 0;
}

/* The location id of ip (symbolized when new): 0 for an agent frame, -1 on error. */
static long
location(lh_profile_t *p, uint64_t ip, uint64_t epoch)
{
    builder_t *b = p->priv;
    long id;
    size_t slot;
    int found = loc_find(b, ip, epoch, &id, &slot);
    if (found != 0) {
        return found < 0 ? -1 : id;
    }
    const lh_frame_t *fr;
    int nf = lh_sym_ip(lh_collect_symbolizer(b->c), ip, epoch, &fr, b->err);
    if (nf < 0) {
        return -1;
    }
    int agent = nf > 0 && lh_frame_is_agent(&fr[nf - 1]);
    long mi = lh_modules_find(&lh_trace_parts(lh_collect_trace(b->c))->modules, ip, epoch);
    if (loc_add(p, ip, epoch, slot, mi >= 0 ? (uint64_t)mi + 1 : 0, ip, agent) < 0) {
        return -1;
    }
    if (agent) {
        return 0;
    }
    for (int i = 0; i < nf; i++) {
        char name[512];
        if (add_line(p, lh_funcs_frame_name(&fr[i], name, sizeof name), fr[i].file,
                     fr[i].line) < 0) {
            return -1;
        }
    }
    return (long)p->n_locations;
}

/* The location of a script frame: keyed by its function string, which the trace's frame
 * table owns once per script frame, with an epoch no native stack has. Returns its id, or
 * -1. */
static long
script_location(lh_profile_t *p, const lh_frame_t *f)
{
    builder_t *b = p->priv;
    uint64_t key = (uint64_t)(uintptr_t)f->function;
    long id;
    size_t slot;
    int found = loc_find(b, key, UINT64_MAX, &id, &slot);
    if (found != 0) {
        return found < 0 ? -1 : id;
    }
    if (loc_add(p, key, UINT64_MAX, slot, 0, 0, 0) < 0 ||
        add_line(p, f->function, f->file, f->line) < 0) {
        return -1;
    }
    return (long)p->n_locations;
}

static int
oom(lh_err_t *err)
{
    return lh_err_set(err, LH_ENOMEM, "out of memory building the profile");
}

/* Appends location id l (0: dropped) to the sample being built. */
static int
sample_loc(lh_profile_t *p, long l)
{
    builder_t *b = p->priv;
    if (l < 0 || (l > 0 && lh_grow(&p->sample_locs, &b->sample_locs_cap, p->n_sample_locs,
                                   sizeof *p->sample_locs, 1024) < 0)) {
        return oom(b->err);
    }
    if (l > 0) {
        p->sample_locs[p->n_sample_locs++] = (uint64_t)l;
    }
    return 0;
}

/* The locations of a stack with script frames: those of the frames a user reads (the
 * site's, scriptstack.h), one per native return address and one per script frame. */
static int
script_stack_locations(lh_profile_t *p, uint32_t id, uint64_t epoch)
{
    builder_t *b = p->priv;
    const lh_site_t *site;
    int rc = lh_collect_site(b->c, id, &site, b->err);
    for (size_t i = 0; rc == 0 && i < site->n_frames; i++) {
        const lh_frame_t *f = &site->frames[i];
        if (f->lang != 0) {
            rc = sample_loc(p, script_location(p, f));
        } else if (i == 0 || f->ip != site->frames[i - 1].ip || site->frames[i - 1].lang != 0) {
            rc = sample_loc(p, location(p, f->ip, epoch)); /* else inlined: already added */
        }
    }
    return rc;
}

static int
mappings(lh_profile_t *p, lh_collect_t *c)
{
    const lh_modules_t *mods = &lh_trace_parts(lh_collect_trace(c))->modules;
    const char *exe = lh_trace_parts(lh_collect_trace(c))->info.exe;
    if (!(p->mappings = calloc(mods->n ? mods->n : 1, sizeof *p->mappings))) {
        return -1;
    }
    for (size_t i = 0; i < mods->n; i++) {
        const lh_module_t *m = &mods->mods[i];
        uint64_t lo = UINT64_MAX, hi = 0;
        char build_id[2 * 64 + 1] = "";
        for (size_t s = 0; s < m->n_segs; s++) {
            if (m->segs[s].vaddr < lo) {
                lo = m->segs[s].vaddr;
            }
            if (m->segs[s].vaddr + m->segs[s].memsz > hi) {
                hi = m->segs[s].vaddr + m->segs[s].memsz;
            }
        }
        if (lo > hi) {
            lo = hi = 0;
        }
        for (size_t k = 0; k < m->build_id_len && k < 64; k++) {
            snprintf(build_id + 2 * k, 3, "%02x", m->build_id[k]);
        }
        long fs = lh_profile_string(p, m->path[0] ? m->path : exe);
        long bs = lh_profile_string(p, build_id);
        if (fs < 0 || bs < 0) {
            return -1;
        }
        p->mappings[p->n_mappings++] =
            (lh_profile_mapping_t){m->load_bias + lo, m->load_bias + hi, (size_t)fs,
                                   (size_t)bs};
    }
    return 0;
}

static int
samples(lh_profile_t *p, const lh_profile_opts_t *o)
{
    builder_t *b = p->priv;
    lh_collect_t *c = b->c;
    const lh_stacks_t *stacks = &lh_trace_parts(lh_collect_trace(c))->stacks;
    int rc = 0;
    for (uint32_t id = 0; rc == 0 && id < lh_collect_n_stacks(c); id++) {
        const lh_cstack_t *s = lh_collect_stack(c, id);
        uint64_t inuse_b = o && o->inuse_bytes ? o->inuse_bytes[id] : s->live_bytes;
        uint64_t inuse_n = o && o->inuse_blocks ? o->inuse_blocks[id] : s->live_blocks;
        const lh_stack_t *st = lh_stacks_get(stacks, id);
        if (!s->n_allocs && !inuse_n) {
            continue;
        }
        if (o && o->supp && o->supp->n) {
            const lh_site_t *site;
            if ((rc = lh_collect_site(c, id, &site, b->err)) < 0) {
                break;
            }
            if (lh_supp_match(o->supp, site->frames, site->n_frames) >= 0) {
                continue;
            }
        }
        size_t first = p->n_sample_locs;
        if (st && st->n_script > 0) {
            rc = script_stack_locations(p, id, st->epoch);
        } else {
            for (size_t i = 0; rc == 0 && st && i < st->n_ips; i++) {
                rc = sample_loc(p, location(p, st->ips[i], st->epoch));
            }
        }
        if (rc == 0 && lh_grow(&p->samples, &b->samples_cap, p->n_samples,
                               sizeof *p->samples, 256) < 0) {
            rc = oom(b->err);
        }
        if (rc == 0) {
            p->samples[p->n_samples++] = (lh_profile_sample_t){
                first, p->n_sample_locs - first, {s->n_allocs, s->alloc_bytes, inuse_n, inuse_b}};
        }
    }
    return rc;
}

int
lh_profile_build(lh_profile_t *p, lh_collect_t *c, const lh_profile_opts_t *opts,
                 lh_err_t *err)
{
    int rc;
    memset(p, 0, sizeof *p);
    builder_t *b = calloc(1, sizeof *b);
    if (!b) {
        return oom(err);
    }
    p->priv = b;
    b->c = c;
    b->err = err;
    p->time_ns = lh_trace_parts(lh_collect_trace(c))->info.realtime_start_ns;
    p->duration_ns = lh_collect_end_ns(c) - lh_collect_start_ns(c);
    if (lh_profile_string(p, "") != 0 || mappings(p, c) < 0) {
        rc = oom(err);
    } else {
        rc = samples(p, opts);
    }
    if (rc < 0) {
        lh_profile_fini(p);
    }
    return rc;
}

void
lh_profile_fini(lh_profile_t *p)
{
    builder_t *b = p->priv;
    lh_strv_free(p->strings, p->n_strings);
    LH_FREE_ALL(p->mappings, p->functions, p->locations, p->lines, p->samples, p->sample_locs);
    if (b) {
        LH_FREE_ALL(b->str_ix.slot, b->fn_key, b->fn_ix.slot, b->met, b->loc_ix.slot, b);
    }
    memset(p, 0, sizeof *p);
}
