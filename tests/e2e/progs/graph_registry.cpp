// leakhound - SPDX-License-Identifier: MIT
//
// graph_registry.cpp (e2e, `leakhound shell`): a registry of polymorphic objects held by a
// global: 3 Circle, 2 Square and 1 Triangle, typed by their vtables in `count --by type`.
// Two shared_ptrs held by globals type by the object they hold: a std::make_shared<Circle>
// block (libstdc++'s control block with the Circle inside) and, for shared_ptr<Square>(new
// Square), a third Square plus its separate control block.
#include <cstddef>
#include <cstring>
#include <memory>

struct Shape {
    virtual ~Shape() {}
    virtual double area() const = 0;
};

struct Circle : Shape {
    double r = 1;
    double area() const override { return 3.14159 * r * r; }
};

struct Square : Shape {
    double s = 2, pad = 0;
    double area() const override { return s * s; }
};

struct Triangle : Shape {
    double b = 1, h = 1, pad = 0;
    double area() const override { return b * h / 2; }
};

static Shape **g_registry;
static size_t g_count;
static std::shared_ptr<Circle> *g_made;
static std::shared_ptr<Square> *g_held;

__attribute__((noinline)) static void
registry_add(Shape *s)
{
    if (!g_registry) {
        g_registry = new Shape *[16]; // SITE: registry_array
    }
    g_registry[g_count++] = s;
}

__attribute__((noinline)) static void
build()
{
    for (int i = 0; i < 3; i++) {
        registry_add(new Circle); // SITE: circle
    }
    for (int i = 0; i < 2; i++) {
        registry_add(new Square);
    }
    registry_add(new Triangle);
    g_made = new std::shared_ptr<Circle>(std::make_shared<Circle>()); // SITE: made_circle
    g_held = new std::shared_ptr<Square>(new Square);                 // SITE: held_square
}

__attribute__((noinline)) static void
scrub_stack()
{
    volatile char area[64 * 1024];
    memset((char *)area, 0, sizeof area);
}

int
main()
{
    build();
    scrub_stack();
    return 0;
}
