/* leakhound - SPDX-License-Identifier: MIT
 *
 * phases.c (e2e): grows in known steps with pauses between them, for the snapshot
 * triggers. Usage: phases MODE PHASES GAP_MS [START_MS]
 *   MODE signal:SIG  after each phase, raise(SIG) (the agent's snapshot signal)
 *   MODE sleep       just pause (for --snapshot-every)
 *   MODE grow        phases of 1.5 MiB (for --snapshot-on-growth 1M), see big_phase()
 *   MODE mmap        phases of 12 MiB mapped with mmap and touched, no malloc (RSS grows,
 *                    the heap does not)
 * Otherwise a phase is 10 blocks of 100 bytes. The program first sleeps START_MS (default
 * 300 ms: the agent's ticker starts), then runs PHASES phases, each followed by GAP_MS of
 * sleep, then frees everything: nothing leaks at exit.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef struct blk {
    struct blk *next;
} blk_t;

static blk_t *g_list;

static void
pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void
small_phase(void)
{
    for (int k = 0; k < 10; k++) {
        blk_t *b = malloc(100); /* SITE: phase_small */
        if (b == NULL) {
            abort();
        }
        b->next = g_list;
        g_list = b;
    }
}

/* 1.5 MiB: 768 KiB in 48 blocks of 16 KiB, then one block of 768 KiB. With
 * --snapshot-on-growth 1M only the last allocation crosses the threshold, so the agent's
 * ticker, which runs concurrently, cannot take the snapshot in the middle of a phase. */
static void
big_phase(void)
{
    for (int k = 0; k < 48; k++) {
        blk_t *b = malloc(16384); /* SITE: phase_big */
        if (b == NULL) {
            abort();
        }
        memset(b, 0, 16384);
        b->next = g_list;
        g_list = b;
    }
    blk_t *b = malloc(768u << 10); /* SITE: phase_big_tail */
    if (b == NULL) {
        abort();
    }
    b->next = g_list;
    g_list = b;
}

static void
mmap_phase(void)
{
    size_t len = 12u << 20;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        abort();
    }
    memset(p, 1, len); /* deliberately never unmapped */
}

int
main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: phases signal:SIG|sleep|grow|mmap PHASES GAP_MS [START_MS]\n");
        return 2;
    }
    int sig = strncmp(argv[1], "signal:", 7) == 0 ? atoi(argv[1] + 7) : 0;
    int grow = strcmp(argv[1], "grow") == 0;
    int map = strcmp(argv[1], "mmap") == 0;
    int phases = atoi(argv[2]);
    long gap = atol(argv[3]);
    pause_ms(argc == 5 ? atol(argv[4]) : 300);
    for (int p = 0; p < phases; p++) {
        if (grow) {
            big_phase();
        } else if (map) {
            mmap_phase();
        } else {
            small_phase();
        }
        if (sig) {
            raise(sig);
        }
        pause_ms(gap);
    }
    while (g_list != NULL) {
        blk_t *next = g_list->next;
        free(g_list);
        g_list = next;
    }
    return 0;
}
