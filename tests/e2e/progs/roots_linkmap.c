/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_linkmap.c (e2e, issue 11): a program that dlopens a plugin (argv[1]) after its
 * start and keeps no handle (the plugin registers itself, say), takes the snapshot
 * "loaded" and exits. The loader malloc'd the plugin's link_map (in _dl_new_object) and
 * chained it after the last library loaded at startup, whose link_map lives in memory the
 * loader mapped for itself before malloc existed (the agent's own dependencies are among
 * those libraries). That link_map is reachable from there, through l_next, as Valgrind
 * says: not only through the tables of _dl_find_object, whose pointers may be interior.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile uintptr_t handle_masked; /* not a pointer */

int
main(int argc, char **argv)
{
    if (argc < 2) {
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    handle_masked = (uintptr_t)h ^ 0x5a5a5a5a5a5a5a5aull;
    h = NULL;
    if (lh_snapshot) {
        lh_snapshot("loaded");
    }
    exit(0);
}
