// leakhound - SPDX-License-Identifier: MIT
//
// heuristics.cpp (e2e, issue 11): four blocks known only through interior pointers of the
// shapes Valgrind's leak heuristics accept; each is reachable with its heuristic and
// possibly lost without:
//   stdstring            a reference-counted std::string of 100 chars (old libstdc++ ABI:
//                        the string points 24 bytes into its block): 125 bytes;
//   length64             a block whose first 8 bytes hold its size - 8, known by a pointer
//                        past them (sqlite's allocator does this): 208 bytes;
//   newarray             new[] of 5 objects with a destructor (a count before them): 68 bytes;
//   multipleinheritance  an object of a class with two polymorphic bases, known by a pointer
//                        to its second base: 40 bytes.
// Built with -D_GLIBCXX_USE_CXX11_ABI=0.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

struct Elem {
    char c[12];
    ~Elem() { c[0] = 0; }
};

struct Left {
    virtual ~Left() {}
    long l = 1;
};
struct Right {
    virtual ~Right() {}
    long r = 2;
};
struct Both : Left, Right {
    long b = 3;
};

std::string *g_str;
uint64_t *g_len;
Elem *g_arr;
Right *g_right;

__attribute__((noinline)) static void
make_string()
{
    g_str = new std::string;
    g_str->assign(100, 'x'); // SITE: heur_stdstring
}

__attribute__((noinline)) static void
make_length64()
{
    uint64_t *p = static_cast<uint64_t *>(malloc(200 + 8)); // SITE: heur_length64
    p[0] = 200;
    memset(p + 1, 0, 200);
    g_len = p + 1;
}

__attribute__((noinline)) static void
make_array()
{
    g_arr = new Elem[5]; // SITE: heur_newarray
}

__attribute__((noinline)) static void
make_both()
{
    g_right = new Both; // SITE: heur_mi
}

int
main()
{
    make_string();
    make_length64();
    make_array();
    make_both();
    return 0;
}
