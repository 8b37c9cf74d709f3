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

TEST(Numa, ChunkPagesAreTouchedOnTheAllocatingThreadsNode) {
  const bool ask_kernel = kernel_reports_page_nodes();
  for (const Pu& pu : Topology::instance().pus()) {
    SCOPED_TRACE("CPU " + std::to_string(pu.os_id));
    const int node = node_of_cpu(pu.os_id);
    const UntouchedMemory mem;
    std::pmr::monotonic_buffer_resource upstream(mem.data(), UntouchedMemory::kBytes, std::pmr::null_memory_resource());
    PoolResource pool(&upstream);
    on_cpu(pu.os_id, [&] {
      void* block = pool.allocate(16);
      EXPECT_EQ(pool.block_numa_node(block), node);
      if (ask_kernel) {
        // Every page of the chunk, not only the header's and the block's.
        const auto* chunk = reinterpret_cast<const std::byte*>(reinterpret_cast<std::uintptr_t>(block) &
                                                               ~(PoolResource::kChunkSize - 1));
        for (std::size_t off = 0; off < PoolResource::kChunkSize; off += kPage) {
          EXPECT_EQ(memory_numa_node(chunk + off), node) << "page at offset " << off;
        }
      }
      pool.deallocate(block, 16);
    });
  }
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
