// Several threads doing the same thing at once: the load shape of the
// stress tests that call into a pool from outside it.
#pragma once

#include <cstddef>
#include <thread>
#include <vector>

namespace weft::test {

// Runs body(t) on each of n new threads, t = 0 .. n-1, and returns once
// every one has ended (joined: what they wrote is visible to the caller).
template <class Body>
void on_threads(int n, const Body& body) {
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) threads.emplace_back([&body, t] { body(t); });
  for (auto& thread : threads) thread.join();
}

}  // namespace weft::test
