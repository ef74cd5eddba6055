/* leakhound - SPDX-License-Identifier: MIT
 *
 * stop_wait.c (e2e, stop signals): leaks 3 blocks of 1111 bytes (definitely lost: their
 * only pointers are overwritten) and holds 4 blocks of 2222 bytes in a global (still
 * reachable), prints "ready PID", then, by its argument:
 *   wait      waits for a signal (pause) at its default disposition; "exit": exits 0
 *   exit      exits 0 at once (the answers to compare with)
 *   handler   its own SIGTERM handler prints "handler" and exits 3
 *   ignhup    SIGHUP ignored with signal(SIG_IGN), then waits
 *   view      prints what sigaction, signal, sigset and sysv_signal report for SIGINT,
 *             SIGTERM, SIGHUP and SIGUSR2 ("view INT dfl ..."), then exits 0
 *   threads   4 threads allocate and free without pause; main waits (pause)
 *   threads_hook  the same, with SIGTERM blocked in main: it lands on a thread that is
 *             nearly always inside malloc or free
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *held[4];

__attribute__((noinline)) static void
leak_some(void)
{
    for (int i = 0; i < 3; i++) {
        void *volatile p = malloc(1111); /* SITE: stop_lost */
        memset(p, 1, 1111);
        p = NULL;
    }
}

__attribute__((noinline)) static void
hold_some(void)
{
    for (int i = 0; i < 4; i++) {
        held[i] = malloc(2222); /* SITE: stop_held */
        memset(held[i], 2, 2222);
    }
}

/* Clears the stack below the current frame, where the leaked pointers were. */
__attribute__((noinline)) static void
scrub(void)
{
    volatile char pad[16384];
    memset((char *)pad, 0, sizeof pad);
}

static void
on_term(int sig)
{
    (void)sig;
    static const char msg[] = "handler\n";
    (void)!write(1, msg, sizeof msg - 1);
    exit(3);
}

static void *
churn(void *arg)
{
    (void)arg;
    void *ring[64] = {0};
    for (unsigned i = 0;; i++) {
        unsigned k = i % 64;
        free(ring[k]);
        ring[k] = malloc(16 + (i * 7) % 500);
    }
    return NULL;
}

static const char *
name_of(void (*h)(int))
{
    return h == SIG_DFL ? "dfl" : h == SIG_IGN ? "ign" : h == SIG_ERR ? "err" : "handler";
}

static void
view(void)
{
    static const struct {
        int sig;
        const char *name;
    } sigs[] = {{SIGINT, "INT"}, {SIGTERM, "TERM"}, {SIGHUP, "HUP"}, {SIGUSR2, "USR2"}};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        sigaction(sigs[i].sig, NULL, &old);
        const char *a = name_of(old.sa_handler);
        /* signal(SIG_DFL) returns what was there (SIG_DFL), and leaves it so. */
        const char *b = name_of(signal(sigs[i].sig, SIG_DFL));
        /* A handler of its own, then back: signal returns the handler, then SIG_DFL. */
        const char *c = name_of(signal(sigs[i].sig, on_term));
        const char *d = name_of(signal(sigs[i].sig, SIG_DFL));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        const char *e = name_of(sigset(sigs[i].sig, SIG_DFL)); /* System V's */
#pragma GCC diagnostic pop
        const char *f = name_of(sysv_signal(sigs[i].sig, SIG_DFL));
        printf("view %s %s %s %s %s %s %s\n", sigs[i].name, a, b, c, d, e, f);
    }
}

int
main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "wait";
    leak_some();
    hold_some();
    scrub();
    if (strcmp(mode, "handler") == 0) {
        signal(SIGTERM, on_term);
    } else if (strcmp(mode, "ignhup") == 0) {
        signal(SIGHUP, SIG_IGN);
    } else if (strcmp(mode, "view") == 0) {
        view();
        return 0;
    } else if (strncmp(mode, "threads", 7) == 0) {
        for (int i = 0; i < 4; i++) {
            pthread_t t;
            pthread_create(&t, NULL, churn, NULL);
        }
        if (strcmp(mode, "threads_hook") == 0) { /* after: the threads keep it unblocked */
            sigset_t s;
            sigemptyset(&s);
            sigaddset(&s, SIGTERM);
            pthread_sigmask(SIG_BLOCK, &s, NULL);
        }
    }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    if (strcmp(mode, "exit") == 0) {
        return 0;
    }
    for (;;) {
        pause();
    }
}
