// docs/guide/files.md: unlocked buffered reading and writing, byte by byte
// and block by block, and errors that name the path.
#include <weft/weft.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <unistd.h>

#include "expect.hpp"

namespace fs = std::filesystem;

int main() {
  const fs::path dir = fs::temp_directory_path() / ("weft-example-files-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path input = dir / "input.bin";
  {
    weft::Writer w = weft::Writer::create(input);
    for (int i = 0; i < 100'000; ++i) w.write(std::string_view("weft\n"));
    w.close();
  }

  weft::Reader in(input);                        // 64 KiB buffer by default
  weft::Writer out = weft::Writer::create(dir / "output.bin");
  {
    weft::Reader::Cursor r(in);                  // keeps the buffer pointers in registers
    weft::Writer::Cursor w(out);
    for (int c; (c = r.get()) != weft::Reader::kEof;) w.put(static_cast<std::byte>(c));
  }
  out.close();                                   // flushes; throws if anything failed
  expect(fs::file_size(dir / "output.bin") == 500'000, "the byte copy is whole");

  weft::Reader again(input);
  weft::Writer copy = weft::Writer::create(dir / "copy.bin");
  for (auto block = again.read_some(); !block.empty(); block = again.read_some())
    copy.write(block);                           // block copies
  copy.close();
  expect(copy.written() == 500'000, "written() says what reached the file");

  try {
    weft::Reader missing(dir / "no-such-file");
    expect(false, "opening a missing file throws");
  } catch (const std::system_error& e) {
    expect(std::string(e.what()).find("no-such-file") != std::string::npos, "the error names the path");
  }
  fs::remove_all(dir);
  return 0;
}
