/* leakhound - SPDX-License-Identifier: MIT
 *
 * snap_busy.c: threads that never stop calling malloc and free (of every size class:
 * tcache, fastbins, bins, mmapped), for `leakhound snapshot -p` taken while they run
 * (run_snapshot.py case busy): the process must survive every snapshot and its heap
 * must stay consistent (each thread checks the pattern it wrote in its blocks). Prints
 * "ready PID", then runs until a line arrives on standard input; then prints "ok N" (the
 * malloc/free pairs done) or "corrupt" and exits. With the argument "single", the main
 * thread churns alone (a single-threaded process: glibc takes no arena lock then) until
 * SIGUSR1.
 */
#include <signal.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 3
#define SLOTS 64

static volatile int g_stop;
static volatile int g_corrupt;
static unsigned long g_done[THREADS];

static void *
churn(void *arg)
{
    int id = (int)(intptr_t)arg;
    unsigned char *slot[SLOTS] = {0};
    size_t len[SLOTS] = {0};
    unsigned seed = 12345u + (unsigned)id;
    while (!g_stop) {
        int i = (int)(rand_r(&seed) % SLOTS);
        if (slot[i]) {
            for (size_t k = 0; k < len[i]; k += 61) {
                if (slot[i][k] != (unsigned char)(i + id)) {
                    g_corrupt = 1;
                }
            }
            free(slot[i]);
            slot[i] = NULL;
            g_done[id]++;
            continue;
        }
        unsigned r = rand_r(&seed) % 100;
        len[i] = r < 60 ? 16 + r : r < 95 ? 1000 + 50 * r : 200000 + 1000 * r;
        slot[i] = malloc(len[i]);
        memset(slot[i], i + id, len[i]);
    }
    for (int i = 0; i < SLOTS; i++) {
        free(slot[i]);
    }
    return NULL;
}

static void
on_usr1(int sig)
{
    (void)sig;
    g_stop = 1;
}

int
main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "single") == 0) {
        signal(SIGUSR1, on_usr1);
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        churn(0);
        printf(g_corrupt ? "corrupt\n" : "ok %lu\n", g_done[0]);
        return g_corrupt;
    }
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        pthread_create(&t[i], NULL, churn, (void *)(intptr_t)i);
    }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin)) {
        line[0] = '\0';
    }
    g_stop = 1;
    unsigned long n = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        n += g_done[i];
    }
    if (g_corrupt) {
        printf("corrupt\n");
        return 1;
    }
    printf("ok %lu\n", n);
    return 0;
}
