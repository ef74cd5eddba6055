/* leakhound - SPDX-License-Identifier: MIT
 *
 * lsansupp.h: the suppressions a program embeds for LeakSanitizer, a function
 * `const char *__lsan_default_suppressions(void)` returning rules in LeakSanitizer's syntax
 * ("leak:foo\nleak:libbar.so\n"). LeakSanitizer and heaptrack apply them by themselves;
 * so does leakhound wherever it applies its built-in list (run --check, report
 * --default-suppressions). The function is looked up once, at start, before the program's
 * own code runs, in the executable's symbol table (.symtab, or .dynsym when stripped, read
 * from /proc/self/exe: a program's function is not exported unless it was linked with
 * -rdynamic, so dlsym would not find it, and its failure leaves an error string that the
 * next dl call frees, an unmatched free in the trace). It is called there and its text
 * kept (at most LH_LSANSUPP_MAX bytes): the recorder writes it into a SUPPRESSIONS record.
 */
#ifndef LH_LSANSUPP_H
#define LH_LSANSUPP_H

#include <stddef.h>

#define LH_LSANSUPP_MAX 16384

/* At start (the agent's guard held: what the program's function allocates is not
 * recorded). Nothing when the program has no such function or it returns NULL. */
void lh_lsansupp_read(void);
/* The text kept (NUL-terminated), or NULL. */
const char *lh_lsansupp_text(void);

#endif /* LH_LSANSUPP_H */
