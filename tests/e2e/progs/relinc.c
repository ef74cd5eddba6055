/* leakhound - SPDX-License-Identifier: MIT
 *
 * relinc.c (e2e): one block of 321 bytes leaked by relinc_make, an inline function of a
 * header found through a relative include path, as most Makefiles have it (-Iinclude):
 * CMake copies relinc.h into relinc/ of this directory's build directory, where the
 * compiler runs, and compiles this file with -Irelinc. The debug information then names
 * the header's directory "relinc", relative to the compilation directory; the report must
 * give the file's absolute path, as Valgrind does.
 */
#include "relinc.h"

void *volatile g_relinc;

int
main(void)
{
    g_relinc = relinc_make(321);
    g_relinc = NULL;
    return 0;
}
