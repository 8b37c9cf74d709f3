/// @file
/// weft/mem/pool_allocator.hpp — an STL allocator over weft::PoolResource.
///
///   std::list<int, weft::PoolAllocator<int>> a;           // process-wide pool
///   weft::PoolResource pool;
///   std::list<int, weft::PoolAllocator<int>> b{&pool};    // a given pool
///   std::pmr::list<int> c{&pool};                         // the pmr route
///
/// Unlike std::pmr::polymorphic_allocator, allocation and same-thread free are
/// inlined (no virtual call). Two allocators are equal when they use the same
/// resource; any of them can free what an equal one allocated, from any
/// thread. The allocator propagates on container copy/move assignment and
/// swap, so those are O(1) and defined between containers on different pools
/// (the memory travels with the allocator, as with std::allocator).
#pragma once

#include "weft/mem/pool_resource.hpp"

#include <cstddef>
#include <limits>
#include <new>
#include <type_traits>

namespace weft {

template <class T>
/// A standard allocator over a PoolResource, for STL containers (this
/// file's opening comment has the contract).
class PoolAllocator {
 public:
  ///@{
  /// The allocator requirements: it allocates T, propagates with the
  /// container, and two allocators are equal when they share a resource.
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;
  ///@}

  /// The same allocator for another type, on the same resource.
  template <class U>
  struct rebind {
    using other = PoolAllocator<U>;  ///< `PoolAllocator<U>`
  };

  /// Uses default_pool_resource().
  PoolAllocator() noexcept : resource_(&default_pool_resource()) {}
  /// Implicit, so `Container c{&pool}` works. `resource` must not be null and
  /// must outlive every block allocated through it.
  PoolAllocator(PoolResource* resource) noexcept : resource_(resource) {}  // NOLINT(google-explicit-constructor)
  /// The allocator for U's resource, for T.
  template <class U>
  PoolAllocator(const PoolAllocator<U>& other) noexcept : resource_(other.resource()) {}  // NOLINT

  /// Room for `n` objects of T; throws std::bad_array_new_length when n * sizeof(T)
  /// overflows, and what the resource throws when memory runs out.
  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(resource_->allocate_fast(n * sizeof(T), alignof(T)));
  }
  /// Gives back what allocate(n) returned.
  void deallocate(T* p, std::size_t n) noexcept { resource_->deallocate_fast(p, n * sizeof(T), alignof(T)); }

  /// The resource it allocates from.
  [[nodiscard]] PoolResource* resource() const noexcept { return resource_; }


 private:
  PoolResource* resource_;
};

/// Whether memory from one can be given back through the other: the same resource.
template <class T, class U>
bool operator==(const PoolAllocator<T>& a, const PoolAllocator<U>& b) noexcept {
  return a.resource() == b.resource();
}

}  // namespace weft
