/* leakhound - SPDX-License-Identifier: MIT
 *
 * clean.c: the same server as leaky.c, but each request's block is freed when the request
 * is done: memory stays flat however many requests come.
 *
 * usage: watch_clean FIFO [BYTES [EXIT_AFTER]]   (EXIT_AFTER requests, then exit 0)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: watch_clean FIFO [BYTES [EXIT_AFTER]]\n");
        return 2;
    }
    size_t bytes = argc > 2 ? strtoul(argv[2], NULL, 10) : 256 * 1024;
    long exit_after = argc > 3 ? strtol(argv[3], NULL, 10) : -1;
    if (bytes == 0) {
        bytes = 1;
    }
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
            char *b = malloc(bytes);
            if (!b) {
                return 1;
            }
            memset(b, 0x5a, bytes);
            /* Keep the compiler from dropping the work: the answer depends on the block. */
            if (b[bytes - 1] != 0x5a) {
                return 1;
            }
            free(b);
            if (++served == exit_after) {
                return 0;
            }
        }
    }
}
