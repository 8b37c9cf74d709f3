// weft report — every experiment, one after the other, with default sizes.
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli.hpp"
#include "weft/topo/topology.hpp"

namespace weft::cli {
namespace {

struct ReportOptions {
  bool quick = false;
  bool json = false;
  std::string out;
};

void run_report(const ReportOptions& o) {
  nlohmann::json all;
  all["machine"] = xp::machine_context();
  all["experiments"] = nlohmann::json::array();
  if (!o.json) print_machine_header();
  std::vector<const Subcommand*> subs;
  for (const auto& s : registry())
    if (s.run_default) subs.push_back(&s);
  std::size_t k = 0;
  for (const Subcommand* s : subs) {
    ++k;
    fmt::print(stderr, "weft report: [{}/{}] {}...\n", k, subs.size(), s->name);
    const xp::Result r = s->run_default(o.quick);
    all["experiments"].push_back(xp::to_json(r));
    if (o.json) continue;
    fmt::print("\n== {} ==\n{}\n\n", s->name, s->title);
    if (!r.rows.empty()) print_rows(r);
    if (s->print_extra) s->print_extra(r);
    for (const auto& n : r.notes) fmt::print("note: {}\n", n);
    std::fflush(stdout);
  }
  if (!o.out.empty()) {
    std::ofstream f(o.out);
    if (!f) throw std::runtime_error(fmt::format("cannot write {}", o.out));
    f << all.dump(2) << '\n';
    if (!f.flush()) throw std::runtime_error(fmt::format("writing {} failed", o.out));
    fmt::print(stderr, "weft report: results written to {}\n", o.out);
  }
  if (o.json) std::cout << all.dump(2) << '\n';
}

const Register reg{{
    "report",
    [](CLI::App& app) {
      auto o = std::make_shared<ReportOptions>();
      auto* sub = app.add_subcommand("report", "Run every experiment with default sizes and print the tables");
      sub->add_flag("--quick", o->quick, "Fewer repetitions (about a minute)");
      sub->add_flag("--json", o->json, "Print one JSON object with every experiment");
      sub->add_option("--results", o->out, "Also write the JSON to this file");
      sub->callback([o] { run_report(*o); });
    },
    nullptr,
    "",
    nullptr,
}};

}  // namespace
}  // namespace weft::cli
