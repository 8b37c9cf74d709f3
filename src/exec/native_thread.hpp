// native_thread.hpp — a joinable thread with a chosen stack size.
//
// std::thread cannot set a thread's stack size, and deep fork-join
// recursion (a UTS tree 17,844 levels deep) needs more than the default
// 8 MiB: PoolOptions::stack_size asks for it, and the workers start here,
// through pthread_create with the size in its attributes.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <functional>

namespace weft::detail {

class NativeThread {
 public:
  NativeThread() = default;
  NativeThread(const NativeThread&) = delete;
  NativeThread& operator=(const NativeThread&) = delete;
  ~NativeThread();  // must have been joined (or never started)

  // Starts `fn` on a new thread with `stack_size` bytes of stack (0: the
  // system's default). Throws std::system_error naming the size when the
  // thread cannot be created.
  void start(std::size_t stack_size, std::function<void()> fn);
  void join();
  [[nodiscard]] bool joinable() const noexcept { return started_; }
  [[nodiscard]] pthread_t native_handle() const noexcept { return handle_; }

 private:
  pthread_t handle_{};
  bool started_ = false;
};

// Pins a running thread to one CPU (weft/topo/affinity.hpp's checks and errors).
void pin_native_thread(pthread_t thread, int cpu);

// The smallest stack PoolOptions::stack_size accepts (besides 0).
std::size_t min_stack_size() noexcept;

}  // namespace weft::detail
