// What every example shares: a check that ends the program with a message
// and a non-zero status when what the example shows does not hold, so that
// ctest (label `example`) notices an example that drifted from the library.
#pragma once

#include <cstdio>
#include <cstdlib>

inline void expect(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "example failed: %s\n", what);
  std::exit(1);
}
