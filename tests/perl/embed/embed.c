/* leakhound - SPDX-License-Identifier: MIT
 *
 * embed.c: a C program with perl embedded (perlembed), for tests/perl: Perl code runs in it,
 * then the interpreter is destroyed and freed, and the C program goes on allocating. The
 * agent must record the Perl frames, say once that perl is embedded, keep recording after
 * perl_destruct (it is not the program's exit) and never read the freed interpreter.
 */
#include <EXTERN.h>
#include <perl.h>

#include <stdlib.h>
#include <string.h>

static PerlInterpreter *my_perl;

static void *kept[64];

int
main(int argc, char **argv, char **env)
{
    char *args[] = {"embed", "-e",
                    "our %H; sub store { $H{$_[0]} = q(e) x 100 } store($_) for 1 .. 300;",
                    NULL};
    PERL_SYS_INIT3(&argc, &argv, &env);
    my_perl = perl_alloc();
    perl_construct(my_perl);
    PL_exit_flags |= PERL_EXIT_DESTRUCT_END;
    if (perl_parse(my_perl, NULL, 3, args, NULL) == 0) {
        perl_run(my_perl);
    }
    perl_destruct(my_perl);
    perl_free(my_perl);
    PERL_SYS_TERM();
    /* After perl: plain C allocations, some reusing the interpreter's memory. */
    for (int i = 0; i < 64; i++) {
        kept[i] = malloc(777); /* @c_after */
        memset(kept[i], 1, 777);
    }
    return 0;
}
