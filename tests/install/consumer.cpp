// Built against an installed weft; fails (non-zero exit) if the installed
// headers and library do not work together.
#include <weft/weft.hpp>

#include <cstdio>

int main() {
  const int n = weft::available_parallelism();
  weft::Event ready;
  ready.set();
  ready.wait();
  if (n < 1 || !ready.is_set()) {
    std::puts("consumer: installed weft misbehaves");
    return 1;
  }
  std::printf("consumer: weft works, %d CPU(s) available\n", n);
  return 0;
}
