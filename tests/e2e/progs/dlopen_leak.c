/* leakhound - SPDX-License-Identifier: MIT
 *
 * dlopen_leak.c (e2e): loads libe2e_plugin.so from its own directory, calls
 * plugin_run(2) (2 leaked records of 200 bytes in make_record) and unloads the library,
 * three times, as a program reloading a plugin does. Expected: one site, make_record
 * (e2e_plugin.c), 6 blocks, 1200 bytes: the same code loaded again is the same site.
 */
#include <dlfcn.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

static void
say(const char *s)
{
    ssize_t rc = write(2, s, strlen(s));
    (void)rc;
}

int
main(void)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
    if (n <= 0) {
        say("dlopen_leak: readlink failed\n");
        return 1;
    }
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    strcpy(slash + 1, "libe2e_plugin.so");

    for (int round = 0; round < 3; round++) {
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            say("dlopen_leak: dlopen failed\n");
            return 1;
        }
        int (*run)(int) = (int (*)(int))dlsym(lib, "plugin_run");
        if (run == NULL || run(2) != 2) {
            say("dlopen_leak: plugin_run failed\n");
            return 1;
        }
        if (dlclose(lib) != 0) {
            say("dlopen_leak: dlclose failed\n");
            return 1;
        }
    }
    return 0;
}
