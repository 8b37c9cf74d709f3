// A Reader racing a truncating thread: whenever the truncation lands, the
// reader either delivers the whole file (it had already reached the end) or
// throws the "shrank while being read" error. A silently short read is the
// bug this looks for.
#include "weft/io/reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "temp_dir.hpp"

namespace {

TEST(IoTruncateRace, ReaderNeverReturnsAShortFileSilently) {
  constexpr std::size_t kSize = 256 * 1024;
  constexpr int kRounds = 200;
  weft::test::TempDir dir;
  const auto path = dir / "f";
  std::mt19937_64 rng(12345);
  std::vector<char> data(kSize);
  for (char& c : data) c = static_cast<char>(rng() & 0xff);

  int whole = 0;
  int shrank = 0;
  for (int round = 0; round < kRounds; ++round) {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(data.data(), static_cast<std::streamsize>(data.size()));
      ASSERT_TRUE(out.good());
    }
    weft::Reader r(path, 4096);
    const auto cut = static_cast<std::uintmax_t>(rng() % kSize);
    std::atomic<bool> go{false};
    std::thread truncater([&] {
      // acquire/release pair with the store below: only a start signal, no
      // data is handed over.
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      std::filesystem::resize_file(path, cut);
    });
    std::vector<char> got;
    bool threw = false;
    go.store(true, std::memory_order_release);
    try {
      for (auto s = r.peek(); !s.empty(); s = r.peek()) {
        const auto* p = reinterpret_cast<const char*>(s.data());
        got.insert(got.end(), p, p + s.size());
        r.consume(s.size());
      }
    } catch (const std::system_error& e) {
      threw = true;
      EXPECT_EQ(e.code().value(), EIO) << e.what();
      EXPECT_NE(std::string(e.what()).find("shrank while being read: got " + std::to_string(got.size()) + " of " +
                                           std::to_string(kSize) + " bytes"),
                std::string::npos)
          << e.what();
    }
    truncater.join();
    if (threw) {
      ++shrank;
    } else {
      ++whole;
      ASSERT_EQ(got.size(), kSize) << "round " << round << ": short read without an error (cut at " << cut << ")";
      ASSERT_TRUE(std::equal(got.begin(), got.end(), data.begin())) << "round " << round;
    }
  }
  std::printf("%d rounds: %d read whole, %d threw 'shrank'\n", kRounds, whole, shrank);
}

}  // namespace
