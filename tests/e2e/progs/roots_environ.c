/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_environ.c (e2e, issue 11): what nginx's setproctitle does. The program moves its
 * environment strings to one heap block (environ_copy, 64 KiB whatever the environment, so
 * that Valgrind's run has the same size) and points environ[] at the copies, in place,
 * then exits. The block is reachable from environ[] (its first entry points at
 * the block's start), as Valgrind says, when environ[] is the array the kernel gave the
 * program: the agent must not have replaced it (a putenv in its constructor made it an
 * array malloc'd before recording, which no snapshot could follow).
 */
#include <stdlib.h>
#include <string.h>

extern char **environ;

int
main(void)
{
    size_t size = 0;
    for (int i = 0; environ[i]; i++) {
        size += strlen(environ[i]) + 1;
    }
    if (size > 65536) {
        return 3; /* the block has one size whatever the environment: Valgrind's is shorter */
    }
    char *p = malloc(65536); /* SITE: environ_copy */
    if (!p) {
        return 1;
    }
    for (int i = 0; environ[i]; i++) {
        size_t n = strlen(environ[i]) + 1;
        memcpy(p, environ[i], n);
        environ[i] = p;
        p += n;
    }
    exit(0);
}
