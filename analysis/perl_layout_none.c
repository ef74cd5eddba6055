/* leakhound - SPDX-License-Identifier: MIT
 *
 * perl_layout_none.c: the layout table of an analyzer built without perl's CORE headers:
 * has_layout = 0, so perl heaps are shown natively with one line saying why.
 */
#include "perl_layout.h"

const lh_perl_layout_t lh_perl_layout = {.has_layout = 0, .core = ""};
