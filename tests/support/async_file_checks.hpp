// The AsyncFile checks, shared by the io_uring test and the forced-fallback
// test (each its own process: the backend is chosen once per process).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <system_error>
#include <vector>

#include "future_support.hpp"
#include "temp_dir.hpp"
#include "watchdog.hpp"
#include "weft/aio/async_file.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/coro.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft::test {

inline void check_write_sync_read() {
  Watchdog dog("AsyncFile write, sync, read");
  TempDir dir;
  const std::string path = (dir / "data.bin").string();
  weft::ThreadPool pool(workers(2));
  const std::vector<std::byte> data = random_bytes(1 << 20, 1);
  auto task = [&](weft::ThreadPool* p) -> weft::Task<bool> {
    auto out = weft::AsyncFile::open(path, weft::AsyncFile::write_only | weft::AsyncFile::create |
                                               weft::AsyncFile::truncate);
    const std::size_t half = data.size() / 2;
    // Second half first: writes at offsets, not appends.
    EXPECT_EQ(co_await out.write_at(std::span<const std::byte>(data).subspan(half), half), data.size() - half);
    EXPECT_EQ(co_await out.write_at(std::span<const std::byte>(data).first(half), 0), half);
    co_await out.sync();
    out.close();
    auto in = weft::AsyncFile::open(path, weft::AsyncFile::read_only);
    EXPECT_EQ(in.size(), data.size());
    std::vector<std::byte> back(data.size());
    const std::size_t n = co_await in.read_at(std::span<std::byte>(back), 0);
    co_return n == data.size() && back == data && weft::ThreadPool::current() == p;
  };
  EXPECT_TRUE(weft::sync_wait(pool, task(&pool)));
  // And what a plain reader sees after close.
  const std::vector<std::byte> raw = file_contents(path);
  ASSERT_EQ(raw.size(), data.size());
  EXPECT_EQ(raw[12345], data[12345]);
}

inline void check_short_reads() {
  TempDir dir;
  const std::string path = (dir / "small.bin").string();
  { std::ofstream(path, std::ios::binary) << "0123456789"; }
  auto task = [&]() -> weft::Task<std::vector<std::size_t>> {
    auto in = weft::AsyncFile::open(path, weft::AsyncFile::read_only);
    std::vector<std::byte> buf(64);
    std::vector<std::size_t> counts;
    counts.push_back(co_await in.read_at(std::span<std::byte>(buf), 0));
    counts.push_back(co_await in.read_at(std::span<std::byte>(buf), 7));
    counts.push_back(co_await in.read_at(std::span<std::byte>(buf), 100));
    EXPECT_EQ(static_cast<char>(buf[0]), '7');  // from the second read; the third read nothing
    co_return counts;
  };
  EXPECT_EQ(weft::sync_wait(task()), (std::vector<std::size_t>{10, 3, 0}));
}

// `readers` coroutines each read a 4 KiB block at an offset of their own;
// with `every_other_big`, every other one reads kBigBlocks blocks instead (a
// transfer a worker submits at once, with the small reads it held back
// before it: async_file.cpp).
inline void check_concurrent_reads(int readers, bool every_other_big = false) {
  constexpr std::size_t kBlock = 4096;
  constexpr std::size_t kBlocks = 512;
  constexpr std::size_t kBigBlocks = 24;  // 96 KiB: over the 64 KiB a worker batches
  Watchdog dog("concurrent AsyncFile reads");
  TempDir dir;
  const std::string path = (dir / "big.bin").string();
  const std::vector<std::byte> data = random_bytes(kBlock * kBlocks, 3);
  write_file(path, data);
  weft::ThreadPool pool(workers(2));
  auto file = weft::AsyncFile::open(path, weft::AsyncFile::read_only);
  auto reader = [&](int i) -> weft::Task<bool> {
    std::vector<std::byte> buf(kBlock * (every_other_big && i % 2 == 1 ? kBigBlocks : 1));
    // Every read, big or small, ends inside the file.
    const std::uint64_t off = static_cast<std::uint64_t>(i * 7919) % (kBlocks - kBigBlocks) * kBlock;
    const std::size_t n = co_await file.read_at(std::span<std::byte>(buf), off);
    co_return n == buf.size() && std::equal(buf.begin(), buf.end(), data.begin() + static_cast<std::ptrdiff_t>(off));
  };
  std::vector<weft::Task<bool>> tasks;
  for (int i = 0; i < readers; ++i) tasks.push_back(reader(i));
  auto all = [&]() -> weft::Task<int> {
    int ok = 0;
    for (bool b : co_await weft::when_all(std::move(tasks))) ok += b ? 1 : 0;
    co_return ok;
  };
  EXPECT_EQ(weft::sync_wait(pool, all()), readers);
}

inline void check_errors() {
  TempDir dir;
  const std::string missing = (dir / "missing.bin").string();
  try {
    weft::AsyncFile::open(missing, weft::AsyncFile::read_only);
    ADD_FAILURE() << "opening a missing file did not throw";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ENOENT);
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_THROW(weft::AsyncFile::open(missing, 0), std::invalid_argument);
  const std::string path = (dir / "w.bin").string();
  auto out = weft::AsyncFile::open(path, weft::AsyncFile::write_only | weft::AsyncFile::create);
  auto task = [&]() -> weft::Task<> {
    std::vector<std::byte> buf(16);
    co_await out.read_at(std::span<std::byte>(buf), 8);  // a write-only descriptor
  };
  try {
    weft::sync_wait(task());
    ADD_FAILURE() << "reading a write-only file did not throw";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EBADF);
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot read '" + path + "' at offset 8"), std::string::npos) << what;
  }
  out.close();
  EXPECT_FALSE(out.is_open());
  EXPECT_THROW((void)out.sync(), std::logic_error);
}

inline void check_stop() {
  TempDir dir;
  const std::string path = (dir / "s.bin").string();
  { std::ofstream(path, std::ios::binary) << "abc"; }
  auto in = weft::AsyncFile::open(path, weft::AsyncFile::read_only);
  std::stop_source stop;
  stop.request_stop();
  auto task = [&]() -> weft::Task<> {
    std::vector<std::byte> buf(3);
    co_await in.read_at(std::span<std::byte>(buf), 0, stop.get_token());
  };
  EXPECT_THROW(weft::sync_wait(task()), weft::cancelled);
}

}  // namespace weft::test
