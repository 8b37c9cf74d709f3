#include "weft/xp/registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace weft::xp {

const char* to_string(Level level) noexcept {
  switch (level) {
    case Level::quick: return "quick";
    case Level::standard: return "default";
    case Level::full: return "full";
  }
  return "default";
}

namespace reg {

namespace {

std::vector<Experiment>& registered() {
  static std::vector<Experiment> all;
  return all;
}

}  // namespace

void add_experiment(Experiment e) { registered().push_back(std::move(e)); }

std::string long_name(std::string_view flags) { return std::string(flags.substr(0, flags.find(','))); }

const std::string& one_value(const std::string& flag, const std::vector<std::string>& values) {
  if (values.size() != 1) throw BadParam(flag + " takes one value");
  return values.front();
}

std::int64_t parse_integer(const std::string& flag, const std::vector<std::string>& values) {
  const std::string& text = one_value(flag, values);
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range) throw BadParam(flag + ": '" + text + "' is out of range");
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty())
    throw BadParam(flag + ": '" + text + "' is not an integer");
  return v;
}

std::int64_t in_range(const std::string& flag, std::int64_t x, long long least, long long most) {
  if (x < least) throw BadParam(flag + " must be at least " + std::to_string(least) + ", got " + std::to_string(x));
  if (x > most) throw BadParam(flag + " must be at most " + std::to_string(most) + ", got " + std::to_string(x));
  return x;
}

double parse_real(const std::string& flag, const std::vector<std::string>& values) {
  const std::string& text = one_value(flag, values);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() || !std::isfinite(v))
    throw BadParam(flag + ": '" + text + "' is not a number");
  return v;
}

std::vector<std::string> parse_names(const std::string& what, const std::vector<std::string>& given,
                                     const std::vector<std::string>& allowed) {
  std::vector<std::string> out;
  for (const auto& item : given) {
    std::size_t start = 0;
    while (start <= item.size()) {
      const std::size_t comma = item.find(',', start);
      const std::string name = item.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!name.empty()) {
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
          throw BadParam("unknown " + what + " '" + name + "' (valid: " + join(allowed, ", ") + ")");
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (out.empty()) throw BadParam("no " + what + " given");
  return out;
}

std::vector<int> parse_counts(const std::string& flag, const std::string& noun, const std::vector<std::string>& given,
                              long long max) {
  std::vector<int> out;
  for (const auto& item : given) {
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = item.find(',', start);
      const std::string tok = item.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (tok.empty() && !item.empty()) throw BadParam(flag + ": an empty " + noun + " in '" + item + "'");
      if (!tok.empty()) {
        long long v = 0;
        const auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
        if (ec != std::errc() || ptr != tok.data() + tok.size()) throw BadParam(flag + ": '" + tok + "' is not a " + noun);
        const int n = static_cast<int>(in_range(flag, v, 1, max));
        if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (out.empty()) throw BadParam(flag + ": no " + noun + " given");
  return out;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string join(const std::vector<int>& items, const char* sep) {
  std::string out;
  for (int i : items) out += (out.empty() ? "" : sep) + std::to_string(i);
  return out;
}

std::string show_real(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string param_key(std::string_view flags, bool plural) {
  std::string key = long_name(flags).substr(2);
  for (char& c : key)
    if (c == '-') c = '_';
  if (plural) {
    if (key.ends_with('y'))
      key.replace(key.size() - 1, 1, "ies");
    else if (!key.ends_with('s'))
      key += 's';
  }
  return key;
}

}  // namespace reg

const std::vector<Experiment>& experiments() {
  // Put in page order on first use, after every experiment file registered
  // itself (at static initialisation).
  static const bool sorted = [] {
    std::stable_sort(reg::registered().begin(), reg::registered().end(),
                     [](const Experiment& a, const Experiment& b) { return a.page() < b.page(); });
    return true;
  }();
  (void)sorted;
  return reg::registered();
}

const Experiment* find_experiment(std::string_view name) {
  for (const Experiment& e : experiments())
    if (e.name() == name) return &e;
  return nullptr;
}

nlohmann::json registry_json() {
  nlohmann::json out = nlohmann::json::array();
  nlohmann::json topo_seconds, topo_args;
  for (Level l : kLevels) {
    topo_seconds[to_string(l)] = kTopo.seconds;
    topo_args[to_string(l)] = "";
  }
  out.push_back({{"name", kTopo.name},
                 {"article", nullptr},
                 {"title", kTopo.title},
                 {"summary", kTopo.summary},
                 {"seconds", std::move(topo_seconds)},
                 {"args", std::move(topo_args)},
                 {"figures", nlohmann::json::array()},
                 {"headlines", nlohmann::json::array()}});
  for (const Experiment& e : experiments()) {
    nlohmann::json seconds, args;
    for (Level l : kLevels) {
      seconds[to_string(l)] = e.seconds_at(l);
      args[to_string(l)] = e.args_at(l);
    }
    out.push_back({{"name", e.name()},
                   {"article", e.article().empty() ? nlohmann::json(nullptr) : nlohmann::json(e.article())},
                   {"title", e.title()},
                   {"summary", e.summary()},
                   {"seconds", std::move(seconds)},
                   {"args", std::move(args)},
                   {"figures", e.figures()},
                   {"headlines", e.headlines()}});
  }
  return out;
}

}  // namespace weft::xp
