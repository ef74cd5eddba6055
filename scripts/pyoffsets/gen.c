/* leakhound - SPDX-License-Identifier: MIT
 *
 * gen.c: prints one row of analysis/pyoffsets_table.c (a designated initializer of
 * lh_pyoffsets_t) for the CPython whose headers it is compiled against, with
 * -DPy_BUILD_CORE so the interpreter's internal structs are visible. Run by
 * scripts/pyoffsets/gen.sh for every CPython 3.8+ whose headers the machine has.
 *
 * Every number comes from offsetof/sizeof on the real structs, except the few structs
 * that 3.8-3.10 keep in Objects/ (not installed): the dict keys object and the module
 * object; their layouts are written out below with the source file they come from, and
 * checked at run time by the analyzer against a live dict (pyheap.c: check_layout).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <structmember.h>

#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_code.h>
#include <internal/pycore_dict.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_moduleobject.h>
#include <internal/pycore_runtime.h>
#elif PY_VERSION_HEX >= 0x03090000
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#else
#include <internal/pycore_pystate.h>
#endif

/* An atexit.register() callback {func, args, kwargs} (3.10+; 3.12 renamed it) */
#if PY_VERSION_HEX >= 0x030C0000
typedef atexit_py_callback lh_atexit_cb;
#elif PY_VERSION_HEX >= 0x030A0000
typedef atexit_callback lh_atexit_cb;
#endif

#define F(name, val) printf("        .%s = %ld,\n", #name, (long)(val))
#define OFF(name, type, field) F(name, offsetof(type, field))

/* The bit a bitfield occupies, found by setting it in a zeroed struct. */
static int
bit_of(const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        for (int k = 0; k < 8; k++) {
            if (b[i] >> k & 1) {
                return (int)(i * 8 + k);
            }
        }
    }
    return -1;
}

int
main(void)
{
    printf("    {\n");
    F(major, PY_MAJOR_VERSION);
    F(minor, PY_MINOR_VERSION);
#ifdef Py_TRACE_REFS
    F(trace_refs, 1);
#endif
    F(gc_head_size, sizeof(PyGC_Head));
    OFF(ob_refcnt, PyObject, ob_refcnt);
    OFF(ob_type, PyObject, ob_type);
    OFF(ob_size, PyVarObject, ob_size);

    /* runtime, interpreters, threads */
    OFF(rt_interp_head, _PyRuntimeState, interpreters.head);
#if PY_VERSION_HEX < 0x03090000
    OFF(rt_gc, _PyRuntimeState, gc);
#else
    OFF(is_gc, PyInterpreterState, gc);
#endif
    OFF(is_next, PyInterpreterState, next);
#if PY_VERSION_HEX >= 0x030B0000
    OFF(is_tstate_head, PyInterpreterState, threads.head);
#else
    OFF(is_tstate_head, PyInterpreterState, tstate_head);
#endif
#if PY_VERSION_HEX >= 0x030C0000
    OFF(is_modules, PyInterpreterState, imports.modules);
#else
    OFF(is_modules, PyInterpreterState, modules);
#endif
    OFF(is_sysdict, PyInterpreterState, sysdict);
    OFF(is_builtins, PyInterpreterState, builtins);
    OFF(gc_generations, struct _gc_runtime_state, generations);
    F(gc_gen_size, sizeof(struct gc_generation));
    F(gc_n_generations, NUM_GENERATIONS);
    OFF(gc_permanent, struct _gc_runtime_state, permanent_generation);
    OFF(gc_enabled, struct _gc_runtime_state, enabled);
    OFF(gc_gen_threshold, struct gc_generation, threshold);
    /* atexit.register()'s callbacks: 3.10+ in the interpreter (an array of pointers to
     * {func, args, kwargs}); 3.8-3.9 in the atexit module's state (not in any header:
     * pyheap.c reads it) */
#if PY_VERSION_HEX >= 0x030A0000
    OFF(is_atexit_callbacks, PyInterpreterState, atexit.callbacks);
    OFF(is_atexit_ncallbacks, PyInterpreterState, atexit.ncallbacks);
    OFF(ax_args, lh_atexit_cb, args);
    OFF(ax_kwargs, lh_atexit_cb, kwargs);
#endif
    OFF(ts_next, PyThreadState, next);
    OFF(ts_thread_id, PyThreadState, thread_id);
    OFF(ts_dict, PyThreadState, dict);
#if PY_VERSION_HEX >= 0x030D0000
    OFF(ts_local_key, PyThreadState, threading_local_key);
#endif
#if PY_VERSION_HEX >= 0x030D0000
    OFF(ts_frame, PyThreadState, current_frame);
    F(frame_kind, 1);
#elif PY_VERSION_HEX >= 0x030B0000
    OFF(ts_cframe, PyThreadState, cframe);
    OFF(cf_current_frame, _PyCFrame, current_frame);
    F(frame_kind, 1);
#else
    OFF(ts_frame, PyThreadState, frame);
    F(frame_kind, 0);
#endif

    /* frames: PyFrameObject chains (3.8-3.10), _PyInterpreterFrame (3.11+) */
#if PY_VERSION_HEX >= 0x030B0000
#if PY_VERSION_HEX >= 0x030D0000
    OFF(fr_code, _PyInterpreterFrame, f_executable);
#else
    OFF(fr_code, _PyInterpreterFrame, f_code);
#endif
    OFF(fr_back, _PyInterpreterFrame, previous);
    OFF(fr_localsplus, _PyInterpreterFrame, localsplus);
    OFF(fr_globals, _PyInterpreterFrame, f_globals);
    OFF(fr_locals, _PyInterpreterFrame, f_locals);
    OFF(fr_owner, _PyInterpreterFrame, owner);
    F(fr_owner_thread, FRAME_OWNED_BY_THREAD);
#if PY_VERSION_HEX >= 0x030C0000
    F(fr_owner_cstack, FRAME_OWNED_BY_CSTACK);
#else
    F(fr_owner_cstack, -1);
#endif
    OFF(co_localsplusnames, PyCodeObject, co_localsplusnames);
    OFF(co_nlocalsplus, PyCodeObject, co_nlocalsplus);
    OFF(co_qualname, PyCodeObject, co_qualname);
#else
    OFF(fr_code, PyFrameObject, f_code);
    OFF(fr_back, PyFrameObject, f_back);
    OFF(fr_localsplus, PyFrameObject, f_localsplus);
    OFF(fr_globals, PyFrameObject, f_globals);
    OFF(fr_locals, PyFrameObject, f_locals);
    F(fr_owner, -1);
    F(fr_owner_thread, -1);
    F(fr_owner_cstack, -1);
    OFF(co_varnames, PyCodeObject, co_varnames);
    OFF(co_cellvars, PyCodeObject, co_cellvars);
    OFF(co_freevars, PyCodeObject, co_freevars);
    OFF(co_nlocals, PyCodeObject, co_nlocals);
#endif
    OFF(co_name, PyCodeObject, co_name);
    OFF(co_stacksize, PyCodeObject, co_stacksize);
    OFF(co_filename, PyCodeObject, co_filename);
    OFF(co_firstlineno, PyCodeObject, co_firstlineno);

    /* what keeps a suspended generator's locals: its frame (a frame object before 3.11,
     * embedded in the generator since), and a frame object's own */
    OFF(ge_name, PyGenObject, gi_name);
    OFF(ge_qualname, PyGenObject, gi_qualname);
    OFF(ge_exc_value, PyGenObject, gi_exc_state.exc_value);
#if PY_VERSION_HEX < 0x030C0000
    OFF(ge_code, PyGenObject, gi_code);
#endif
#if PY_VERSION_HEX < 0x030B0000
    OFF(ge_exc_type, PyGenObject, gi_exc_state.exc_type);
    OFF(ge_exc_tb, PyGenObject, gi_exc_state.exc_traceback);
    OFF(cr_origin, PyCoroObject, cr_origin);
    OFF(ag_finalizer, PyAsyncGenObject, ag_finalizer);
#else
    OFF(cr_origin, PyCoroObject, cr_origin_or_finalizer);
    OFF(ag_finalizer, PyAsyncGenObject, ag_origin_or_finalizer);
#endif
#if PY_VERSION_HEX >= 0x030B0000
    OFF(ge_frame, PyGenObject, gi_iframe);
    OFF(ge_frame_state, PyGenObject, gi_frame_state);
    F(ge_frame_cleared, FRAME_CLEARED);
    OFF(fr_stacktop, _PyInterpreterFrame, stacktop);
    OFF(fr_frame_obj, _PyInterpreterFrame, frame_obj);
#if PY_VERSION_HEX >= 0x030C0000
    OFF(fr_func, _PyInterpreterFrame, f_funcobj);
#else
    OFF(fr_func, _PyInterpreterFrame, f_func);
#endif
    OFF(fo_back, PyFrameObject, f_back);
    OFF(fo_trace, PyFrameObject, f_trace);
    OFF(fo_frame, PyFrameObject, f_frame);
    OFF(fo_frame_data, PyFrameObject, _f_frame_data);
#else
    OFF(ge_frame, PyGenObject, gi_frame);
    OFF(fo_back, PyFrameObject, f_back);
    OFF(fo_trace, PyFrameObject, f_trace);
    OFF(fo_builtins, PyFrameObject, f_builtins);
    OFF(fo_valuestack, PyFrameObject, f_valuestack);
#if PY_VERSION_HEX >= 0x030A0000
    OFF(fo_stackdepth, PyFrameObject, f_stackdepth);
#else
    OFF(fo_stacktop, PyFrameObject, f_stacktop);
#endif
#endif

    /* types */
    OFF(tp_name, PyTypeObject, tp_name);
    OFF(tp_basicsize, PyTypeObject, tp_basicsize);
    OFF(tp_itemsize, PyTypeObject, tp_itemsize);
    OFF(tp_flags, PyTypeObject, tp_flags);
    OFF(tp_dictoffset, PyTypeObject, tp_dictoffset);
    OFF(tp_weaklistoffset, PyTypeObject, tp_weaklistoffset);
    OFF(tp_dict, PyTypeObject, tp_dict);
    OFF(tp_mro, PyTypeObject, tp_mro);
    OFF(tp_bases, PyTypeObject, tp_bases);
    OFF(tp_base, PyTypeObject, tp_base);
    OFF(tp_members, PyTypeObject, tp_members);
    OFF(ht_name, PyHeapTypeObject, ht_name);
    OFF(ht_qualname, PyHeapTypeObject, ht_qualname);
    OFF(ht_slots, PyHeapTypeObject, ht_slots);
    OFF(ht_cached_keys, PyHeapTypeObject, ht_cached_keys);
#if PY_VERSION_HEX >= 0x03090000
    OFF(ht_module, PyHeapTypeObject, ht_module);
#endif
    F(heaptype_size, sizeof(PyHeapTypeObject));
    F(tpf_heaptype, Py_TPFLAGS_HEAPTYPE);
    F(tpf_have_gc, Py_TPFLAGS_HAVE_GC);
#ifdef Py_TPFLAGS_MANAGED_DICT
    F(tpf_managed_dict, Py_TPFLAGS_MANAGED_DICT);
#endif
#ifdef Py_TPFLAGS_INLINE_VALUES
    F(tpf_inline_values, Py_TPFLAGS_INLINE_VALUES);
#endif
    F(tpf_long_sub, Py_TPFLAGS_LONG_SUBCLASS);
    F(tpf_list_sub, Py_TPFLAGS_LIST_SUBCLASS);
    F(tpf_tuple_sub, Py_TPFLAGS_TUPLE_SUBCLASS);
    F(tpf_bytes_sub, Py_TPFLAGS_BYTES_SUBCLASS);
    F(tpf_unicode_sub, Py_TPFLAGS_UNICODE_SUBCLASS);
    F(tpf_dict_sub, Py_TPFLAGS_DICT_SUBCLASS);
    F(tpf_type_sub, Py_TPFLAGS_TYPE_SUBCLASS);
    F(md_size, sizeof(PyMemberDef));
    OFF(md_name, PyMemberDef, name);
    OFF(md_type, PyMemberDef, type);
    OFF(md_offset, PyMemberDef, offset);
    F(md_t_object, T_OBJECT);
    F(md_t_object_ex, T_OBJECT_EX);

    /* str: compact objects only (every str made since 3.3 by the usual paths) */
    {
        PyASCIIObject a;
        OFF(u_length, PyASCIIObject, length);
        OFF(u_state, PyASCIIObject, state);
        F(u_ascii_size, sizeof(PyASCIIObject));
        F(u_compact_size, sizeof(PyCompactUnicodeObject));
        size_t so = offsetof(PyASCIIObject, state);
        memset(&a, 0, sizeof a);
        a.state.kind = 1;
        int kind_bit = bit_of((char *)&a + so, sizeof a.state);
        memset(&a, 0, sizeof a);
        a.state.compact = 1;
        int compact_bit = bit_of((char *)&a + so, sizeof a.state);
        memset(&a, 0, sizeof a);
        a.state.ascii = 1;
        int ascii_bit = bit_of((char *)&a + so, sizeof a.state);
        F(u_kind_shift, kind_bit);
        F(u_compact_bit, compact_bit);
        F(u_ascii_bit, ascii_bit);
    }
    /* int: ob_size (signed digit count) before 3.12, lv_tag (count << 3) since */
#if PY_VERSION_HEX >= 0x030C0000
    OFF(l_digit, PyLongObject, long_value.ob_digit);
    OFF(l_tag, PyLongObject, long_value.lv_tag);
    F(l_tag_shift, _PyLong_NON_SIZE_BITS);
#else
    OFF(l_digit, PyLongObject, ob_digit);
    OFF(l_tag, PyVarObject, ob_size);
    F(l_tag_shift, 0);
#endif
    F(l_digit_size, sizeof(digit));
    OFF(li_item, PyListObject, ob_item);
    OFF(li_allocated, PyListObject, allocated);
    OFF(tu_item, PyTupleObject, ob_item);
    OFF(by_sval, PyBytesObject, ob_sval);

    /* dict */
    OFF(d_used, PyDictObject, ma_used);
    OFF(d_keys, PyDictObject, ma_keys);
    OFF(d_values, PyDictObject, ma_values);
#if PY_VERSION_HEX >= 0x030B0000
    F(dk_layout, 1);
    OFF(dk_log2_size, PyDictKeysObject, dk_log2_size);
    OFF(dk_log2_index_bytes, PyDictKeysObject, dk_log2_index_bytes);
    OFF(dk_kind, PyDictKeysObject, dk_kind);
    OFF(dk_nentries, PyDictKeysObject, dk_nentries);
    OFF(dk_indices, PyDictKeysObject, dk_indices);
    F(dk_entry_size, sizeof(PyDictKeyEntry));
    OFF(dk_entry_key, PyDictKeyEntry, me_key);
    OFF(dk_entry_value, PyDictKeyEntry, me_value);
    F(dk_uentry_size, sizeof(PyDictUnicodeEntry));
    OFF(dk_uentry_key, PyDictUnicodeEntry, me_key);
    OFF(dk_uentry_value, PyDictUnicodeEntry, me_value);
    F(dk_kind_general, DICT_KEYS_GENERAL);
    OFF(dv_values, PyDictValues, values);
#else
    /* struct _dictkeysobject of Objects/dict-common.h (3.8-3.10, not installed):
     * Py_ssize_t dk_refcnt, dk_size; dict_lookup_func dk_lookup; Py_ssize_t dk_usable,
     * dk_nentries; char dk_indices[]; entries {Py_hash_t me_hash; PyObject *me_key,
     * *me_value} follow the dk_size indices of 1, 2, 4 or 8 bytes. */
    F(dk_layout, 0);
    F(dk_size, sizeof(Py_ssize_t));
    F(dk_nentries, 4 * sizeof(Py_ssize_t));
    F(dk_indices, 5 * sizeof(Py_ssize_t));
    F(dk_entry_size, 3 * sizeof(void *));
    F(dk_entry_key, sizeof(void *));
    F(dk_entry_value, 2 * sizeof(void *));
    F(dv_values, 0);
#endif
#if PY_VERSION_HEX >= 0x030D0000
    F(managed_kind, 3);
#elif PY_VERSION_HEX >= 0x030C0000
    F(managed_kind, 2);
#elif PY_VERSION_HEX >= 0x030B0000
    F(managed_kind, 1);
#endif

    /* set */
    OFF(se_table, PySetObject, table);
    OFF(se_mask, PySetObject, mask);
    F(se_entry_size, sizeof(setentry));
    OFF(se_entry_key, setentry, key);

    /* function, cell, bound method, module */
    OFF(fn_code, PyFunctionObject, func_code);
    OFF(fn_globals, PyFunctionObject, func_globals);
    OFF(fn_name, PyFunctionObject, func_name);
    OFF(fn_qualname, PyFunctionObject, func_qualname);
    OFF(fn_closure, PyFunctionObject, func_closure);
    OFF(fn_defaults, PyFunctionObject, func_defaults);
    OFF(fn_kwdefaults, PyFunctionObject, func_kwdefaults);
    OFF(fn_dict, PyFunctionObject, func_dict);
    OFF(fn_module, PyFunctionObject, func_module);
    OFF(fn_doc, PyFunctionObject, func_doc);
    OFF(fn_annotations, PyFunctionObject, func_annotations);
    OFF(ce_ref, PyCellObject, ob_ref);
    OFF(wr_object, PyWeakReference, wr_object);
    OFF(wr_callback, PyWeakReference, wr_callback);
    OFF(me_func, PyMethodObject, im_func);
    OFF(me_self, PyMethodObject, im_self);
#if PY_VERSION_HEX >= 0x030B0000
    OFF(mo_dict, PyModuleObject, md_dict);
    OFF(mo_def, PyModuleObject, md_def);
    OFF(mo_state, PyModuleObject, md_state);
#else
    /* PyModuleObject of Objects/moduleobject.c (3.8-3.10, not installed): PyObject_HEAD
     * then PyObject *md_dict, struct PyModuleDef *md_def, void *md_state. */
    F(mo_dict, sizeof(PyObject));
    F(mo_def, sizeof(PyObject) + sizeof(PyObject *));
    F(mo_state, sizeof(PyObject) + sizeof(PyObject *) + sizeof(struct PyModuleDef *));
#endif
    OFF(mdef_size, PyModuleDef, m_size);
    printf("    },\n");
    return 0;
}
