// leakhound - SPDX-License-Identifier: MIT
//
// cxx_new.cpp (e2e): C++ new and new[] leaks. Expected: frame 0 of each site is operator
// new (libstdc++), frame 1 the user line. `new Widget` (40 bytes) leaks twice (80 bytes);
// `new int[25]` leaks 100 bytes; a Gadget is new'd and deleted 10 times and must not leak.
#include <cstdlib>

struct Widget {
    long slots[5];
};

struct Gadget {
    Gadget() : value(42) {}
    ~Gadget() { value = 0; }
    long value;
    char name[24];
};

static Widget *g_widgets[2];
static int *g_numbers;

static Widget *
make_widget()
{
    return new Widget(); // LEAK: cxx_new
}

int
main()
{
    for (int i = 0; i < 2; i++) {
        g_widgets[i] = make_widget();
    }
    g_numbers = new int[25]; // LEAK: cxx_new_array
    for (int i = 0; i < 10; i++) {
        Gadget *g = new Gadget; // SITE: cxx_deleted
        if (g->value != 42) {
            return 1;
        }
        delete g;
    }
    g_widgets[0] = g_widgets[1] = nullptr;
    g_numbers = nullptr;
    return 0;
}
