// NUMA placement of PoolResource chunks (weft/mem/pool_resource.hpp) and
// the kernel queries it rests on (weft/mem/numa.hpp), checked on every
// allowed CPU of the host: on a one-node machine every answer is node 0,
// on a NUMA machine each CPU's own node.
#include "weft/mem/numa.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "weft/exec/thread_pool.hpp"
#include "weft/mem/pool_resource.hpp"
#include "weft/topo/affinity.hpp"
#include "weft/topo/topology.hpp"

namespace weft {
namespace {

constexpr std::size_t kPage = 4096;

// The kernel id of the NUMA node of an allowed CPU.
int node_of_cpu(int cpu) {
  const Topology& topo = Topology::instance();
  return topo.numa_nodes()[static_cast<std::size_t>(topo.pu(cpu)->numa)].os_id;
}

// Runs f on a thread pinned to `cpu`, so that the node it runs on is known.
template <class F>
void on_cpu(int cpu, F f) {
  std::thread t([cpu, &f] {
    pin_this_thread(cpu);
    f();
  });
  t.join();
}

// Anonymous memory no thread has written: a page of it is resident only
// after someone touches it, so an upstream carved from it shows which pages
// the pool itself touched.
class UntouchedMemory {
 public:
  static constexpr std::size_t kBytes = 4 * PoolResource::kChunkSize;
  UntouchedMemory()
      : base_(::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)) {
    if (base_ == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap of the test's upstream");
  }
  UntouchedMemory(const UntouchedMemory&) = delete;
  UntouchedMemory& operator=(const UntouchedMemory&) = delete;
  ~UntouchedMemory() { ::munmap(base_, kBytes); }
  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(base_); }

 private:
  void* base_;
};

// Whether memory_numa_node can answer here at all (seccomp may deny
// move_pages): asked about a page this thread has surely written.
bool kernel_reports_page_nodes() {
  volatile int here = 1;
  return memory_numa_node(const_cast<int*>(&here)) >= 0;
}

TEST(Numa, CurrentNodeIsTheNodeOfThePinnedCpu) {
  for (const Pu& pu : Topology::instance().pus()) {
    int seen = -2;
    on_cpu(pu.os_id, [&] { seen = current_numa_node(); });
    EXPECT_EQ(seen, node_of_cpu(pu.os_id)) << "CPU " << pu.os_id;
  }
}

TEST(Numa, PageHasANodeOnlyOnceTouched) {
  if (!kernel_reports_page_nodes()) GTEST_SKIP() << "the kernel refuses move_pages(2) here (seccomp?)";
  const int cpu = Topology::instance().pus().front().os_id;
  const UntouchedMemory mem;
  EXPECT_EQ(memory_numa_node(mem.data()), -1);
  on_cpu(cpu, [&] { mem.data()[0] = std::byte{1}; });
  EXPECT_EQ(memory_numa_node(mem.data()), node_of_cpu(cpu));
}

// The chunk a block was carved from.
const std::byte* chunk_of(const void* block) {
  return reinterpret_cast<const std::byte*>(reinterpret_cast<std::uintptr_t>(block) & ~(PoolResource::kChunkSize - 1));
}

// Every page of the chunk, not only the header's and the blocks'.
void expect_every_page_on(const std::byte* chunk, int node) {
  for (std::size_t off = 0; off < PoolResource::kChunkSize; off += kPage) {
    EXPECT_EQ(memory_numa_node(chunk + off), node) << "page at offset " << off;
  }
}

TEST(Numa, ChunkPagesAreTouchedOnTheAllocatingThreadsNode) {
  const bool ask_kernel = kernel_reports_page_nodes();
  constexpr std::size_t kSize = 16;
  for (const Pu& pu : Topology::instance().pus()) {
    SCOPED_TRACE("CPU " + std::to_string(pu.os_id));
    const int node = node_of_cpu(pu.os_id);
    const UntouchedMemory mem;
    std::pmr::monotonic_buffer_resource upstream(mem.data(), UntouchedMemory::kBytes, std::pmr::null_memory_resource());
    PoolResource pool(&upstream);
    on_cpu(pu.os_id, [&] {
      // The whole chunk carved: each block is handed out only after the
      // thread wrote its page(s).
      std::vector<void*> blocks;
      for (std::size_t i = 0; i < PoolResource::blocks_per_chunk(kSize); ++i) blocks.push_back(pool.allocate(kSize));
      EXPECT_EQ(pool.bytes_held(), PoolResource::kChunkSize);
      EXPECT_EQ(pool.block_numa_node(blocks.front()), node);
      if (ask_kernel) expect_every_page_on(chunk_of(blocks.front()), node);
      for (void* b : blocks) pool.deallocate(b, kSize);
    });
  }
}

TEST(Numa, PagesNoBlockHasReachedAreNotResident) {
  if (!kernel_reports_page_nodes()) GTEST_SKIP() << "the kernel refuses move_pages(2) here (seccomp?)";
  const UntouchedMemory mem;
  std::pmr::monotonic_buffer_resource upstream(mem.data(), UntouchedMemory::kBytes, std::pmr::null_memory_resource());
  PoolResource pool(&upstream);
  // Blocks are carved from the chunk's end down: one block's worth touches
  // its page and the header's, and no page between.
  void* block = pool.allocate(64);
  const std::byte* chunk = chunk_of(block);
  EXPECT_GE(memory_numa_node(block), 0);
  EXPECT_GE(memory_numa_node(chunk), 0);
  for (std::size_t off = kPage; off + kPage < PoolResource::kChunkSize; off += kPage) {
    EXPECT_EQ(memory_numa_node(chunk + off), -1) << "page at offset " << off;
  }
  pool.deallocate(block, 64);
}

TEST(Numa, AThreadThatExitsWithBlocksOutPlacesItsChunksRestBeforeAnyAdopter) {
  const bool ask_kernel = kernel_reports_page_nodes();
  const auto& pus = Topology::instance().pus();
  const int owner_cpu = pus.front().os_id;
  const int adopter_cpu = pus.back().os_id;
  const UntouchedMemory mem;
  std::pmr::monotonic_buffer_resource upstream(mem.data(), UntouchedMemory::kBytes, std::pmr::null_memory_resource());
  PoolResource pool(&upstream);
  void* kept = nullptr;
  on_cpu(owner_cpu, [&] { kept = pool.allocate(32); });  // exits with `kept` out: its heap is orphaned
  ASSERT_EQ(pool.orphaned_heap_count(), 1U);
  // Before any other thread can take the heap, the owner wrote the pages it
  // had not reached.
  if (ask_kernel) expect_every_page_on(chunk_of(kept), node_of_cpu(owner_cpu));
  // The adopter carves the rest of the chunk: on the owner's node, as recorded.
  std::vector<void*> again;
  on_cpu(adopter_cpu, [&] {
    for (std::size_t i = 1; i < PoolResource::blocks_per_chunk(32); ++i) again.push_back(pool.allocate(32));
    EXPECT_EQ(pool.bytes_held(), PoolResource::kChunkSize);
    for (void* b : again) EXPECT_EQ(pool.block_numa_node(b), node_of_cpu(owner_cpu));
    for (void* b : again) pool.deallocate(b, 32);
  });
  if (ask_kernel) expect_every_page_on(chunk_of(kept), node_of_cpu(owner_cpu));
  pool.deallocate(kept, 32);
}

TEST(Numa, PoolPlacedByNodeAllocatesOnItsWorkersNodes) {
  const int workers = Topology::instance().allowed().count();
  PoolResource memory;
  std::vector<int> block_node(static_cast<std::size_t>(workers), -2);
  std::vector<int> cpus;
  {
    PoolOptions o;
    o.workers = workers;
    o.placement = Placement::numa;
    // On the way out the workers are surely on their CPUs (at start they
    // may still be moving there).
    o.on_worker_stop = [&](int index) {
      void* block = memory.allocate(64);
      block_node[static_cast<std::size_t>(index)] = memory.block_numa_node(block);
      memory.deallocate(block, 64);
    };
    ThreadPool pool(o);
    cpus = pool.cpus();
  }
  ASSERT_EQ(cpus.size(), block_node.size());
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    EXPECT_EQ(block_node[i], node_of_cpu(cpus[i])) << "worker " << i << " on CPU " << cpus[i];
  }
}

}  // namespace
}  // namespace weft
