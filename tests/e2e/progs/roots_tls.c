/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_tls.c (e2e, issue 11): blocks whose only pointer is in a thread's TLS are
 * reachable, from roots named after it. In the main thread: a __thread variable (tls_block,
 * 1001 bytes), a pthread_setspecific slot of a key below 32, kept in the descriptor's first
 * block of key data (spec1_block, 1002), a slot of key 40, kept in a calloc'd second-level
 * array (spec2_block, 1003), and a __thread variable of a dlopen'd module, in dynamic TLS
 * (dtls_block, 1004). In a worker thread waiting while main takes the snapshot "tls": a
 * __thread variable (wtls_block, 1005). argv[1]: the module's path.
 */
#define LH_WEAK_API
#include <dlfcn.h>
#include <leakhound.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "threadwait.h"
#include "vg_check.h"

static __thread void *t_ptr;

#define BLOCK(name, size)                                                                    \
    __attribute__((noinline)) static void *name(void)                                       \
    {                                                                                        \
        void *p = malloc(size);                                                              \
        memset(p, 7, size);                                                                  \
        return p;                                                                            \
    }
BLOCK(tls_block, 1001)   /* SITE: tls_block */
BLOCK(spec1_block, 1002) /* SITE: spec1_block */
BLOCK(spec2_block, 1003) /* SITE: spec2_block */
BLOCK(dtls_block, 1004)  /* SITE: dtls_block */
BLOCK(wtls_block, 1005)  /* SITE: wtls_block */

static void *
worker(void *arg)
{
    (void)arg;
    t_ptr = wtls_block();
    tw_hold();
    free(t_ptr);
    return NULL;
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        return 2;
    }
    void *mod = dlopen(argv[1], RTLD_NOW);
    void (*set)(void *) = mod ? (void (*)(void *))dlsym(mod, "tlsmod_set") : NULL;
    if (!set) {
        fprintf(stderr, "roots_tls: %s\n", dlerror());
        return 2;
    }
    t_ptr = tls_block();
    pthread_key_t k1, keys[41];
    if (pthread_key_create(&k1, NULL) != 0 || k1 >= 32) {
        return 3;
    }
    pthread_setspecific(k1, spec1_block());
    for (int i = 0; i < 41; i++) {
        if (pthread_key_create(&keys[i], NULL) != 0) {
            return 3;
        }
    }
    if (keys[40] < 32) {
        return 3;
    }
    pthread_setspecific(keys[40], spec2_block());
    set(dtls_block());

    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) {
        return 1;
    }
    tw_wait_ready();
    if (lh_snapshot) {
        lh_snapshot("tls");
    }
    vg_leak_check(); /* Valgrind's answer at the same moment */
    tw_release();
    pthread_join(t, NULL);
    return 0;
}
