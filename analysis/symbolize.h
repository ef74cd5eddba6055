/* leakhound - SPDX-License-Identifier: MIT
 *
 * symbolize.h: offline symbolization of recorded return addresses with elfutils libdw,
 * from a trace's module table (path, load bias, build id, segments, epochs).
 *
 * Each address gives one or more frames: the inlined calls at that address (innermost
 * first, marked inlined) and then the real function containing them. Fallbacks never fail:
 * no debug info gives the ELF symbol; no symbol gives the module and offset; a missing
 * module file gives module+offset; an address in no module gives the bare address.
 * Separate debug info under /usr/lib/debug/.build-id/ is used when installed. C++ names
 * are demangled. Results are cached per (module, address).
 *
 * Problems (a module file that cannot be opened, a build id that differs from the one
 * recorded) become warnings, each reported once. Not thread-safe.
 */
#ifndef LH_SYMBOLIZE_H
#define LH_SYMBOLIZE_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "modules.h"
#include "stacks.h"

typedef struct lh_symbolizer lh_symbolizer_t;

/* One source-level frame. Strings belong to the symbolizer and live until lh_sym_free. */
typedef struct lh_frame {
    const char *function; /* demangled name, NULL when unknown */
    const char *file;     /* source file as recorded in DWARF, NULL when unknown */
    uint32_t line;        /* 0 when unknown */
    const char *module;   /* path of the module, NULL when the address is in no module */
    uint64_t ip;          /* the return address */
    uint64_t offset;      /* ip - load bias (file address) when in a module, else ip */
    int inlined;          /* inlined into the next frame's function */
    int lang;             /* LH_LANG_*: 0 native; a script frame (Perl sub, Python function)
                             has function, file and line, no module, ip 0 */
    int phase;            /* an interpreter phase without script code (scriptstack.h):
                             native, function is the entry point, file names the phase,
                             no line, no module, ip 0 */
    unsigned sclass;      /* scriptstack.h's tests of the frame, once computed
                             (lh_scriptstack_classify; 0: not yet, computed per test) */
} lh_frame_t;

typedef struct lh_sym_opts {
    const char *exe_path; /* file for modules recorded with an empty path (the main program) */
    int native;           /* keep the interpreter's frames in stacks with script frames
                             (scriptstack.h); also on when lh_sym_set_native(1) was called */
} lh_sym_opts_t;

/* The `--native` option: every symbolizer created afterwards keeps the interpreter's own
 * frames. A process-wide setting because the option applies to every command and view
 * alike (cli/main.c sets it once, before any command runs). Not thread-safe. */
void lh_sym_set_native(int native);
/* The process-wide `--native` setting. */
int lh_sym_get_native(void);

/* Creates a symbolizer over mods, which must outlive it. opts may be NULL. Returns 0, or
 * LH_ENOMEM. */
/* Whether a module file name (base name) is the agent's own library, libleakhound.so:
 * its frames are the hooks', never shown (report.h, lh_frame_is_agent). */
int lh_sym_module_is_agent(const char *base);

/* The name a frame of module path `module` is shown by when it has no function: its file
 * name, except a Perl XS module's, which is its path under the last auto/ ("JSON/XS/XS.so" for
 * .../auto/JSON/XS/XS.so): they are all named XS.so or after their last name part, and
 * "XS.so+0x420e" did not say whether JSON::XS, Cpanel::JSON::XS or another made it. A
 * pointer into module. */
const char *lh_sym_module_label(const char *module);

/* The file of module m: its path, or exe_path for the main program (recorded without
 * one); NULL when it has none (the vdso, "[...]" mappings). */
const char *lh_sym_module_file(const lh_module_t *m, const char *exe_path);
/* A libdwfl session of its own holding the ELF file at path at load_bias (the runtime
 * address of its vaddr 0), for the symbolizer and datasym.h alike. Returns the module and
 * sets *dwfl (the caller's to dwfl_end), or NULL with *dwfl NULL when libdwfl cannot read
 * the file (then a warning into w, when not NULL). */
Dwfl_Module *lh_sym_report_elf(const char *path, uint64_t load_bias, Dwfl **dwfl,
                               lh_warnings_t *w);

int lh_sym_new(const lh_modules_t *mods, const lh_sym_opts_t *opts, lh_symbolizer_t **out,
               lh_err_t *err);
void lh_sym_free(lh_symbolizer_t *s);

/* Symbolizes one return address of a stack recorded at epoch. On success returns the
 * number of frames (>= 1) and points *frames at them (owned by the symbolizer, valid until
 * lh_sym_free). Returns LH_ENOMEM on failure. */
int lh_sym_ip(lh_symbolizer_t *s, uint64_t ip, uint64_t epoch, const lh_frame_t **frames,
              lh_err_t *err);

/* Symbolizes a whole stack, innermost first, merged with its script frames when it has
 * any (scriptstack.h), into a new array the caller frees with free()
 * (the strings stay owned by the symbolizer). Returns 0 or LH_ENOMEM. */
int lh_sym_stack(lh_symbolizer_t *s, const lh_stack_t *st, lh_frame_t **frames, size_t *n,
                 lh_err_t *err);

const lh_warnings_t *lh_sym_warnings(const lh_symbolizer_t *s);

#endif /* LH_SYMBOLIZE_H */
