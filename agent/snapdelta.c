/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapdelta.c: the shared table of piece sums behind delta snapshots (see snapdelta.h).
 */
#include "snapdelta.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "snapwp.h"
#include "sys.h"

/* Pieces one table holds: 2^21 pages are 8 GiB of resident memory scanned. A snapshot
 * with more is written whole and leaves no table. */
#define MAX_PIECES (1u << 21)
#define NAME_MAX_LEN 256
/* Target ranges (lh_snapdelta_targets) a table remembers: more, and no page is skipped. */
#define MAX_TARGETS 16384

#define MAX_REMOVED 256 /* target ranges gone since the previous table: more, no skipping */

#define PIECE_HDR 1   /* lh_snapdelta_seen_t's flags */
#define PIECE_EMPTY 2
#define PIECE_STRAY 4

typedef struct piece {
    uint64_t addr;
    uint16_t len; /* at most a page */
    uint16_t flags;
    uint32_t home; /* the snapshot whose file stores these contents */
    uint64_t sum;
    uint64_t tmin, tmax; /* lh_snapdelta_seen_t's */
} piece_t;

typedef struct home {
    uint32_t number;
    char name[NAME_MAX_LEN]; /* base name of its contents file */
} home_t;

/* The shared header; the two tables follow it. */
typedef struct state {
    atomic_int owner; /* pid of the child using the table, 0: free */
    int pid;          /* the process the tables belong to (a forked copy never uses them) */
    int mode;         /* contents mode of the last table */
    uint32_t cur;     /* tables[cur] is the last complete one */
    uint32_t number;  /* its snapshot, 0: none */
    uint64_t n[2];
    uint64_t n_targets[2]; /* of the tables' snapshots; MAX_TARGETS + 1: too many */
    home_t homes[LH_SNAPDELTA_HOMES]; /* committed files, by number % HOMES */
} state_t;

#define HEADER_BYTES ((sizeof(state_t) + 4095) & ~(size_t)4095)

static state_t *st;      /* the shared mapping, NULL until prepared */
static piece_t *tabs[2];
static lh_wp_range_t *targets[2];

/* The child's view (each child has its own copy of these statics). */
static int active;
static unsigned my_number;
static int my_mode;
static const piece_t *prev;
static size_t n_prev, at_prev;
static piece_t *next;
static size_t n_next;
static int overflow;
static unsigned bases[LH_SNAPDELTA_HOMES];
static int n_bases;
/* How this snapshot's targets differ from the previous table's (lh_snapdelta_targets). */
static int targets_known; /* both lists known */
static int targets_added; /* some address is a target (or a heap one) only now */
static lh_wp_range_t removed[MAX_REMOVED]; /* was a target (of that kind), is not now */
static size_t n_removed;

#define MAP_BYTES                                                                          \
    (HEADER_BYTES + 2 * MAX_PIECES * sizeof(piece_t) + 2 * MAX_TARGETS * sizeof(lh_wp_range_t))

int
lh_snapdelta_prepare(void)
{
    int me = (int)syscall(SYS_getpid);
    if (st && st->pid == me) {
        return 0;
    }
    if (st) {
        /* A forked copy of the process: the mapping is still its parent's table (shared
         * across fork). It lets go of it and starts its own. */
        lh_sys_unmap(st, MAP_BYTES);
        st = NULL;
    }
    uint8_t *p = lh_sys_map_shared(MAP_BYTES);
    if (!p) {
        return -1;
    }
    tabs[0] = (piece_t *)(p + HEADER_BYTES);
    tabs[1] = tabs[0] + MAX_PIECES;
    targets[0] = (lh_wp_range_t *)(tabs[1] + MAX_PIECES);
    targets[1] = targets[0] + MAX_TARGETS;
    st = (state_t *)p; /* zeroed by the kernel: no table yet */
    st->pid = me;
    return 0;
}

/* The committed file of snapshot h, or NULL. */
static const home_t *
home_of(uint32_t h)
{
    const home_t *e = &st->homes[h % LH_SNAPDELTA_HOMES];
    return h && e->number == h ? e : NULL;
}

int
lh_snapdelta_reserve(unsigned number)
{
    int owner = 0;
    return st && st->pid == (int)syscall(SYS_getpid) &&
           atomic_compare_exchange_strong(&st->owner, &owner, -(int)number);
}

void
lh_snapdelta_assign(unsigned number, pid_t child)
{
    int owner = -(int)number;
    atomic_compare_exchange_strong(&st->owner, &owner, child > 0 ? (int)child : 0);
}

int
lh_snapdelta_begin(pid_t pid, int mode, unsigned number)
{
    active = 0;
    if (!st || st->pid != (int)pid) {
        return 0;
    }
    int me = (int)syscall(SYS_getpid);
    int owner = -(int)number;
    /* Reserved for this snapshot by the parent before the clone, which then writes this
     * child's pid there itself (whichever comes first). A child that died without ending
     * leaves its pid, which the parent clears when it reaps it (lh_snapdelta_reaped). */
    if (!atomic_compare_exchange_strong(&st->owner, &owner, me) && owner != me) {
        return 0;
    }
    my_number = number;
    if (st->number && st->mode == mode && st->number < number) {
        prev = tabs[st->cur];
        n_prev = st->n[st->cur];
    } else {
        prev = NULL;
        n_prev = 0;
    }
    my_mode = mode;
    at_prev = 0;
    next = tabs[st->cur ^ 1];
    n_next = 0;
    overflow = 0;
    n_bases = 0;
    targets_known = 0;
    st->n_targets[st->cur ^ 1] = MAX_TARGETS + 1; /* unknown until lh_snapdelta_targets */
    active = 1;
    return 1;
}

/* The parts of t (hi's low bit: its kind) that no range of the same kind in l covers,
 * l and t sorted; each part goes to out (when not NULL, up to cap, *n counting; returns 0
 * when that overflows). The lowest and highest address of any part go to *lo, *hi. */
static int
subtract(const lh_wp_range_t *t, size_t nt, const lh_wp_range_t *l, size_t nl,
         lh_wp_range_t *out, size_t cap, size_t *n, uint64_t *lo, uint64_t *hi)
{
    size_t j = 0;
    for (size_t i = 0; i < nt; i++) {
        uint64_t kind = t[i].hi & 1, a = t[i].lo, end = t[i].hi & ~(uint64_t)1;
        while (j < nl && (l[j].hi & ~(uint64_t)1) <= a) {
            j++;
        }
        for (size_t k = j; a < end; k++) {
            uint64_t b = end; /* the next part is [a, b) */
            if (k < nl && l[k].lo < end) {
                if ((l[k].hi & 1) != kind) {
                    continue;
                }
                b = l[k].lo > a ? l[k].lo : a;
            }
            if (a < b) {
                *lo = a < *lo ? a : *lo;
                *hi = b > *hi ? b : *hi;
                if (out) {
                    if (*n == cap) {
                        return 0;
                    }
                    out[*n] = (lh_wp_range_t){a, b};
                }
                (*n)++;
            }
            if (k >= nl || l[k].lo >= end) {
                break;
            }
            uint64_t lend = l[k].hi & ~(uint64_t)1;
            a = lend > a ? lend : a;
        }
    }
    return 1;
}

void
lh_snapdelta_targets(const lh_wp_range_t *t, size_t n)
{
    if (!active) {
        return;
    }
    uint32_t nx = st->cur ^ 1;
    if (n > MAX_TARGETS) {
        st->n_targets[nx] = MAX_TARGETS + 1;
        return;
    }
    memcpy(targets[nx], t, n * sizeof *t);
    st->n_targets[nx] = n;
    uint64_t np = st->n_targets[st->cur];
    if (!prev || np > MAX_TARGETS) {
        return;
    }
    const lh_wp_range_t *old = targets[st->cur];
    size_t n_added = 0;
    uint64_t lo = ~(uint64_t)0, hi = 0, rlo = ~(uint64_t)0, rhi = 0;
    n_removed = 0;
    subtract(t, n, old, np, NULL, 0, &n_added, &lo, &hi);
    if (!subtract(old, np, t, n, removed, MAX_REMOVED, &n_removed, &rlo, &rhi)) {
        return;
    }
    targets_added = n_added > 0;
    /* A new target range where small numbers or no address can be: no word is known not
     * to point there (the stray flag looks at [LH_SNAPDELTA_STRAY_LO, 2^57) only). */
    targets_known = !targets_added || (lo >= LH_SNAPDELTA_STRAY_LO && hi <= (1ull << 57));
}

/* Whether a piece seen under the previous table's targets reads the same under these. */
static int
targets_keep(const piece_t *p)
{
    if (targets_added && (p->flags & PIECE_STRAY)) {
        return 0; /* a stray word may point into the new range */
    }
    for (size_t i = 0; i < n_removed && p->tmin <= p->tmax; i++) {
        if (removed[i].lo <= p->tmax && removed[i].hi > p->tmin) {
            return 0; /* a pointer word may point into a range that went */
        }
    }
    return 1;
}

static inline uint64_t
rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t
round64(uint64_t acc, uint64_t w)
{
    acc += w * 0xc2b2ae3d27d4eb4full;
    return rotl(acc, 31) * 0x9e3779b185ebca87ull;
}

uint64_t
lh_snapdelta_sum(const uint64_t *w, size_t n, uint64_t seed)
{
    /* Four independent lanes, so the multiplies overlap: the scan stays memory-bound. */
    uint64_t a = seed + 0x60ea27eeadc0b5d6ull, b = seed ^ 0x27d4eb2f165667c5ull;
    uint64_t c = seed + 0x165667b19e3779f9ull, d = seed - 0x85ebca77c2b2ae63ull;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a = round64(a, w[i]);
        b = round64(b, w[i + 1]);
        c = round64(c, w[i + 2]);
        d = round64(d, w[i + 3]);
    }
    for (; i < n; i++) {
        a = round64(a, w[i]);
    }
    return lh_sys_mix64(rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18) + n);
}

/* Whether an unchanged piece stored in home may be referred to: home's file is committed,
 * younger than HOMES snapshots, and this is not the snapshot that rewrites the piece (one
 * in HOMES of them, spread by address so the rewriting does not come all at once). */
static int
may_refer(uintptr_t addr, uint32_t home)
{
    if (home >= my_number || my_number - home >= LH_SNAPDELTA_HOMES || !home_of(home)) {
        return 0;
    }
    return ((addr >> 12) + my_number) % LH_SNAPDELTA_HOMES != 0;
}

static void
note_base(unsigned home)
{
    for (int i = 0; i < n_bases; i++) {
        if (bases[i] == home) {
            return;
        }
    }
    if (n_bases < LH_SNAPDELTA_HOMES) {
        bases[n_bases++] = home;
    }
}

/* Appends to the next table; 0 when it cannot (the rest is then written whole). */
static int
add_next(const piece_t *p)
{
    if (n_next >= MAX_PIECES || (n_next && next[n_next - 1].addr >= p->addr)) {
        /* Out of room, or out of order (never expected): the rest is written, and this
         * table is not kept, as a later snapshot could not trust it. */
        overflow = 1;
        return 0;
    }
    next[n_next++] = *p;
    return 1;
}

int
lh_snapdelta_skip(uintptr_t addr, uint32_t len)
{
    if (!active || overflow || !targets_known) {
        return 0;
    }
    while (at_prev < n_prev && prev[at_prev].addr < addr) {
        at_prev++;
    }
    if (at_prev == n_prev) {
        return 0;
    }
    const piece_t *p = &prev[at_prev];
    int empty = p->flags & PIECE_EMPTY;
    if (p->addr != addr || p->len != len || (p->flags & PIECE_HDR) ||
        (!empty && !may_refer(addr, p->home)) || !targets_keep(p) ||
        !lh_snapwp_clean(addr, addr + len)) {
        return 0;
    }
    piece_t q = *p;
    q.home = empty ? my_number : p->home;
    if (!add_next(&q)) {
        return 0;
    }
    if (!empty) {
        note_base(p->home);
    }
    return 1;
}

static uint16_t
flags_of(const lh_snapdelta_seen_t *seen)
{
    return (uint16_t)((seen->empty ? PIECE_EMPTY : 0) | (seen->hdr ? PIECE_HDR : 0) |
                      (seen->stray ? PIECE_STRAY : 0));
}

int
lh_snapdelta_verify(uint64_t sum, const lh_snapdelta_seen_t *seen)
{
    const piece_t *p = &next[n_next - 1];
    return p->sum == sum && p->flags == flags_of(seen) && p->tmin == seen->tmin &&
           p->tmax == seen->tmax;
}

int
lh_snapdelta_piece(uintptr_t addr, uint32_t len, uint64_t sum, const lh_snapdelta_seen_t *seen)
{
    if (!active || overflow) {
        return 0;
    }
    while (at_prev < n_prev && prev[at_prev].addr < addr) {
        at_prev++;
    }
    uint32_t home = my_number;
    if (!seen->empty && at_prev < n_prev) {
        const piece_t *p = &prev[at_prev];
        if (p->addr == addr && p->len == len && p->sum == sum && may_refer(addr, p->home)) {
            home = p->home;
        }
    }
    piece_t q = {addr, (uint16_t)len, flags_of(seen), home, sum, seen->tmin, seen->tmax};
    if (!add_next(&q)) {
        return 0;
    }
    if (home != my_number) {
        note_base(home);
        return 1;
    }
    return 0;
}

int
lh_snapdelta_base(int i, unsigned *number, const char **name)
{
    if (!active || i >= n_bases) {
        return 0;
    }
    const home_t *h = home_of(bases[i]);
    *number = bases[i];
    *name = h ? h->name : "";
    return 1;
}

int
lh_snapdelta_next_ref(unsigned number, size_t *pos, uintptr_t *addr, uint32_t *len)
{
    for (; active && *pos < n_next; (*pos)++) {
        if (next[*pos].home == number) {
            *addr = next[*pos].addr;
            *len = next[*pos].len;
            (*pos)++;
            return 1;
        }
    }
    return 0;
}

void
lh_snapdelta_reaped(pid_t child)
{
    int owner = (int)child;
    if (st && st->pid == (int)syscall(SYS_getpid)) { /* a forked copy's is its parent's */
        atomic_compare_exchange_strong(&st->owner, &owner, 0);
    }
}

void
lh_snapdelta_end(int ok, const char *name)
{
    if (!active) {
        return;
    }
    /* A file not written whole leaves the last table as it was (it never refers to this
     * file); the table just written over was not that one. */
    int commit = ok && !overflow;
    if (commit) {
        home_t *h = &st->homes[my_number % LH_SNAPDELTA_HOMES];
        h->number = 0; /* not valid while its name changes */
        lh_sys_strlcpy(h->name, name, sizeof h->name);
        h->number = my_number;
        st->n[st->cur ^ 1] = n_next;
        st->mode = my_mode;
        st->cur ^= 1;
        st->number = my_number;
    }
    lh_snapwp_end(commit); /* before the table is free again */
    active = 0;
    atomic_store(&st->owner, 0);
}
