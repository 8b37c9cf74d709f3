/// @file
/// weft/topo/cpu_set.hpp — a small set of logical CPUs, named by OS id.
///
/// CpuSet is a value type: copy it freely. It holds OS CPU ids (the numbers
/// `taskset`, `sched_getcpu` and /sys use), not hwloc logical indexes.
/// It has a fixed capacity of kMaxCpus; adding a larger id throws
/// std::out_of_range naming the id.
#pragma once

#include <bitset>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

/// A set of logical CPUs by OS id, up to kMaxCpus: a value type.
class CpuSet {
 public:
  static constexpr int kMaxCpus = 1024;  ///< same as glibc's CPU_SETSIZE

  /// The empty set.
  CpuSet() = default;
  /// The set of `cpus`; throws std::out_of_range naming an id outside [0, kMaxCpus).
  CpuSet(std::initializer_list<int> cpus);

  /// Parses the kernel's list syntax: "0-3,8,10-11". Whitespace around items
  /// is ignored; an empty string is the empty set. Throws std::invalid_argument
  /// naming the offending item on bad input.
  static CpuSet parse(std::string_view list);

  /// Adds `cpu`; throws std::out_of_range naming an id outside [0, kMaxCpus).
  void add(int cpu);
  /// Removes `cpu` if present; throws std::out_of_range naming an id outside [0, kMaxCpus).
  void remove(int cpu);
  /// Whether `cpu` is in the set (false for any id outside [0, kMaxCpus)).
  [[nodiscard]] bool contains(int cpu) const noexcept;
  /// How many CPUs the set holds.
  [[nodiscard]] int count() const noexcept;
  /// Whether the set holds no CPU.
  [[nodiscard]] bool empty() const noexcept { return count() == 0; }
  /// The smallest id in the set; -1 when empty.
  [[nodiscard]] int first() const noexcept;
  /// Ascending list of the ids in the set.
  [[nodiscard]] std::vector<int> to_vector() const;
  /// "0-3,8" (ascending, ranges collapsed); "" for the empty set.
  [[nodiscard]] std::string to_string() const;

  /// Iterate ascending: for (int cpu : set) ...
  class Iterator {
   public:
    ///@{
    /// A forward iterator over the ids, ascending.
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
    ///@}

   private:
    const CpuSet* set_ = nullptr;
    int pos_ = kMaxCpus;
  };
  ///@{
  /// The ids in ascending order.
  [[nodiscard]] Iterator begin() const noexcept;
  [[nodiscard]] Iterator end() const noexcept { return {this, kMaxCpus}; }
  ///@}

  /// Union: adds the CPUs of `o`.
  CpuSet& operator|=(const CpuSet& o) noexcept {
    bits_ |= o.bits_;
    return *this;
  }
  /// Intersection: keeps only the CPUs also in `o`.
  CpuSet& operator&=(const CpuSet& o) noexcept {
    bits_ &= o.bits_;
    return *this;
  }
  /// Set difference: the CPUs of this set that are not in `o`.
  CpuSet& operator-=(const CpuSet& o) noexcept {
    bits_ &= ~o.bits_;
    return *this;
  }
  /// Union of two sets.
  friend CpuSet operator|(CpuSet a, const CpuSet& b) noexcept { return a |= b; }
  /// The CPUs of `a` that are not in `b`.
  friend CpuSet operator-(CpuSet a, const CpuSet& b) noexcept { return a -= b; }
  /// Intersection of two sets.
  friend CpuSet operator&(CpuSet a, const CpuSet& b) noexcept { return a &= b; }
  /// Whether both sets hold the same CPUs.
  friend bool operator==(const CpuSet& a, const CpuSet& b) noexcept {
    return a.bits_ == b.bits_;
  }

 private:
  std::bitset<kMaxCpus> bits_;
};

}  // namespace weft
