/* leakhound - SPDX-License-Identifier: MIT
 *
 * loadermem.c: the loader's own memory as a snapshot root (see loadermem.h).
 */
#include "loadermem.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "sys.h"

#define MAX_RANGES 16
#define MAX_MAPS 2048

static struct {
    uintptr_t lo, hi;
} ranges[MAX_RANGES];
static int n_ranges;
static char ldso[512];

/* The anonymous private writable mapping holding a in the maps text (0: none). */
static int
anon_mapping(const char *maps, uintptr_t a, uintptr_t *lo, uintptr_t *hi)
{
    for (const char *p = maps; *p;) {
        const char *eol = strchr(p, '\n');
        uintptr_t l, h;
        size_t k = lh_sys_parse_hex(p, &l);
        if (k && p[k] == '-') {
            size_t k2 = lh_sys_parse_hex(p + k + 1, &h);
            const char *perm = p + k + 1 + k2 + 1;
            if (a >= l && a < h) {
                /* "lo-hi perm offset dev inode name": anonymous when no name follows */
                const char *q = perm;
                for (int field = 0; field < 4 && *q && *q != '\n'; field++) {
                    while (*q && *q != ' ' && *q != '\n') {
                        q++;
                    }
                    while (*q == ' ') {
                        q++;
                    }
                }
                int anon = *q == '\n' || *q == '\0';
                if (!anon || strncmp(perm, "rw-p", 4) != 0) {
                    return 0;
                }
                *lo = l;
                *hi = h;
                return 1;
            }
        }
        if (!eol) {
            break;
        }
        p = eol + 1;
    }
    return 0;
}

void
lh_loadermem_init(void)
{
    static char maps[64 * 1024];
    const struct r_debug *r = (const struct r_debug *)dlsym(RTLD_DEFAULT, "_r_debug");
    Dl_info di;
    if (!r || !dladdr(r, &di) || !di.dli_fname) {
        return;
    }
    ssize_t n = lh_sys_read_file("/proc/self/maps", maps, sizeof maps - 1);
    if (n <= 0 || (size_t)n >= sizeof maps - 1) {
        return; /* none, or too many mappings to be sure of the whole list */
    }
    maps[n] = '\0';
    lh_sys_strlcpy(ldso, di.dli_fname, sizeof ldso);
    int steps = 0;
    for (const struct link_map *l = r->r_map; l && steps < MAX_MAPS; l = l->l_next, steps++) {
        uintptr_t lo, hi;
        if (!anon_mapping(maps, (uintptr_t)l, &lo, &hi) || lh_sys_is_agent_memory(lo, hi)) {
            continue; /* in a module's data (ld.so's own map), the heap, the agent's */
        }
        int known = 0;
        for (int i = 0; i < n_ranges && !known; i++) {
            known = ranges[i].lo == lo;
        }
        if (!known && n_ranges < MAX_RANGES) {
            ranges[n_ranges].lo = lo;
            ranges[n_ranges].hi = hi;
            n_ranges++;
        }
    }
}

int
lh_loadermem_range(int i, uintptr_t *lo, uintptr_t *hi)
{
    if (i < 0 || i >= n_ranges) {
        return 0;
    }
    *lo = ranges[i].lo;
    *hi = ranges[i].hi;
    return 1;
}

const char *
lh_loadermem_name(void)
{
    return ldso;
}
