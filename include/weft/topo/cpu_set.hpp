// weft/topo/cpu_set.hpp — a small set of logical CPUs, named by OS id.
//
// CpuSet is a value type: copy it freely. It holds OS CPU ids (the numbers
// `taskset`, `sched_getcpu` and /sys use), not hwloc logical indexes.
// It has a fixed capacity of kMaxCpus; adding a larger id throws
// std::out_of_range naming the id.
#pragma once

#include <bitset>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

class CpuSet {
 public:
  static constexpr int kMaxCpus = 1024;  // same as glibc's CPU_SETSIZE

  CpuSet() = default;
  CpuSet(std::initializer_list<int> cpus);

  // Parses the kernel's list syntax: "0-3,8,10-11". Whitespace around items
  // is ignored; an empty string is the empty set. Throws std::invalid_argument
  // naming the offending item on bad input.
  static CpuSet parse(std::string_view list);

  void add(int cpu);
  void remove(int cpu);
  [[nodiscard]] bool contains(int cpu) const noexcept;
  [[nodiscard]] int count() const noexcept;
  [[nodiscard]] bool empty() const noexcept { return count() == 0; }
  [[nodiscard]] int first() const noexcept;  // -1 when empty
  // Ascending list of the ids in the set.
  [[nodiscard]] std::vector<int> to_vector() const;
  // "0-3,8" (ascending, ranges collapsed); "" for the empty set.
  [[nodiscard]] std::string to_string() const;

  // Iterate ascending: for (int cpu : set) ...
  class Iterator {
   public:
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    Iterator() = default;
    Iterator(const CpuSet* set, int pos) : set_(set), pos_(pos) {}
    int operator*() const noexcept { return pos_; }
    Iterator& operator++() noexcept;
    Iterator operator++(int) noexcept {
      Iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const Iterator& o) const noexcept { return pos_ == o.pos_; }

   private:
    const CpuSet* set_ = nullptr;
    int pos_ = kMaxCpus;
  };
  [[nodiscard]] Iterator begin() const noexcept;
  [[nodiscard]] Iterator end() const noexcept { return {this, kMaxCpus}; }

  CpuSet& operator|=(const CpuSet& o) noexcept {
    bits_ |= o.bits_;
    return *this;
  }
  CpuSet& operator&=(const CpuSet& o) noexcept {
    bits_ &= o.bits_;
    return *this;
  }
  // Set difference: the CPUs of this set that are not in `o`.
  CpuSet& operator-=(const CpuSet& o) noexcept {
    bits_ &= ~o.bits_;
    return *this;
  }
  friend CpuSet operator|(CpuSet a, const CpuSet& b) noexcept { return a |= b; }
  friend CpuSet operator-(CpuSet a, const CpuSet& b) noexcept { return a -= b; }
  friend CpuSet operator&(CpuSet a, const CpuSet& b) noexcept { return a &= b; }
  friend bool operator==(const CpuSet& a, const CpuSet& b) noexcept {
    return a.bits_ == b.bits_;
  }

 private:
  std::bitset<kMaxCpus> bits_;
};

}  // namespace weft
