/* leakhound - SPDX-License-Identifier: MIT
 *
 * attach_server.c: a loopback server that leaks on every request, for `leakhound attach`
 * (tests/e2e/run_attach.py). One connection at a time, one line in, one line out:
 *   REQ    handle a request: one 100-byte block kept for ever (the leak), a 48-byte block
 *          put in a ring of RING that frees the block put there RING requests before, and
 *          a temporary strdup freed at once; answers "ok N"
 *   PING   answers "pong" without allocating (keeps answering while leakhound attaches)
 *   STATS  answers "heap B" with glibc's in-use heap bytes (mallinfo2), allocating nothing
 * Serves up to 16 connections at once. Prints its port on stdout, then serves until killed.
 */
#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RING 50
#define MAX_CLIENTS 16

static char *volatile *kept;
static size_t n_kept, cap_kept;
static char *ring[RING];
static unsigned long n_requests;

__attribute__((noinline)) static void
remember_request(unsigned long i)
{
    char *p = malloc(100); /* LEAK: attach_request */
    memset(p, (int)(i & 0x7f), 100);
    if (n_kept == cap_kept) {
        /* Grown only at powers of two: realloc'd rarely, and never while the test's
         * request counts are being compared (the test starts with room for them). */
        cap_kept = cap_kept ? cap_kept * 2 : 65536;
        kept = realloc((void *)kept, cap_kept * sizeof *kept);
    }
    kept[n_kept++] = p;
}

__attribute__((noinline)) static void
rotate_ring(unsigned long i)
{
    char *p = malloc(48); /* SITE: attach_ring */
    memset(p, 1, 48);
    free(ring[i % RING]);
    ring[i % RING] = p;
}

static int
handle(int c)
{
    char buf[64];
    ssize_t n = read(c, buf, sizeof buf - 1);
    if (n <= 0) {
        return -1;
    }
    buf[n] = '\0';
    int len;
    if (strncmp(buf, "PING", 4) == 0) {
        len = snprintf(buf, sizeof buf, "pong\n");
    } else if (strncmp(buf, "STATS", 5) == 0) {
        struct mallinfo2 mi = mallinfo2();
        len = snprintf(buf, sizeof buf, "heap %zu\n", mi.uordblks + mi.hblkhd);
    } else {
        remember_request(n_requests);
        rotate_ring(n_requests);
        char *t = strdup("a temporary string");
        free(t);
        len = snprintf(buf, sizeof buf, "ok %lu\n", ++n_requests);
    }
    return write(c, buf, (size_t)len) == len ? 0 : -1;
}

int
main(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 64) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &l) != 0) {
        perror("attach_server");
        return 1;
    }
    remember_request(0); /* kept[] gets its first 65536 slots before anyone attaches */
    n_kept = 0;
    printf("%d\n", ntohs(a.sin_port));
    fflush(stdout);
    /* Every connection is served as its lines come (poll): a client pinging while another
     * sends requests gets its answers too. */
    struct pollfd fds[MAX_CLIENTS + 1];
    int n = 1;
    fds[0].fd = s;
    fds[0].events = POLLIN;
    for (;;) {
        if (poll(fds, (nfds_t)n, -1) < 0) {
            continue;
        }
        for (int i = n - 1; i >= 1; i--) {
            if (fds[i].revents && handle(fds[i].fd) != 0) {
                close(fds[i].fd);
                fds[i] = fds[--n];
            }
        }
        if (fds[0].revents & POLLIN) {
            int c = accept(s, NULL, NULL);
            if (c >= 0 && n <= MAX_CLIENTS) {
                fds[n].fd = c;
                fds[n].events = POLLIN;
                n++;
            } else if (c >= 0) {
                close(c);
            }
        }
    }
}
