/* leakhound - SPDX-License-Identifier: MIT
 *
 * nodebuginfod.c: libdw does not load libdebuginfod when no debuginfod server is set.
 *
 * dwfl_standard_find_debuginfo (analysis/symbolize.c's callback) ends, for a module with a
 * build id and no local debug file, by asking debuginfod; libdw 0.188 dlopens libdebuginfod
 * for that the first time, whatever the environment: about 30 libraries (libcurl, libssl,
 * libcrypto, ...), 18M instructions and 6 ms of CPU per report, 15-40 ms of wall time on a
 * busy machine. With DEBUGINFOD_URLS unset or empty the client answers -ENOSYS before it
 * looks at anything, its cache included, so not loading it changes no answer: libdw takes a
 * failed dlopen as "no debuginfod" and the search ends without a debug file, as it would
 * have. The executable's definition comes first in the lookup scope, so libdw's call to
 * dlopen lands here; every other file goes on to the C library's dlopen.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

void *dlopen(const char *file, int mode);

void *
dlopen(const char *file, int mode)
{
    static void *(*next)(const char *, int);
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file;
    if (base && strncmp(base, "libdebuginfod", 13) == 0) {
        const char *urls = getenv("DEBUGINFOD_URLS");
        if (!urls || !urls[0]) {
            return NULL;
        }
    }
    if (!next) {
        void *sym = dlsym(RTLD_NEXT, "dlopen");
        memcpy(&next, &sym, sizeof next); /* POSIX: dlsym's object pointer is the function */
    }
    return next ? next(file, mode) : NULL;
}
