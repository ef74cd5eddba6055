/* leakhound - SPDX-License-Identifier: MIT
 *
 * modules.c: the module table.
 */
#include "modules.h"

#include <stdlib.h>
#include <string.h>

#include "dupstr.h"
#include "grow.h"

void
lh_modules_fini(lh_modules_t *t)
{
    LH_FREE_EACH3(t->mods, t->n, lh_module_t, path, build_id, segs);
    *t = (lh_modules_t){0};
}

int
lh_modules_add(lh_modules_t *t, const char *path, size_t path_len, uint64_t load_bias,
               const uint8_t *build_id, size_t build_id_len, const lh_segment_t *segs,
               size_t n_segs, uint64_t epoch)
{
    lh_module_t m = {0};
    if (lh_grow(&t->mods, &t->cap, t->n, sizeof *t->mods, 16) < 0) {
        return LH_ENOMEM;
    }
    m.path = malloc(path_len + 1);
    if (!m.path) {
        goto fail;
    }
    if (path_len) {
        memcpy(m.path, path, path_len);
    }
    m.path[path_len] = '\0';
    if (build_id_len) {
        m.build_id = malloc(build_id_len);
        if (!m.build_id) {
            goto fail;
        }
        memcpy(m.build_id, build_id, build_id_len);
        m.build_id_len = build_id_len;
    }
    if (n_segs) {
        m.segs = malloc(n_segs * sizeof *segs);
        if (!m.segs) {
            goto fail;
        }
        memcpy(m.segs, segs, n_segs * sizeof *segs);
        m.n_segs = n_segs;
    }
    m.lo = UINT64_MAX;
    for (size_t s = 0; s < n_segs; s++) {
        uint64_t lo = load_bias + segs[s].vaddr;
        if (segs[s].memsz == 0) {
            continue;
        }
        if (segs[s].memsz > UINT64_MAX - lo) { /* wraps (a corrupt record): no bound */
            m.lo = 0;
            m.hi = UINT64_MAX;
            break;
        }
        m.lo = lo < m.lo ? lo : m.lo;
        m.hi = lo + segs[s].memsz > m.hi ? lo + segs[s].memsz : m.hi;
    }
    m.load_bias = load_bias;
    m.epoch_loaded = epoch;
    m.epoch_unloaded = LH_EPOCH_NEVER;
    t->mods[t->n] = m;
    return (int)t->n++;
fail:
    free(m.path);
    free(m.build_id);
    return LH_ENOMEM;
}

int
lh_modules_unload(lh_modules_t *t, const char *path, size_t path_len, uint64_t load_bias,
                  uint64_t epoch)
{
    for (size_t i = t->n; i-- > 0;) {
        lh_module_t *m = &t->mods[i];
        if (m->epoch_unloaded == LH_EPOCH_NEVER && m->load_bias == load_bias &&
            (path_len == 0 ||
             (strlen(m->path) == path_len && memcmp(m->path, path, path_len) == 0))) {
            m->epoch_unloaded = epoch;
            return 0;
        }
    }
    return LH_ENOENT;
}

static int
holds(const lh_module_t *m, uint64_t addr, uint64_t epoch)
{
    if (addr < m->lo || addr >= m->hi || m->epoch_loaded > epoch ||
        m->epoch_unloaded <= epoch) {
        return 0;
    }
    for (size_t s = 0; s < m->n_segs; s++) {
        uint64_t lo = m->load_bias + m->segs[s].vaddr;
        if (addr >= lo && addr - lo < m->segs[s].memsz) {
            return 1;
        }
    }
    return 0;
}

long
lh_modules_find(const lh_modules_t *t, uint64_t addr, uint64_t epoch)
{
    for (size_t i = t->n; i-- > 0;) {
        if (holds(&t->mods[i], addr, epoch)) {
            return (long)i;
        }
    }
    return -1;
}

long
lh_modules_find_near(const lh_modules_t *t, uint64_t addr, uint64_t epoch, long hint)
{
    /* Modules alive at one epoch do not overlap: the hint, if it holds addr, is the one. */
    if (hint >= 0 && (size_t)hint < t->n && holds(&t->mods[hint], addr, epoch)) {
        return hint;
    }
    return lh_modules_find(t, addr, epoch);
}
