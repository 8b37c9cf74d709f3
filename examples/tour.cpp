// README.md's tour: one use of each layer, through the umbrella header.
#include <weft/weft.hpp>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <list>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

#include "expect.hpp"

namespace {

struct Message {
  int id = 0;
};

int work(int x) { return x + 1; }

// A fresh directory, made the current one, holding a 5-byte input.bin.
std::filesystem::path enter_scratch_dir_with_input() {
  const auto dir = std::filesystem::temp_directory_path() / ("weft-tour-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::current_path(dir);
  weft::Writer w = weft::Writer::create("input.bin");
  w.write(std::string_view("tour\n"));
  w.close();
  return dir;
}

}  // namespace

int main() {
  // Topology and placement (weft/topo): the machine as this process may use it.
  const weft::Topology& topo = weft::Topology::instance();       // hwloc, restricted to the allowed CPUs
  int n = weft::available_parallelism();                        // allowed CPUs, capped by a cgroup quota
  std::vector<int> cpus = weft::place(topo, weft::Placement::compact, n);
  weft::pin_this_thread(cpus[0]);                               // throws naming the CPU if not allowed
  expect(weft::current_cpu() == cpus[0], "pinned where placed");

  // Signalling (weft/sync): spin with `pause` for a measured budget, then sleep on a futex.
  weft::Event ready;
  std::thread t([&] { ready.wait(); /* ... */ });
  ready.set();                                                  // no system call unless someone sleeps
  t.join();

  // Queues (weft/queue): bounded, cache-line padded.
  weft::SpscQueue<Message> q(1024);
  Message msg{1};
  q.push(msg);  Message m = q.pop();
  expect(m.id == 1, "the queue hands the message on");

  // The pool (weft/exec): work stealing, futures, fork-join, parallel_for.
  weft::ThreadPool pool;                                        // available_parallelism() workers
  weft::Future<int> f = pool.submit([] { return 42; });
  int left = 0, right = 0, a = 1, b = 2;
  weft::TaskGroup g(pool);
  g.run([&] { left = work(a); });  right = work(b);  g.wait();
  std::vector<int> in(1000, 1), out(in.size());
  weft::parallel_for(pool, std::size_t{0}, in.size(), [&](std::size_t i) { out[i] = in[i] * 2; });
  expect(f.get() == 42 && left + right == 5, "futures and fork-join");
  expect(std::all_of(out.begin(), out.end(), [](int x) { return x == 2; }), "parallel_for");

  // Memory (weft/mem): per-thread pools usable from STL containers.
  std::list<int, weft::PoolAllocator<int>> list;
  list.assign({1, 2, 3});

  // Files (weft/io): unlocked, buffered; every error names the path.
  const std::filesystem::path dir = enter_scratch_dir_with_input();
  weft::Reader in_file("input.bin");
  weft::Writer out_file = weft::Writer::create("copy.bin");
  { weft::Reader::Cursor r(in_file); weft::Writer::Cursor w(out_file);
    for (int c; (c = r.get()) != weft::Reader::kEof;) w.put(static_cast<std::byte>(c)); }
  out_file.close();
  expect(std::filesystem::file_size("copy.bin") == 5, "the copy is whole");
  std::filesystem::remove_all(dir);
  return 0;
}
