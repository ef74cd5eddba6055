// leakhound - SPDX-License-Identifier: MIT
//
// cxx_load.cpp (load): the C++ standard library under the agent. Four threads each build
// a std::map of std::string keys to std::vector<int>, an unordered_map, a graph of
// shared_ptr/weak_ptr nodes, and strings grown by concatenation; results meet in a
// mutex-protected std::map. Deterministic output: per-thread checksums and a total.
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

struct Node {
    std::string name;
    std::vector<std::shared_ptr<Node>> children;
    std::weak_ptr<Node> parent;
};

std::mutex g_lock;
std::map<int, unsigned long long> g_results;

unsigned long long
work(int id)
{
    unsigned long long sum = 0;
    for (int round = 0; round < 40; round++) {
        std::map<std::string, std::vector<int>> m;
        for (int i = 0; i < 6000; i++) {
            std::string key = "k" + std::to_string((i * 7919 + id) % 3001) + "-" + std::to_string(round);
            m[key].push_back(i);
        }
        std::unordered_map<int, std::string> u;
        for (const auto &kv : m) {
            u.emplace(static_cast<int>(kv.second.size() * 100003 + kv.first.size()), kv.first);
            sum += kv.second.size() * kv.first.size();
        }
        auto root = std::make_shared<Node>();
        root->name = "root";
        std::vector<std::shared_ptr<Node>> level{root};
        for (int depth = 0; depth < 4; depth++) {
            std::vector<std::shared_ptr<Node>> next;
            for (auto &n : level) {
                for (int c = 0; c < 6; c++) {
                    auto child = std::make_shared<Node>();
                    child->name = n->name + "/" + std::to_string(c);
                    child->parent = n;
                    n->children.push_back(child);
                    next.push_back(child);
                }
            }
            level.swap(next);
        }
        for (auto &leaf : level) {
            sum += leaf->name.size() + (leaf->parent.lock() ? 1 : 0);
        }
        std::string s;
        for (int i = 0; i < 20000; i++) {
            s += static_cast<char>('a' + (i * 31 + id) % 26);
            if (i % 1000 == 999) {
                s = s.substr(s.size() / 2);
            }
        }
        sum += s.size() + u.size();
    }
    return sum;
}

} // namespace

int
main()
{
    std::vector<std::thread> threads;
    for (int id = 0; id < 4; id++) {
        threads.emplace_back([id] {
            unsigned long long r = work(id);
            std::lock_guard<std::mutex> g(g_lock);
            g_results[id] = r;
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    unsigned long long total = 0;
    for (const auto &kv : g_results) {
        std::printf("thread %d: %llu\n", kv.first, kv.second);
        total += kv.second;
    }
    std::printf("total %llu\n", total);
    return 0;
}
