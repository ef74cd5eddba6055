/* leakhound - SPDX-License-Identifier: MIT
 *
 * format.h: the normative constants and record layouts of the leakhound trace (.lht).
 *
 * This header is the only contract between the agent (which writes traces inside the
 * target process) and everything after it (which reads them). docs/FORMAT.md is the prose
 * version of the same contract; both change in the same commit.
 *
 * Shape of a file (all fixed-width integers little-endian):
 *
 *     file header      16 bytes: magic "LHTRACE\0", u16 major, u16 minor, u32 info_len
 *     info records     info_len bytes of records (uncompressed), see LH_REC_INFO_*
 *     frame*           each: a 48-byte frame header + payload (zstd or raw)
 *
 * A frame holds records written by one thread (or by the agent's ticker), and decodes on
 * its own: delta state (time, addresses) restarts at every frame. A record is
 *
 *     u8 type, varint payload_len, payload
 *
 * so a reader skips types it does not know. Fields are appended to the end of a payload
 * in later minor versions; readers ignore trailing bytes they do not understand. A major
 * version bump means old readers must refuse the file.
 */
#ifndef LH_FORMAT_H
#define LH_FORMAT_H

#include <stdint.h>

#define LH_FILE_MAGIC "LHTRACE"   /* 8 bytes with the terminating NUL */
#define LH_FILE_MAGIC_LEN 8
#define LH_FORMAT_MAJOR 1
#define LH_FORMAT_MINOR 5 /* 1: SFRAME, INTERP, script frames on STACK; 2: .lhs BASE, SAME;
                            3: INFO_PARENT's fork ts and parent trace; 4: EVENTS;
                            5: SUPPRESSIONS */
#define LH_FILE_HEADER_LEN 16

#define LH_FRAME_MAGIC 0x3146484cu /* "LHF1" read as a little-endian u32 */
#define LH_FRAME_HEADER_LEN 48
/* A reader refuses frames larger than this, so a corrupt length cannot make it allocate
 * gigabytes. Writers stay far below it (the agent's buffers are 64 KiB). */
#define LH_FRAME_MAX_RAW (64u << 20)

/* Frame codecs. */
enum {
    LH_CODEC_RAW = 0,
    LH_CODEC_ZSTD = 1,
};

/* Frame header, 48 bytes on disk:
 *   0  u32 magic          LH_FRAME_MAGIC
 *   4  u16 header_len     48 in this version; readers skip extra header bytes
 *   6  u8  codec          LH_CODEC_*
 *   7  u8  flags          LH_FRAME_F_*
 *   8  u32 tid            thread that produced the records (0: the agent itself)
 *  12  u32 raw_len        payload size after decompression
 *  16  u32 comp_len       payload size on disk
 *  20  u32 payload_crc    CRC-32C of the on-disk payload
 *  24  u64 ts_base_ns     time base for the first record's delta (CLOCK_MONOTONIC ns)
 *  32  u64 seq            frame sequence number, 0, 1, 2, ... in file order
 *  40  u32 n_records      records in the payload
 *  44  u32 header_crc     CRC-32C of bytes 0..43
 */
enum {
    LH_FRAME_F_SYNC = 1, /* frame holds a LH_REC_SYNC record written by the ticker */
};

typedef struct lh_frame_hdr {
    uint32_t magic;
    uint16_t header_len;
    uint8_t codec;
    uint8_t flags;
    uint32_t tid;
    uint32_t raw_len;
    uint32_t comp_len;
    uint32_t payload_crc;
    uint64_t ts_base_ns;
    uint64_t seq;
    uint32_t n_records;
    uint32_t header_crc;
} lh_frame_hdr_t;

/* ---------------------------------------------------------------------------------------
 * Record types. Numbers are never reused. "ts" below is a varint delta in ns from the
 * previous timestamped record of the same frame (the first one: from ts_base_ns).
 * "addr" is the delta from the previous address of the same frame (start: 0), coded by
 * lh_addr_code (enc.h): multiples of 16 without their four zero bits.
 * Strings are varint length + bytes (no NUL). "varint" is unsigned LEB128.
 * ------------------------------------------------------------------------------------- */
enum lh_rec_type {
    /* Info records: only in the file header's info block. */
    LH_REC_INFO_PID = 0x01,      /* varint pid, varint ppid */
    LH_REC_INFO_EXE = 0x02,      /* string: absolute path of the executable */
    LH_REC_INFO_CMDLINE = 0x03,  /* varint argc, then argc strings */
    LH_REC_INFO_CLOCK = 0x04,    /* varint clock id (1 = CLOCK_MONOTONIC), varint mono_start_ns,
                                    varint realtime_start_ns (ns since the Unix epoch) */
    LH_REC_INFO_AGENT = 0x05,    /* string agent version, varint unwinder (LH_UNWIND_*),
                                    varint max depth, varint pointer size, string arch,
                                    varint sample_rate_bytes (0 = every allocation) */
    LH_REC_INFO_PARENT = 0x06,   /* varint parent pid: this trace was started by fork();
                                    [varint fork ts, string parent trace (the file holding
                                    this process's heap as of fork ts; empty: none), varint
                                    that trace's pid (minor 3)]: readers seed the child with
                                    the blocks live there at fork ts (docs/FORMAT.md) */
    LH_REC_INFO_ATTACH = 0x07,   /* varint how (1 = `leakhound attach`): recording started in
                                    a running process; blocks allocated before are unknown,
                                    frees of them are unmatched frees. 2 = `leakhound
                                    snapshot -p`: the live blocks were read from glibc's
                                    malloc from outside (ALLOC with stack id 0, usable
                                    sizes) at each SNAPSHOT's time */

    /* Frame records. */
    LH_REC_THREAD = 0x10,        /* ts, varint tid, string name */
    LH_REC_THREAD_END = 0x11,    /* ts, varint tid */
    LH_REC_MODULE = 0x20,        /* ts, varint epoch, varint load_bias, string path,
                                    varint build_id_len + bytes, varint n_segs,
                                    n_segs x (varint vaddr, varint memsz, varint flags(PF_*)) */
    LH_REC_MODULE_UNLOAD = 0x21, /* ts, varint epoch (the new epoch), varint load_bias,
                                    string path */
    LH_REC_STACK = 0x30,         /* varint stack_id (>= 1), varint epoch, varint n,
                                    n x zigzag delta of the return address from the previous
                                    one (the first from 0); innermost frame first;
                                    [varint n_script, n_script x varint sframe_id, innermost
                                    first (minor 1); absent = no script frames]. A stack id
                                    names the (native, script) pair. */
    LH_REC_SFRAME = 0x31,        /* varint sframe_id (>= 1), varint lang (LH_LANG_*), string
                                    function (fully qualified: "MyApp::handle_request",
                                    "app.Handler.handle"; "main" / "<module>" at top level),
                                    string file, varint line. One interned script frame,
                                    written once per file before the first STACK that uses
                                    it in the same frame; readers resolve ids at the end. */
    LH_REC_INTERP = 0x32,        /* ts, varint lang, string version ("5.36.0"), varint status
                                    (LH_INTERP_*), string detail (the one line the agent said
                                    to the user) */
    LH_REC_ALLOC = 0x40,         /* ts, addr, varint size, varint stack_id, [u8 kind (LH_AK_*);
                                    absent = LH_AK_MALLOC] */
    LH_REC_FREE = 0x41,          /* ts, addr */
    LH_REC_REALLOC = 0x42,       /* ts, addr old, addr new, varint size, varint stack_id,
                                    varint dt_alloc: the old block is freed at ts (taken
                                    before the real call), the new one allocated at
                                    ts + dt_alloc (after it returned); readers order the
                                    two halves separately. The next record's ts delta is
                                    from ts + dt_alloc. */
    LH_REC_EVENTS = 0x43,        /* (minor 4) a run of allocations and frees, one after the
                                    other to the end of the payload, each a varint head =
                                    ts delta << 2 | LH_EV_* code, then:
                                    LH_EV_FREE: addr;
                                    LH_EV_ALLOC: addr, varint size (kind malloc, the stack
                                    id of the frame's previous LH_EV_ALLOC_STACK, 0 before
                                    the first);
                                    LH_EV_ALLOC_STACK: addr, varint size, varint stack_id,
                                    u8 kind. Same meaning as ALLOC and FREE records; the
                                    agent writes these instead (no type and length byte
                                    per event: fewer bytes to compress and to store). */
    LH_REC_MARK = 0x50,          /* ts, string label */
    LH_REC_SNAPSHOT = 0x51,      /* ts, string label, varint trigger (LH_SNAP_*),
                                    [string contents file (a name in the trace's directory;
                                    empty: none), varint contents mode (LH_CONTENTS_*),
                                    varint snapshot number, varint pause_ns] */
    LH_REC_RSS = 0x52,           /* ts, varint rss_bytes, [varint pss_bytes, varint anon_bytes] */
    LH_REC_TAG = 0x53,           /* ts, addr, string type */
    LH_REC_SUPPRESSIONS = 0x54,  /* (minor 5) ts, string: the rules the program embeds for
                                    LeakSanitizer (__lsan_default_suppressions), as it
                                    returned them at start */
    LH_REC_SYNC = 0x60,          /* ts: every record stamped before ts is in an earlier
                                    frame or in this one */
    LH_REC_EXEC = 0x61,          /* ts, string path: the process called execve() */
    LH_REC_END = 0x70,           /* ts, varint exit kind (LH_EXIT_*), varint status,
                                    varint events, varint frames, varint dropped,
                                    varint pre_init_allocs, [varint table_walks,
                                    varint table_fallbacks, varint verify_checked,
                                    varint verify_mismatches] (stacks walked by the
                                    unwind table, stacks it left to libunwind, and of
                                    the walks compared with libunwind, how many
                                    differed) */
};

/* The low two bits of an EVENTS record's event head. */
enum lh_ev_code {
    LH_EV_FREE = 0,
    LH_EV_ALLOC = 1,       /* malloc, the frame's current stack id */
    LH_EV_ALLOC_STACK = 2, /* stack id and kind given; the stack id becomes the current one */
    /* 3: malformed */
};

/* Which entry point made an allocation. */
enum lh_alloc_kind {
    LH_AK_MALLOC = 0,
    LH_AK_CALLOC = 1,
    LH_AK_REALLOC = 2,
    LH_AK_MEMALIGN = 3, /* posix_memalign, aligned_alloc, memalign */
    LH_AK_VALLOC = 4,   /* valloc, pvalloc */
    LH_AK_REALLOCARRAY = 5,
    LH_AK_COUNT
};

/* Script languages whose frames the agent records (SFRAME, INTERP). */
enum lh_lang {
    LH_LANG_NATIVE = 0, /* not a script frame (used by readers, never written in SFRAME) */
    LH_LANG_PERL = 1,
    LH_LANG_PYTHON = 2,
};

/* INTERP status. */
enum lh_interp_status {
    LH_INTERP_UNSUPPORTED = 0, /* an interpreter the agent cannot read: native frames only */
    LH_INTERP_RECORDED = 1,    /* its script frames are recorded on STACK records */
};

/* Limits for readers: deeper script stacks and longer strings are malformed. */
#define LH_SFRAME_ID_MAX (1u << 24)
#define LH_SCRIPT_DEPTH_MAX 1024u

enum lh_unwind_kind {
    LH_UNWIND_LIBUNWIND = 0,
    LH_UNWIND_FP = 1,
    LH_UNWIND_TABLE = 2, /* .eh_frame compiled into rule tables, libunwind as fallback */
};

enum lh_exit_kind {
    LH_EXIT_NORMAL = 0, /* exit() or return from main: destructors ran */
    LH_EXIT_UNDERSCORE = 1, /* _exit() / _Exit() */
    LH_EXIT_EXEC = 2,   /* execve() replaced the image (followed or not) */
    LH_EXIT_DETACH = 3, /* `leakhound attach` detached: the process runs on */
    LH_EXIT_SCRIPT = 4, /* a perl or python program's main program ended (the point of its
                           exit report and snapshot), and the process's own exit was never
                           seen: a signal killed it during the interpreter's teardown (python
                           kills itself with SIGINT after an uncaught KeyboardInterrupt) */
    LH_EXIT_SIGNAL = 5, /* killed by a stop signal (SIGINT, SIGTERM, SIGHUP) at its default
                           disposition; the status is the signal's number. The trace was
                           ended as at exit (final flush, exit snapshot), then the process
                           died of the signal */
};

enum lh_snap_trigger {
    LH_SNAP_API = 0,
    LH_SNAP_SIGNAL = 1,
    LH_SNAP_PERIOD = 2,
    LH_SNAP_GROWTH = 3,
    LH_SNAP_EXIT = 4,
};

/* What a snapshot records besides the live set (--snapshot-contents). */
enum lh_contents_mode {
    LH_CONTENTS_NONE = 0,     /* the live set only (from the trace's events) */
    LH_CONTENTS_POINTERS = 1, /* words that point into the heap or into modules */
    LH_CONTENTS_FULL = 2,     /* every byte of the heap and of the roots */
};

/* ---------------------------------------------------------------------------------------
 * Snapshot contents files (.lhs), written by a copy-on-write child of the target while it
 * runs on. Same container as a trace: a 16-byte header (magic LH_SNAP_MAGIC, major, minor,
 * info_len), info records, then frames whose records are the LH_SREC_* below. Addresses
 * are absolute varints unless said otherwise.
 * ------------------------------------------------------------------------------------- */
#define LH_SNAP_MAGIC "LHSNAPS"   /* 8 bytes with the NUL */

enum lh_srec_type {
    LH_SREC_INFO = 0x01,   /* (info block) varint pid, varint snapshot number, varint ts,
                              string label, varint contents mode */
    LH_SREC_REGION = 0x80, /* varint start, varint len, varint kind (LH_REGION_*),
                              string name (module path, "[heap]", "[stack:TID]", ...) */
    LH_SREC_PTRS = 0x81,   /* varint count, count x (varint word-aligned address delta / 8
                              from the previous address (first: from 0), svarint value delta
                              from the previous value (first: from 0)) */
    LH_SREC_BYTES = 0x82,  /* varint address, then the bytes (the rest of the payload) */
    LH_SREC_THREAD = 0x83, /* varint tid, varint sp, varint stack_lo, varint stack_hi:
                              the capturing thread; sp is the program's stack pointer where
                              it called the agent (lh_snapshot, exit), below which its
                              callee-saved registers were pushed */
    LH_SREC_WORDS = 0x84,  /* header words for the interior-pointer heuristics: varint count,
                              count x (varint address / 8, varint value), in no order: the
                              3 words below each distinct heap pointer value that is 8 mod
                              16 (a length, a count, a capacity: analysis/heapgraph.h) */
    LH_SREC_BASE = 0x85,   /* varint snapshot number, string file name (a base name, in
                              this file's directory): an earlier contents file of the same
                              process that SAME records of this one refer to */
    LH_SREC_SAME = 0x86,   /* varint base snapshot number, varint count, count x (varint
                              address delta / 8 from the previous piece's address (first:
                              from 0), varint length / 8): pieces whose contents (the PTRS
                              words or the BYTES page) are those the base file stores for
                              exactly that piece; never a piece the base itself refers to */
    LH_SREC_END = 0x8f,    /* varint regions, varint words scanned, varint pointers,
                              varint bytes */
};

enum lh_region_kind {
    LH_REGION_HEAP = 1,  /* anonymous memory where blocks live ([heap], arenas, mmap'd) */
    LH_REGION_DATA = 2,  /* a module's writable data and bss: a root, named by module */
    LH_REGION_STACK = 3, /* a thread's stack: a root */
    LH_REGION_OTHER = 4, /* other anonymous writable memory: scanned, not a root */
    LH_REGION_TLS = 5,   /* a live thread's TLS: its static TLS block, descriptor and DTV
                            ("[tls:TID]") or its pthread_setspecific slots ("[specific:TID]"):
                            a root (older readers ignore the kind) */
    LH_REGION_MAPPED = 6, /* anonymous memory the program mapped itself (mmap): a root,
                             where no block lies, "[mmap]" */
};

#endif /* LH_FORMAT_H */
