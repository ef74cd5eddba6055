// leakhound - SPDX-License-Identifier: MIT
//
// cxx_sessions.cpp (e2e.graph.cxx_rank): a session registry written the way real C++ is,
// with what such code leaks. Sizes are x86-64 libstdc++'s (Debian 12), checked by
// run_graph.py against the report, the shell and, when installed, Valgrind:
//   - 20 sessions, each a make_shared<Session> (16 B control block + 64 B Session) holding
//     a make_shared<LogHandler> (16 + 72 B) in a vector (one 16 B element), the handler
//     holding the session back: a shared_ptr cycle, never freed. Each session's name is a
//     33-character string (34 B). Lost: 20 x 80 B definitely, 20 x (88 + 16 + 34) B
//     indirectly.
//   - one `new Session` dropped with its name: 64 B definitely, 34 B indirectly.
//   - make_handler(), called from two places: one LogHandler kept in a global (still
//     reachable), one dropped (definitely lost): two sites on one line.
//   - a std::map<std::string, std::string> cache, never deleted: the map (48 B, one
//     allocation) and 20 nodes of 96 B (short keys and values, stored inline), reachable.
//   - printf: the stdout buffer, reachable. And, as in every C++ program, libstdc++'s
//     emergency exception pool, allocated before the agent started: site 0, reachable.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct Handler;

struct Session {
    virtual ~Session() {}
    std::string name;
    std::vector<std::shared_ptr<Handler>> handlers;
};

struct Handler {
    virtual ~Handler() {}
    virtual void on_event() {}
    std::shared_ptr<Session> owner; // the cycle: session -> handler -> session
    char scratch[48];
};

struct LogHandler : Handler {
    void on_event() override {}
};

static std::map<std::string, std::string> *g_cache;
static Handler *g_kept;

static std::string
session_name(int i)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "session-%04d-with-a-long-name-pad", i);
    return std::string(buf); // SITE: sess_name
}

static void
open_session(int i)
{
    auto s = std::make_shared<Session>(); // SITE: sess_session
    s->name = session_name(i);
    auto h = std::make_shared<LogHandler>(); // SITE: sess_handler
    h->owner = s;
    s->handlers.push_back(h); // SITE: sess_vector
    char key[16], value[16];
    std::snprintf(key, sizeof key, "k%02d", i);
    std::snprintf(value, sizeof value, "v%02d", i);
    (*g_cache)[key] = value; // SITE: sess_map_node
}

static Handler *
make_handler()
{
    return new LogHandler(); // SITE: sess_make_handler
}

static void
keep_one()
{
    g_kept = make_handler();
}

static void
drop_one()
{
    Handler *h = make_handler();
    h->on_event();
}

int
main()
{
    g_cache = new std::map<std::string, std::string>; // SITE: sess_map
    for (int i = 0; i < 20; i++) {
        open_session(i);
    }
    Session *lost = new Session; // SITE: sess_lost
    lost->name = session_name(99);
    lost = nullptr;
    keep_one();
    drop_one();
    std::printf("%zu sessions\n", g_cache->size());
    return 0;
}
