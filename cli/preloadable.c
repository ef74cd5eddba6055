/* leakhound - SPDX-License-Identifier: MIT
 *
 * preloadable.c: why LD_PRELOAD cannot reach a program's malloc (preloadable.h).
 */
#include "preloadable.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* prog as execvp would find it: itself when it holds a slash, else the first executable
 * regular file of that name on PATH. */
static int
resolve(const char *prog, char *out, size_t n)
{
    if (strchr(prog, '/')) {
        return snprintf(out, n, "%s", prog) < (int)n ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) {
        path = "/usr/local/bin:/usr/bin:/bin";
    }
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        struct stat st;
        if (snprintf(out, n, "%.*s/%s", (int)(len ? len : 1), len ? p : ".", prog) < (int)n &&
            stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) {
            return 0;
        }
        p += len + (e != NULL);
    }
    return -1;
}

/* The interpreter a "#!" line names (hdr: the file's first bytes, NUL-terminated), looked
 * through `env NAME`; 0 when there is one. */
static int
interpreter(const char *hdr, char *out, size_t n)
{
    char line[256];
    size_t len = strcspn(hdr + 2, "\n");
    if (len >= sizeof line) {
        return -1;
    }
    memcpy(line, hdr + 2, len);
    line[len] = '\0';
    char *save = NULL, *interp = strtok_r(line, " \t", &save);
    if (!interp) {
        return -1;
    }
    const char *base = strrchr(interp, '/');
    if (strcmp(base ? base + 1 : interp, "env") == 0) {
        char *name = strtok_r(NULL, " \t", &save);
        /* env -S and other options: the name is not the next word; say nothing. */
        return name && name[0] != '-' && !strchr(name, '=') ? resolve(name, out, n) : -1;
    }
    return snprintf(out, n, "%s", interp) < (int)n ? 0 : -1;
}

/* Why the loader will not preload into the ELF file at path (its first bytes in hdr). */
static int
elf_obstacle(const char *path, int fd, const unsigned char *hdr, size_t got, char *why, size_t n)
{
    if (got < EI_NIDENT || hdr[EI_CLASS] != ELFCLASS64) {
        snprintf(why, n, "%s is a 32-bit program: the agent is a 64-bit library the loader "
                         "cannot load into it", path);
        return 1;
    }
    Elf64_Ehdr eh;
    if (got < sizeof eh) {
        return 0;
    }
    memcpy(&eh, hdr, sizeof eh);
#if defined(__x86_64__)
    const unsigned machine = EM_X86_64;
#elif defined(__aarch64__)
    const unsigned machine = EM_AARCH64;
#else
    const unsigned machine = eh.e_machine;
#endif
    if (eh.e_machine != machine) {
        snprintf(why, n, "%s is built for another architecture (ELF machine %u): the "
                         "loader cannot load the agent into it", path, (unsigned)eh.e_machine);
        return 1;
    }
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 512) {
        return 0;
    }
    int has_interp = 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph) {
            return 0;
        }
        has_interp |= ph.p_type == PT_INTERP;
    }
    if (!has_interp && eh.e_type == ET_EXEC) {
        snprintf(why, n, "%s is statically linked: no dynamic loader runs, so LD_PRELOAD "
                         "cannot put the agent in front of its malloc (link it dynamically, "
                         "or use valgrind)", path);
        return 1;
    }
    if (!has_interp && eh.e_type == ET_DYN) { /* static-pie: no PT_INTERP either */
        snprintf(why, n, "%s is a static PIE: no dynamic loader runs, so LD_PRELOAD cannot "
                         "put the agent in front of its malloc", path);
        return 1;
    }
    return 0;
}

int
lh_preload_obstacle(const char *prog, char *why, size_t n)
{
    char path[PATH_MAX], next[PATH_MAX];
    if (resolve(prog, path, sizeof path) < 0) {
        return 0;
    }
    for (int depth = 0; depth < 4; depth++) { /* a #! chain, as the kernel allows a few */
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return 0;
        }
        struct stat st;
        unsigned char hdr[512];
        ssize_t got = fstat(fd, &st) == 0 ? pread(fd, hdr, sizeof hdr - 1, 0) : -1;
        if (got < 4) {
            close(fd);
            return 0;
        }
        hdr[got] = '\0';
        if (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
            ((st.st_mode & S_ISGID) && st.st_gid != getgid())) {
            close(fd);
            snprintf(why, n, "%s is set-%s-ID: the loader runs it in secure mode and ignores "
                             "LD_PRELOAD (run a copy without the bit, as the user it runs as)",
                     path, (st.st_mode & S_ISUID) && st.st_uid != getuid() ? "user" : "group");
            return 1;
        }
        if (memcmp(hdr, ELFMAG, SELFMAG) == 0) {
            int r = elf_obstacle(path, fd, hdr, (size_t)got, why, n);
            close(fd);
            return r;
        }
        close(fd);
        if (hdr[0] != '#' || hdr[1] != '!' || interpreter((const char *)hdr, next, sizeof next) < 0) {
            return 0;
        }
        memcpy(path, next, sizeof path);
    }
    return 0;
}
