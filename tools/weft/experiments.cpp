// Every experiment's subcommand, derived from its registration: its options
// (with their defaults in --help), --json, the hidden child option of those
// that re-execute themselves, and the run.
#include <memory>

#include "cli.hpp"

namespace weft::cli {
namespace {

struct Values {
  std::vector<std::vector<std::string>> options;  // per OptionInfo
  std::string child;
  bool json = false;
};

void add_experiment(CLI::App& app, const xp::Experiment& e) {
  CLI::App* sub = app.add_subcommand(e.name(), e.summary());
  auto v = std::make_shared<Values>();
  v->options.resize(e.options().size());
  std::vector<CLI::Option*> added;
  for (std::size_t i = 0; i < e.options().size(); ++i) {
    const xp::OptionInfo& o = e.options()[i];
    CLI::Option* opt = sub->add_option(o.flags, v->options[i], o.help)->type_name(o.type);
    if (!o.list) opt->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::Throw);
    added.push_back(opt);
  }
  // Hidden: only weft itself passes it, to run one measurement in a child.
  if (e.has_child())
    sub->add_option("--internal-child", v->child, "Internal: one measurement, for the parent process")->group("");
  sub->add_flag("--json", v->json, "Print one JSON object");
  sub->callback([&e, v, added] {
    if (!v->child.empty()) {
      e.run_child(v->child);
      return;
    }
    std::vector<xp::Given> given;
    for (std::size_t i = 0; i < added.size(); ++i)
      if (added[i]->count() > 0)
        given.push_back({xp::reg::long_name(e.options()[i].flags), v->options[i]});
    const xp::Prepared p = e.prepare(std::nullopt, given);
    if (validate_only()) return;
    const xp::Result r = p.run();
    emit(v->json ? r : e.for_display(r), v->json, p.heading, [&] { e.print(r); });
  });
}

}  // namespace

void add_subcommands(CLI::App& app) {
  for (const xp::Experiment& e : xp::experiments()) add_experiment(app, e);
  for (const Subcommand& s : registry()) s.add(*app.add_subcommand(s.name, s.summary));
}

std::vector<std::string> subcommand_names() {
  std::vector<std::string> out;
  for (const xp::Experiment& e : xp::experiments()) out.push_back(e.name());
  for (const Subcommand& s : registry()) out.push_back(s.name);
  return out;
}

}  // namespace weft::cli
