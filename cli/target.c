/* leakhound - SPDX-License-Identifier: MIT
 *
 * target.c: safety checks on a running process before attach or snapshot -p stop it. Each
 * refusal is one line that says what is wrong and, where there is one, what to do; the
 * process is never touched by a check.
 */
#include "target.h"

#include "memcopy.h"
#include "procmem.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The value after "Key:" in /proc/PID/status, or NULL. */
static const char *
status_field(const char *status, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = status; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, k) == 0 && p[k] == ':') {
            p += k + 1;
            while (*p == ' ' || *p == '\t') {
                p++;
            }
            return p;
        }
    }
    return NULL;
}

/* Nonzero when the ELF file at path defines `malloc` in its dynamic symbol table. */
static int
defines_malloc(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    int found = 0;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    char *str = NULL;
    Elf64_Sym *sym = NULL;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 4096) {
        goto out;
    }
    sh = calloc(eh.e_shnum, sizeof *sh);
    if (!sh || pread(fd, sh, eh.e_shnum * sizeof *sh, (off_t)eh.e_shoff) !=
                   (ssize_t)(eh.e_shnum * sizeof *sh)) {
        goto out;
    }
    for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh.e_shnum ||
            sh[i].sh_size > (64u << 20) || sh[sh[i].sh_link].sh_size > (64u << 20)) {
            continue;
        }
        const Elf64_Shdr *ss = &sh[sh[i].sh_link];
        sym = malloc(sh[i].sh_size);
        str = malloc(ss->sh_size + 1);
        if (!sym || !str ||
            pread(fd, sym, sh[i].sh_size, (off_t)sh[i].sh_offset) != (ssize_t)sh[i].sh_size ||
            pread(fd, str, ss->sh_size, (off_t)ss->sh_offset) != (ssize_t)ss->sh_size) {
            goto out;
        }
        str[ss->sh_size] = '\0';
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
            if (sym[k].st_name < ss->sh_size && sym[k].st_shndx != SHN_UNDEF &&
                ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC &&
                strcmp(str + sym[k].st_name, "malloc") == 0) {
                found = 1;
                break;
            }
        }
        free(sym);
        free(str);
        sym = NULL;
        str = NULL;
    }
out:
    free(sh);
    free(sym);
    free(str);
    close(fd);
    return found;
}

static const char *
base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Walks /proc/PID/maps: finds libc, refuses other allocators and a leakhound agent. */
static int
check_modules(lh_target_t *t, const char *what, lh_err_t *err)
{
    static const struct {
        const char *lib;
        const char *name;
    } others[] = {{"libjemalloc", "jemalloc"},   {"libtcmalloc", "tcmalloc"},
                  {"libmimalloc", "mimalloc"},   {"libhoard", "Hoard"},
                  {"libsnmalloc", "snmalloc"},   {"librpmalloc", "rpmalloc"}};
    lh_memcopy_t m;
    int rc = lh_memcopy_maps(&m, t->pid, err);
    if (rc < 0) {
        return rc;
    }
    char seen[64][256];
    int n_seen = 0;
    for (size_t mi = 0; mi < m.n; mi++) {
        const char *file = m.maps[mi].path;
        uint64_t lo = m.maps[mi].lo, off = m.maps[mi].offset;
        if (file[0] != '/') {
            continue;
        }
        const char *b = base_name(file);
        if (strncmp(b, "libc.so.6", 9) == 0 && off == 0 && !t->libc[0]) {
            snprintf(t->libc, sizeof t->libc, "%s", file);
            t->libc_base = (unsigned long)lo;
        }
        if (strcmp(b, "libleakhound.so") == 0) {
            rc = lh_err_set(err, LH_EINVAL,
                            "%s: process %d already runs under leakhound run "
                            "(libleakhound.so is loaded): its trace is being written",
                            what, (int)t->pid);
            goto out;
        }
        for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
            if (strncmp(b, others[i].lib, strlen(others[i].lib)) == 0) {
                rc = lh_err_set(err, LH_EINVAL,
                                "%s: process %d (%s) allocates with %s (%s), not glibc's "
                                "malloc: leakhound %s follows glibc's malloc only; the "
                                "process was not touched",
                                what, (int)t->pid, t->comm, others[i].name, b, what);
                goto out;
            }
        }
        /* Any other module that defines malloc replaces glibc's (a statically linked
         * allocator, a preloaded one). Each file is read once. */
        int dup = 0;
        for (int i = 0; i < n_seen && !dup; i++) {
            dup = strcmp(seen[i], file) == 0;
        }
        if (dup || strstr(b, "libc.so") || strstr(b, "ld-linux") ||
            strstr(b, "libleakhound_attach")) {
            continue;
        }
        if (n_seen < 64) {
            snprintf(seen[n_seen++], sizeof seen[0], "%s", file);
        }
        if (defines_malloc(file)) {
            rc = lh_err_set(err, LH_EINVAL,
                            "%s: process %d (%s): %s defines its own malloc, not glibc's: "
                            "leakhound %s follows glibc's malloc only; the process was not "
                            "touched",
                            what, (int)t->pid, t->comm, file, what);
            goto out;
        }
    }
    if (!t->libc[0]) {
        rc = lh_err_set(err, LH_EINVAL,
                        "%s: process %d (%s) has no libc.so.6 loaded (a static binary?): "
                        "leakhound %s needs a dynamically linked glibc program; the process "
                        "was not touched",
                        what, (int)t->pid, t->comm, what);
    }
out:
    lh_memcopy_fini(&m);
    return rc;
}

int
lh_target_alive(pid_t pid)
{
    char buf[512];
    if (lh_proc_read_pid(pid, "stat", buf, sizeof buf) <= 0) {
        return 0;
    }
    const char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

int
lh_target_check(pid_t pid, const char *what, lh_target_t *t, lh_err_t *err)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
    if (pid <= 0) {
        return lh_err_set(err, LH_EINVAL, "%s: -p needs a process id > 0", what);
    }
    if (pid == getpid()) {
        return lh_err_set(err, LH_EINVAL, "%s: -p %d is leakhound itself", what, (int)pid);
    }
    char path[64], status[8192], buf[512];
    if (lh_proc_read_pid(pid, "status", status, sizeof status) <= 0) {
        return lh_err_set(err, LH_ENOENT, "%s: no process with id %d", what, (int)pid);
    }
    if (lh_proc_read_pid(pid, "comm", t->comm, sizeof t->comm) > 0) {
        t->comm[strcspn(t->comm, "\n")] = '\0';
    }
    const char *st = status_field(status, "State");
    if (st && (*st == 'Z' || *st == 'X')) {
        return lh_err_set(err, LH_EINVAL,
                          "%s: process %d (%s) is a zombie: it has exited and only waits "
                          "for its parent to reap it",
                          what, (int)pid, t->comm);
    }
    unsigned ruid = 0, euid = 0;
    const char *u = status_field(status, "Uid");
    if (!u || sscanf(u, "%u %u", &ruid, &euid) != 2) {
        return lh_err_set(err, LH_EIO, "%s: cannot read the owner of process %d", what,
                          (int)pid);
    }
    if (geteuid() != 0 && (ruid != geteuid() || euid != geteuid())) {
        return lh_err_set(err, LH_EINVAL,
                          "%s: process %d (%s) belongs to another user (uid %u): run "
                          "leakhound as that user or as root",
                          what, (int)pid, t->comm, euid);
    }
    /* The status fields whose number, when not 0, means hands off: why, around it. */
    static const struct {
        const char *key, *before, *after;
    } refuse[] = {
        {"TracerPid", "is already being traced (by process ", ", a debugger?)"},
        {"Seccomp", "runs under a seccomp filter (mode ",
         "): the system calls leakhound makes in it could kill it; not touching it"},
    };
    for (size_t i = 0; i < sizeof refuse / sizeof *refuse; i++) {
        const char *v = status_field(status, refuse[i].key);
        if (v && atoi(v) != 0) {
            return lh_err_set(err, LH_EINVAL, "%s: process %d (%s) %s%d%s", what, (int)pid,
                              t->comm, refuse[i].before, atoi(v), refuse[i].after);
        }
    }
    if (lh_proc_read_small("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof buf) > 0) {
        int scope = atoi(buf);
        if (scope >= 3) {
            return lh_err_set(err, LH_EINVAL,
                              "%s: ptrace is disabled on this system "
                              "(kernel.yama.ptrace_scope = 3, until reboot)",
                              what);
        }
        if (scope >= 1 && geteuid() != 0) {
            return lh_err_set(err, LH_EINVAL,
                              "%s: kernel.yama.ptrace_scope = %d lets only root trace a process "
                              "that is not its child: run as root, or set it to 0",
                              what, scope);
        }
    }
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, t->exe, sizeof t->exe - 1);
    if (n <= 0) {
        return lh_err_set(err, LH_EINVAL, "%s: cannot read the executable of process %d: %s",
                          what, (int)pid, strerror(errno));
    }
    t->exe[n] = '\0';
    return check_modules(t, what, err);
}
