// weft — reproduces the articles' experiments on this machine, side by side
// with the standard library, peer libraries and the articles' own figures.
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "cli.hpp"

namespace {

// Library messages already start with "weft: "; say it once.
const char* strip_prefix(const char* what) {
  const std::string_view w(what);
  return w.rfind("weft: ", 0) == 0 ? what + 6 : what;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"weft: fast, topology-aware multithreading — measure this machine", "weft"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("weft ") + WEFT_CLI_VERSION);
  std::string names;
  bool known = argc < 2 || argv[1][0] == '-';
  weft::cli::add_subcommands(app);
  for (const std::string& name : weft::cli::subcommand_names()) {
    names += (names.empty() ? "" : ", ") + name;
    if (argc >= 2 && name == argv[1]) known = true;
  }
  if (!known) {
    // CLI11 would only say that a subcommand is required.
    std::fprintf(stderr, "weft: error: unknown subcommand '%s' (valid: %s)\n", argv[1], names.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "weft: error: %s\nRun 'weft --help' for usage.\n", e.what());
    return 2;
  } catch (const weft::cli::UsageError& e) {
    std::fprintf(stderr, "weft: error: %s\n", strip_prefix(e.what()));
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft: error: %s\n", strip_prefix(e.what()));
    return 1;
  }
  return 0;
}
