/* leakhound - SPDX-License-Identifier: MIT
 *
 * pyoffsets_gen.c: prints one row of agent/python_offsets.h, the struct layouts the agent's
 * Python frame reader (agent/python.c) needs, for the CPython whose headers it is compiled
 * against:
 *     cc -DPy_BUILD_CORE -I<prefix>/include/python3.X -I<prefix>/include/python3.X/internal
 * scripts/pyoffsets.sh runs it for every CPython 3.8+ on the machine, and the build compares
 * its rows with the committed table, so a machine without these headers still has the
 * table and one with them checks it. Only offsetof/sizeof here: no guessed number.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>
#endif
#if PY_VERSION_HEX < 0x03090000
#include <internal/pycore_pystate.h>
#else
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#endif
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#endif

/* Position of a one-bit-wide-or-more bitfield of PyASCIIObject.state, found by setting it. */
#define STATE_SHIFT(field, val)                                                                  \
    do {                                                                                         \
        PyASCIIObject o;                                                                         \
        memset(&o, 0, sizeof o);                                                                 \
        o.state.field = (val);                                                                   \
        unsigned char b[sizeof o.state];                                                         \
        memcpy(b, &o.state, sizeof b);                                                           \
        unsigned long long w = 0;                                                                \
        for (size_t i = 0; i < sizeof b && i < 8; i++) {                                         \
            w |= (unsigned long long)b[i] << (8 * i);                                            \
        }                                                                                        \
        int s = 0;                                                                               \
        while (w && !(w & 1)) {                                                                  \
            w >>= 1;                                                                             \
            s++;                                                                                 \
        }                                                                                        \
        printf(" .%s = %d,", #field "_shift", s);                                                \
    } while (0)

int
main(void)
{
    printf("    {.minor = %d,", PY_MINOR_VERSION);
    printf(" .rt_interp_head = %zu,", offsetof(_PyRuntimeState, interpreters.head));
#if PY_VERSION_HEX < 0x03090000
    printf(" .rt_finalizing = %zu,", offsetof(_PyRuntimeState, finalizing));
#else
    printf(" .rt_finalizing = %zu,", offsetof(_PyRuntimeState, _finalizing));
#endif
    printf(" .is_next = %zu,", offsetof(PyInterpreterState, next));
#if PY_VERSION_HEX >= 0x030B0000
    printf(" .is_tstate_head = %zu,", offsetof(PyInterpreterState, threads.head));
#else
    printf(" .is_tstate_head = %zu,", offsetof(PyInterpreterState, tstate_head));
#endif
    printf(" .ts_next = %zu,", offsetof(PyThreadState, next));
    printf(" .ts_interp = %zu,", offsetof(PyThreadState, interp));
    printf(" .ts_thread_id = %zu,", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030D0000
    printf(" .ts_frame = %zu, .cf_current = -1,", offsetof(PyThreadState, current_frame));
#elif PY_VERSION_HEX >= 0x030B0000
    printf(" .ts_frame = %zu, .cf_current = %zu,", offsetof(PyThreadState, cframe),
           offsetof(_PyCFrame, current_frame));
#else
    printf(" .ts_frame = %zu, .cf_current = -1,", offsetof(PyThreadState, frame));
#endif
#if PY_VERSION_HEX >= 0x030B0000
    printf(" .fr_back = %zu,", offsetof(_PyInterpreterFrame, previous));
    printf(" .fr_owner = %zu,", offsetof(_PyInterpreterFrame, owner));
    printf(" .owner_generator = %d,", (int)FRAME_OWNED_BY_GENERATOR);
#if PY_VERSION_HEX >= 0x030C0000
    printf(" .owner_cstack = %d,", (int)FRAME_OWNED_BY_CSTACK);
#else
    printf(" .owner_cstack = -1,");
#endif
#if PY_VERSION_HEX >= 0x030D0000
    printf(" .fr_code = %zu,", offsetof(_PyInterpreterFrame, f_executable));
    printf(" .fr_instr = %zu, .instr_is_prev = 0,", offsetof(_PyInterpreterFrame, instr_ptr));
    printf(" .fr_func = %zu,", offsetof(_PyInterpreterFrame, f_funcobj));
#else
    printf(" .fr_code = %zu,", offsetof(_PyInterpreterFrame, f_code));
    printf(" .fr_instr = %zu, .instr_is_prev = 1,", offsetof(_PyInterpreterFrame, prev_instr));
#if PY_VERSION_HEX >= 0x030C0000
    printf(" .fr_func = %zu,", offsetof(_PyInterpreterFrame, f_funcobj));
#else
    printf(" .fr_func = %zu,", offsetof(_PyInterpreterFrame, f_func));
#endif
#endif
    printf(" .co_qualname = %zu,", offsetof(PyCodeObject, co_qualname));
    printf(" .co_code_adaptive = %zu,", offsetof(PyCodeObject, co_code_adaptive));
    printf(" .co_firsttraceable = %zu,", offsetof(PyCodeObject, _co_firsttraceable));
    printf(" .fn_module = %zu,", offsetof(PyFunctionObject, func_module));
    printf(" .co_linetable = %zu,", offsetof(PyCodeObject, co_linetable));
#else
    printf(" .fr_back = %zu,", offsetof(PyFrameObject, f_back));
    printf(" .fr_owner = -1, .owner_generator = -1, .owner_cstack = -1,");
    printf(" .fr_code = %zu,", offsetof(PyFrameObject, f_code));
    printf(" .fr_instr = %zu, .instr_is_prev = 0,", offsetof(PyFrameObject, f_lasti));
    printf(" .fr_func = -1, .co_qualname = -1, .co_code_adaptive = -1,");
    printf(" .co_firsttraceable = -1, .fn_module = -1,");
#if PY_VERSION_HEX >= 0x030A0000
    printf(" .co_linetable = %zu,", offsetof(PyCodeObject, co_linetable));
#else
    printf(" .co_linetable = %zu,", offsetof(PyCodeObject, co_lnotab));
#endif
#endif
    printf(" .co_name = %zu,", offsetof(PyCodeObject, co_name));
    printf(" .co_filename = %zu,", offsetof(PyCodeObject, co_filename));
    printf(" .co_firstlineno = %zu,", offsetof(PyCodeObject, co_firstlineno));
    printf(" .ob_type = %zu,", offsetof(PyObject, ob_type));
    printf(" .var_size = %zu,", offsetof(PyVarObject, ob_size));
    printf(" .bytes_sval = %zu,", offsetof(PyBytesObject, ob_sval));
    printf(" .str_length = %zu,", offsetof(PyASCIIObject, length));
    printf(" .str_state = %zu,", offsetof(PyASCIIObject, state));
    printf(" .str_ascii_size = %zu,", sizeof(PyASCIIObject));
    printf(" .str_compact_size = %zu,", sizeof(PyCompactUnicodeObject));
    printf(" .str_utf8 = %zu,", offsetof(PyCompactUnicodeObject, utf8));
    printf(" .str_utf8_length = %zu,", offsetof(PyCompactUnicodeObject, utf8_length));
    STATE_SHIFT(kind, 1);
    STATE_SHIFT(compact, 1);
    STATE_SHIFT(ascii, 1);
    printf("},\n");
    return 0;
}
