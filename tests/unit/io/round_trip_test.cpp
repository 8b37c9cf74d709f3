// weft::Reader / weft::Writer: data written through any mix of the APIs, in
// random sizes and with various buffer sizes, reads back identical.
#include "weft/io/reader.hpp"
#include "weft/io/writer.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace {

using weft::Reader;
using weft::Writer;
using namespace weft::test;  // TempDir and the file helpers

// Writes `data` with a random mix of put, write, reserve/commit and Cursor.
void write_randomly(Writer& w, const std::vector<std::byte>& data, std::mt19937_64& rng) {
  const std::size_t buf = w.buffer_size();
  std::size_t i = 0;
  while (i < data.size()) {
    const std::size_t left = data.size() - i;
    switch (rng() % 5) {
      case 0: {  // bytes through the object
        const std::size_t n = std::min<std::size_t>(left, rng() % 300);
        for (std::size_t k = 0; k < n; ++k) w.put(data[i + k]);
        i += n;
        break;
      }
      case 1: {  // blocks of up to three buffers (large ones bypass the buffer)
        const std::size_t n = std::min<std::size_t>(left, rng() % (3 * buf + 2));
        w.write(std::span<const std::byte>(data).subspan(i, n));
        i += n;
        break;
      }
      case 2: {  // reserve/commit
        const std::size_t want = std::min<std::size_t>(1 + rng() % buf, buf);
        std::span<std::byte> room = w.reserve(want);
        EXPECT_GE(room.size(), want);
        const std::size_t n = std::min({left, room.size(), static_cast<std::size_t>(rng() % (buf + 1))});
        std::memcpy(room.data(), data.data() + i, n);
        w.commit(n);
        i += n;
        break;
      }
      case 3: {  // bytes through a Cursor
        const std::size_t n = std::min<std::size_t>(left, rng() % (2 * buf + 2));
        Writer::Cursor out(w);
        for (std::size_t k = 0; k < n; ++k) out.put(data[i + k]);
        i += n;
        break;
      }
      default:
        if (rng() % 8 == 0) w.flush();
        break;
    }
  }
}

// Reads everything back with a random mix of get, read, peek/consume,
// read_some and Cursor.
std::vector<std::byte> read_randomly(Reader& r, std::mt19937_64& rng) {
  const std::size_t buf = r.buffer_size();
  std::vector<std::byte> out;
  for (;;) {
    switch (rng() % 5) {
      case 0: {
        for (std::size_t k = rng() % 300; k > 0; --k) {
          const int c = r.get();
          if (c == Reader::kEof) return out;
          out.push_back(static_cast<std::byte>(c));
        }
        break;
      }
      case 1: {
        std::vector<std::byte> chunk(rng() % (3 * buf + 2));
        const std::size_t n = r.read(chunk);
        out.insert(out.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
        if (n < chunk.size()) return out;
        break;
      }
      case 2: {
        const std::span<const std::byte> s = r.peek();
        if (s.empty()) return out;
        const std::size_t n = rng() % (s.size() + 1);
        out.insert(out.end(), s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
        r.consume(n);
        break;
      }
      case 3: {
        const std::span<const std::byte> s = r.read_some();
        if (s.empty()) return out;
        out.insert(out.end(), s.begin(), s.end());
        break;
      }
      default: {
        Reader::Cursor in(r);
        for (std::size_t k = rng() % (2 * buf + 2); k > 0; --k) {
          const int c = in.get();
          if (c == Reader::kEof) return out;
          out.push_back(static_cast<std::byte>(c));
        }
        break;
      }
    }
  }
}

class ReaderWriterRoundTrip : public ::testing::TestWithParam<std::size_t> {
 protected:
  weft::test::TempDir dir_;
};

TEST_P(ReaderWriterRoundTrip, RandomSizesAgainstAReference) {
  const std::size_t buffer_size = GetParam();
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed * 1000 + buffer_size);
    const std::size_t n = static_cast<std::size_t>(rng() % 300'000) + (seed == 1 ? 0 : 3 * buffer_size);
    const std::vector<std::byte> data = random_bytes(n, seed);
    const auto path = dir_ / ("rt-" + std::to_string(seed));
    {
      Writer w = Writer::create(path, buffer_size);
      write_randomly(w, data, rng);
      w.close();
      EXPECT_FALSE(w.is_open());
    }
    ASSERT_EQ(file_contents(path), data) << "written with buffer " << buffer_size << ", seed " << seed;
    Reader r(path, buffer_size);
    const std::vector<std::byte> back = read_randomly(r, rng);
    ASSERT_EQ(back.size(), data.size());
    ASSERT_EQ(back, data) << "read with buffer " << buffer_size << ", seed " << seed;
    // At end of file everything keeps saying so.
    EXPECT_EQ(r.get(), Reader::kEof);
    EXPECT_TRUE(r.peek().empty());
  }
}

INSTANTIATE_TEST_SUITE_P(BufferSizes, ReaderWriterRoundTrip,
                         ::testing::Values(std::size_t{1}, std::size_t{7}, std::size_t{4096},
                                           Reader::kDefaultBufferSize));

TEST(ReaderWriter, CursorByteCopyMatchesTheSource) {
  weft::test::TempDir dir;
  const std::vector<std::byte> data = random_bytes(1'000'003, 42);
  write_file(dir / "src", data);
  {
    Reader r(dir / "src");
    Writer w = Writer::create(dir / "dst");
    {
      Reader::Cursor in(r);
      Writer::Cursor out(w);
      for (int c; (c = in.get()) != Reader::kEof;) out.put(static_cast<std::byte>(c));
    }
    w.close();
  }
  EXPECT_EQ(file_contents(dir / "dst"), data);
}

TEST(ReaderWriter, ForEachByteVisitsEveryByteInOrder) {
  weft::test::TempDir dir;
  const std::vector<std::byte> data = random_bytes(200'001, 7);
  write_file(dir / "f", data);
  Reader r(dir / "f", 4096);
  std::vector<std::byte> seen;
  r.for_each_byte([&](std::byte b) { seen.push_back(b); });
  EXPECT_EQ(seen, data);
}

TEST(ReaderWriter, EmptyFile) {
  weft::test::TempDir dir;
  const auto path = dir / "empty";
  Writer::create(path).close();
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(std::filesystem::file_size(path), 0U);
  Reader r(path);
  EXPECT_EQ(r.get(), Reader::kEof);
  EXPECT_TRUE(r.peek().empty());
  EXPECT_TRUE(r.read_some().empty());
  std::byte buf[16];
  EXPECT_EQ(r.read(buf), 0U);
  int calls = 0;
  r.for_each_byte([&](std::byte) { ++calls; });
  EXPECT_EQ(calls, 0);
  Reader::Cursor in(r);
  EXPECT_EQ(in.get(), Reader::kEof);
}

TEST(ReaderWriter, FileExactlyOneBufferLong) {
  weft::test::TempDir dir;
  for (const std::size_t buffer : {std::size_t{4096}, Reader::kDefaultBufferSize}) {
    const std::vector<std::byte> data = random_bytes(buffer, buffer);
    const auto path = dir / ("one-buffer-" + std::to_string(buffer));
    {
      Writer w = Writer::create(path, buffer);
      for (std::byte b : data) w.put(b);
      // Full but not yet written: the buffer is flushed only when more comes.
      EXPECT_EQ(w.pending(), buffer);
      w.close();
    }
    EXPECT_EQ(file_contents(path), data);
    {  // byte by byte: exactly `buffer` bytes, then end of file
      Reader r(path, buffer);
      for (std::size_t i = 0; i < buffer; ++i) ASSERT_EQ(r.get(), std::to_integer<int>(data[i])) << i;
      EXPECT_EQ(r.get(), Reader::kEof);
    }
    {  // one block: the first peek holds the whole file
      Reader r(path, buffer);
      const std::span<const std::byte> s = r.peek();
      ASSERT_EQ(s.size(), buffer);
      EXPECT_TRUE(std::equal(s.begin(), s.end(), data.begin()));
      r.consume(s.size());
      EXPECT_TRUE(r.peek().empty());
    }
    {  // a read of exactly one buffer goes straight to the caller
      Reader r(path, buffer);
      std::vector<std::byte> out(buffer);
      EXPECT_EQ(r.read(out), buffer);
      EXPECT_EQ(out, data);
      EXPECT_EQ(r.read(out), 0U);
    }
  }
}

TEST(ReaderWriter, AppendAddsToTheEnd) {
  weft::test::TempDir dir;
  const auto path = dir / "log";
  {
    Writer w = Writer::create(path);
    w.write(std::string_view("first\n"));
    w.close();
  }
  {
    Writer w = Writer::append(path);
    w.write(std::string_view("second\n"));
    w.close();
  }
  Reader r(path);
  std::string text;
  for (int c; (c = r.get()) != Reader::kEof;) text.push_back(static_cast<char>(c));
  EXPECT_EQ(text, "first\nsecond\n");
}

TEST(ReaderWriter, AdoptedDescriptors) {
  weft::test::TempDir dir;
  const auto path = (dir / "adopted").string();
  const int wfd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(wfd, 0);
  {
    Writer w = Writer::adopt(wfd, "my output");
    EXPECT_EQ(w.name(), "my output");
    EXPECT_EQ(w.fd(), wfd);
    for (char c : std::string_view("hello")) w.put(c);
  }  // the destructor flushes and closes
  const int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(rfd, 0);
  Reader r = Reader::adopt(rfd, "");
  EXPECT_EQ(r.name(), "fd " + std::to_string(rfd));
  std::string text;
  for (int c; (c = r.get()) != Reader::kEof;) text.push_back(static_cast<char>(c));
  EXPECT_EQ(text, "hello");
  r.close();
  EXPECT_FALSE(r.is_open());
  // The Reader closed the adopted descriptor.
  EXPECT_EQ(::fcntl(rfd, F_GETFD), -1);
}

TEST(ReaderWriter, MovesTransferTheFile) {
  weft::test::TempDir dir;
  Writer a = Writer::create(dir / "m");
  a.put('x');
  Writer b = std::move(a);
  EXPECT_FALSE(a.is_open());  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_TRUE(b.is_open());
  b.put('y');
  Writer c;
  c = std::move(b);
  c.close();
  Reader r(dir / "m");
  Reader r2 = std::move(r);
  EXPECT_EQ(r2.get(), 'x');
  EXPECT_EQ(r2.get(), 'y');
  EXPECT_EQ(r2.get(), Reader::kEof);
}

TEST(ReaderWriter, ClosedObjectsRefuseToWork) {
  Reader r;
  EXPECT_FALSE(r.is_open());
  EXPECT_THROW(r.get(), std::logic_error);
  Writer w;
  EXPECT_THROW(w.put('x'), std::logic_error);
  EXPECT_NO_THROW(w.close());
}

}  // namespace
