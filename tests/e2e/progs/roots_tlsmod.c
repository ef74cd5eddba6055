/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_tlsmod.c (e2e, issue 11): the module roots_tls dlopens; its __thread variable
 * lives in dynamic TLS (general-dynamic model: a block malloc'd by the loader, found
 * through the thread's DTV).
 */
__thread void *tlsmod_ptr __attribute__((tls_model("global-dynamic")));

void tlsmod_set(void *p);

void
tlsmod_set(void *p)
{
    tlsmod_ptr = p;
}
