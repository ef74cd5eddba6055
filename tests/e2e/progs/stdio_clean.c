/* leakhound - SPDX-License-Identifier: MIT
 *
 * stdio_clean.c (e2e, `run --check`): a program that frees everything it allocates itself,
 * but uses the parts of the C library that keep one-time allocations to the end: stdio
 * buffers, setlocale, getpwnam (NSS), localtime (time zones), a thread (TLS). With the
 * default suppressions, `leakhound run --check` must pass; without them it must fail.
 */
#include <locale.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *
worker(void *arg)
{
    char *s = malloc(64);
    snprintf(s, 64, "thread %d", *(int *)arg);
    puts(s);
    free(s);
    return NULL;
}

int
main(void)
{
    char buf[64];
    int id = 1;
    pthread_t t;
    setlocale(LC_ALL, "");
    struct passwd *pw = getpwnam("root");
    time_t now = time(NULL);
    strftime(buf, sizeof buf, "%Y-%m-%d", localtime(&now));
    printf("%s %s\n", pw ? pw->pw_name : "-", buf);
    char *mine = strdup("mine, freed");
    fprintf(stderr, "%s\n", mine);
    free(mine);
    if (pthread_create(&t, NULL, worker, &id) == 0) {
        pthread_join(t, NULL);
    }
    return 0;
}
