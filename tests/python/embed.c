/* leakhound - SPDX-License-Identifier: MIT
 *
 * embed.c: a program that is not a python but embeds CPython (libpython, as a game, an
 * editor or a server with a scripting layer does): runs the Python file argv[1] as
 * __main__, then exits WITHOUT finalizing the interpreter when argv[2] is "keep" (so what
 * the script left is live at exit, as in a program that never calls Py_FinalizeEx), else
 * after Py_FinalizeEx. run_python.py case embed checks its Python frames. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
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
