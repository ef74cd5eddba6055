/* leakhound - SPDX-License-Identifier: MIT
 *
 * boundary.c: boundaries and the one resolver of boundary specs.
 */
#include "boundary.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "growth.h"

int
lh_boundary_init(lh_boundary_t *b, const lh_event_t *ev, size_t global, uint64_t marks_before,
                 uint64_t heap_bytes, uint64_t heap_blocks)
{
    size_t len = ev->label ? ev->label_len : 0;
    memset(b, 0, sizeof *b);
    if (!(b->label = malloc(len + 1))) {
        return -1;
    }
    if (len) {
        memcpy(b->label, ev->label, len);
    }
    b->label[len] = '\0';
    b->ts_ns = ev->ts_ns;
    b->is_snapshot = ev->type == LH_REC_SNAPSHOT;
    b->trigger = b->is_snapshot ? ev->kind : 0;
    b->global = global;
    b->marks_before = marks_before;
    b->heap_bytes = heap_bytes;
    b->heap_blocks = heap_blocks;
    return 0;
}

const char *
lh_bound_noun(lh_bound_kind_t k, int plural)
{
    return k == LH_BOUND_SNAPSHOTS ? (plural ? "snapshots" : "snapshot")
           : k == LH_BOUND_ACTIVITY ? (plural ? "slices" : "slice")
                                    : (plural ? "marks" : "mark");
}

const char *
lh_bound_note(lh_bound_kind_t k)
{
    return k == LH_BOUND_SNAPSHOTS ? " (the trace has no marks)"
           : k == LH_BOUND_ACTIVITY
               ? " (fewer than two marks or snapshots while the program ran: the blocks live at "
                 "the end, by "
                 "when they were allocated, in 5% shares of its allocations)"
               : "";
}

void
lh_bound_spec_parse(const char *s, lh_bound_spec_t *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->whole = s;
    const char *hash = s ? strrchr(s, '#') : NULL;
    if (hash && hash[1]) {
        size_t n = 0;
        const char *p;
        for (p = hash + 1; *p >= '0' && *p <= '9' && n < 100000000; p++) {
            n = n * 10 + (size_t)(*p - '0');
        }
        if (!*p && n > 0) {
            sp->nth = n;
            sp->label = hash == s ? NULL : s;
            sp->label_len = (size_t)(hash - s);
        }
    }
}

int
lh_bound_step(const lh_bound_spec_t *sp, lh_bound_cursor_t *c, const char *label, int for_to)
{
    size_t i = c->n_seen++;
    if (!sp->whole) {
        return 0;
    }
    if (strcmp(label, sp->whole) == 0) {
        /* an exact label wins; among several, the first starts and the last ends */
        int hit = for_to || !c->have_exact;
        c->have_exact = 1;
        return hit;
    }
    if (!sp->nth || c->have_exact) {
        return 0;
    }
    if (!sp->label) {
        return i + 1 == sp->nth;
    }
    return strlen(label) == sp->label_len && memcmp(label, sp->label, sp->label_len) == 0 &&
           ++c->n_label == sp->nth;
}

long
lh_bound_find_in(const void *list, size_t n, size_t stride, size_t label_off, const char *spec,
                 int for_to)
{
    lh_bound_spec_t sp;
    lh_bound_cursor_t c = {0};
    long found = -1;
    lh_bound_spec_parse(spec, &sp);
    for (size_t i = 0; i < n; i++) {
        const char *label = *(char *const *)((const char *)list + i * stride + label_off);
        if (lh_bound_step(&sp, &c, label, for_to)) {
            found = (long)i;
        }
    }
    return found;
}

long
lh_bound_find(const lh_boundary_t *b, size_t n, const char *spec, int for_to)
{
    return lh_bound_find_in(b, n, sizeof *b, offsetof(lh_boundary_t, label), spec, for_to);
}

void
lh_bound_labels(const lh_boundary_t *b, size_t n, char *buf, size_t len)
{
    size_t k = 0, shown = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && k + 1 < len; i++) {
        size_t j;
        for (j = 0; j < i && strcmp(b[j].label, b[i].label) != 0; j++) {
        }
        if (j < i) {
            continue; /* counted at its first use */
        }
        if (++shown > 12) {
            snprintf(buf + k, len - k, ", ...");
            return;
        }
        size_t count = 0;
        for (j = i; j < n; j++) {
            count += strcmp(b[j].label, b[i].label) == 0;
        }
        int w = snprintf(buf + k, len - k, "%s'%s' (%zu)", k ? ", " : "", b[i].label, count);
        if (w < 0 || (size_t)w >= len - k) {
            return;
        }
        k += (size_t)w;
    }
}

size_t
lh_bound_main_end(const lh_boundary_t *b, size_t n)
{
    uint64_t *heap = malloc((n ? n : 1) * sizeof *heap);
    size_t end = n ? n - 1 : 0;
    if (heap) { /* without memory, the whole run: a weaker answer, not a wrong one */
        for (size_t i = 0; i < n; i++) {
            heap[i] = b[i].heap_bytes;
        }
        end = lh_trend_main_end(heap, n);
        free(heap);
    }
    return end;
}
