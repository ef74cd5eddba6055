/* leakhound - SPDX-License-Identifier: MIT
 *
 * privfile.h: a file written whole or not at all, readable by its owner only: the caches
 * the analyzer keeps on disk (the shell's snapshot index, graphindex.h; the symbol cache,
 * symcache.h). It is created 0600 with O_CREAT|O_EXCL|O_NOFOLLOW under a temporary name
 * beside its path (PATH.tmp.PID.RAND: never a file or link someone else planted) and
 * renamed over the path when complete, so a concurrent reader sees the old file or the new
 * one, never a part.
 */
#ifndef LH_PRIVFILE_H
#define LH_PRIVFILE_H

#include <stdio.h>

typedef struct lh_privfile {
    FILE *f;          /* write through it */
    char *tmp;        /* its temporary name */
    const char *path; /* where it goes (the caller's string, kept until commit) */
} lh_privfile_t;

/* Creates the temporary file for path. 0, or -1 with errno set (nothing left behind). */
int lh_privfile_open(lh_privfile_t *pf, const char *path);

/* Closes the file and, when ok and the close succeeded, renames it over its path; else the
 * temporary file is removed. 0, or -1 with errno set (when !ok: the errno at the call, or
 * EIO). */
int lh_privfile_commit(lh_privfile_t *pf, int ok);

#endif /* LH_PRIVFILE_H */
