/* leakhound - SPDX-License-Identifier: MIT
 *
 * sqlite.c: the SQLite export (docs/SQLITE.md).
 */
#include "sqlite.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "text.h"

struct lh_sqlite_out {
    sqlite3 *db;
    char *path;
    sqlite3_stmt *ev;
    uint64_t n_events;
};

static const char schema[] =
    "PRAGMA journal_mode=OFF;\n"
    "PRAGMA synchronous=OFF;\n"
    "CREATE TABLE info(key TEXT PRIMARY KEY, value);\n"
    "CREATE TABLE stacks(stack_id INTEGER PRIMARY KEY, n_frames INTEGER,\n"
    "    location_depth INTEGER);\n"
    "CREATE TABLE frames(stack_id INTEGER, depth INTEGER, function TEXT, file TEXT,\n"
    "    line INTEGER, module TEXT, inlined INTEGER, address INTEGER,\n"
    "    PRIMARY KEY(stack_id, depth)) WITHOUT ROWID;\n"
    "CREATE TABLE sites(stack_id INTEGER PRIMARY KEY, function TEXT, file TEXT, line INTEGER,\n"
    "    module TEXT, allocations INTEGER, allocated_bytes INTEGER, frees INTEGER,\n"
    "    leaked_blocks INTEGER, leaked_bytes INTEGER, peak_blocks INTEGER, peak_bytes INTEGER,\n"
    "    growth_bytes_per_mark REAL, trend TEXT);\n"
    "CREATE TABLE functions(function TEXT, module TEXT, file TEXT, program INTEGER,\n"
    "    incl_allocated INTEGER, incl_allocations INTEGER, incl_leaked INTEGER,\n"
    "    incl_peak INTEGER, incl_growth REAL, excl_allocated INTEGER, excl_allocations INTEGER,\n"
    "    excl_leaked INTEGER, excl_peak INTEGER, excl_growth REAL);\n"
    "CREATE TABLE boundaries(id INTEGER PRIMARY KEY, kind TEXT, seq INTEGER, ts_ns INTEGER,\n"
    "    time_s REAL, label TEXT, trigger TEXT, heap_bytes INTEGER, heap_blocks INTEGER);\n"
    "CREATE VIEW marks AS SELECT id, seq, ts_ns, time_s, label, heap_bytes, heap_blocks\n"
    "    FROM boundaries WHERE kind = 'mark';\n"
    "CREATE VIEW snapshots AS SELECT id, seq, ts_ns, time_s, label, trigger, heap_bytes,\n"
    "    heap_blocks FROM boundaries WHERE kind = 'snapshot';\n"
    "CREATE TABLE live_at(boundary_id INTEGER, stack_id INTEGER, live_blocks INTEGER,\n"
    "    live_bytes INTEGER, PRIMARY KEY(boundary_id, stack_id)) WITHOUT ROWID;\n"
    "CREATE TABLE rss(ts_ns INTEGER, time_s REAL, rss_bytes INTEGER);\n"
    "CREATE TABLE events(seq INTEGER PRIMARY KEY, ts_ns INTEGER, type TEXT, tid INTEGER,\n"
    "    address INTEGER, old_address INTEGER, size INTEGER, stack_id INTEGER, label TEXT);\n"
    "BEGIN;\n";

static const char indexes[] =
    "CREATE INDEX frames_function ON frames(function);\n"
    "CREATE INDEX sites_leaked ON sites(leaked_bytes);\n"
    "CREATE INDEX functions_function ON functions(function);\n"
    "CREATE INDEX live_at_stack ON live_at(stack_id);\n"
    "CREATE INDEX events_ts ON events(ts_ns);\n"
    "CREATE INDEX events_address ON events(address);\n"
    "CREATE INDEX events_stack ON events(stack_id);\n"
    "COMMIT;\n";

static int
db_err(lh_sqlite_out_t *o, lh_err_t *err, const char *what)
{
    return lh_err_set(err, LH_EIO, "%s: %s: %s", o->path, what,
                      o->db ? sqlite3_errmsg(o->db) : "cannot open");
}

int
lh_sqlite_open(const char *path, int with_events, lh_sqlite_out_t **out, lh_err_t *err)
{
    lh_sqlite_out_t *o = calloc(1, sizeof *o);
    *out = NULL;
    if (!o || !(o->path = strdup(path))) {
        free(o);
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        int rc = lh_err_set(err, LH_EIO, "cannot replace %s: %s", path, strerror(errno));
        lh_sqlite_close(o);
        return rc;
    }
    if (sqlite3_open(path, &o->db) != SQLITE_OK ||
        sqlite3_exec(o->db, schema, NULL, NULL, NULL) != SQLITE_OK ||
        (with_events && sqlite3_prepare_v2(o->db, "INSERT INTO events VALUES(?,?,?,?,?,?,?,?,?)",
                                           -1, &o->ev, NULL) != SQLITE_OK)) {
        int rc = db_err(o, err, "creating the schema");
        lh_sqlite_close(o);
        return rc;
    }
    *out = o;
    return 0;
}

static const char *
type_name(const lh_event_t *ev)
{
    switch (ev->type) {
    case LH_REC_ALLOC:
        return "alloc";
    case LH_REC_FREE:
        return "free";
    case LH_REC_REALLOC:
        return ev->half == LH_HALF_FREE ? "realloc_free"
               : ev->half == LH_HALF_ALLOC ? "realloc_alloc" : "realloc";
    case LH_REC_MARK:
        return "mark";
    case LH_REC_SNAPSHOT:
        return "snapshot";
    case LH_REC_RSS:
        return "rss";
    case LH_REC_TAG:
        return "tag";
    case LH_REC_THREAD:
        return "thread";
    case LH_REC_THREAD_END:
        return "thread_end";
    case LH_REC_MODULE:
        return "module";
    case LH_REC_MODULE_UNLOAD:
        return "module_unload";
    case LH_REC_EXEC:
        return "exec";
    default:
        return "other";
    }
}

int
lh_sqlite_event(void *ctx, const lh_event_t *ev, lh_err_t *err)
{
    lh_sqlite_out_t *o = ctx;
    sqlite3_stmt *s = o->ev;
    int is_block = ev->type == LH_REC_ALLOC || ev->type == LH_REC_FREE ||
                   ev->type == LH_REC_REALLOC || ev->type == LH_REC_TAG;
    if (!s) {
        return 0;
    }
    sqlite3_bind_int64(s, 1, (sqlite3_int64)++o->n_events);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)ev->ts_ns);
    sqlite3_bind_text(s, 3, type_name(ev), -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, ev->tid);
    if (is_block) {
        sqlite3_bind_int64(s, 5, (sqlite3_int64)ev->addr);
    } else {
        sqlite3_bind_null(s, 5);
    }
    if (ev->type == LH_REC_REALLOC) {
        sqlite3_bind_int64(s, 6, (sqlite3_int64)ev->old_addr);
    } else {
        sqlite3_bind_null(s, 6);
    }
    if (ev->type == LH_REC_ALLOC || ev->type == LH_REC_REALLOC || ev->type == LH_REC_RSS) {
        sqlite3_bind_int64(s, 7, (sqlite3_int64)ev->size);
    } else {
        sqlite3_bind_null(s, 7);
    }
    if (ev->type == LH_REC_ALLOC || ev->type == LH_REC_REALLOC) {
        sqlite3_bind_int64(s, 8, ev->stack_id);
    } else {
        sqlite3_bind_null(s, 8);
    }
    if (ev->label) {
        sqlite3_bind_text(s, 9, ev->label, (int)ev->label_len, SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_null(s, 9);
    }
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : db_err(o, err, "inserting an event");
}

static void
bind_text(sqlite3_stmt *s, int i, const char *v)
{
    if (v) {
        sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_null(s, i);
    }
}

static int
step(sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int
put_info(sqlite3_stmt *s, const char *key, const char *text, int64_t num)
{
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    if (text) {
        sqlite3_bind_text(s, 2, text, -1, SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_int64(s, 2, num);
    }
    return step(s);
}

static int
write_info(lh_collect_t *c, sqlite3_stmt *s)
{
    const lh_trace_t *t = lh_collect_trace(c);
    const lh_trace_info_t *in = &lh_trace_parts(t)->info;
    const lh_replay_totals_t *tot = lh_replay_totals(lh_collect_replay(c));
    const lh_trace_end_t *end = &lh_trace_parts(t)->end;
    char dur[64];
    snprintf(dur, sizeof dur, "%.6f",
             (double)(lh_collect_end_ns(c) - lh_collect_start_ns(c)) / 1e9);
    return put_info(s, "trace", lh_trace_parts(t)->path, 0) |
           put_info(s, "program", in->exe, 0) |
           put_info(s, "pid", NULL, (int64_t)in->pid) |
           put_info(s, "start_ns", NULL, (int64_t)lh_collect_start_ns(c)) |
           put_info(s, "duration_s", dur, 0) |
           put_info(s, "allocations", NULL, (int64_t)tot->n_allocs) |
           put_info(s, "frees", NULL, (int64_t)tot->n_frees) |
           put_info(s, "allocated_bytes", NULL, (int64_t)tot->alloc_bytes) |
           put_info(s, "peak_bytes", NULL, (int64_t)tot->peak_bytes) |
           put_info(s, "peak_ts_ns", NULL, (int64_t)tot->peak_ts_ns) |
           put_info(s, "leaked_bytes", NULL, (int64_t)tot->heap_bytes) |
           put_info(s, "leaked_blocks", NULL, (int64_t)tot->heap_blocks) |
           put_info(s, "clean_exit", NULL, end->present && end->kind == LH_EXIT_NORMAL);
}

static int
write_stacks(lh_sqlite_out_t *o, lh_collect_t *c, const lh_funcs_t *f, sqlite3_stmt *st,
             sqlite3_stmt *fr, sqlite3_stmt *si, lh_err_t *err)
{
    for (uint32_t id = 0; id < lh_collect_n_stacks(c); id++) {
        const lh_cstack_t *s = lh_collect_stack(c, id);
        const lh_site_t *site;
        lh_fmetrics_t m;
        int rc;
        if (!s->n_allocs && !s->live_blocks) {
            continue;
        }
        if ((rc = lh_collect_site(c, id, &site, err)) < 0) {
            return rc;
        }
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)site->n_frames);
        sqlite3_bind_int64(st, 3, site->location);
        if (step(st) < 0) {
            return db_err(o, err, "inserting stacks");
        }
        for (size_t i = 0; i < site->n_frames; i++) {
            const lh_frame_t *x = &site->frames[i];
            sqlite3_bind_int64(fr, 1, id);
            sqlite3_bind_int64(fr, 2, (sqlite3_int64)i);
            bind_text(fr, 3, x->function);
            bind_text(fr, 4, x->file);
            sqlite3_bind_int64(fr, 5, x->line);
            bind_text(fr, 6, x->module);
            sqlite3_bind_int(fr, 7, x->inlined);
            sqlite3_bind_int64(fr, 8, (sqlite3_int64)x->ip);
            if (step(fr) < 0) {
                return db_err(o, err, "inserting frames");
            }
        }
        const lh_frame_t *loc = site->location >= 0 ? &site->frames[site->location] : NULL;
        lh_funcs_stack_metrics(f, c, id, &m);
        sqlite3_bind_int64(si, 1, id);
        bind_text(si, 2, loc ? loc->function : NULL);
        bind_text(si, 3, loc ? loc->file : NULL);
        sqlite3_bind_int64(si, 4, loc ? loc->line : 0);
        bind_text(si, 5, loc ? loc->module : NULL);
        sqlite3_bind_int64(si, 6, (sqlite3_int64)s->n_allocs);
        sqlite3_bind_int64(si, 7, (sqlite3_int64)s->alloc_bytes);
        sqlite3_bind_int64(si, 8, (sqlite3_int64)site->stats.n_frees);
        sqlite3_bind_int64(si, 9, (sqlite3_int64)s->live_blocks);
        sqlite3_bind_int64(si, 10, (sqlite3_int64)s->live_bytes);
        sqlite3_bind_int64(si, 11, (sqlite3_int64)s->peak_blocks);
        sqlite3_bind_int64(si, 12, (sqlite3_int64)s->peak_bytes);
        sqlite3_bind_double(si, 13, m.growth);
        bind_text(si, 14, f->stack_trend ? lh_trend_name(m.trend) : NULL);
        if (step(si) < 0) {
            return db_err(o, err, "inserting sites");
        }
    }
    return 0;
}

static int
write_functions(lh_sqlite_out_t *o, const lh_funcs_t *f, sqlite3_stmt *s, lh_err_t *err)
{
    for (size_t i = 0; f && i < f->n; i++) {
        const lh_func_t *x = &f->v[i];
        const lh_fmetrics_t *m[2] = {&x->incl, &x->excl};
        bind_text(s, 1, x->name);
        bind_text(s, 2, x->module);
        bind_text(s, 3, x->file);
        sqlite3_bind_int(s, 4, x->is_program);
        for (int k = 0; k < 2; k++) {
            sqlite3_bind_int64(s, 5 + 5 * k, (sqlite3_int64)m[k]->allocated);
            sqlite3_bind_int64(s, 6 + 5 * k, (sqlite3_int64)m[k]->n_allocs);
            sqlite3_bind_int64(s, 7 + 5 * k, (sqlite3_int64)m[k]->leaked);
            sqlite3_bind_int64(s, 8 + 5 * k, (sqlite3_int64)m[k]->peak);
            sqlite3_bind_double(s, 9 + 5 * k, m[k]->growth);
        }
        if (step(s) < 0) {
            return db_err(o, err, "inserting functions");
        }
    }
    return 0;
}

static int
write_boundaries(lh_sqlite_out_t *o, lh_collect_t *c, sqlite3_stmt *b, sqlite3_stmt *l,
                 lh_err_t *err)
{
    size_t n = lh_collect_n_stacks(c);
    uint64_t *bytes = calloc(n ? n : 1, sizeof *bytes), *blocks = calloc(n ? n : 1, sizeof *blocks);
    int64_t seq[2] = {0, 0};
    double start = (double)lh_collect_start_ns(c);
    int rc = 0;
    if (!bytes || !blocks) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory");
        goto done;
    }
    size_t np;
    const lh_boundary_t *pts = lh_timeline_all_bounds(lh_collect_timeline(c), &np);
    for (size_t i = 0; i < np; i++) {
        const lh_boundary_t *p = &pts[i];
        sqlite3_bind_int64(b, 1, (sqlite3_int64)i + 1);
        sqlite3_bind_text(b, 2, p->is_snapshot ? "snapshot" : "mark", -1, SQLITE_STATIC);
        sqlite3_bind_int64(b, 3, ++seq[p->is_snapshot]);
        sqlite3_bind_int64(b, 4, (sqlite3_int64)p->ts_ns);
        sqlite3_bind_double(b, 5, ((double)p->ts_ns - start) / 1e9);
        bind_text(b, 6, p->label);
        if (p->is_snapshot) {
            sqlite3_bind_text(b, 7, lh_text_trigger_name(p->trigger, "other"), -1,
                              SQLITE_STATIC);
        }
        sqlite3_bind_int64(b, 8, (sqlite3_int64)p->heap_bytes);
        sqlite3_bind_int64(b, 9, (sqlite3_int64)p->heap_blocks);
        if (step(b) < 0) {
            rc = db_err(o, err, "inserting boundaries");
            goto done;
        }
        lh_timeline_at(lh_collect_timeline(c), i, n, bytes, blocks);
        for (size_t s = 0; s < n; s++) {
            if (!blocks[s]) {
                continue;
            }
            sqlite3_bind_int64(l, 1, (sqlite3_int64)i + 1);
            sqlite3_bind_int64(l, 2, (sqlite3_int64)s);
            sqlite3_bind_int64(l, 3, (sqlite3_int64)blocks[s]);
            sqlite3_bind_int64(l, 4, (sqlite3_int64)bytes[s]);
            if (step(l) < 0) {
                rc = db_err(o, err, "inserting live sets");
                goto done;
            }
        }
    }
done:
    free(bytes);
    free(blocks);
    return rc;
}

int
lh_sqlite_finish(lh_sqlite_out_t *o, lh_collect_t *c, const lh_funcs_t *f, lh_err_t *err)
{
    static const char *sql[] = {
        "INSERT INTO info VALUES(?,?)",
        "INSERT INTO stacks VALUES(?,?,?)",
        "INSERT INTO frames VALUES(?,?,?,?,?,?,?,?)",
        "INSERT INTO sites VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        "INSERT INTO functions VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        "INSERT INTO boundaries VALUES(?,?,?,?,?,?,?,?,?)",
        "INSERT INTO live_at VALUES(?,?,?,?)",
        "INSERT INTO rss VALUES(?,?,?)",
    };
    enum { INFO, STACK, FRAME, SITE, FUNC, BOUND, LIVE, RSS, N_STMT };
    sqlite3_stmt *s[N_STMT] = {0};
    int rc = 0;
    for (int i = 0; i < N_STMT; i++) {
        if (sqlite3_prepare_v2(o->db, sql[i], -1, &s[i], NULL) != SQLITE_OK) {
            rc = db_err(o, err, "preparing statements");
            goto done;
        }
    }
    if (write_info(c, s[INFO]) != 0) {
        rc = db_err(o, err, "inserting info");
        goto done;
    }
    if ((rc = write_stacks(o, c, f, s[STACK], s[FRAME], s[SITE], err)) < 0 ||
        (rc = write_functions(o, f, s[FUNC], err)) < 0 ||
        (rc = write_boundaries(o, c, s[BOUND], s[LIVE], err)) < 0) {
        goto done;
    }
    const lh_rss_sample_t *rs = lh_collect_rss(c);
    for (size_t i = 0; i < lh_collect_n_rss(c); i++) {
        sqlite3_bind_int64(s[RSS], 1, (sqlite3_int64)rs[i].ts_ns);
        sqlite3_bind_double(s[RSS], 2,
                            ((double)rs[i].ts_ns - (double)lh_collect_start_ns(c)) / 1e9);
        sqlite3_bind_int64(s[RSS], 3, (sqlite3_int64)rs[i].rss_bytes);
        if (step(s[RSS]) < 0) {
            rc = db_err(o, err, "inserting RSS samples");
            goto done;
        }
    }
    if (sqlite3_exec(o->db, indexes, NULL, NULL, NULL) != SQLITE_OK) {
        rc = db_err(o, err, "committing");
    }
done:
    for (int i = 0; i < N_STMT; i++) {
        sqlite3_finalize(s[i]);
    }
    return rc;
}

void
lh_sqlite_close(lh_sqlite_out_t *o)
{
    if (!o) {
        return;
    }
    sqlite3_finalize(o->ev);
    if (o->db && sqlite3_close(o->db) != SQLITE_OK) {
        sqlite3_close_v2(o->db);
    }
    free(o->path);
    free(o);
}
