/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_exit.c (e2e, issue 11): dead_block() allocates 888 bytes, leaves 8192 copies of
 * the only pointer in its own frame (64 KiB of stack) and returns without freeing; then
 * the program ends, by returning from main (no argument) or by calling exit(0) from
 * leave() (argument "exit"). The exit snapshot is taken in an exit handler whose frames
 * run over that dead stack, but the exiting thread is scanned from where the program
 * called exit (or main returned): the block is definitely lost. A block main keeps in a
 * local (main_block, 999 bytes) stays reachable when main calls exit itself.
 */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void
dead_block(void)
{
    void *volatile copies[8192];
    void *p = malloc(888); /* SITE: dead_block */
    memset(p, 6, 888);
    for (int i = 0; i < 8192; i++) {
        copies[i] = p;
    }
    (void)copies;
}

__attribute__((noinline)) static void
leave(void)
{
    exit(0);
}

int
main(int argc, char **argv)
{
    void *volatile mine = malloc(999); /* SITE: main_block */
    memset(mine, 7, 999);
    dead_block();
    if (argc > 1 && strcmp(argv[1], "exit") == 0) {
        leave();
    }
    return 0;
}
