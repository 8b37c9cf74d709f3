#include "cli.hpp"

#include <cstdlib>
#include <cstring>

namespace weft::cli {

std::vector<Subcommand>& registry() {
  static std::vector<Subcommand> r;
  return r;
}

bool validate_only() {
  static const bool on = [] {
    const char* v = std::getenv("WEFT_VALIDATE_ONLY");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return on;
}

}  // namespace weft::cli
