// What the aio tests share: a coroutine that starts at once on the calling
// thread and runs until its first suspension (so a test can line waiters
// up in a known order).
#pragma once

#include <coroutine>
#include <exception>

namespace weft::test {

// Fire and forget: starts eagerly, frees itself at the end. Must not throw.
struct Eager {
  struct promise_type {
    Eager get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
};

}  // namespace weft::test
