/// @file
/// weft/mem/pool_resource.hpp — a per-thread pool memory resource.
///
/// The global allocator and locked stdio are hidden synchronisation: every
/// thread that allocates contends on shared allocator state. PoolResource
/// gives each thread its own free lists, so allocating and freeing on the
/// same thread is a few pointer operations with no lock and no atomic
/// read-modify-write.
///
/// Contract
/// --------
/// * Pooled requests: size <= kMaxPooledSize (512) bytes and alignment <= 512.
///   They are rounded up to one of kSizeClasses. Everything else (larger or
///   more aligned) is forwarded to the upstream resource, which must be
///   thread-safe (the default, std::pmr::new_delete_resource(), is).
/// * Alignment: every pooled block is aligned to alignof(std::max_align_t)
///   (16 on x86-64) or better; a request with a larger alignment A (<= 512) is
///   served from the smallest class that is a multiple of A and its block is
///   aligned to A.
/// * Freeing: any thread may deallocate any block, with the same (size,
///   alignment) it was allocated with (as std::pmr::memory_resource requires).
///   A free by the thread that allocated the block goes to that thread's free
///   list; a free by another thread is pushed (lock-free) onto the owner's
///   remote-free list for that class, and the owner takes the whole list back
///   with one exchange when its local list for the class runs dry — so a
///   producer whose blocks are freed by a consumer reuses them instead of
///   growing.
/// * Thread exit: the thread's heap (its chunks) for each resource is released
///   to upstream right away if all its blocks are free; otherwise it is
///   orphaned: blocks freed later still return to it, and it is released when
///   the last one comes back, or adopted (with its free blocks) by the next
///   thread that starts allocating from the resource. Nothing leaks; nothing is
///   freed while in use.
/// * Memory overhead: upstream memory comes in 64 KiB chunks of one size class
///   each, with a 64-byte header per chunk (< 0.1%), plus rounding to the class
///   size (< 25% above 128 bytes, < 16 bytes below). A thread keeps the chunks
///   of its high-water mark per class for reuse while it lives; chunks return
///   upstream when a heap is released or the resource is destroyed. About
///   1.6 KiB of bookkeeping per (resource, thread that allocated from it).
/// * NUMA placement: a chunk's pages are placed on the NUMA node of the
///   thread that takes it from upstream, the thread whose allocations its
///   blocks serve. That thread writes one byte of each page of the chunk as
///   its carving first reaches the page, before handing out any block in it
///   (first touch), so the kernel's default policy puts every page on the
///   node the thread runs on, instead of each page on the node of whichever
///   thread first writes a block in it; the node is recorded in the chunk
///   (block_numa_node()). A thread that exits with blocks still out writes
///   the pages its chunks have left, so that a thread adopting its heap
///   carves pages on the recorded node. A memory policy the process was
///   given (numactl --membind or --interleave, a launcher's memory binding)
///   decides instead: weft does not override it. Pages upstream hands back
///   already resident (memory it recycles) stay where they are, and a
///   thread that is not pinned places the pages it carves after moving to
///   another node there, while block_numa_node() keeps the node it took the
///   chunk on. Cost: one compare per block carved; a page no block has
///   reached is never resident, except in the chunks of a thread that
///   exited with blocks out (written at its exit, up to one partly carved
///   chunk per class).
///   Why first touch and not hwloc memory binding, measured: docs/guide/memory.md.
/// * Destruction: ~PoolResource() returns every chunk to upstream.
///   Precondition: no block from it is still in use and no thread is using it
///   concurrently (threads that used it may still be alive, or exit later).
/// * Not copyable or movable: blocks point back at their resource's heaps.
#pragma once

#include "weft/detail/mem/size_classes.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <mutex>

namespace weft {

/// A std::pmr::memory_resource with a heap per thread: size-classed blocks
/// carved from chunks, frees from other threads handed back to the owner
/// (this file's opening comment has the design and contract).
class PoolResource final : public std::pmr::memory_resource {
 public:
  /// Requests larger than this (bytes) go to the upstream resource.
  static constexpr std::size_t kMaxPooledSize = detail::kMemMaxPooledSize;
  /// Bytes of one chunk taken from upstream.
  static constexpr std::size_t kChunkSize = detail::kMemChunkSize;
  /// Bytes at the start of each chunk that hold its header.
  static constexpr std::size_t kChunkHeaderSize = detail::kMemChunkHeaderSize;
  /// The block sizes requests are rounded up to, ascending.
  static constexpr std::array<std::size_t, detail::kMemClassCount> kSizeClasses =
      detail::kMemSizeClasses;

  /// Blocks of `class_size` bytes that fit in one chunk.
  static constexpr std::size_t blocks_per_chunk(std::size_t class_size) noexcept {
    return (kChunkSize - kChunkHeaderSize) / class_size;
  }
  /// The class size a request is rounded up to, or 0 if it goes upstream.
  static constexpr std::size_t pooled_size(std::size_t bytes,
                                           std::size_t alignment = alignof(std::max_align_t)) noexcept {
    const std::size_t c = detail::mem_size_class(bytes, alignment);
    return c == detail::kMemNoClass ? 0 : kSizeClasses[c];
  }

  /// Chunks and large requests from std::pmr::new_delete_resource().
  PoolResource() noexcept : PoolResource(std::pmr::new_delete_resource()) {}
  /// Chunks and large requests from `upstream`, which must outlive this resource.
  explicit PoolResource(std::pmr::memory_resource* upstream) noexcept;
  PoolResource(const PoolResource&) = delete;
  PoolResource& operator=(const PoolResource&) = delete;
  ~PoolResource() override;

  ///@{
  /// The same as allocate()/deallocate() without the virtual call: the
  /// same-thread path is inlined into the caller. Throws std::bad_alloc (or
  /// whatever upstream throws) when upstream fails.
  [[nodiscard]] void* allocate_fast(std::size_t bytes, std::size_t alignment = alignof(std::max_align_t));
  void deallocate_fast(void* p, std::size_t bytes, std::size_t alignment = alignof(std::max_align_t)) noexcept;
  ///@}

  /// Where chunks and large requests come from.
  [[nodiscard]] std::pmr::memory_resource* upstream() const noexcept { return upstream_; }

  /// The NUMA node (kernel id) whose memory holds a pooled block of this
  /// resource, as recorded when its chunk was taken: the node its taking
  /// thread ran on when it touched the chunk's pages; -1 if the kernel could
  /// not tell. Precondition: `block` came from this resource's allocate()
  /// with pooled_size(bytes, alignment) != 0, and is not yet freed.
  /// memory_numa_node(block) (weft/mem/numa.hpp) asks the kernel instead.
  [[nodiscard]] int block_numa_node(const void* block) const noexcept;

  // ---- counters (for tests and reports) ---------------------------------
  ///@{
  /// Bytes of chunks currently taken from upstream (forwarded large requests
  /// are not counted), and the highest value it has had. relaxed loads: they
  /// are statistics, ordered with nothing else.
  [[nodiscard]] std::size_t bytes_held() const noexcept { return bytes_held_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t peak_bytes_held() const noexcept {
    return peak_bytes_held_.load(std::memory_order_relaxed);
  }
  ///@}
  /// Pooled blocks allocated and not yet freed. Exact when no thread is
  /// allocating or freeing concurrently (e.g. after joining them); while they
  /// run, a sum of per-thread counters read at slightly different times.
  [[nodiscard]] std::int64_t live_blocks() const;
  ///@{
  /// Heaps (thread states) that exist, and how many of them have no owner.
  [[nodiscard]] std::size_t heap_count() const;
  [[nodiscard]] std::size_t orphaned_heap_count() const;
  ///@}


 private:
  friend struct detail::MemPoolAccess;

  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  void* allocate_slow(std::size_t size_class);
  void deallocate_slow(void* p) noexcept;
  detail::MemThreadHeap* heap_for_this_thread();
  detail::MemThreadHeap* acquire_heap();
  void on_thread_exit(detail::MemThreadHeap* heap) noexcept;
  void remote_free(detail::MemThreadHeap* owner, detail::MemFreeBlock* block, std::size_t size_class) noexcept;
  void release_if_orphan_empty(detail::MemThreadHeap* heap) noexcept;
  void release_heap_locked(detail::MemThreadHeap* heap) noexcept;
  void add_bytes_held(std::size_t bytes) noexcept;

  // Read-only after construction, read by every thread.
  std::uint64_t id_;
  std::pmr::memory_resource* upstream_;
  // Statistics, changed once per chunk (slow path).
  std::atomic<std::size_t> bytes_held_{0};
  std::atomic<std::size_t> peak_bytes_held_{0};
  // Guards the heap list and the orphan/adopt/release transitions; taken
  // only when a thread gets its heap, exits, frees the last outstanding block
  // of an orphaned heap, or reads the statistics.
  mutable std::mutex mutex_;
  detail::MemThreadHeap* all_heaps_ = nullptr;  // every heap, for the destructor
  std::size_t heap_count_ = 0;
};

/// The process-wide resource behind default-constructed PoolAllocators.
/// Never destroyed, so blocks may be freed during static destruction.
PoolResource& default_pool_resource() noexcept;

/// @cond internal
namespace detail {
// default_pool_resource() once it exists, for the task allocations on every
// fork (weft/detail/exec/task.hpp): one load instead of a call that checks
// the function-local static's guard.
inline std::atomic<PoolResource*> default_resource_made{nullptr};
inline PoolResource& default_resource() noexcept {
  // acquire: pairs with the release store after the resource was built, so
  // its construction is seen before its use.
  PoolResource* const r = default_resource_made.load(std::memory_order_acquire);
  return r != nullptr ? *r : default_pool_resource();
}
}  // namespace detail
/// @endcond

// ---- inline fast paths ------------------------------------------------------

// always_inline (here and in weft/detail/exec/task.hpp): on every fork,
// where g++ would otherwise keep some of these calls, and their register
// saves, out of line.
[[gnu::always_inline]] inline void* PoolResource::allocate_fast(std::size_t bytes, std::size_t alignment) {
  const std::size_t c = detail::mem_size_class(bytes, alignment);
  if (c == detail::kMemNoClass) [[unlikely]] return upstream_->allocate(bytes, alignment);
  const detail::MemTlsCache& tls = detail::mem_tls_cache;
  if (tls.resource_id == id_) [[likely]] {
    detail::MemClassState& cs = tls.heap->classes[c];
    if (detail::MemFreeBlock* b = cs.free) [[likely]] {
      cs.free = b->next;
      tls.heap->add_live(1);
      return b;
    }
  }
  return allocate_slow(c);
}

[[gnu::always_inline]] inline void PoolResource::deallocate_fast(void* p, std::size_t bytes,
                                                                std::size_t alignment) noexcept {
  const std::size_t c = detail::mem_size_class(bytes, alignment);
  if (c == detail::kMemNoClass) [[unlikely]] {
    upstream_->deallocate(p, bytes, alignment);
    return;
  }
  const detail::MemTlsCache& tls = detail::mem_tls_cache;
  detail::MemThreadHeap* owner = detail::mem_chunk_of(p)->owner;
  if (tls.resource_id == id_ && tls.heap == owner) [[likely]] {
    detail::MemClassState& cs = owner->classes[c];
    auto* b = static_cast<detail::MemFreeBlock*>(p);
    b->next = cs.free;
    cs.free = b;
    owner->add_live(-1);
    return;
  }
  deallocate_slow(p);
}

}  // namespace weft
