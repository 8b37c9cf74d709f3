// weft — reproduces the articles' experiments on this machine, side by side
// with the standard library, peer libraries and the articles' own figures.
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "cli.hpp"

int main(int argc, char** argv) {
  CLI::App app{"weft: fast, topology-aware multithreading — measure this machine", "weft"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("weft ") + WEFT_CLI_VERSION);
  for (auto& sub : weft::cli::registry()) sub.add(app);
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
    std::fprintf(stderr, "weft: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
