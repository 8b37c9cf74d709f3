// PoolResource: the slow paths (new heap, new chunk, remote free, thread exit)
// and the process-wide bookkeeping behind them. The same-thread fast paths
// are inline in weft/mem/pool_resource.hpp.
#include "weft/mem/pool_resource.hpp"

#include <pthread.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "weft/mem/numa.hpp"

namespace weft {
namespace detail {

namespace {

// Live resources by id. A thread-exit hook may run at any time in any
// thread, after the resource it has a heap for was destroyed; it looks the
// id up here under the lock, and ~PoolResource removes its id under the same
// lock, so a resource cannot be destroyed while a hook is handing it a heap.
// Lock order: registry mutex, then PoolResource::mutex_.
struct Registry {
  std::mutex mutex;
  std::vector<std::pair<std::uint64_t, PoolResource*>> live;

  PoolResource* find_locked(std::uint64_t id) const noexcept {
    for (const auto& [i, r] : live) {
      if (i == id) return r;
    }
    return nullptr;
  }
};

Registry& registry() {
  // Leaked on purpose: thread-exit hooks of threads that outlive main() use it.
  static Registry* const r = new Registry;
  return *r;
}

std::atomic<std::uint64_t> g_next_id{1};

// Every heap the calling thread owns, one per resource it allocated from.
// Reached through `tls_map` (fast, for lookups) and registered as the value
// of a pthread key, whose destructor is the thread-exit hook. A pthread key
// rather than a thread_local object with a destructor: glibc runs key
// destructors after all C++ thread_local destructors, so a thread_local
// container holding pooled blocks can still free them into a live heap.
struct TlsMap {
  struct Entry {
    std::uint64_t resource_id;
    MemThreadHeap* heap;
  };
  std::vector<Entry> entries;

  MemThreadHeap* find(std::uint64_t id) const noexcept {
    for (const Entry& e : entries) {
      if (e.resource_id == id) return e.heap;
    }
    return nullptr;
  }
};

thread_local constinit TlsMap* tls_map = nullptr;

void thread_exit_hook(void* value) noexcept;

// First touch (see "NUMA placement" in weft/mem/pool_resource.hpp): the
// owner writes each page of a chunk as its bump pointer first enters it, so
// a page is placed by the thread that carves it before any block of it can
// reach another thread, and a page no block has reached is never resident.
// Blocks are carved downwards, so every page at or above page(bump) has been
// written (the header's by the header); a block [new, old) no larger than a
// page enters a new page exactly when page(new) != page(old).
static_assert(kMemMaxPooledSize <= kMemTouchStride, "a block spans at most two pages");

inline std::uintptr_t page_of(const std::byte* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) / kMemTouchStride;
}

// The block at `p` is not handed out yet, so the write clobbers nothing.
void touch_if_new_page(std::byte* p, const std::byte* old_bump) noexcept {
  if (page_of(p) != page_of(old_bump)) *static_cast<volatile std::byte*>(p) = std::byte{0};
}

// Before a heap can pass to another thread (an orphan is adopted by the next
// thread that asks for a heap): its owner writes the pages its partly carved
// chunks have left, so that whoever carves them later still gets pages on
// the node recorded in the chunk. Below page(bump) and above the header's
// page, nothing is in use.
void touch_uncarved(MemThreadHeap& heap) noexcept {
  for (MemClassState& cs : heap.classes) {
    if (cs.bump == nullptr) continue;
    std::byte* const chunk = cs.limit - kMemChunkHeaderSize;
    const std::uintptr_t end = page_of(cs.bump) * kMemTouchStride;
    for (std::byte* p = chunk + kMemTouchStride; reinterpret_cast<std::uintptr_t>(p) < end; p += kMemTouchStride)
      *static_cast<volatile std::byte*>(p) = std::byte{0};
  }
}

pthread_key_t exit_key() {
  static const pthread_key_t key = [] {
    pthread_key_t k{};
    if (pthread_key_create(&k, thread_exit_hook) != 0) {
      std::fputs("weft::PoolResource: pthread_key_create failed\n", stderr);
      std::abort();
    }
    return k;
  }();
  return key;
}

}  // namespace

// The one door from the hook into PoolResource's private members.
struct MemPoolAccess {
  static void thread_exit(PoolResource& r, MemThreadHeap* h) noexcept { r.on_thread_exit(h); }
};

namespace {

void thread_exit_hook(void* value) noexcept {
  auto* map = static_cast<TlsMap*>(value);
  // A later allocation in this thread (from another key's destructor) starts
  // over with a new map, which re-arms this hook.
  tls_map = nullptr;
  mem_tls_cache = MemTlsCache{};
  {
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    for (const TlsMap::Entry& e : map->entries) {
      if (PoolResource* r = reg.find_locked(e.resource_id)) MemPoolAccess::thread_exit(*r, e.heap);
    }
  }
  delete map;
}

}  // namespace
}  // namespace detail

using detail::MemChunkHeader;
using detail::MemFreeBlock;
using detail::MemThreadHeap;

PoolResource::PoolResource(std::pmr::memory_resource* upstream) noexcept
    // relaxed: ids only need to be unique, not ordered with anything.
    : id_(detail::g_next_id.fetch_add(1, std::memory_order_relaxed)), upstream_(upstream) {
  detail::Registry& reg = detail::registry();
  std::lock_guard lock(reg.mutex);
  reg.live.emplace_back(id_, this);
}

PoolResource::~PoolResource() {
  {
    detail::Registry& reg = detail::registry();
    std::lock_guard lock(reg.mutex);
    std::erase_if(reg.live, [this](const auto& e) { return e.first == id_; });
  }
  // From here on no exit hook can reach this resource; the precondition says
  // no other thread uses it, and stale entries in threads' caches carry an id
  // nobody will ever have again.
  std::lock_guard lock(mutex_);
  for (MemThreadHeap* h = all_heaps_; h != nullptr;) {
    MemThreadHeap* next = h->next_all;
    release_heap_locked(h);
    delete h;
    h = next;
  }
  all_heaps_ = nullptr;
  // This thread's own entries can go now; other threads drop theirs lazily.
  if (detail::mem_tls_cache.resource_id == id_) detail::mem_tls_cache = detail::MemTlsCache{};
  if (detail::tls_map != nullptr) {
    std::erase_if(detail::tls_map->entries, [this](const detail::TlsMap::Entry& e) { return e.resource_id == id_; });
  }
}

void* PoolResource::do_allocate(std::size_t bytes, std::size_t alignment) { return allocate_fast(bytes, alignment); }

void PoolResource::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  deallocate_fast(p, bytes, alignment);
}

MemThreadHeap* PoolResource::heap_for_this_thread() {
  detail::MemTlsCache& tls = detail::mem_tls_cache;
  if (tls.resource_id == id_) return tls.heap;
  detail::TlsMap* map = detail::tls_map;
  if (map != nullptr) {
    if (MemThreadHeap* h = map->find(id_)) {
      tls = {id_, h};
      return h;
    }
    // About to grow the map: drop entries of resources destroyed since, so a
    // long-lived thread that sees many short-lived resources stays small.
    detail::Registry& reg = detail::registry();
    std::lock_guard lock(reg.mutex);
    std::erase_if(map->entries, [&reg](const detail::TlsMap::Entry& e) {
      return reg.find_locked(e.resource_id) == nullptr;
    });
  } else {
    auto owned = std::make_unique<detail::TlsMap>();
    if (pthread_setspecific(detail::exit_key(), owned.get()) != 0) throw std::bad_alloc();
    map = owned.release();
    detail::tls_map = map;
  }
  map->entries.reserve(map->entries.size() + 1);  // so push_back below cannot throw
  MemThreadHeap* h = acquire_heap();
  map->entries.push_back({id_, h});
  tls = {id_, h};
  return h;
}

MemThreadHeap* PoolResource::acquire_heap() {
  std::lock_guard lock(mutex_);
  // Prefer adopting an orphan: its chunks and free blocks get reused.
  MemThreadHeap* spare = nullptr;
  for (MemThreadHeap* h = all_heaps_; h != nullptr; h = h->next_all) {
    if (h->state == MemThreadHeap::State::kOrphaned) {
      h->state = MemThreadHeap::State::kOwned;
      // relaxed: only the count is needed; the heap's state is ordered by
      // mutex_, and the freed blocks are acquired through the list heads.
      const std::int64_t outstanding = h->remote_balance.exchange(0, std::memory_order_relaxed);
      h->add_live(outstanding);
      return h;
    }
    if (spare == nullptr && h->state == MemThreadHeap::State::kFree) spare = h;
  }
  if (spare != nullptr) {
    spare->state = MemThreadHeap::State::kOwned;
    return spare;
  }
  auto* h = new MemThreadHeap;
  h->resource = this;
  h->next_all = all_heaps_;
  all_heaps_ = h;
  ++heap_count_;
  return h;
}

void PoolResource::add_bytes_held(std::size_t bytes) noexcept {
  // relaxed: statistics; nothing is published through these counters.
  const std::size_t now = bytes_held_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  // relaxed (load and CAS): a monotonic maximum needs atomicity, not order.
  std::size_t peak = peak_bytes_held_.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes_held_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void* PoolResource::allocate_slow(std::size_t size_class) {
  MemThreadHeap* h = heap_for_this_thread();
  detail::MemClassState& cs = h->classes[size_class];
  if (cs.free == nullptr) {
    std::atomic<MemFreeBlock*>& remote = h->remote[size_class].head;
    // relaxed: a hint only; the exchange below does the synchronising.
    if (remote.load(std::memory_order_relaxed) != nullptr) {
      // acquire: pairs with the release CAS of each remote free, so the
      // `next` links written by the freeing threads are visible here.
      cs.free = remote.exchange(nullptr, std::memory_order_acquire);
    }
  }
  if (MemFreeBlock* b = cs.free) {
    cs.free = b->next;
    h->add_live(1);
    return b;
  }
  const std::size_t size = kSizeClasses[size_class];
  if (cs.bump == nullptr || static_cast<std::size_t>(cs.bump - cs.limit) < size) {
    void* mem = upstream_->allocate(kChunkSize, kChunkSize);
    assert(reinterpret_cast<std::uintptr_t>(mem) % kChunkSize == 0);
    auto* chunk = ::new (mem)
        MemChunkHeader{h, static_cast<std::uint32_t>(size_class), current_numa_node(), h->chunks};
    h->chunks = chunk;
    add_bytes_held(kChunkSize);
    cs.bump = static_cast<std::byte*>(mem) + kChunkSize;
    cs.limit = static_cast<std::byte*>(mem) + kChunkHeaderSize;
  }
  std::byte* const old_bump = cs.bump;
  cs.bump -= size;
  detail::touch_if_new_page(cs.bump, old_bump);
  h->add_live(1);
  return cs.bump;
}

void PoolResource::deallocate_slow(void* p) noexcept {
  MemChunkHeader* chunk = detail::mem_chunk_of(p);
  MemThreadHeap* owner = chunk->owner;
  assert(owner->resource == this && "block freed to a PoolResource that did not allocate it");
  auto* b = static_cast<MemFreeBlock*>(p);
  // The fast path only knows the most recently used resource; this thread
  // may still own the heap through its map.
  if (detail::tls_map != nullptr && detail::tls_map->find(id_) == owner) {
    detail::mem_tls_cache = {id_, owner};
    detail::MemClassState& cs = owner->classes[chunk->size_class];
    b->next = cs.free;
    cs.free = b;
    owner->add_live(-1);
    return;
  }
  remote_free(owner, b, chunk->size_class);
}

void PoolResource::remote_free(MemThreadHeap* owner, MemFreeBlock* block, std::size_t size_class) noexcept {
  std::atomic<MemFreeBlock*>& head = owner->remote[size_class].head;
  // relaxed: the CAS below re-reads and validates it.
  MemFreeBlock* old = head.load(std::memory_order_relaxed);
  do {
    block->next = old;
    // release: publishes block->next to the owner's acquire exchange.
    // relaxed on failure: we only retry with the fresh value.
  } while (!head.compare_exchange_weak(old, block, std::memory_order_release, std::memory_order_relaxed));
  // acq_rel: release orders our push before whoever sees the balance reach
  // zero and releases the chunks; acquire (for the thread that sees 1 -> 0)
  // takes in every earlier free's push through the RMW release sequence.
  if (owner->remote_balance.fetch_sub(1, std::memory_order_acq_rel) == 1) release_if_orphan_empty(owner);
}

void PoolResource::release_if_orphan_empty(MemThreadHeap* heap) noexcept {
  std::lock_guard lock(mutex_);
  // Re-checked under the lock: the heap may have been adopted (and even
  // orphaned again with blocks out) since our decrement saw zero.
  // acquire: the balance is read again after an adoption may have reset it.
  if (heap->state == MemThreadHeap::State::kOrphaned && heap->remote_balance.load(std::memory_order_acquire) == 0) {
    release_heap_locked(heap);
  }
}

void PoolResource::on_thread_exit(MemThreadHeap* heap) noexcept {
  std::lock_guard lock(mutex_);
  // relaxed: we are the owner thread, the only writer of local_live.
  const std::int64_t live = heap->local_live.load(std::memory_order_relaxed);
  heap->add_live(-live);
  // acq_rel: acquire the pushes of remote frees already counted (we may free
  // their chunks now); release our folding-in to the remote freer that will
  // see the balance reach zero.
  const std::int64_t outstanding = heap->remote_balance.fetch_add(live, std::memory_order_acq_rel) + live;
  if (outstanding == 0) {
    release_heap_locked(heap);
  } else {
    detail::touch_uncarved(*heap);
    heap->state = MemThreadHeap::State::kOrphaned;
  }
}

void PoolResource::release_heap_locked(MemThreadHeap* heap) noexcept {
  for (MemChunkHeader* c = heap->chunks; c != nullptr;) {
    MemChunkHeader* next = c->next;
    upstream_->deallocate(c, kChunkSize, kChunkSize);
    // relaxed: statistics.
    bytes_held_.fetch_sub(kChunkSize, std::memory_order_relaxed);
    c = next;
  }
  heap->chunks = nullptr;
  heap->classes = {};
  for (detail::MemRemoteList& r : heap->remote) {
    // relaxed: no block of this heap is out, so no thread can be pushing.
    r.head.store(nullptr, std::memory_order_relaxed);
  }
  // relaxed: the heap has no running owner (or it is us, exiting); mutex_
  // orders its last writes before this.
  heap->add_live(-heap->local_live.load(std::memory_order_relaxed));
  heap->state = MemThreadHeap::State::kFree;
}

int PoolResource::block_numa_node(const void* block) const noexcept {
  const MemChunkHeader* chunk = detail::mem_chunk_of(block);
  assert(chunk->owner->resource == this && "block_numa_node of a block from another PoolResource");
  return chunk->numa_node;
}

std::int64_t PoolResource::live_blocks() const {
  std::lock_guard lock(mutex_);
  std::int64_t n = 0;
  for (const MemThreadHeap* h = all_heaps_; h != nullptr; h = h->next_all) {
    // relaxed: a statistic; exact once the threads that changed it are joined.
    n += h->local_live.load(std::memory_order_relaxed) + h->remote_balance.load(std::memory_order_relaxed);
  }
  return n;
}

std::size_t PoolResource::heap_count() const {
  std::lock_guard lock(mutex_);
  return heap_count_;
}

std::size_t PoolResource::orphaned_heap_count() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const MemThreadHeap* h = all_heaps_; h != nullptr; h = h->next_all) {
    if (h->state == MemThreadHeap::State::kOrphaned) ++n;
  }
  return n;
}

PoolResource& default_pool_resource() noexcept {
  // Leaked on purpose, like std::pmr::new_delete_resource(): containers in
  // static or thread_local storage may free into it at any time.
  static PoolResource* const r = [] {
    auto* made = new PoolResource();
    // release: detail::default_resource()'s acquire load sees it built.
    detail::default_resource_made.store(made, std::memory_order_release);
    return made;
  }();
  return *r;
}

}  // namespace weft
