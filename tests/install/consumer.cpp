// Built against an installed weft; fails (non-zero exit) if the installed
// headers and library do not work together. It touches the layers with
// private dependencies (hwloc: the topology; liburing: AsyncFile), so a
// static libweft whose link line lacks one fails to link here.
#include <weft/weft.hpp>

#include <cstddef>
#include <cstdio>
#include <span>
#include <string>

namespace {
weft::Task<std::size_t> read_some(const char* path) {
  weft::AsyncFile f = weft::AsyncFile::open(path, weft::AsyncFile::read_only);
  std::byte buf[64];
  co_return co_await f.read_at(std::span<std::byte>(buf), 0);
}
}  // namespace

int main(int argc, char** argv) {
  const int n = weft::available_parallelism();
  weft::Event ready;
  ready.set();
  ready.wait();
  if (n < 1 || !ready.is_set() || argc < 1 || weft::sync_wait(read_some(argv[0])) == 0) {
    std::puts("consumer: installed weft misbehaves");
    return 1;
  }
  std::printf("consumer: weft works, %d CPU(s) available, files through %s\n", n,
              std::string(weft::AsyncFile::backend()).c_str());
  return 0;
}
