#include "weft/topo/cpu_set.hpp"

#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>

#include "weft/detail/topo/text.hpp"

namespace weft {

namespace {

using detail::trim;

[[noreturn]] void bad_item(std::string_view item, const std::string& why) {
  throw std::invalid_argument("weft: bad CPU list item '" + std::string(item) + "': " + why);
}

// One CPU id of a list item; `item` is only there to name it in the error.
int parse_id(std::string_view text, std::string_view item) {
  text = trim(text);
  int value = -1;
  const auto* first = text.data();
  const auto* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != last) {
    bad_item(item, "expected a CPU id or a range like 0-3");
  }
  if (ec == std::errc::result_out_of_range || value < 0 || value >= CpuSet::kMaxCpus) {
    bad_item(item, "CPU ids run from 0 to " + std::to_string(CpuSet::kMaxCpus - 1));
  }
  return value;
}

}  // namespace

CpuSet::CpuSet(std::initializer_list<int> cpus) {
  for (const int cpu : cpus) add(cpu);
}

CpuSet CpuSet::parse(std::string_view list) {
  CpuSet set;
  list = trim(list);
  if (list.empty()) return set;
  while (true) {
    const auto comma = list.find(',');
    const std::string_view raw = list.substr(0, comma);
    const std::string_view item = trim(raw);
    if (item.empty()) bad_item(raw, "empty item");
    const auto dash = item.find('-');
    if (dash == std::string_view::npos) {
      set.add(parse_id(item, item));
    } else {
      const int lo = parse_id(item.substr(0, dash), item);
      const int hi = parse_id(item.substr(dash + 1), item);
      if (lo > hi) bad_item(item, "range runs backwards");
      for (int cpu = lo; cpu <= hi; ++cpu) set.add(cpu);
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return set;
}

void CpuSet::add(int cpu) {
  if (cpu < 0 || cpu >= kMaxCpus) {
    throw std::out_of_range("weft: CPU id " + std::to_string(cpu) + " is outside 0-" +
                            std::to_string(kMaxCpus - 1) + " (CpuSet::kMaxCpus)");
  }
  bits_.set(static_cast<std::size_t>(cpu));
}

void CpuSet::remove(int cpu) {
  // An id the set cannot hold is already absent: nothing to do.
  if (cpu >= 0 && cpu < kMaxCpus) bits_.reset(static_cast<std::size_t>(cpu));
}

bool CpuSet::contains(int cpu) const noexcept {
  return cpu >= 0 && cpu < kMaxCpus && bits_.test(static_cast<std::size_t>(cpu));
}

int CpuSet::count() const noexcept { return static_cast<int>(bits_.count()); }

int CpuSet::first() const noexcept {
  const int pos = *begin();
  return pos == kMaxCpus ? -1 : pos;
}

std::vector<int> CpuSet::to_vector() const {
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(count()));
  for (const int cpu : *this) out.push_back(cpu);
  return out;
}

std::string CpuSet::to_string() const {
  std::string out;
  auto it = begin();
  while (it != end()) {
    const int lo = *it;
    int hi = lo;
    for (++it; it != end() && *it == hi + 1; ++it) hi = *it;
    if (!out.empty()) out += ',';
    out += std::to_string(lo);
    if (hi != lo) {
      out += '-';
      out += std::to_string(hi);
    }
  }
  return out;
}

CpuSet::Iterator& CpuSet::Iterator::operator++() noexcept {
  do {
    ++pos_;
  } while (pos_ < kMaxCpus && !set_->bits_.test(static_cast<std::size_t>(pos_)));
  return *this;
}

CpuSet::Iterator CpuSet::begin() const noexcept {
  Iterator it(this, -1);
  return ++it;
}

}  // namespace weft
