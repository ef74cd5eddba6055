/* leakhound - SPDX-License-Identifier: MIT
 *
 * perl.c: the Perl frame reader (script.h): which Perl subs and lines an allocation was
 * made from, read from the interpreter's memory.
 *
 * Finding the interpreter. perl exports its globals from the executable (Debian's
 * /usr/bin/perl is linked with libperl statically and exports it) or from libperl.so
 * (embedded perl): dlsym(RTLD_DEFAULT, "PL_thr_key") at init finds either. With threads
 * and multiplicity every PL_x is a field of the thread's interpreter, whose address perl
 * keeps under the pthread key PL_thr_key (PERL_SET_CONTEXT sets it and its thread-local
 * copy together). pthread_getspecific only reads the calling thread's key array: it takes
 * no lock and never allocates, so it is safe inside the hooks.
 *
 * Checking it is the perl we know. perl_layout.c holds offsets from the headers this
 * agent was built with; they are used only when the running perl has the same version
 * (PL_revision, PL_version, PL_subversion), the same size of struct interpreter
 * (PL_interp_size) and the same binary-compatibility options (PL_bincompat_options).
 * Anything else: one line, native frames only, never a guessed offset.
 *
 * Reading the frames (memory reads only, no perl API: the hooks run in the middle of perl
 * itself). The statement running is PL_curcop. The context stacks of the current
 * stackinfo and of every older one (si_prev: sort blocks, DESTROY, tie and signal calls
 * run on a new stackinfo) are walked from the top: each sub (CXt_SUB, CXt_FORMAT) or eval
 * (CXt_EVAL) context is one frame of the function it entered, at the statement of the
 * frame inside it; its blk_oldcop is the statement that entered it, which becomes the
 * line of the next frame out. The outermost frame is the main program ("main").
 * The innermost context whose blk_oldcop is still PL_curcop has not run its first
 * statement (pp_entersub making its @_, a tied STORE entered from mg_set): no frame, the
 * allocation is the calling statement's (it showed as "STORE (file:<caller's line>)").
 *
 * Interning keys (script.c reads strings only for keys it has not seen):
 *   key  = what names the function: the sub's GV | 1, a GV-less named sub's CV | 2, a sub
 *          without either CV | 3, or a small constant for main, (eval) and (require);
 *   key2 = 64 bits mixed from the statement's COP address, line, parse sequence number
 *          (cop_seq) and file name's address. A COP is freed with its optree (a string
 *          eval, a BEGIN block, the top-level code of every require'd file once it ran) and
 *          its slot reused by the next file compiled: the line alone kept the first file's
 *          name for the second when both lines matched (eight modules of one shape:
 *          Delta.pm:5 was shown as Charlie.pm:5). cop_seq grows with every lexical perl
 *          compiles, and the file name is the COP's own copy, so a reused slot rarely
 *          brings back all three. PL_compiling, the COP of the file being compiled, is one
 *          address for every file, its cop_seq stays, and its file name's copy is freed
 *          with the file and often made again at the same address for the next: its key2
 *          mixes the name's bytes instead (with 16 bits of tag beside the address, a
 *          Plack app's compile-time allocations were shown at other files: the CV of
 *          Getopt::Long::GetOptionsFromArray "created at (require) (IO.pm:24)").
 * The file name's address is kept in the frame for describe().
 *
 * What can go wrong: perl's structures are consistent whenever perl calls malloc, which is
 * the only time the thread reads them. A C signal handler that allocates at an arbitrary
 * point could catch a context half pushed; the reader checks every index against its
 * bounds and every type tag, and stops at the first inconsistency.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "perl_layout.h"
#include "script.h"
#include "sys.h"

#define L lh_perl_layout

#define KEY_MAIN 0x10
#define KEY_EVAL 0x20
#define KEY_REQUIRE 0x30
#define TAG_GV 1
#define TAG_NAMED_CV 2
#define TAG_BARE_CV 3

/* Bounds against a corrupt context stack. */
#define MAX_CXIX (1 << 22)
#define MAX_STACKINFOS 4096

/* perl's globals: the key is created by PERL_SYS_INIT3 in perl's main, after this agent's
 * constructor ran, so it is read at each capture, and trusted only once PL_curinterp is
 * set (perl_alloc runs after the key exists). */
static const unsigned *thr_key_p;
static void *const *curinterp_p;
static int is_main_program; /* perl is the program, not embedded in another one */
static int interp_gone;      /* the main interpreter was freed (embedded perl, perl_free) */

static inline uintptr_t
rd_ptr(uintptr_t a)
{
    return *(const uintptr_t *)a;
}

static inline uint32_t
rd_u32(uintptr_t a)
{
    return *(const uint32_t *)a;
}

static inline int32_t
rd_i32(uintptr_t a)
{
    return *(const int32_t *)a;
}

static inline int
aligned(uintptr_t p)
{
    return p && (p & 7) == 0;
}

static uint32_t
sv_type(uintptr_t sv)
{
    return rd_u32(sv + L.sv_flags) & L.svt_mask;
}

/* -------------------------------------------------------------------------------------
 * Detection (constructor time)
 * ----------------------------------------------------------------------------------- */

static size_t
put(char *dst, size_t n, size_t cap, const char *s)
{
    while (*s && n + 1 < cap) {
        dst[n++] = *s++;
    }
    dst[n] = 0;
    return n;
}

static size_t
put_u(char *dst, size_t n, size_t cap, unsigned v)
{
    char tmp[24];
    size_t k = lh_sys_fmt_u64(tmp, v);
    tmp[k] = 0;
    return put(dst, n, cap, tmp);
}

/* The options of two PL_bincompat_options strings, compared as sets of words in order
 * (perl writes them space separated, sorted). */
static int
same_words(const char *a, const char *b)
{
    for (;;) {
        while (*a == ' ') {
            a++;
        }
        while (*b == ' ') {
            b++;
        }
        if (!*a || !*b) {
            return !*a && !*b;
        }
        while (*a && *a != ' ' && *a == *b) {
            a++;
            b++;
        }
        if ((*a && *a != ' ') || (*b && *b != ' ')) {
            return 0;
        }
    }
}

int
lh_perl_detect(lh_interp_info_t *info)
{
    const unsigned *key = dlsym(RTLD_DEFAULT, "PL_thr_key");
    void *const *curinterp = dlsym(RTLD_DEFAULT, "PL_curinterp");
    if (!key || !curinterp) {
        return 0; /* no perl here (or one without threads: no PL_thr_key) */
    }
    const uint8_t *rev = dlsym(RTLD_DEFAULT, "PL_revision");
    const uint8_t *ver = dlsym(RTLD_DEFAULT, "PL_version");
    const uint8_t *sub = dlsym(RTLD_DEFAULT, "PL_subversion");
    const uint16_t *isize = dlsym(RTLD_DEFAULT, "PL_interp_size");
    const char *bincompat = dlsym(RTLD_DEFAULT, "PL_bincompat_options");

    info->lang = LH_LANG_PERL;
    info->status = LH_INTERP_UNSUPPORTED;
    size_t n = 0;
    if (rev && ver && sub) {
        n = put_u(info->version, n, sizeof info->version, *rev);
        n = put(info->version, n, sizeof info->version, ".");
        n = put_u(info->version, n, sizeof info->version, *ver);
        n = put(info->version, n, sizeof info->version, ".");
        put_u(info->version, n, sizeof info->version, *sub);
    } else {
        put(info->version, 0, sizeof info->version, "?");
    }
    /* A seam for tests: pretend the running perl reports another version (the agent must
     * then record natively and say so). Read here, in the constructor, never in a hook. */
    const char *fake = getenv("LEAKHOUND_TEST_PERL_VERSION");
    if (fake && *fake) {
        put(info->version, 0, sizeof info->version, fake);
    }

    char want[32];
    n = put_u(want, 0, sizeof want, L.revision);
    n = put(want, n, sizeof want, ".");
    n = put_u(want, n, sizeof want, L.version);
    n = put(want, n, sizeof want, ".");
    put_u(want, n, sizeof want, L.subversion);

    const char *why = NULL;
    if (!L.available) {
        why = "this leakhound was built without perl headers";
    } else if (strcmp(info->version, want) != 0) {
        why = "its version differs from the perl this leakhound was built for (";
    } else if (!isize || *isize != L.interp_size) {
        why = "its interpreter structure differs from the perl this leakhound was built for (";
    } else if (!bincompat || !same_words(bincompat, L.bincompat)) {
        why = "its build options differ from the perl this leakhound was built for (";
    }
    if (why) {
        char *d = info->detail;
        size_t cap = sizeof info->detail;
        n = put(d, 0, cap, "perl ");
        n = put(d, n, cap, info->version);
        n = put(d, n, cap, ": ");
        n = put(d, n, cap, why);
        if (L.available) {
            n = put(d, n, cap, want);
            n = put(d, n, cap, ")");
        }
        put(d, n, cap, "; recording native frames only");
        return 1;
    }
    thr_key_p = key;
    curinterp_p = curinterp;
    /* perl as the program (/usr/bin/perl, perl5.36.0, a perlbrew perl) or embedded in
     * another one: only then is its global destruction the end of the program. */
    const char *base = strrchr(lh_g.exe, '/');
    base = base ? base + 1 : lh_g.exe;
    is_main_program = strncmp(base, "perl", 4) == 0;
    if (!is_main_program) {
        char *d = info->detail;
        size_t cap = sizeof info->detail;
        size_t m = put(d, 0, cap, "perl ");
        m = put(d, m, cap, info->version);
        m = put(d, m, cap, " embedded in ");
        m = put(d, m, cap, base);
        put(d, m, cap, ": recording Perl frames; the exit report is taken at the program's exit");
        lh_sys_log(d, "", "");
        info->detail[0] = 0;
    }
    info->status = LH_INTERP_RECORDED;
    info->detail[0] = 0;
    return 1;
}

/* -------------------------------------------------------------------------------------
 * Capture (inside hooks: AS-safe, memory reads only)
 * ----------------------------------------------------------------------------------- */

/* The interpreter of the calling thread while it runs perl code, else 0. */
static uintptr_t
current_interp(void)
{
    if (!curinterp_p || !*curinterp_p || __atomic_load_n(&interp_gone, __ATOMIC_RELAXED)) {
        return 0;
    }
    uintptr_t my_perl = (uintptr_t)pthread_getspecific((pthread_key_t)*thr_key_p);
    if (!aligned(my_perl)) {
        return 0;
    }
    /* Global destruction: perl frees its stacks and, at the very end, the interpreter
     * itself; from the destruct phase on it is not read. */
    if (rd_u32(my_perl + L.i_phase) >= L.phase_destruct) {
        return 0;
    }
    return my_perl;
}

void
lh_perl_freed(const void *p)
{
    /* perl_free frees the interpreter but leaves PL_curinterp and the thread's key pointing
     * at it: from then on nothing of it may be read (its memory is reused). */
    if (curinterp_p && p && p == *curinterp_p) {
        __atomic_store_n(&interp_gone, 1, __ATOMIC_RELAXED);
    }
}

int
lh_perl_ended(int *status)
{
    if (!is_main_program || !curinterp_p || __atomic_load_n(&interp_gone, __ATOMIC_RELAXED)) {
        return 0;
    }
    uintptr_t main_perl = (uintptr_t)*curinterp_p;
    if (!aligned(main_perl)) {
        return 0;
    }
    /* The program has ended once perl_destruct has run the END blocks and left the scope
     * perl_construct entered (PL_scopestack_ix 0: never so while perl runs code). Waiting
     * for the destruct phase was too late: perl sets it, then unrefs every reference to an
     * object (sv_clean_objs), and the first free of that pass took the exit snapshot with
     * one object half freed and its reference cleared: it and all it held were missing
     * from the heap (one Shop::Node of four, its kids seen as "held outside Perl data"). */
    uint32_t phase = rd_u32(main_perl + L.i_phase);
    if (phase < L.phase_destruct &&
        (phase < L.phase_run || rd_i32(main_perl + L.i_scopestack_ix) != 0)) {
        return 0;
    }
    *status = rd_i32(main_perl + L.i_statusvalue) & 0xff; /* STATUS_EXIT: what perl exits with */
    return 1;
}

/* key of the function a sub context entered. */
static uintptr_t
sub_key(uintptr_t cv)
{
    if (!aligned(cv) || sv_type(cv) != L.svt_pvcv) {
        return TAG_BARE_CV;
    }
    uintptr_t body = rd_ptr(cv + L.sv_any);
    if (!aligned(body)) {
        return cv | TAG_BARE_CV;
    }
    uint32_t flags = rd_u32(body + L.xcv_flags);
    uintptr_t gv = rd_ptr(body + L.xcv_gv_u);
    if (flags & L.cvf_named) {
        return cv | TAG_NAMED_CV;
    }
    return aligned(gv) ? gv | TAG_GV : cv | TAG_BARE_CV;
}

/* FNV-1a of a C string (at most 1023 bytes): the file name perl is compiling. */
static uint64_t
str_hash(const char *p)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; p && i < 1023 && p[i]; i++) {
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
    }
    return h;
}

static void
set_frame(lh_sframe_t *f, uintptr_t key, uintptr_t cop, uintptr_t compiling)
{
    uint32_t line = aligned(cop) ? rd_u32(cop + L.cop_line) : 0;
    if (line == UINT32_MAX) {
        line = 0; /* NOLINE: a COP perl made with no line (BEGIN block set-up, XS boot) */
    }
    uint64_t seq = aligned(cop) ? rd_u32(cop + L.cop_seq) : 0;
    uintptr_t file = aligned(cop) ? rd_ptr(cop + L.cop_file) : 0;
    uint64_t mix = cop * 0x9e3779b97f4a7c15ull;
    if (cop == compiling) {
        /* PL_compiling: one COP for every file compiled, its file name a copy freed when
         * that file is done and its address often the next file's: the name's bytes */
        mix ^= str_hash((const char *)file);
    } else {
        mix ^= (seq << 32) ^ ((uint64_t)file >> 3) * 0xc2b2ae3d27d4eb4full;
    }
    mix = (mix ^ line) * 0xff51afd7ed558ccdull;
    mix ^= mix >> 33;
    mix = (mix ^ seq) * 0xc4ceb9fe1a85ec53ull;
    mix ^= mix >> 29;
    f->key = key;
    f->key2 = (uintptr_t)mix;
    f->line = line;
    f->func = NULL;
    f->func_len = 0;
    f->file = (const char *)file; /* its length: describe(), for new frames only */
    f->file_len = 0;
}

int
lh_perl_capture(lh_sframe_t *out, int max)
{
    uintptr_t my_perl = current_interp();
    if (!my_perl || max < 1) {
        return 0;
    }
    uintptr_t cop = rd_ptr(my_perl + L.i_curcop);
    uintptr_t si = rd_ptr(my_perl + L.i_curstackinfo);
    uintptr_t compiling = my_perl + L.i_compiling;
    if (!aligned(cop) || !aligned(si)) {
        return 0; /* not constructed yet */
    }
    int k = 0;
    for (int n_si = 0; aligned(si) && n_si < MAX_STACKINFOS && k < max - 1; n_si++) {
        uintptr_t cxs = rd_ptr(si + L.si_cxstack);
        int32_t ix = rd_i32(si + L.si_cxix);
        int32_t mx = rd_i32(si + L.si_cxmax);
        if (!aligned(cxs) || ix > mx || mx > MAX_CXIX) {
            break;
        }
        for (; ix >= 0 && k < max - 1; ix--) {
            uintptr_t cx = cxs + (uintptr_t)ix * L.ctx_size;
            unsigned type = *(const uint8_t *)(cx + L.ctx_type) & L.cxt_mask;
            uintptr_t key;
            if (type == L.cxt_sub || type == L.cxt_format) {
                key = sub_key(rd_ptr(cx + L.ctx_sub_cv));
            } else if (type == L.cxt_eval) {
                unsigned op = *(const uint16_t *)(cx + L.ctx_u16) >> L.ctx_op_type_shift;
                key = op == L.op_require ? KEY_REQUIRE : KEY_EVAL;
            } else {
                continue; /* loops, blocks, substitutions: not a frame */
            }
            if (k == 0 && rd_ptr(cx + L.ctx_oldcop) == cop) {
                /* entered, its first statement not run yet (pp_entersub making its @_, a
                 * tied STORE called from mg_set): the calling statement's allocation */
                continue;
            }
            set_frame(&out[k++], key, cop, compiling);
            cop = rd_ptr(cx + L.ctx_oldcop);
            if (!aligned(cop)) {
                return k;
            }
        }
        si = rd_ptr(si + L.si_prev);
    }
    if (k == 0 && !rd_ptr(cop + L.cop_file)) {
        return 0; /* perl constructing itself: no Perl code, no file yet */
    }
    set_frame(&out[k++], KEY_MAIN, cop, compiling);
    return k;
}

/* -------------------------------------------------------------------------------------
 * Describe: the strings of a new frame
 * ----------------------------------------------------------------------------------- */

/* The text and length of a HEK (a shared hash key: names of globs and stashes). */
static const char *
hek_str(uintptr_t hek, uint32_t *len)
{
    if (!aligned(hek)) {
        return NULL;
    }
    int32_t n = rd_i32(hek + L.hek_len);
    if (n < 0 || n > 4096) {
        return NULL;
    }
    *len = (uint32_t)n;
    return (const char *)(hek + L.hek_key);
}

/* The name of a stash (HvNAME): the first name of its aux structure. */
static const char *
stash_name(uintptr_t hv, uint32_t *len)
{
    if (!aligned(hv) || sv_type(hv) != L.svt_pvhv || !(rd_u32(hv + L.sv_flags) & L.svf_ook)) {
        return NULL;
    }
    uintptr_t body = rd_ptr(hv + L.sv_any);
    if (!aligned(body)) {
        return NULL;
    }
    uintptr_t name_u = rd_ptr(body + L.xhv_aux_name_u);
    if (!aligned(name_u)) {
        return NULL;
    }
    int32_t count = rd_i32(body + L.xhv_aux_name_count);
    uintptr_t hek = count ? rd_ptr(name_u) : name_u; /* HvNAME_HEK_NN */
    return hek_str(hek, len);
}

static size_t
append(char *buf, size_t n, size_t cap, const char *s, uint32_t len)
{
    for (uint32_t i = 0; i < len && n + 1 < cap; i++) {
        buf[n++] = s[i];
    }
    return n;
}

void
lh_perl_describe(lh_sframe_t *f, char *buf, size_t cap)
{
    const char *name = NULL, *pkg = NULL;
    uint32_t name_len = 0, pkg_len = 0;
    uintptr_t p = f->key & ~(uintptr_t)7;
    switch (f->key) {
    case KEY_MAIN:
        name = "main";
        break;
    case KEY_EVAL:
        name = "(eval)";
        break;
    case KEY_REQUIRE:
        name = "(require)";
        break;
    default:
        switch (f->key & 7) {
        case TAG_GV:
            if (sv_type(p) == L.svt_pvgv) {
                uintptr_t body = rd_ptr(p + L.sv_any);
                if (aligned(body)) {
                    name = hek_str(rd_ptr(body + L.xgv_namehek), &name_len);
                    pkg = stash_name(rd_ptr(body + L.xgv_stash), &pkg_len);
                }
            }
            break;
        case TAG_NAMED_CV: {
            uintptr_t body = rd_ptr(p + L.sv_any);
            if (aligned(body)) {
                name = hek_str(rd_ptr(body + L.xcv_gv_u), &name_len);
                if (!(rd_u32(body + L.xcv_flags) & L.cvf_lexical)) {
                    pkg = stash_name(rd_ptr(body + L.xcv_stash), &pkg_len);
                }
            }
            break;
        }
        default:
            break;
        }
        if (!name) {
            name = "__ANON__";
            name_len = 0;
        }
    }
    if (name && !name_len) {
        name_len = (uint32_t)strlen(name);
    }
    size_t n = 0;
    if (pkg) {
        n = append(buf, n, cap, pkg, pkg_len);
        n = append(buf, n, cap, "::", 2);
    }
    n = append(buf, n, cap, name, name_len);
    f->func = buf;
    f->func_len = (uint32_t)n;

    f->file_len = f->file ? (uint32_t)strnlen(f->file, 1023) : 0;
}
