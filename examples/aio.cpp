// docs/guide/async-io.md: coroutines that wait without holding a worker —
// a rate-limited crawler of files: a channel of paths, a semaphore that
// bounds the reads in flight, a mutex around the tally, a timer between
// retries, and AsyncFile reads.
#include <weft/weft.hpp>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <unistd.h>

#include "expect.hpp"

namespace {

using namespace std::chrono_literals;

struct Tally {
  weft::AsyncMutex mu;
  std::size_t bytes = 0;  // guarded by mu
  int files = 0;          // guarded by mu
  int missing = 0;        // guarded by mu
};

// Reads one file whole, at most 4 reads in flight across every reader.
weft::Task<std::size_t> read_whole(const std::string& path, weft::AsyncSemaphore& slots) {
  weft::AsyncFile f = weft::AsyncFile::open(path, weft::AsyncFile::read_only);
  std::vector<std::byte> buf(64 * 1024);
  std::size_t total = 0;
  for (;;) {
    co_await slots.acquire();                                  // suspends while 4 reads are out
    std::size_t n = co_await f.read_at(std::span<std::byte>(buf), total);  // the worker runs others meanwhile
    slots.release();
    total += n;
    if (n < buf.size()) co_return total;                       // a short read: the end of the file
  }
}

// One of several readers: takes paths off the channel until it is closed.
weft::Task<> reader(weft::Channel<std::string>& paths, weft::AsyncSemaphore& slots, Tally& tally) {
  while (std::optional<std::string> path = co_await paths.pop()) {
    std::size_t n = 0;
    bool found = true;
    try {
      n = co_await read_whole(*path, slots);
    } catch (const std::system_error&) {                      // names the path and the operation
      found = false;
    }
    auto lock = co_await tally.mu.lock();                      // released at the end of the scope
    if (found) {
      tally.bytes += n;
      ++tally.files;
    } else {
      ++tally.missing;
    }
  }
}

weft::Task<> crawl(std::vector<std::string> todo, Tally& tally) {
  weft::Channel<std::string> paths(8);                         // bounded: the producer waits when full
  weft::AsyncSemaphore slots(4);
  std::vector<weft::Task<>> readers;
  for (int r = 0; r < 3; ++r) readers.push_back(reader(paths, slots, tally));
  auto producer = [&]() -> weft::Task<> {
    for (std::string& p : todo) co_await paths.push(std::move(p));
    paths.close();                                             // the readers drain it, then stop
  };
  readers.push_back(producer());
  co_await weft::when_all(std::move(readers));
}

weft::Task<int> retry_later(std::stop_token stop) {
  int tries = 1;
  co_await weft::sleep_for(2ms);                               // no thread sleeps
  ++tries;
  try {
    co_await weft::sleep_for(std::chrono::hours(1), stop);    // a stop ends it early
  } catch (const weft::cancelled&) {
    co_return tries;
  }
  co_return -1;
}

}  // namespace

int main() {
  namespace fs = std::filesystem;
  std::string name = "weft-example-aio-";
  name += std::to_string(::getpid());
  const fs::path dir = fs::temp_directory_path() / name;
  fs::create_directories(dir);
  std::vector<std::string> todo;
  std::size_t expected = 0;
  for (int i = 0; i < 12; ++i) {
    todo.push_back((dir / std::to_string(i)).string());
    std::ofstream(todo.back(), std::ios::binary) << std::string(static_cast<std::size_t>(1000 * i * i), 'x');
    expected += static_cast<std::size_t>(1000 * i * i);
  }
  todo.push_back((dir / "missing").string());

  weft::ThreadPool pool;
  Tally tally;
  weft::sync_wait(pool, crawl(todo, tally));
  expect(tally.files == 12 && tally.missing == 1, "every path read once, the missing one reported");
  expect(tally.bytes == expected, "every byte counted");

  std::stop_source stop;
  weft::Future<int> waiting = pool.spawn(retry_later(stop.get_token()));
  std::this_thread::sleep_for(20ms);
  stop.request_stop();
  expect(waiting.get() == 2, "a stop ends a sleep with weft::cancelled");

  std::printf("aio: %d files, %zu bytes, backend %s\n", tally.files, tally.bytes,
              std::string(weft::AsyncFile::backend()).c_str());
  fs::remove_all(dir);
  return 0;
}
