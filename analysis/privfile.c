/* leakhound - SPDX-License-Identifier: MIT
 *
 * privfile.c: files written whole through a private temporary name (privfile.h).
 */
#include "privfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
lh_privfile_open(lh_privfile_t *pf, const char *path)
{
    size_t len = strlen(path) + 48;
    struct timespec ts;
    pf->f = NULL;
    pf->path = path;
    if (!(pf->tmp = malloc(len))) {
        errno = ENOMEM;
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(pf->tmp, len, "%s.tmp.%ld.%ld", path, (long)getpid(), (long)(ts.tv_nsec & 0xffffff));
    int fd = open(pf->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 && !(pf->f = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        unlink(pf->tmp);
        errno = e;
    }
    if (!pf->f) {
        int e = errno;
        free(pf->tmp);
        pf->tmp = NULL;
        errno = e;
        return -1;
    }
    return 0;
}

int
lh_privfile_commit(lh_privfile_t *pf, int ok)
{
    int e = ok ? 0 : errno;
    if (fclose(pf->f) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    if (ok && rename(pf->tmp, pf->path) != 0) {
        ok = 0;
        e = errno;
    }
    if (!ok) {
        unlink(pf->tmp);
    }
    free(pf->tmp);
    pf->tmp = NULL;
    pf->f = NULL;
    if (!ok) {
        errno = e ? e : EIO;
        return -1;
    }
    return 0;
}
