/* leakhound - SPDX-License-Identifier: MIT
 *
 * script.h: script frames (Perl subs, Python functions) on the agent's stacks.
 *
 * When an allocation happens while an interpreter runs script code, the agent records the
 * script's call chain beside the native stack (format.h: LH_REC_SFRAME, the trailing
 * fields of LH_REC_STACK, LH_REC_INTERP). Two parts:
 *
 *  - Readers, one per interpreter (perl.c, python.c): find the interpreter once (detect,
 *    at init, may call dlsym) and then, from inside hooks, capture the current thread's
 *    frames with memory reads only: no interpreter API that can allocate, lock or raise.
 *    A frame is identified by two words (key, key2: e.g. CV + COP, code object + line) so
 *    that it can be interned without reading its strings; describe() reads the strings,
 *    and is called only for keys not seen before.
 *  - script.c: runs the reader of the interpreter found, interns frames by key (their
 *    strings copied into agent memory once), interns the (native stack, script frames)
 *    pair as a stack id, and writes SFRAME and STACK records once per trace file.
 *
 * Struct layouts come from the interpreter's headers at build time and are checked against
 * the running interpreter's version and build options in detect(); an interpreter the
 * agent cannot read is recorded natively, with one line saying so (and an INTERP record
 * with status 0).
 */
#ifndef LH_SCRIPT_H
#define LH_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"
#include "format.h"

/* Most script frames recorded per stack (innermost first; deeper ones are cut). */
#define LH_SCRIPT_MAX 128

/* One script frame. key/key2 identify it for interning; func/file/line are filled by the
 * reader's capture() when cheap, else left NULL for describe(). Strings need not be
 * NUL-terminated and point into the interpreter's memory (or the describe() buffer): they
 * are copied before the hook returns. */
typedef struct lh_sframe {
    uintptr_t key;
    uintptr_t key2;
    const char *func;
    uint32_t func_len;
    const char *file;
    uint32_t file_len;
    uint32_t line;
} lh_sframe_t;

/* What detect() found. */
typedef struct lh_interp_info {
    int lang;          /* LH_LANG_* */
    int status;        /* LH_INTERP_*: 1 = frames will be recorded */
    char version[32];  /* "5.36.0" */
    char detail[256];  /* the one line said to the user when status is 0 ("" otherwise) */
} lh_interp_info_t;

/* ---- Readers (perl.c by i12, python.c by i13) ------------------------------------------
 * detect: called once from the agent's constructor (and again after a dlopen, until it
 * finds something): not AS-safe, may call dlsym. Returns 1 with *info filled when this
 * process holds that interpreter (status says whether its frames can be read), else 0.
 * capture: AS-safe, memory reads only; the current thread's frames, innermost first, at
 * most max; 0 when the thread runs no script code (or the interpreter is not up yet).
 * describe: AS-safe, memory reads only; fills f->func/f->file (and may use buf[0..cap) to
 * compose a name) for a frame capture() returned in the same hook call. */
int lh_perl_detect(lh_interp_info_t *info);
int lh_perl_capture(lh_sframe_t *out, int max);
void lh_perl_describe(lh_sframe_t *f, char *buf, size_t cap);
/* ended: AS-safe, memory reads only; 1 when the program's main code is over and the
 * interpreter has begun tearing itself down (perl: global destruction), with *status the
 * exit status it will return; 0 otherwise (and always 0 for an interpreter embedded in
 * another program, whose teardown is not the program's exit). */
int lh_perl_ended(int *status);
/* freed: AS-safe; p is being freed: when it is the interpreter itself (an embedding program
 * calling perl_free and going on), the reader stops reading it for good. */
void lh_perl_freed(const void *p);

int lh_python_detect(lh_interp_info_t *info) __attribute__((weak));
int lh_python_capture(lh_sframe_t *out, int max) __attribute__((weak));
void lh_python_describe(lh_sframe_t *f, char *buf, size_t cap) __attribute__((weak));
int lh_python_ended(int *status) __attribute__((weak));

/* ---- script.c ------------------------------------------------------------------------ */

/* Finds the interpreters of this process and reserves the frame table. Called once from
 * the constructor, before recording starts. Not AS-safe. */
void lh_script_init(void);

/* After a dlopen (outside any agent lock): an interpreter loaded late (embedded perl in a
 * plugin) is detected then. Not AS-safe. */
void lh_script_rescan(void);

/* Nonzero when a reader is active (one load). AS-safe. */
extern int lh_script_on;

/* "At exit" means what the program left behind (issue 12 item 5): an interpreter frees most
 * of its heap while tearing itself down (perl's global destruction), after the program's
 * own code is over. lh_script_check_end runs after every recorded event, outside the
 * guard (recorder.c): when the reader says the program ended, it takes the exit snapshot
 * and writes the END record right then (lh_recorder_finish), and the teardown is not
 * recorded. Cheap: one flag test, and two loads in the reader. Not AS-safe when it fires
 * (it flushes), so only from recorder.c's event paths with the guard released. */
void lh_script_check_end(void);

/* Called for every recorded free while a reader is active (before the real free). AS-safe. */
void lh_script_freed(const void *p);

/* The script part of one stack, between lh_script_stack and lh_script_emit. */
typedef struct lh_script_stack {
    uint32_t id;        /* the combined stack id, 0: none (no script frames) */
    uint32_t native_id;
    uint32_t epoch;
    int emit;           /* this caller writes the combined STACK record */
    uint32_t n;
    uint32_t ids[LH_SCRIPT_MAX]; /* sframe ids, innermost first */
} lh_script_stack_t;

/* Captures the calling thread's script frames, interns them and the pair (native_id, frames).
 * Fills *ss (ss->id = 0 when there are none). Call before taking the slot lock. AS-safe. */
void lh_script_stack(lh_script_stack_t *ss, uint32_t native_id, uint32_t epoch);

/* Writes the SFRAME records this caller claimed and the combined STACK record into s
 * (locked by the caller), when ss->emit. AS-safe. */
void lh_script_emit(lh_slot_t *s, const lh_script_stack_t *ss);

/* Writes the INTERP records of this process into the trace file being opened (wlock held). */
void lh_script_emit_interp_locked(void);

/* Fork child: the table's insert lock may be held by a thread that no longer exists. */
void lh_script_after_fork(void);

#endif /* LH_SCRIPT_H */
