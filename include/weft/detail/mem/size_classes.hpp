// weft/detail/mem/size_classes.hpp — the data layout behind weft::PoolResource.
//
// Internal: only weft/mem/pool_resource.hpp should include this. It is a
// header (not hidden in src/) because the same-thread allocate/free path is
// inlined into callers such as weft::PoolAllocator<T>.
//
// Vocabulary:
//   heap   — the state one thread owns for one PoolResource (MemThreadHeap).
//   chunk  — kMemChunkSize bytes from the upstream resource, aligned to
//            kMemChunkSize, holding blocks of one size class; a 64-byte
//            header (MemChunkHeader) sits at its start, blocks are carved
//            from its end downwards.
//   block  — what allocate() returns; a free block stores the free-list link
//            in its first word.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft {
class PoolResource;
}

namespace weft::detail {

inline constexpr std::size_t kMemCacheLine = 64;
// Power of two, so `ptr & ~(kMemChunkSize - 1)` finds a block's chunk header.
inline constexpr std::size_t kMemChunkSize = std::size_t{64} * 1024;
// A chunk is written every kMemTouchStride bytes, each page as the carving
// first reaches it, so that each of its pages is placed by first touch:
// the smallest page size Linux uses, so larger pages are covered too.
inline constexpr std::size_t kMemTouchStride = 4096;
inline constexpr std::size_t kMemChunkHeaderSize = kMemCacheLine;
inline constexpr std::size_t kMemMinAlign = alignof(std::max_align_t);

// Size classes, in bytes. Multiples of 16 keep every block aligned to
// alignof(std::max_align_t); denser steps at the small end, where node-based
// containers live, coarser ones above 128 bound internal waste to < 25%.
inline constexpr std::array<std::size_t, 16> kMemSizeClasses = {
    16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512};
inline constexpr std::size_t kMemClassCount = kMemSizeClasses.size();
inline constexpr std::size_t kMemMaxPooledSize = kMemSizeClasses.back();
// Returned by mem_size_class() for requests that go to the upstream resource.
inline constexpr std::size_t kMemNoClass = kMemClassCount;

// kMemClassOf[(bytes + 15) / 16] is the smallest class holding `bytes`.
inline constexpr std::array<std::uint8_t, kMemMaxPooledSize / 16 + 1> kMemClassOf = [] {
  std::array<std::uint8_t, kMemMaxPooledSize / 16 + 1> table{};
  std::size_t c = 0;
  for (std::size_t i = 0; i < table.size(); ++i) {
    while (kMemSizeClasses[c] < i * 16) ++c;
    table[i] = static_cast<std::uint8_t>(c);
  }
  return table;
}();

// The smallest class >= `from` whose size is a multiple of `alignment`;
// blocks of such a class are aligned to `alignment` (see MemChunkHeader).
constexpr std::size_t mem_aligned_class(std::size_t from, std::size_t alignment) noexcept {
  while (from < kMemClassCount && kMemSizeClasses[from] % alignment != 0) ++from;
  return from;
}

// Which class serves (bytes, alignment), or kMemNoClass for the upstream.
// A pure function of its arguments: deallocate() routes the same way as the
// allocate() that made the block, so no per-block tag is needed.
constexpr std::size_t mem_size_class(std::size_t bytes, std::size_t alignment) noexcept {
  if (bytes > kMemMaxPooledSize || alignment > kMemMaxPooledSize) return kMemNoClass;
  const std::size_t c = kMemClassOf[(bytes + 15) / 16];
  if (alignment <= kMemMinAlign) [[likely]] return c;
  return mem_aligned_class(c, alignment);
}

struct MemFreeBlock {
  MemFreeBlock* next;
};

struct MemThreadHeap;
struct MemPoolAccess;  // src/mem: the thread-exit hook's way into PoolResource

// At the start of every chunk. All fields are written by the owning heap's
// thread when it takes the chunk from upstream, before any block of it is
// handed out; other threads only read them, after receiving a block through
// whatever synchronisation passed the block to them.
struct alignas(kMemCacheLine) MemChunkHeader {
  MemThreadHeap* owner;  // never changes: an adopted heap keeps its chunks
  std::uint32_t size_class;
  // The NUMA node the taking thread ran on when it took the chunk
  // (current_numa_node(), weft/mem/numa.hpp), where it then wrote the
  // header's page and where it writes each later page unless it moved;
  // -1 if unknown.
  std::int32_t numa_node;
  MemChunkHeader* next;  // the owner heap's list of chunks, for release
};
static_assert(sizeof(MemChunkHeader) == kMemChunkHeaderSize);

// Owner-thread state of one size class. Blocks are carved downwards from the
// end of the newest chunk (bump .. limit) and recycled through `free`.
// Written and read only by the thread that owns the heap (or, while the heap
// has no owner, under PoolResource::mutex_).
struct MemClassState {
  MemFreeBlock* free = nullptr;
  std::byte* bump = nullptr;   // next block is bump - size; nullptr: no chunk yet
  std::byte* limit = nullptr;  // end of the chunk header of the newest chunk
};

// One cache line per remote-free list: remote threads push (CAS), the owner
// swaps the whole list out (exchange). Separate lines keep frees of different
// classes by different threads from contending.
struct alignas(kMemCacheLine) MemRemoteList {
  std::atomic<MemFreeBlock*> head{nullptr};
};

// Per (PoolResource, thread) state. A heap outlives its thread: on thread
// exit it is released (when all its blocks are free) or orphaned, and an
// orphaned heap is adopted by the next thread that needs a heap. Heap objects
// are deleted only with their resource, so a pointer to one stays valid.
struct alignas(kMemCacheLine) MemThreadHeap {
  // ---- owner-thread fields (one or more lines nobody else writes) ----------
  std::array<MemClassState, kMemClassCount> classes{};
  // Blocks this heap handed out minus those its owner freed locally. Only the
  // owner writes it (plain load + store, no read-modify-write); statistics
  // read it from other threads, hence atomic.
  std::atomic<std::int64_t> local_live{0};
  // The heap's chunks. The owner pushes new ones without a lock; only when
  // the heap has no owner (or in ~PoolResource) is the list walked, under
  // PoolResource::mutex_, whose lock/unlock on the orphan transition orders
  // the owner's pushes before the walk.
  MemChunkHeader* chunks = nullptr;
  PoolResource* resource = nullptr;  // set at creation, then read-only

  // ---- remote-free lists: written by any thread, drained by the owner ------
  std::array<MemRemoteList, kMemClassCount> remote{};

  // ---- remote-free accounting, its own line --------------------------------
  // Minus the number of remote frees since the heap got its current owner;
  // when the owner exits, its local_live is added in, after which the value
  // is the number of blocks still out and the free that brings it to zero
  // releases the heap. Written by remote threads (fetch_sub) and, under
  // PoolResource::mutex_, by orphan/adopt.
  alignas(kMemCacheLine) std::atomic<std::int64_t> remote_balance{0};

  // ---- slow-path bookkeeping, guarded by PoolResource::mutex_ --------------
  enum class State : std::uint8_t {
    kOwned,     // a live thread allocates from it
    kOrphaned,  // its thread exited with blocks still out; waits for adoption or release
    kFree,      // released (no chunks); ready for the next thread
  };
  alignas(kMemCacheLine) State state = State::kOwned;
  MemThreadHeap* next_all = nullptr;  // PoolResource's list of every heap

  // Owner-thread update of local_live: load + store, not an atomic RMW.
  void add_live(std::int64_t delta) noexcept {
    // relaxed: only this thread writes the counter; readers are statistics.
    local_live.store(local_live.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
};

// The calling thread's most recently used (resource, heap) pair: the
// same-thread fast path is one compare of `resource_id` against the
// resource's id. Ids are never reused, so an entry left behind by a
// destroyed resource can never match. Trivial and constant-initialised, so
// reaching it is a plain TLS access with no init guard.
struct MemTlsCache {
  std::uint64_t resource_id = 0;  // 0: none
  MemThreadHeap* heap = nullptr;
};
inline thread_local constinit MemTlsCache mem_tls_cache{};

inline MemChunkHeader* mem_chunk_of(const void* block) noexcept {
  return reinterpret_cast<MemChunkHeader*>(reinterpret_cast<std::uintptr_t>(block) &
                                           ~static_cast<std::uintptr_t>(kMemChunkSize - 1));
}

}  // namespace weft::detail
