// leakhound - SPDX-License-Identifier: MIT
//
// cxx_alloc.cpp (e2e.cxxalloc): C++'s allocation forms, built four times: with glibc's
// malloc, and linked against libjemalloc2, libtcmalloc-minimal4 and libmimalloc2.0, whose
// own operator new and delete never call malloc (shims_cxx.c). Every build must leave the
// same blocks, of the same classes, at the same lines:
//   reachable: a std::map<int, Shape *> cache of 10 Circles (the map, 48 B, 10 nodes of
//     48 B, 10 Circles of 16 B), a malloc'd buffer with a Circle built in it by placement new (32 B), and a
//     Rect allocated after (with the argument "throw") a std::bad_alloc was thrown through
//     operator new (24 B);
//   definitely lost: 3 Rects (24 B), 2 alignas(64) Lines from aligned new (192 B), one
//     Line[4] from aligned new[] (768 B), and of each of 5 shared_ptr cycles of two Peers
//     one make_shared block (136 B), the other indirectly lost.
// And stdout's buffer (4096 B, reachable), allocated by the first output. Freed on the way: 100 Rects by sized delete, one nothrow new[] (1000 B).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>

namespace {

struct Shape {
    virtual ~Shape() {}
    virtual long area() const = 0;
};

struct Circle : Shape {
    long r;
    explicit Circle(long r_) : r(r_) {}
    long area() const override { return 3 * r * r; }
};

struct Rect : Shape {
    long w, h;
    Rect(long a, long b) : w(a), h(b) {}
    long area() const override { return w * h; }
};

struct alignas(64) Line {
    char data[192];
};

struct Peer {
    std::shared_ptr<Peer> other;
    char pad[104];
};

// The compiler may drop an allocation nothing uses: each one escapes through here.
__attribute__((noinline)) void
escape(const void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

__attribute__((noinline)) void
make_cycle()
{
    auto a = std::make_shared<Peer>(); // SITE: cxx_peer_a
    auto b = std::make_shared<Peer>(); // SITE: cxx_peer_b
    a->other = b;
    b->other = a;
}

__attribute__((noinline)) void
lose_rect(long i)
{
    Shape *s = new Rect(i, i); // SITE: cxx_lost_rect
    escape(s);
}

} // namespace

// Globals the program reads nowhere: external, so that the compiler keeps their stores. The
// cache is never destroyed (a static map's destructor would free its nodes at exit).
std::map<int, Shape *> *g_cache;
void *g_placed;
Shape *g_after_throw;

int
main(int argc, char **argv)
{
    long total = 0;
    std::puts("cxx_alloc"); // SITE: cxx_stdout
    g_cache = new std::map<int, Shape *>; // SITE: cxx_cache
    escape(&g_cache);
    for (int i = 0; i < 10; i++) {
        (*g_cache)[i] = new Circle(i); // SITE: cxx_cached_circle
    }
    for (int i = 0; i < 5; i++) {
        make_cycle();
    }
    for (long i = 0; i < 3; i++) {
        lose_rect(i);
    }
    for (int i = 0; i < 2; i++) {
        escape(new Line()); // SITE: cxx_aligned_line
    }
    escape(new Line[4]()); // SITE: cxx_aligned_lines
    for (long i = 0; i < 100; i++) {
        Rect *r = new Rect(i, 2); // SITE: cxx_sized_rect
        escape(r);
        total += r->area();
        delete r; // sized delete: operator delete(void *, std::size_t)
    }
    g_placed = std::calloc(2, sizeof(Circle)); // SITE: cxx_placed
    escape(&g_placed);
    Shape *placed = new (g_placed) Circle(7);
    total += placed->area();
    int *nt = new (std::nothrow) int[250]; // SITE: cxx_nothrow
    escape(nt);
    delete[] nt;
    // Not asked of mimalloc, whose operator new aborts when out of memory (built as C,
    // it cannot throw).
    if (argc > 1 && std::strcmp(argv[1], "throw") == 0) {
        try {
            char *huge = new char[static_cast<std::size_t>(1) << 62]; // SITE: cxx_huge
            escape(huge);
            std::puts("no bad_alloc");
        } catch (const std::bad_alloc &) {
            std::puts("bad_alloc");
        }
    }
    g_after_throw = new Rect(5, 6); // SITE: cxx_after_throw
    escape(&g_after_throw);
    total += g_after_throw->area();
    std::printf("%ld %zu\n", total, g_cache->size());
    return 0;
}
