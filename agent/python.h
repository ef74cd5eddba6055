/* leakhound - SPDX-License-Identifier: MIT
 *
 * python.h: the CPython frame reader. Finds a CPython 3.8-3.13 interpreter in the process
 * (through the dynamic symbol table of the executable or libpython, located with
 * dl_iterate_phdr), picks the struct layouts of its version from agent/python_offsets.h
 * (generated from the headers, see scripts/pyoffsets.sh) and checks them against the
 * interpreter; then returns, for the calling thread, its Python call chain (module-qualified
 * function, file, line), innermost first, by memory reads only.
 *
 * Versions other than 3.8-3.13, debug builds and free-threaded builds are refused: the reader
 * stays off and the detail line says why (the caller records native frames only).
 *
 * Names: "module.Qual.name" from 3.11 (code's co_qualname and the frame's function's
 * __module__); 3.8-3.10 code objects carry no qualified name and their frames no function,
 * so there the name is co_name alone ("handle", not "app.Handler.handle"). Module-level code
 * is "<module>" in every version. Lines come from the code's line table for the instruction
 * the frame executes (co_lnotab 3.8-3.9, PEP 626 table 3.10, location table 3.11+), decoded
 * in the agent once per (code, instruction) and cached: the code object may be gone when the
 * trace is analysed, so the table cannot be decoded offline.
 */
#ifndef LH_PYTHON_H
#define LH_PYTHON_H

#include <stddef.h>
#include <stdint.h>

#include "script.h"

/* lh_python_detect (script.h): looks for CPython in the loaded modules and, when found,
 * prepares the reader (maps its caches). Returns 1 with *info filled (lang LH_LANG_PYTHON;
 * status LH_INTERP_RECORDED, or LH_INTERP_UNSUPPORTED with the reason in detail), 0 when
 * no CPython is loaded (call it again after dlopen: embedded interpreters). Once it has
 * answered 1 it returns the same answer without looking again. NOT AS-safe
 * (dl_iterate_phdr, readlink, mmap): at init or after dlopen, no agent lock held. */

/* lh_python_capture (script.h): frames of the calling thread, innermost first, at most max;
 * 0 when the reader is off or the thread runs no Python code. Fills func, file and line
 * (strings in agent memory, kept for the life of the process); key is the reader's entry
 * for the code object, key2 the line. AS-safe: memory reads, atomics and the reader's own
 * caches (agent mappings); lock-free.
 * lh_python_describe (script.h): nothing left to do (capture filled the strings). */

/* Line-table decoders, exposed for the unit tests. offset is the byte offset of the
 * instruction in co_code; first is co_firstlineno. Return the line, or -1 (no line). */
int lh_python_line_lnotab(const uint8_t *tab, size_t len, int first, int offset); /* 3.8-3.9 */
int lh_python_line_310(const uint8_t *tab, size_t len, int first, int offset);    /* 3.10 */
int lh_python_line_311(const uint8_t *tab, size_t len, int first, int offset);    /* 3.11+ */

#endif /* LH_PYTHON_H */
