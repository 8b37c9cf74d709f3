// weft/xp/program_options.hpp — the options of weft's small stand-alone
// measuring programs (weft_submitters, weft_pickup): `--flag value` pairs
// of bounded integers, and an error naming the problem with exit status 2.
// The `weft` CLI itself uses CLI11; these programs stay dependency-free.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace weft::xp {

class ProgramOptions {
 public:
  // `program`: the name errors start with; `synopsis`: the options it takes.
  ProgramOptions(const char* program, const char* synopsis) : program_(program), synopsis_(synopsis) {}

  [[noreturn]] void fail(const std::string& why) const {
    std::fprintf(stderr, "%s: %s (options: %s)\n", program_, why.c_str(), synopsis_);
    std::exit(2);
  }

  // `text` as an integer in [least, most], or an error naming `flag`.
  long integer(const char* flag, const char* text, long least, long most) const {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || v < least || v > most)
      fail(std::string(flag) + " wants an integer from " + std::to_string(least) + " to " + std::to_string(most) +
           ", got '" + text + "'");
    return v;
  }

  // Calls take(flag, value) for each pair; take returns false for a flag it
  // does not know.
  template <class Take>
  void parse(int argc, char** argv, Take&& take) const {
    for (int i = 1; i < argc; ++i) {
      const char* flag = argv[i];
      if (i + 1 == argc) fail(std::string(flag) + " needs a value");
      if (!take(flag, argv[++i])) fail(std::string("unknown option ") + flag);
    }
  }

 private:
  const char* program_;
  const char* synopsis_;
};

}  // namespace weft::xp
