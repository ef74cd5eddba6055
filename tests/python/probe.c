/* leakhound - SPDX-License-Identifier: MIT
 *
 * probe.c: a test harness for agent/python.c alone, without the rest of the agent. Preloaded
 * into python, it interposes getppid(2) (os.getppid() calls it, the interpreter itself
 * does not) and prints, for each call, the Python frames lh_python_capture returns:
 *     py: <detail line>             once, on the first call
 *     <function> <file>:<line>      innermost first
 *     --
 * on stderr, with write(2) only. The capture runs on the hot path's terms (no allocation:
 * the buffer is on the stack); only detection, which the agent does at init, runs here on
 * the first call.
 */
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "python.h"
#include "sys.h"

pid_t getppid(void) __attribute__((visibility("default")));

static void
put(const char *s, size_t n)
{
    lh_sys_write_all(2, s, n);
}

pid_t
getppid(void)
{
    static int detected;
    lh_interp_info_t info;
    if (!detected) {
        detected = 1;
        memset(&info, 0, sizeof info);
        int found = lh_python_detect(&info);
        put("py: ", 4);
        put(found ? (info.status ? "recorded " : "native ") : "absent ", found ? (info.status ? 9 : 7) : 7);
        put(info.version, strlen(info.version));
        put(" ", 1);
        put(info.detail, strlen(info.detail));
        put("\n", 1);
    }
    lh_sframe_t fr[64];
    int n = lh_python_capture(fr, 64);
    char num[24];
    for (int i = 0; i < n; i++) {
        put(fr[i].func, fr[i].func_len);
        put(" ", 1);
        put(fr[i].file, fr[i].file_len);
        put(":", 1);
        put(num, lh_sys_fmt_u64(num, fr[i].line));
        put("\n", 1);
    }
    put("--\n", 3);
    return (pid_t)syscall(SYS_getppid);
}
