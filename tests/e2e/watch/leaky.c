/* leakhound - SPDX-License-Identifier: MIT
 *
 * leaky.c: a server-like program for `leakhound watch` that leaks a fixed amount per
 * request. A request is one byte written to FIFO; for each it mallocs BYTES (default
 * 256 KiB), touches every page (so RSS shows it) and keeps the block forever.
 *
 * usage: watch_leaky FIFO [BYTES [EXIT_AFTER]]   (EXIT_AFTER requests, then exit 0)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct block {
    struct block *next;
};

int
main(int argc, char **argv)
{
    struct block *kept = NULL;
    if (argc < 2) {
        fprintf(stderr, "usage: watch_leaky FIFO [BYTES [EXIT_AFTER]]\n");
        return 2;
    }
    size_t bytes = argc > 2 ? strtoul(argv[2], NULL, 10) : 256 * 1024;
    long exit_after = argc > 3 ? strtol(argv[3], NULL, 10) : -1;
    if (bytes < sizeof(struct block)) {
        bytes = sizeof(struct block);
    }
    /* O_RDWR: the FIFO never reports end-of-file when a load command closes it. */
    int fd = open(argv[1], O_RDWR);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    long served = 0;
    for (;;) {
        char req[64];
        ssize_t n = read(fd, req, sizeof req);
        if (n <= 0) {
            return 1;
        }
        for (ssize_t i = 0; i < n; i++) {
            struct block *b = malloc(bytes);
            if (!b) {
                return 1;
            }
            memset(b, 0x5a, bytes);
            b->next = kept; /* kept reachable: a leak by growth, not a lost pointer */
            kept = b;
            if (++served == exit_after) {
                return 0;
            }
        }
    }
}
