// The recursive fork-join Fibonacci the pool tests share: one child through
// a TaskGroup (fib) or parallel_invoke (invoke_fib), the other computed in
// place, no cutoff (every call with n >= 2 forks), so it exercises nesting
// and helping waits to full depth.
#pragma once

#include "weft/exec/parallel_invoke.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft::test {

inline long fib(weft::ThreadPool& pool, int n) {
  if (n < 2) return n;
  long a = 0;
  weft::TaskGroup g(pool);
  g.run([&] { a = fib(pool, n - 1); });
  const long b = fib(pool, n - 2);
  g.wait();
  return a + b;
}

inline long invoke_fib(weft::ThreadPool& pool, int n) {
  if (n < 2) return n;
  long a = 0;
  long b = 0;
  weft::parallel_invoke(pool, [&] { b = invoke_fib(pool, n - 2); }, [&] { a = invoke_fib(pool, n - 1); });
  return a + b;
}

}  // namespace weft::test
