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
 *   resethand SIGTERM handler installed with SA_RESETHAND: the first SIGTERM prints
 *             "once" and the program waits on; the next one finds SIG_DFL
 *   sysv      the same through sysv_signal (SA_RESETHAND|SA_NODEFER)
 *   rawdfl    SIGTERM set to SIG_DFL by the rt_sigaction system call itself, then waits
 *   rawhandler  the handler of "handler" installed by the rt_sigaction system call
 *   usr2handler  its own SIGUSR2 handler (prints "usr2" at each), then waits
 *   usr2dfl   SIGUSR2 set to SIG_DFL (the default: the process dies of it), then waits
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

static void
on_term_once(int sig)
{
    (void)sig;
    static const char msg[] = "once\n";
    (void)!write(1, msg, sizeof msg - 1);
}

static void
on_usr2(int sig)
{
    (void)sig;
    static const char msg[] = "usr2\n";
    (void)!write(1, msg, sizeof msg - 1);
}

/* The kernel's struct sigaction (the C library's differs), for rt_sigaction itself. */
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};

/* h for sig by the system call, with the flags and restorer (x86-64's kernel wants one)
 * the C library gave a handler of SIGUSR1 it installed for a moment. */
static void
raw_sigaction(int sig, void (*h)(int))
{
    struct kernel_sigaction k;
    signal(SIGUSR1, on_usr2);
    if (syscall(SYS_rt_sigaction, SIGUSR1, NULL, &k, sizeof k.mask) != 0) {
        perror("rt_sigaction");
        exit(2);
    }
    signal(SIGUSR1, SIG_DFL);
    k.handler = h;
    k.mask = 0;
    if (syscall(SYS_rt_sigaction, sig, &k, NULL, sizeof k.mask) != 0) {
        perror("rt_sigaction");
        exit(2);
    }
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
    } else if (strcmp(mode, "resethand") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_term_once;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
    } else if (strcmp(mode, "sysv") == 0) {
        sysv_signal(SIGTERM, on_term_once);
    } else if (strcmp(mode, "rawdfl") == 0) {
        raw_sigaction(SIGTERM, SIG_DFL);
    } else if (strcmp(mode, "rawhandler") == 0) {
        raw_sigaction(SIGTERM, on_term);
    } else if (strcmp(mode, "usr2handler") == 0) {
        signal(SIGUSR2, on_usr2);
    } else if (strcmp(mode, "usr2dfl") == 0) {
        signal(SIGUSR2, SIG_DFL);
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
