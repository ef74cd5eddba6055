/* leakhound - SPDX-License-Identifier: MIT
 *
 * output.c: the trace file. Opened on first use (a fork child opens its own only when it
 * has something to write), O_EXCL|O_NOFOLLOW, 0600; the file header and the process
 * records first, then whatever the opener callback adds (the module map), then frames:
 * each one compressed with zstd on agent memory and written whole under the writer lock.
 *
 * A failed open or write stops recording for good in this process (io_failure), and no
 * frame is written after a short one, so the file is truncated rather than corrupt.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced: zstd on our own mmap memory */
#include <zstd.h>

#include "ownfd.h"
#include "output.h"

#include "agent.h"
#include "config.h"
#include "enc.h"
#include "format.h"
#include "sys.h"

#define SCRATCH_MAX (256u * 1024u) /* largest agent frame (module records) */

/* Called with the writer lock held when a new file has its header (see lh_output_init). */
static void (*on_open)(void);

/* Sticky: the trace could not be created or written. Set once per process (reset in a fork
 * child, which writes its own file); no frame is written after it, so a short write (disk
 * full) is never followed by a later frame that would make the file corrupt rather than
 * truncated. */
static atomic_int io_failed;

/* Says why, once per process, whatever the state: the first write (or the open) often
 * happens in the final flush, when the state is already LH_ST_STOPPED and lh_disable
 * would stay silent, leaving a bare "(errno N)" line or nothing at all. */
static void
io_failure(const char *why, const char *path, int err)
{
    if (atomic_exchange(&io_failed, 1)) {
        return;
    }
    atomic_store(&lh_g.state, LH_ST_STOPPED);
    static const char stopped[] = "); recording stopped (the program continues)";
    char tail[32 + sizeof stopped] = " (errno ";
    size_t n = strlen(tail);
    n += lh_sys_fmt_u64(tail + n, (uint64_t)(err < 0 ? -err : err));
    memcpy(tail + n, stopped, sizeof stopped);
    lh_sys_log(why, path, tail);
}

/* -------------------------------------------------------------------------------------
 * The output file
 * ----------------------------------------------------------------------------------- */
static size_t
build_info(uint8_t *buf, size_t cap)
{
    lh_enc_t e;
    uint8_t *r;
    lh_enc_init(&e, buf, cap);

    r = lh_enc_rec_begin(&e, LH_REC_INFO_PID);
    lh_enc_varint(&e, (uint64_t)lh_g.pid);
    lh_enc_varint(&e, (uint64_t)lh_g.ppid);
    lh_enc_rec_end(&e, r);

    r = lh_enc_rec_begin(&e, LH_REC_INFO_EXE);
    lh_enc_str(&e, lh_g.exe);
    lh_enc_rec_end(&e, r);

    r = lh_enc_rec_begin(&e, LH_REC_INFO_CMDLINE);
    size_t argc = 0;
    for (size_t i = 0; i < lh_g.cmdline_len; i++) {
        argc += lh_g.cmdline[i] == '\0';
    }
    lh_enc_varint(&e, argc);
    for (size_t i = 0; i < lh_g.cmdline_len;) {
        size_t n = strnlen(lh_g.cmdline + i, lh_g.cmdline_len - i);
        lh_enc_varint(&e, n);
        lh_enc_bytes(&e, lh_g.cmdline + i, n);
        i += n + 1;
    }
    lh_enc_rec_end(&e, r);

    r = lh_enc_rec_begin(&e, LH_REC_INFO_CLOCK);
    lh_enc_varint(&e, 1);
    lh_enc_varint(&e, lh_g.mono_start_ns);
    lh_enc_varint(&e, lh_g.real_start_ns);
    lh_enc_rec_end(&e, r);

    r = lh_enc_rec_begin(&e, LH_REC_INFO_AGENT);
    lh_enc_str(&e, LH_AGENT_VERSION);
    lh_enc_varint(&e, (uint64_t)lh_g.cfg.unwind);
    lh_enc_varint(&e, (uint64_t)lh_g.cfg.depth);
    lh_enc_varint(&e, sizeof(void *));
#if defined(__x86_64__)
    lh_enc_str(&e, "x86_64");
#elif defined(__aarch64__)
    lh_enc_str(&e, "aarch64");
#else
    lh_enc_str(&e, "unknown");
#endif
    lh_enc_varint(&e, lh_g.cfg.sample_rate);
    lh_enc_rec_end(&e, r);

    if (lh_g.is_attached) {
        r = lh_enc_rec_begin(&e, LH_REC_INFO_ATTACH);
        lh_enc_varint(&e, 1);
        lh_enc_rec_end(&e, r);
    }
    if (lh_g.parent_pid) {
        r = lh_enc_rec_begin(&e, LH_REC_INFO_PARENT);
        lh_enc_varint(&e, (uint64_t)lh_g.parent_pid);
        lh_enc_varint(&e, lh_g.seed_ts_ns);
        lh_enc_str(&e, lh_g.seed_path);
        lh_enc_varint(&e, (uint64_t)lh_g.seed_pid);
        lh_enc_rec_end(&e, r);
    }
    return lh_enc_ok(&e) ? (size_t)(e.p - buf) : 0;
}

static int
has_pid_pattern(const char *s)
{
    for (; *s; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            return 1;
        }
        if (s[0] == '%' && s[1]) {
            s++;
        }
    }
    return 0;
}

static void
append_suffix(char *name, size_t cap, uint64_t v)
{
    size_t n = strlen(name);
    char num[21];
    size_t k = lh_sys_fmt_u64(num, v);
    if (n + 1 + k + 1 > cap) {
        return;
    }
    name[n] = '.';
    memcpy(name + n + 1, num, k);
    name[n + 1 + k] = '\0';
}

/* One line to the run's index (LEAKHOUND_INDEX), in one write(2) on an O_APPEND
 * descriptor: lines of concurrent processes do not interleave. No allocation. */
static void
index_write(const char *line, size_t n)
{
    int fd = open(lh_g.cfg.index, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        (void)!write(fd, line, n);
        close(fd);
    }
}

/* Appends "pid<TAB>image<TAB>program<TAB>absolute path<LF>" to the run's index
 * (LEAKHOUND_INDEX), so `leakhound run` can list every trace of the run and tell the
 * traces of a wrapper's fork children from the real program's (agent.h image_id). No
 * allocation (wlock held). */
static void
index_append(void)
{
    if (!lh_g.cfg.index[0]) {
        return;
    }
    char line[2 * LH_PATH_MAX + 300];
    size_t n = lh_sys_fmt_u64(line, (uint64_t)lh_g.pid);
    line[n++] = '\t';
    n += lh_sys_fmt_u64(line + n, lh_g.cfg.image_id);
    line[n++] = '\t';
    n += lh_sys_strlcpy(line + n, lh_g.progname, 256);
    line[n++] = '\t';
    if (lh_g.path[0] != '/') {
        if (!getcwd(line + n, LH_PATH_MAX)) {
            return;
        }
        n += strlen(line + n);
        line[n++] = '/';
    }
    n += lh_sys_strlcpy(line + n, lh_g.path, LH_PATH_MAX);
    line[n++] = '\n';
    index_write(line, n);
}

/* Appends "pid<TAB>0<TAB>program<TAB><LF>" to the run's index: a program the traced line
 * started (fork+exec) and that is not traced (agent.h is_descendant). `leakhound run` names
 * such programs, so whoever traced a shell script sees that its work ran untraced. The name
 * is argv[0]'s base name, as read_identity makes it. Constructor time: no allocation. */
void
lh_output_index_untraced(void)
{
    if (!lh_g.cfg.index[0]) {
        return;
    }
    char arg0[256];
    ssize_t r = lh_sys_read_file("/proc/self/cmdline", arg0, sizeof arg0 - 1);
    arg0[r > 0 ? r : 0] = '\0';
    const char *base = strrchr(arg0, '/');
    base = base ? base + 1 : arg0;
    char line[320];
    size_t n = lh_sys_fmt_u64(line, (uint64_t)getpid());
    memcpy(line + n, "\t0\t", 3);
    n += 3;
    for (const char *c = base; *c && n < sizeof line - 3; c++) {
        line[n++] = (*c < ' ' || *c == 0x7f) ? '_' : *c;
    }
    line[n++] = '\t';
    line[n++] = '\n';
    index_write(line, n);
}

/* Opens the trace on first use (wlock held). A fork child opens its own file only when it
 * has something to write, so fork+exec children leave no empty traces. */
static int
open_output_locked(void)
{
    if (lh_g.fd >= 0) {
        return 0;
    }
    if (lh_g.open_failed) {
        return -1;
    }
    char name[LH_PATH_MAX];
    lh_config_expand(&lh_g.cfg, lh_g.pid, lh_g.progname, name, sizeof name);
    if ((lh_g.parent_pid || lh_g.cfg.not_main) && !has_pid_pattern(lh_g.cfg.output)) {
        append_suffix(name, sizeof name, (uint64_t)lh_g.pid);
    }
    /* O_EXCL|O_NOFOLLOW: never clobber an existing file nor follow a planted symlink. A
     * followed exec of the same program may find its own earlier trace: add .1, .2, ... */
    char try[LH_PATH_MAX];
    lh_sys_strlcpy(try, name, sizeof try);
    int fd = -1;
    for (int k = 0; k < 100; k++) {
        fd = open(try, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST) {
            break;
        }
        lh_sys_strlcpy(try, name, sizeof try);
        append_suffix(try, sizeof try, (uint64_t)k + 1);
    }
    if (fd < 0) {
        lh_g.open_failed = 1;
        io_failure("cannot create trace file ", try, errno);
        return -1;
    }
    fd = lh_ownfd_keep(fd);
    lh_g.fd = fd;
    lh_sys_strlcpy(lh_g.path, try, sizeof lh_g.path);
    index_append();

    uint8_t hdr[LH_FILE_HEADER_LEN + 40000];
    size_t info_len = build_info(hdr + LH_FILE_HEADER_LEN, sizeof hdr - LH_FILE_HEADER_LEN);
    lh_enc_t e;
    lh_enc_init(&e, hdr, LH_FILE_HEADER_LEN);
    lh_enc_file_header(&e, (uint32_t)info_len);
    int wrc = lh_sys_write_all(fd, hdr, LH_FILE_HEADER_LEN + info_len);
    if (wrc != 0) {
        io_failure("cannot write trace file ", lh_g.path, wrc);
        return -1;
    }
    if (on_open) {
        on_open();
    }
    return 0;
}

/* Compresses one frame (wlock held). zstd level 1's match finder is most of what
 * compressing costs, and on events that hardly compress (random sizes and addresses: churn's
 * frames shrink by 1.23x) its short matches gain little: after a frame that shrank by less
 * than 1.5x, the next one is searched for matches of 7 bytes or more instead of 6, which
 * halves zstd's instructions on such data for 1.7% more bytes (churn_nofp: 105M -> 48M
 * instructions for 3.3 MB of events; output 2.69 -> 2.74 MB). Frames that compress well
 * (python 6.8x, leaky_server 2.0x) keep level 1 as it is.
 *
 * The same test chooses how events are written (lh_output_compact, record.c). On such
 * frames zstd's gain is all in the literals, and long EVENTS records give it 23% fewer
 * bytes (churn: 6.08 -> 4.96 B/event, 26% fewer zstd instructions). Where matches pay,
 * they are found in the events' repeats (a request loop's same sizes, stacks and address
 * deltas), which a record's type and length byte and the stack id hold together between
 * the varying time deltas: leaky_server_nofp's frames shrink 2.25x with a record per event
 * and 1.77x with long EVENTS records (3.10-3.17 against 3.31-3.35 B/event), so there each
 * EVENTS record holds one event with its stack id. Small programs never fill a frame and
 * keep the compact form they start with.
 *
 * In that long-match mode, Huffman coding of the literals is then nearly all of zstd's
 * work (2.37 against 0.31 ns per raw byte on churn's frames) for a gain of 1.16x. Every
 * LH_LIT_PROBE_EVERY-th full frame is compressed with literals (the probe); when it shrank
 * by less than 1.25x, the frames until the next probe are compressed without them: the
 * first of them is searched for matches of 7 bytes, and when it did not shrink (churn's
 * never do) the others are written raw without calling zstd at all. The probe also decides the mode as before, so a program whose events start repeating gets level 1
 * back within LH_LIT_PROBE_EVERY frames. Churn: zstd's instructions per pair 211 -> about
 * 40 for 5.03 -> 5.73 bytes per event (bench/RESULTS.md). */
#define LH_LIT_PROBE_EVERY 8
static int long_matches;
static int literals_off;
static int matches_none;
static unsigned frames_since_probe;
atomic_int lh_output_compact = 1;

/* Frames shorter than this are written raw: the ticker's SYNC and RSS frames (a few bytes,
 * which zstd's own header makes longer) and a sampled run's few records per tick; each
 * ZSTD_compress2 call costs about 14k instructions whatever its input. */
#define LH_OUTPUT_MIN_COMPRESS 128
/* Frames at least this long decide the mode: the ticker's SYNC and module frames are a few
 * bytes that never shrink much, and would switch every thread to long matches. */
#define LH_OUTPUT_FULL_FRAME 16384

/* Returns the compressed length, a zstd error, or 0 when the frame is to be written raw
 * without trying. */
static size_t
compress_frame(void *dst, size_t cap, const void *src, size_t len)
{
    int full = len >= LH_OUTPUT_FULL_FRAME;
    int probe = 0;
    if (full && long_matches && ++frames_since_probe >= LH_LIT_PROBE_EVERY) {
        probe = 1;
        frames_since_probe = 0;
        matches_none = 0;
    }
    int lit_off = long_matches && literals_off && !probe;
    if (lit_off && matches_none) {
        return 0;
    }
    ZSTD_CCtx_setParameter(lh_g.cctx, ZSTD_c_minMatch, long_matches ? 7 : 0);
    ZSTD_CCtx_setParameter(lh_g.cctx, ZSTD_c_literalCompressionMode,
                           lit_off ? ZSTD_ps_disable : ZSTD_ps_auto);
    size_t clen = ZSTD_compress2(lh_g.cctx, dst, cap, src, len);
    if (!ZSTD_isError(clen) && full && !lit_off) {
        /* Only frames compressed with their literals decide. */
        long_matches = clen * 3 > len * 2;
        literals_off = clen * 5 > len * 4;
        atomic_store_explicit(&lh_output_compact, long_matches, memory_order_relaxed);
    } else if (full && lit_off) {
        matches_none = ZSTD_isError(clen) || clen >= len;
    }
    return clen;
}

void
lh_output_write_frame_locked(const uint8_t *raw, size_t len, uint32_t tid, uint32_t n_records,
                             uint64_t ts_base, uint8_t flags)
{
    if (len == 0 || atomic_load_explicit(&io_failed, memory_order_relaxed) ||
        open_output_locked() != 0 || lh_g.fd < 0) {
        return;
    }
    uint8_t *payload = lh_g.out + LH_FRAME_HEADER_LEN;
    size_t cap = lh_g.out_cap - LH_FRAME_HEADER_LEN;
    size_t clen = 0;
    uint8_t codec = LH_CODEC_RAW;
    const uint8_t *body = payload;
    if (lh_g.cctx && len >= LH_OUTPUT_MIN_COMPRESS) {
        clen = compress_frame(payload, cap, raw, len);
        if (clen != 0 && !ZSTD_isError(clen) && clen < len) {
            codec = LH_CODEC_ZSTD;
        }
    }
    if (codec == LH_CODEC_RAW) {
        if (len > cap) {
            return;
        }
        body = raw; /* written from where it is, behind the header: no copy */
        clen = len;
    }
    lh_frame_hdr_t h = {
        .codec = codec,
        .flags = flags,
        .tid = tid,
        .raw_len = (uint32_t)len,
        .comp_len = (uint32_t)clen,
        .ts_base_ns = ts_base,
        .seq = lh_g.seq++,
        .n_records = n_records,
    };
    lh_enc_t e;
    lh_enc_init(&e, lh_g.out, LH_FRAME_HEADER_LEN);
    lh_enc_frame_header(&e, &h, body);
    int rc = codec == LH_CODEC_RAW
                 ? lh_sys_write2_all(lh_g.fd, lh_g.out, LH_FRAME_HEADER_LEN, body, clen)
                 : lh_sys_write_all(lh_g.fd, lh_g.out, LH_FRAME_HEADER_LEN + clen);
    if (rc != 0) {
        io_failure("cannot write trace file ", lh_g.path, rc);
        return;
    }
    atomic_fetch_add_explicit(&lh_g.n_frames, 1, memory_order_relaxed);
}

void
lh_write_agent_frame_locked(const uint8_t *recs, size_t len, uint32_t n_records,
                            uint64_t ts_base)
{
    lh_output_write_frame_locked(recs, len, 0, n_records, ts_base, 0);
}

void
lh_write_agent_frame(const uint8_t *recs, size_t len, uint32_t n_records, uint64_t ts_base,
                     uint8_t flags)
{
    pthread_mutex_lock(&lh_g.wlock);
    lh_output_write_frame_locked(recs, len, 0, n_records, ts_base, flags);
    pthread_mutex_unlock(&lh_g.wlock);
}

int
lh_output_init(void (*opened)(void))
{
    size_t max_raw = lh_g.cfg.buffer_bytes > SCRATCH_MAX ? lh_g.cfg.buffer_bytes : SCRATCH_MAX;
    lh_g.out_cap = LH_FRAME_HEADER_LEN + ZSTD_compressBound(max_raw) + 64;
    lh_g.out = lh_sys_map(lh_g.out_cap);
    if (!lh_g.out) {
        return -1;
    }
    ZSTD_customMem mem = {lh_sys_zalloc, lh_sys_zfree, NULL};
    lh_g.cctx = ZSTD_createCCtx_advanced(mem);
    if (lh_g.cctx) {
        ZSTD_CCtx_setParameter(lh_g.cctx, ZSTD_c_compressionLevel, 1);
    }
    on_open = opened;
    return lh_output_open();
}

int
lh_output_open_locked(void)
{
    return open_output_locked();
}

int
lh_output_open(void)
{
    pthread_mutex_lock(&lh_g.wlock);
    int rc = open_output_locked();
    pthread_mutex_unlock(&lh_g.wlock);
    return rc;
}

void
lh_output_close(void)
{
    pthread_mutex_lock(&lh_g.wlock);
    lh_ownfd_close(lh_g.fd);
    lh_g.fd = -1;
    lh_g.open_failed = 1; /* a straggling frame must not start a new file */
    pthread_mutex_unlock(&lh_g.wlock);
}

int
lh_output_hold(int ms)
{
    static atomic_int holder; /* the thread that holds it for good */
    int me = (int)lh_sys_gettid();
    if (atomic_load(&holder) == me) {
        return 0;
    }
    for (int i = 0; i < ms * 10; i++) {
        if (pthread_mutex_trylock(&lh_g.wlock) == 0) {
            atomic_store(&holder, me);
            return 0;
        }
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

void
lh_output_after_fork(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    lh_g.wlock = fresh;
    lh_ownfd_close(lh_g.fd);
    lh_g.fd = -1;
    lh_g.open_failed = 0;
    atomic_store(&io_failed, 0);
    lh_g.seq = 0;
}
