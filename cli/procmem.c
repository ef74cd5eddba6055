/* leakhound - SPDX-License-Identifier: MIT
 *
 * procmem.c: RSS, PSS and anonymous memory of a process tree from /proc.
 */
#include "procmem.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"

ssize_t
lh_proc_read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    size_t k = 0;
    while (k + 1 < len) {
        ssize_t r = read(fd, buf + k, len - 1 - k);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (r == 0) {
            break;
        }
        k += (size_t)r;
    }
    close(fd);
    buf[k] = '\0';
    return (ssize_t)k;
}

ssize_t
lh_proc_read_pid(pid_t pid, const char *name, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, name);
    return lh_proc_read_small(path, buf, len);
}

typedef struct stat_line {
    pid_t pid;
    pid_t ppid;
    char state;
    unsigned long long start_ticks;
} stat_line_t;

/* Parses /proc/PID/stat. The command name (field 2) may hold spaces and parentheses, so
 * the fields after it are found from the *last* ')'. Returns 0, or -1 (gone or garbled). */
static int
read_stat(pid_t pid, stat_line_t *out)
{
    char buf[1024];
    if (lh_proc_read_pid(pid, "stat", buf, sizeof buf) <= 0) {
        return -1;
    }
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ') {
        return -1;
    }
    p += 2;
    /* p is at field 3 (state); starttime is field 22. */
    out->pid = pid;
    out->state = *p;
    out->ppid = 0;
    out->start_ticks = 0;
    for (int field = 3; field <= 22 && *p; field++) {
        char *end;
        if (field == 4) {
            out->ppid = (pid_t)strtol(p, &end, 10);
        } else if (field == 22) {
            out->start_ticks = strtoull(p, &end, 10);
        }
        p = strchr(p, ' ');
        if (!p) {
            return field >= 22 ? 0 : -1;
        }
        p++;
    }
    return 0;
}

int
lh_procmem_stat(pid_t pid, unsigned long long *start_ticks, char *state, lh_err_t *err)
{
    stat_line_t s;
    if (pid <= 0 || read_stat(pid, &s) < 0) {
        return lh_err_set(err, LH_ENOENT, "no process with pid %ld", (long)pid);
    }
    if (start_ticks) {
        *start_ticks = s.start_ticks;
    }
    if (state) {
        *state = s.state;
    }
    return 0;
}

/* The value of a "Key:   123 kB" line in bytes, or 0 when the key is missing. */
static uint64_t
kb_field(const char *text, const char *key)
{
    size_t klen = strlen(key);
    const char *p = text;
    while (*p) {
        if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
            return strtoull(p + klen + 1, NULL, 10) * 1024u;
        }
        if (!(p = strchr(p, '\n'))) {
            break;
        }
        p++;
    }
    return 0;
}

/* Adds one process's memory to out. Returns 0, or -1 when it vanished meanwhile. */
static int
add_process(pid_t pid, lh_watch_mem_t *out)
{
    char buf[4096];
    if (lh_proc_read_pid(pid, "statm", buf, sizeof buf) <= 0) {
        return -1;
    }
    unsigned long long size_pages = 0, rss_pages = 0;
    if (sscanf(buf, "%llu %llu", &size_pages, &rss_pages) != 2) {
        return -1;
    }
    out->rss_bytes += rss_pages * (uint64_t)sysconf(_SC_PAGESIZE);

    if (lh_proc_read_pid(pid, "smaps_rollup", buf, sizeof buf) > 0 && strstr(buf, "Pss:")) {
        out->pss_bytes += kb_field(buf, "Pss");
        out->anon_bytes += kb_field(buf, "Anonymous");
    } else {
        out->has_pss = 0;
        if (lh_proc_read_pid(pid, "status", buf, sizeof buf) > 0) {
            out->anon_bytes += kb_field(buf, "RssAnon");
        }
    }
    out->n_procs++;
    return 0;
}

static int
is_zombie(char state)
{
    return state == 'Z' || state == 'X' || state == 'x';
}

int
lh_procmem_tree(pid_t pid, lh_watch_mem_t *out, unsigned long long *start_ticks, lh_err_t *err)
{
    stat_line_t root;
    stat_line_t *all = NULL;
    unsigned char *in_tree = NULL;
    size_t n = 0, cap = 0;
    DIR *d = NULL;
    int rc = 0;

    memset(out, 0, sizeof *out);
    if (pid <= 0 || read_stat(pid, &root) < 0) {
        return lh_err_set(err, LH_ENOENT, "no process with pid %ld", (long)pid);
    }
    if (is_zombie(root.state)) {
        return lh_err_set(err, LH_ENOENT, "process %ld has exited", (long)pid);
    }
    if (start_ticks) {
        *start_ticks = root.start_ticks;
    }
    out->has_pss = 1;

    if (!(d = opendir("/proc"))) {
        rc = lh_err_set(err, LH_EIO, "/proc: %s", strerror(errno));
        goto fail;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!isdigit((unsigned char)de->d_name[0])) {
            continue;
        }
        pid_t p = (pid_t)strtol(de->d_name, NULL, 10);
        stat_line_t s;
        if (p == pid || read_stat(p, &s) < 0 || is_zombie(s.state)) {
            continue;
        }
        if (lh_grow(&all, &cap, n, sizeof *all, 256) < 0) {
            rc = lh_err_set(err, LH_ENOMEM, "out of memory reading /proc");
            goto fail;
        }
        all[n++] = s;
    }
    if (n && !(in_tree = calloc(n, 1))) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory reading /proc");
        goto fail;
    }
    /* Mark descendants: repeat until a pass adds nothing (trees are shallow). */
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < n; i++) {
            if (in_tree[i]) {
                continue;
            }
            int parent_in = all[i].ppid == pid;
            for (size_t j = 0; !parent_in && j < n; j++) {
                parent_in = in_tree[j] && all[j].pid == all[i].ppid;
            }
            if (parent_in) {
                in_tree[i] = 1;
                changed = 1;
            }
        }
    }
    if (add_process(pid, out) < 0) {
        rc = lh_err_set(err, LH_ENOENT, "process %ld has exited", (long)pid);
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        if (in_tree[i]) {
            add_process(all[i].pid, out); /* one that just exited is skipped */
        }
    }
fail:
    if (d) {
        closedir(d);
    }
    free(in_tree);
    free(all);
    return rc;
}
