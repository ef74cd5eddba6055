/* leakhound - SPDX-License-Identifier: MIT
 *
 * embed.c: a program that is not a python but embeds CPython (libpython, as a game, an
 * editor or a server with a scripting layer does): runs the Python file argv[1] as
 * __main__, then exits WITHOUT finalizing the interpreter when argv[2] is "keep" (so what
 * the script left is live at exit, as in a program that never calls Py_FinalizeEx), else
 * after Py_FinalizeEx. run_python.py case embed checks its Python frames.
 * "--native": no Python at all (the interpreter is linked, never started, as in unbound
 * without its python module): loses one block of 100 bytes and keeps one of 5000 in a
 * global (case embed_native: the report ranks the lost one first, as for any native
 * program). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *lh_embed_kept; /* not static: the compiler must keep the store */
void *volatile lh_embed_sink;

__attribute__((noinline)) static int
native_only(void)
{
    lh_embed_kept = malloc(5000); /* SITE:native_kept */
    lh_embed_sink = malloc(100);  /* SITE:native_lost */
    lh_embed_sink = NULL;
    /* Py_GetVersion keeps libpython linked; stdout gets its buffer */
    printf("%s\n", Py_GetVersion() ? "linked" : "none"); /* SITE:stdout */
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--native") == 0) {
        return native_only();
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.py [keep]\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    Py_Initialize();
    int rc = PyRun_SimpleFileEx(f, argv[1], 1); /* closes f */
    if (argc > 2 && strcmp(argv[2], "keep") == 0) {
        fflush(stdout);
        return rc ? 1 : 0;
    }
    if (Py_FinalizeEx() < 0) {
        return 120;
    }
    return rc ? 1 : 0;
}
