/* leakhound - SPDX-License-Identifier: MIT
 *
 * st_dlopen.c (stress): dlopen/dlclose of a small library (st_plugin.so, next to this
 * program) in a loop, ROUNDS times (default 300). Each round calls st_plugin_alloc,
 * which allocates 3 blocks inside the library; main frees two after the dlclose (the
 * code that made them is gone) and keeps one per round alive until the end, so the
 * library's allocation site is reported across hundreds of load epochs.
 *
 * Output: "COUNT st_plugin allocs=.. frees=.. reallocs=0".
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 300;
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
    if (n <= 0) {
        return 1;
    }
    path[n] = '\0';
    strcpy(strrchr(path, '/') + 1, "st_plugin.so");
    void **kept = calloc((size_t)rounds, sizeof *kept);
    long allocs = 0, frees = 0;
    for (int r = 0; r < rounds; r++) {
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 1;
        }
        void (*fn)(void **, int) = (void (*)(void **, int))dlsym(h, "st_plugin_alloc");
        if (!fn) {
            return 1;
        }
        void *b[3];
        fn(b, r);
        allocs += 3;
        if (dlclose(h) != 0) {
            return 1;
        }
        free(b[0]);
        free(b[1]);
        frees += 2;
        kept[r] = b[2];
    }
    for (int r = 0; r < rounds; r++) {
        free(kept[r]);
        frees++;
    }
    free(kept);
    printf("dlopen/dlclose rounds %d\n", rounds);
    printf("COUNT st_plugin allocs=%ld frees=%ld reallocs=0\n", allocs, frees);
    return 0;
}
