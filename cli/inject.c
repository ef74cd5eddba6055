/* leakhound - SPDX-License-Identifier: MIT
 *
 * inject.c: gdb in batch mode runs a small Python script (below) in the target: pick a
 * thread that is safe to call on, write the strings, dlopen + dlsym + call, free the
 * strings, detach. heaptrack's heaptrack_inject does the same through gdb; this is our own.
 *
 * Why a thread blocked in a system call: the call runs on the thread gdb interrupted. A
 * thread stopped inside malloc may hold an arena lock that the dlopen we make it run needs
 * (a self-deadlock); one stopped inside the agent may hold the writer lock. A thread waiting
 * in a system call (accept, read, epoll_wait, futex) is between such sections.
 */
#include "inject.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

static const char script[] =
    "import gdb, os\n"
    "def main():\n"
    "    lib = os.environ['LH_LIB']\n"
    "    start = os.environ['LH_MODE'] == 'start'\n"
    "    inf = gdb.selected_inferior()\n"
    "    arch = gdb.selected_frame().architecture().name()\n"
    "    chosen = None\n"
    "    for t in sorted(inf.threads(), key=lambda t: t.num):\n"
    "        if t.name == 'leakhound':\n"
    "            continue\n"
    "        t.switch()\n"
    "        f = gdb.newest_frame()\n"
    "        try:\n"
    "            if 'aarch64' in arch:\n"
    "                ok = inf.read_memory(f.pc() - 4, 4).tobytes() == b'\\x01\\x00\\x00\\xd4'\n"
    "            else:\n"
    "                ok = inf.read_memory(f.pc() - 2, 2).tobytes() == b'\\x0f\\x05'\n"
    "        except gdb.MemoryError:\n"
    "            ok = False\n"
    "        d = 0\n"
    "        while ok and f is not None and d < 512:\n"
    "            if 'libleakhound' in (gdb.solib_name(f.pc()) or ''):\n"
    "                ok = False\n"
    "            try:\n"
    "                f = f.older()\n"
    "            except gdb.error:\n"
    "                break\n"
    "            d += 1\n"
    "        if ok:\n"
    "            chosen = t\n"
    "            break\n"
    "    if chosen is None:\n"
    "        print('LH_RESULT nothread')\n"
    "        return\n"
    "    chosen.switch()\n"
    "    ev = gdb.parse_and_eval\n"
    "    bufs = []\n"
    "    def put(s):\n"
    "        b = s.encode() + b'\\0'\n"
    "        p = int(ev('((void*(*)(unsigned long))malloc)(%d)' % len(b)))\n"
    "        if not p:\n"
    "            raise RuntimeError('malloc failed in the process')\n"
    "        inf.write_memory(p, b)\n"
    "        bufs.append(p)\n"
    "        return p\n"
    "    try:\n"
    "        lp = put(lib)\n"
    "        mode = 2 if start else 6\n" /* RTLD_NOW, RTLD_NOW|RTLD_NOLOAD */
    "        h = int(ev('((void*(*)(char*,int))dlopen)((char*)%d, %d)' % (lp, mode)))\n"
    "        if not h:\n"
    "            e = int(ev('((char*(*)(void))dlerror)()'))\n"
    "            msg = ev('(char*)%d' % e).string() if e else ''\n"
    "            print('LH_RESULT nodlopen ' + (msg if start else 'not attached'))\n"
    "            return\n"
    "        name = put('lh_attach_start' if start else 'lh_attach_stop')\n"
    "        f = int(ev('((void*(*)(void*,char*))dlsym)((void*)%d,(char*)%d)' % (h, name)))\n"
    "        if not f:\n"
    "            print('LH_RESULT nosym')\n"
    "            return\n"
    "        if start:\n"
    "            vp = put(os.environ['LH_VARS'])\n"
    "            rc = int(ev('((int(*)(char*))%d)((char*)%d)' % (f, vp)))\n"
    "        else:\n"
    "            rc = int(ev('((int(*)(void))%d)()' % f))\n"
    "            ev('((int(*)(void*))dlclose)((void*)%d)' % h)\n"
    "        print('LH_RESULT rc %d tid %d' % (rc, chosen.ptid[1]))\n"
    "    finally:\n"
    "        for p in bufs:\n"
    "            ev('((void(*)(void*))free)((void*)%d)' % p)\n"
    "try:\n"
    "    main()\n"
    "except Exception as e:\n"
    "    print('LH_RESULT error ' + str(e).replace('\\n', ' '))\n"
    "gdb.execute('detach')\n";

/* The first line of out that starts with key (NUL-terminated in place), or NULL. */
static char *
find_line(char *out, const char *key)
{
    size_t k = strlen(key);
    for (char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, k) == 0) {
            p[strcspn(p, "\n")] = '\0';
            return p + k;
        }
    }
    return NULL;
}

int
lh_inject_call(pid_t pid, const char *lib, int start, const char *vars, int *rc,
               uint64_t *pause_ns, lh_err_t *err)
{
    char dir[] = "/tmp/leakhound-attach-XXXXXX";
    char spath[sizeof dir + 16];
    char out[65536];
    size_t n_out = 0;
    int ret = 0;
    int pfd[2] = {-1, -1};
    *rc = 0;
    *pause_ns = 0;
    if (!mkdtemp(dir)) {
        return lh_err_set(err, LH_EIO, "cannot create a temporary directory: %s",
                          strerror(errno));
    }
    snprintf(spath, sizeof spath, "%s/lh.py", dir);
    int fd = open(spath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, script, sizeof script - 1) != (ssize_t)(sizeof script - 1)) {
        ret = lh_err_set(err, LH_EIO, "cannot write %s: %s", spath, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        goto out;
    }
    close(fd);
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        ret = lh_err_set(err, LH_EIO, "pipe: %s", strerror(errno));
        goto out;
    }
    char pid_s[16];
    snprintf(pid_s, sizeof pid_s, "%d", (int)pid);
    uint64_t t0 = lh_cli_clock_ns(CLOCK_MONOTONIC);
    pid_t g = fork();
    if (g < 0) {
        ret = lh_err_set(err, LH_EIO, "fork: %s", strerror(errno));
        goto out;
    }
    if (g == 0) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) {
            dup2(nul, 0);
        }
        setenv("LH_LIB", lib, 1);
        setenv("LH_MODE", start ? "start" : "stop", 1);
        setenv("LH_VARS", vars ? vars : "", 1);
        /* No separate debug info (libc6-dbg): reading it tripled the time the process
         * stays stopped, and the script needs only .dynsym and .eh_frame. */
        execlp("gdb", "gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off", "-iex",
               "set debug-file-directory /nonexistent", "-iex",
               "set auto-load off", "-iex", "set pagination off", "-ex",
               "set unwindonsignal on", "-ex", "set confirm off", "-p", pid_s, "-x", spath,
               (char *)NULL);
        fprintf(stderr, "LH_EXEC %s\n", strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    pfd[1] = -1;
    /* gdb's output, until it exits (bounded: a call that never returns would otherwise
     * hold the process stopped for ever). */
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    int status = 0;
    int done = 0;
    uint64_t deadline = t0 + 120ull * 1000000000u;
    uint64_t stop_first = 0, stop_last = 0;
    char stat_path[64];
    snprintf(stat_path, sizeof stat_path, "/proc/%d/stat", (int)pid);
    while (!done) {
        /* The pause the process sees: from the first to the last time it is seen in a
         * tracing stop ('t'), sampled every 5 ms (the inferior calls run it in between). */
        char st[512];
        int sfd = open(stat_path, O_RDONLY | O_CLOEXEC);
        if (sfd >= 0) {
            ssize_t m = read(sfd, st, sizeof st - 1);
            close(sfd);
            st[m > 0 ? m : 0] = '\0';
            const char *rp = strrchr(st, ')');
            if (rp && rp[1] == ' ' && rp[2] == 't') {
                stop_last = lh_cli_clock_ns(CLOCK_MONOTONIC);
                if (!stop_first) {
                    stop_first = stop_last;
                }
            }
        }
        ssize_t k = read(pfd[0], out + n_out, sizeof out - 1 - n_out);
        if (k > 0) {
            n_out += (size_t)k;
            if (n_out == sizeof out - 1) {
                n_out = 0; /* keep the tail: the result line comes last */
            }
            continue;
        }
        if (waitpid(g, &status, WNOHANG) == g) {
            done = 1;
            while ((k = read(pfd[0], out + n_out, sizeof out - 1 - n_out)) > 0) {
                n_out += (size_t)k;
            }
            break;
        }
        if (lh_cli_clock_ns(CLOCK_MONOTONIC) > deadline) {
            kill(g, SIGINT);
            waitpid(g, &status, 0);
            out[n_out] = '\0';
            ret = lh_err_set(err, LH_EIO, "gdb did not finish within 120 s with process %d",
                             (int)pid);
            goto out;
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    *pause_ns = stop_first ? stop_last - stop_first + 5000000u : 0;
    out[n_out] = '\0';
    char *r;
    if ((r = find_line(out, "LH_EXEC "))) {
        ret = lh_err_set(err, LH_ENOENT,
                         "cannot run gdb (%s): install the Debian package gdb", r);
    } else if ((r = find_line(out, "LH_RESULT rc "))) {
        *rc = atoi(r);
    } else if ((r = find_line(out, "LH_RESULT nothread"))) {
        ret = lh_err_set(err, LH_EINVAL,
                         "no thread of process %d is waiting in a system call outside "
                         "leakhound right now (all busy computing?): nothing was changed; "
                         "try again",
                         (int)pid);
    } else if ((r = find_line(out, "LH_RESULT nodlopen "))) {
        ret = lh_err_set(err, LH_EINVAL, "process %d could not load %s: %s", (int)pid, lib, r);
    } else if ((r = find_line(out, "LH_RESULT nosym"))) {
        ret = lh_err_set(err, LH_EINVAL, "%s has no attach entry point", lib);
    } else if ((r = find_line(out, "LH_RESULT error "))) {
        ret = lh_err_set(err, LH_EIO, "gdb could not call into process %d: %s", (int)pid, r);
    } else if ((r = find_line(out, "ptrace: "))) {
        ret = lh_err_set(err, LH_EINVAL, "cannot trace process %d: %s", (int)pid, r);
    } else {
        /* The last non-empty line gdb said. */
        char *last = NULL;
        for (char *p = strtok(out, "\n"); p; p = strtok(NULL, "\n")) {
            if (*p) {
                last = p;
            }
        }
        ret = lh_err_set(err, LH_EIO, "gdb failed with process %d%s%s", (int)pid,
                         last ? ": " : "", last ? last : "");
    }
out:
    if (pfd[0] >= 0) {
        close(pfd[0]);
    }
    if (pfd[1] >= 0) {
        close(pfd[1]);
    }
    unlink(spath);
    rmdir(dir);
    return ret;
}
