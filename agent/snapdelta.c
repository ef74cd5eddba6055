/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapdelta.c: the shared table of piece sums behind delta snapshots (see snapdelta.h).
 */
#include "snapdelta.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"

/* Pieces one table holds: 2^21 pages are 8 GiB of resident memory scanned. A snapshot
 * with more is written whole and leaves no table. */
#define MAX_PIECES (1u << 21)
#define NAME_MAX_LEN 256

typedef struct piece {
    uint64_t addr;
    uint32_t len;
    uint32_t home; /* the snapshot whose file stores these contents */
    uint64_t sum;
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
    home_t homes[LH_SNAPDELTA_HOMES]; /* committed files, by number % HOMES */
} state_t;

#define HEADER_BYTES ((sizeof(state_t) + 4095) & ~(size_t)4095)

static state_t *st;      /* the shared mapping, NULL until prepared */
static piece_t *tabs[2];

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

#define MAP_BYTES (HEADER_BYTES + 2 * MAX_PIECES * sizeof(piece_t))

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
lh_snapdelta_begin(pid_t pid, int mode, unsigned number)
{
    active = 0;
    if (!st || st->pid != (int)pid) {
        return 0;
    }
    int me = (int)syscall(SYS_getpid);
    int owner = 0;
    /* A child that died without ending leaves its pid, which the parent clears when it
     * reaps it (lh_snapdelta_reaped). */
    if (!atomic_compare_exchange_strong(&st->owner, &owner, me)) {
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
    active = 1;
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

int
lh_snapdelta_piece(uintptr_t addr, uint32_t len, uint64_t sum, int empty)
{
    if (!active || overflow) {
        return 0;
    }
    while (at_prev < n_prev && prev[at_prev].addr < addr) {
        at_prev++;
    }
    uint32_t home = my_number;
    if (!empty && at_prev < n_prev) {
        const piece_t *p = &prev[at_prev];
        if (p->addr == addr && p->len == len && p->sum == sum && may_refer(addr, p->home)) {
            home = p->home;
        }
    }
    if (n_next >= MAX_PIECES || (n_next && next[n_next - 1].addr >= addr)) {
        /* Out of room, or out of order (never expected): the rest is written, and this
         * table is not kept, as a later snapshot could not trust it. */
        overflow = 1;
        return 0;
    }
    next[n_next++] = (piece_t){addr, len, home, sum};
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
    if (ok && !overflow) {
        home_t *h = &st->homes[my_number % LH_SNAPDELTA_HOMES];
        h->number = 0; /* not valid while its name changes */
        lh_sys_strlcpy(h->name, name, sizeof h->name);
        h->number = my_number;
        st->n[st->cur ^ 1] = n_next;
        st->mode = my_mode;
        st->cur ^= 1;
        st->number = my_number;
    }
    active = 0;
    atomic_store(&st->owner, 0);
}
