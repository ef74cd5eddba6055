/* leakhound - SPDX-License-Identifier: MIT
 *
 * pprof.c: the pprof profile writer (protobuf by hand, gzip by zlib). It encodes the data
 * analysis/profile.h computes (symbols, suppressions, in-use figures) and nothing more.
 *
 * Field numbers from profile.proto (github.com/google/pprof/proto/profile.proto):
 *   Profile   sample_type=1 sample=2 mapping=3 location=4 function=5 string_table=6
 *             time_nanos=9 duration_nanos=10 period_type=11 period=12 comment=13
 *             default_sample_type=14
 *   ValueType type=1 unit=2                 Sample   location_id=1 value=2 label=3
 *   Mapping   id=1 memory_start=2 memory_limit=3 file_offset=4 filename=5 build_id=6
 *             has_functions=7 has_filenames=8 has_line_numbers=9 has_inline_frames=10
 *   Location  id=1 mapping_id=2 address=3 line=4     Line  function_id=1 line=2
 *   Function  id=1 name=2 system_name=3 filename=4
 */
#include "pprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "grow.h"
#include "profile.h"

/* ---------------------------------------------------------------------------------------
 * Protobuf writer: a growable buffer; nested messages are written into their own buffer
 * and appended with their length.
 * ------------------------------------------------------------------------------------- */
typedef struct pb {
    uint8_t *b;
    size_t n, cap;
    int oom;
} pb_t;

static void
pb_raw(pb_t *p, const void *data, size_t len)
{
    if (p->oom) {
        return;
    }
    if (lh_grow_to(&p->b, &p->cap, p->n + len, 1, 256) < 0) {
        p->oom = 1;
        return;
    }
    memcpy(p->b + p->n, data, len);
    p->n += len;
}

static void
pb_varint(pb_t *p, uint64_t v)
{
    uint8_t buf[10];
    size_t k = 0;
    do {
        buf[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) {
            buf[k] |= 0x80;
        }
        k++;
    } while (v);
    pb_raw(p, buf, k);
}

static void
pb_uint(pb_t *p, unsigned field, uint64_t v)
{
    if (v) { /* proto3: zero is the default and is not written */
        pb_varint(p, (uint64_t)field << 3 | 0);
        pb_varint(p, v);
    }
}

/* Fields 1, 2, ... n of a message from v[0..n): a table, not a call per field; the zeros
 * (proto3's default, such as a field the message leaves out) are not written. */
static void
pb_uints(pb_t *p, const uint64_t *v, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        pb_uint(p, (unsigned)k + 1, v[k]);
    }
}

static void
pb_bytes(pb_t *p, unsigned field, const void *data, size_t len)
{
    pb_varint(p, (uint64_t)field << 3 | 2);
    pb_varint(p, len);
    pb_raw(p, data, len);
}

static void
pb_msg(pb_t *p, unsigned field, pb_t *sub)
{
    if (sub->oom) {
        p->oom = 1;
    }
    pb_bytes(p, field, sub->b, sub->n);
    sub->n = 0;
}

static void
pb_packed(pb_t *p, unsigned field, const uint64_t *v, size_t n, pb_t *tmp)
{
    for (size_t i = 0; i < n; i++) {
        pb_varint(tmp, v[i]);
    }
    pb_msg(p, field, tmp);
}

/* The profile's strings come first (ids as profile.h's); the view's own (sample types,
 * the comment) follow, numbered on from there. */
typedef struct writer {
    lh_profile_t *prof_data;
    pb_t prof, sub, sub2, tmp;
} writer_t;

static int
value_type(writer_t *w, unsigned field, const char *type, const char *unit)
{
    long a = lh_profile_string(w->prof_data, type), b = lh_profile_string(w->prof_data, unit);
    if (a < 0 || b < 0) {
        return -1;
    }
    pb_uint(&w->sub, 1, (uint64_t)a);
    pb_uint(&w->sub, 2, (uint64_t)b);
    pb_msg(&w->prof, field, &w->sub);
    return 0;
}

static void
encode(writer_t *w)
{
    const lh_profile_t *d = w->prof_data;
    for (size_t i = 0; i < d->n_samples; i++) {
        const lh_profile_sample_t *s = &d->samples[i];
        pb_packed(&w->sub, 1, d->sample_locs + s->first_loc, s->n_locs, &w->tmp);
        pb_packed(&w->sub, 2, s->values, 4, &w->tmp);
        pb_msg(&w->prof, 2, &w->sub);
    }
    for (size_t i = 0; i < d->n_mappings; i++) {
        const lh_profile_mapping_t *m = &d->mappings[i];
        /* id, start, limit, offset 0, file, build id, has_functions..has_inline_frames */
        pb_uints(&w->sub, (const uint64_t[]){i + 1, m->start, m->limit, 0, m->file, m->build_id,
                                             1, 1, 1, 1}, 10);
        pb_msg(&w->prof, 3, &w->sub);
    }
    for (size_t i = 0; i < d->n_locations; i++) {
        const lh_profile_location_t *l = &d->locations[i];
        pb_uints(&w->sub, (const uint64_t[]){i + 1, l->mapping, l->address}, 3);
        for (size_t k = l->first_line; k < l->first_line + l->n_lines; k++) {
            pb_uints(&w->sub2, (const uint64_t[]){d->lines[k].function, d->lines[k].line}, 2);
            pb_msg(&w->sub, 4, &w->sub2);
        }
        pb_msg(&w->prof, 4, &w->sub);
    }
    for (size_t i = 0; i < d->n_functions; i++) {
        const lh_profile_function_t *fn = &d->functions[i]; /* id, name, system name, file */
        pb_uints(&w->sub, (const uint64_t[]){i + 1, fn->name, fn->name, fn->file}, 4);
        pb_msg(&w->prof, 5, &w->sub);
    }
}

static int
write_gz(const char *path, const pb_t *p, lh_err_t *err)
{
    gzFile gz = gzopen(path, "wb9");
    if (!gz) {
        return lh_err_set(err, LH_EIO, "cannot write %s", path);
    }
    size_t off = 0;
    while (off < p->n) {
        unsigned chunk = p->n - off > (1u << 30) ? 1u << 30 : (unsigned)(p->n - off);
        if (gzwrite(gz, p->b + off, chunk) != (int)chunk) {
            gzclose(gz);
            return lh_err_set(err, LH_EIO, "error writing %s", path);
        }
        off += chunk;
    }
    if (gzclose(gz) != Z_OK) {
        return lh_err_set(err, LH_EIO, "error writing %s", path);
    }
    return 0;
}

int
lh_view_pprof(const char *path, lh_profile_t *d, const char *trace, const char *inuse_label,
              lh_err_t *err)
{
    writer_t w;
    int rc;
    memset(&w, 0, sizeof w);
    w.prof_data = d;
    char comment[600];
    snprintf(comment, sizeof comment, "leakhound trace %s%s%s", trace,
             inuse_label ? "; in use at " : "; in use at exit", inuse_label ? inuse_label : "");
    long cs = lh_profile_string(d, comment);
    long ds = lh_profile_string(d, "inuse_space");
    if (cs < 0 || ds < 0 || value_type(&w, 1, "alloc_objects", "count") < 0 ||
        value_type(&w, 1, "alloc_space", "bytes") < 0 ||
        value_type(&w, 1, "inuse_objects", "count") < 0 ||
        value_type(&w, 1, "inuse_space", "bytes") < 0) {
        w.prof.oom = 1;
    }
    encode(&w);
    if (value_type(&w, 11, "space", "bytes") < 0) {
        w.prof.oom = 1;
    }
    pb_uint(&w.prof, 9, d->time_ns);
    pb_uint(&w.prof, 10, d->duration_ns);
    pb_uint(&w.prof, 12, 1);
    pb_uint(&w.prof, 13, (uint64_t)cs);
    pb_uint(&w.prof, 14, (uint64_t)ds);
    for (size_t i = 0; i < d->n_strings; i++) {
        pb_bytes(&w.prof, 6, d->strings[i], strlen(d->strings[i]));
    }
    if (w.prof.oom || w.sub.oom || w.sub2.oom || w.tmp.oom) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory writing the pprof profile");
    } else {
        rc = write_gz(path, &w.prof, err);
    }
    free(w.prof.b);
    free(w.sub.b);
    free(w.sub2.b);
    free(w.tmp.b);
    return rc;
}
