/* leakhound - SPDX-License-Identifier: MIT
 *
 * snap_wp.c: a heap that changes in every way a delta snapshot's skipped pages could miss
 * (run_graph.py delta_wp*): 3000 nodes of 1000 bytes in a list from g_nodes, each pointing
 * to 20 others; 4 blocks of 256 KiB (mmap'd chunks) from g_big; a mapping of its own
 * (g_raw, 64 KiB of pointers to nodes) and, where the kernel allows, one that the program's
 * own userfaultfd holds (g_uffd: the agent cannot track it). Snapshot s0, then argv[1]
 * rounds: repoint refs of one node in 7, change payload bytes of one in 11, free every 13th
 * node of the list and allocate nodes of other sizes (the heap grows), give the first big
 * block back and take another (a new mapping), malloc_trim (MADV_DONTNEED of free pages),
 * move g_raw (mremap) on odd rounds and map it anew on even ones, write into g_uffd; then
 * snapshot "r". Deterministic, except with argv[2] = "thread": a second thread keeps
 * repointing the refs of the first 100 nodes (never freed) while snapshots are taken.
 * With argv[2] = "late_uffd", a mapping made before s0 (g_late, pointers to nodes, which
 * the agent registers after s0) is registered with a userfaultfd of the program's own
 * (write-protect mode) after s0, and written in every round; it says on stderr "late uffd:
 * agent held it H, own register R (errno E)" (H: VmFlags of g_late had "uw" just before).
 * Before each change it waits for the snapshot children.
 */
#define LH_WEAK_API
#include <errno.h>
#include <fcntl.h>
#include <leakhound.h>
#include <linux/userfaultfd.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "snapwait.h"

#define NODES 3000
#define RAW (64 * 1024)

typedef struct node {
    struct node *next;
    struct node *refs[20];
    char payload[832];
} node_t;

node_t *g_nodes;
node_t *g_fixed[100]; /* the first nodes: never freed */
void *g_big[4];
node_t **g_raw;
node_t **g_uffd;
node_t **g_late;
static atomic_int stop;
static unsigned seed = 777;

static unsigned
rnd(void)
{
    seed = seed * 1103515245u + 12345u;
    return seed >> 8;
}

static void *
writer(void *arg)
{
    unsigned s = 99;
    (void)arg;
    while (!atomic_load(&stop)) {
        s = s * 1103515245u + 12345u;
        node_t *n = g_fixed[(s >> 8) % 100];
        n->refs[(s >> 4) % 20] = g_fixed[(s >> 12) % 100];
    }
    return NULL;
}

/* A mapping held by a userfaultfd of the program's own (missing-page mode, filled first):
 * the agent's registration of it fails, so its pages are always read. */
static node_t **
own_uffd_mapping(void)
{
    node_t **m = mmap(NULL, RAW, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        return NULL;
    }
    memset(m, 0, RAW);
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | 1 /* user mode only */);
    struct uffdio_api api = {.api = UFFD_API};
    struct uffdio_register reg = {.range = {(uintptr_t)m, RAW},
                                  .mode = UFFDIO_REGISTER_MODE_MISSING};
    if (fd >= 0 && ioctl(fd, UFFDIO_API, &api) == 0) {
        (void)ioctl(fd, UFFDIO_REGISTER, &reg); /* every page is present: never waits */
    }
    return m;
}

/* Whether the mapping at m is registered with some userfaultfd in write-protect mode
 * (VmFlags "uw" in /proc/self/smaps). */
static int
uffd_wp_flag(const void *m)
{
    char want[32], line[512];
    snprintf(want, sizeof want, "%lx-", (unsigned long)(uintptr_t)m);
    FILE *f = fopen("/proc/self/smaps", "r");
    int in = 0, found = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (strchr(line, '-') && strncmp(line, want, strlen(want)) == 0) {
            in = 1;
        } else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            found = strstr(line, " uw") != NULL;
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return found;
}

/* g_late's registration with a userfaultfd of the program's own (see the top). */
static void
register_late(void)
{
    int held = uffd_wp_flag(g_late);
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | 1 /* user mode only */);
    struct uffdio_api api = {.api = UFFD_API};
    struct uffdio_register reg = {.range = {(uintptr_t)g_late, RAW},
                                  .mode = UFFDIO_REGISTER_MODE_WP};
    int rc = -1;
    errno = 0;
    if (fd >= 0 && ioctl(fd, UFFDIO_API, &api) == 0) {
        rc = ioctl(fd, UFFDIO_REGISTER, &reg);
    }
    fprintf(stderr, "late uffd: agent held it %d, own register %d (errno %d)\n", held, rc,
            rc ? errno : 0);
}

static int
is_fixed(const node_t *n)
{
    for (int i = 0; i < 100; i++) {
        if (g_fixed[i] == n) {
            return 1;
        }
    }
    return 0;
}

static node_t *
new_node(size_t size, node_t *next)
{
    node_t *n = calloc(1, size);
    n->next = next;
    memset(n->payload, 'a' + (int)(rnd() % 26), size - offsetof(node_t, payload));
    return n;
}

int
main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    int threaded = argc > 2 && strcmp(argv[2], "thread") == 0;
    int late = argc > 2 && strcmp(argv[2], "late_uffd") == 0;
    node_t *made[NODES];
    for (int i = 0; i < NODES; i++) {
        made[i] = new_node(sizeof(node_t), i ? made[i - 1] : NULL);
    }
    for (int i = 0; i < NODES; i++) {
        for (int j = 0; j < 20; j++) {
            made[i]->refs[j] = made[rnd() % NODES];
        }
    }
    g_nodes = made[NODES - 1];
    memcpy(g_fixed, made, sizeof g_fixed); /* the tail of the list: never freed */
    for (int i = 0; i < 4; i++) {
        g_big[i] = malloc(256 * 1024);
        memset(g_big[i], 0, 256 * 1024);
        *(node_t **)g_big[i] = made[i * 10];
    }
    g_raw = mmap(NULL, RAW, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (size_t i = 0; i < RAW / sizeof *g_raw; i++) {
        g_raw[i] = made[i % NODES];
    }
    g_uffd = own_uffd_mapping();
    if (late) {
        g_late = mmap(NULL, RAW, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        for (size_t i = 0; i < RAW / sizeof *g_late; i++) {
            g_late[i] = made[(i * 7) % NODES];
        }
    }
    pthread_t th;
    if (threaded) {
        pthread_create(&th, NULL, writer, NULL);
    }
    lh_snapshot("s0");
    wait_snapshot_children();
    if (late) {
        register_late();
    }
    for (int r = 1; r <= rounds; r++) {
        int k = 0;
        for (node_t *n = g_nodes; n; n = n->next, k++) {
            if (k % 7 == r % 7) {
                n->refs[rnd() % 20] = g_nodes;
            }
            if (k % 11 == r % 11) {
                n->payload[rnd() % 800] = 'Z';
            }
        }
        k = 0;
        for (node_t **p = &g_nodes; *p; k++) { /* every 13th, not the fixed tail */
            if (k % 13 == 5 && !is_fixed(*p)) {
                node_t *dead = *p;
                *p = dead->next;
                free(dead);
            } else {
                p = &(*p)->next;
            }
        }
        for (int i = 0; i < 150; i++) {
            g_nodes = new_node(sizeof(node_t) + 16 * (size_t)(rnd() % 64), g_nodes);
        }
        free(g_big[0]);
        g_big[0] = malloc(300 * 1024 + 4096 * (size_t)r);
        memset(g_big[0], 0, 4096);
        *(node_t **)g_big[0] = g_nodes;
        malloc_trim(0);
        if (r % 2) {
            void *moved = mremap(g_raw, RAW, 2 * RAW, MREMAP_MAYMOVE);
            if (moved != MAP_FAILED) {
                g_raw = moved;
                g_raw[RAW / sizeof *g_raw] = g_nodes;
                munmap((char *)g_raw + RAW, RAW);
            }
        } else {
            node_t **fresh =
                mmap(NULL, RAW, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            memcpy(fresh, g_raw, RAW);
            fresh[r] = g_nodes;
            munmap(g_raw, RAW);
            g_raw = fresh;
        }
        if (g_uffd) {
            g_uffd[r] = g_nodes;
        }
        if (g_late) {
            g_late[r * 100] = g_nodes; /* write-protected only if the agent left it so */
        }
        lh_snapshot("r");
        wait_snapshot_children();
    }
    if (threaded) {
        atomic_store(&stop, 1);
        pthread_join(th, NULL);
    }
    return 0;
}
