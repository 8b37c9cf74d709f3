// The kernel's answers to "which node": getcpu(2) and move_pages(2).
#include "weft/mem/numa.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace weft {

int current_numa_node() noexcept {
  unsigned cpu = 0;
  unsigned node = 0;
  // getcpu is served by the vDSO: tens of nanoseconds, no system call.
  if (::getcpu(&cpu, &node) != 0) return -1;
  return static_cast<int>(node);
}

int memory_numa_node(const void* p) noexcept {
  // With no target nodes, move_pages only reports each page's node in
  // `status` (or -ENOENT for a page with no frame); glibc has no wrapper.
  const void* pages[1] = {p};
  int status[1] = {-1};
  if (::syscall(SYS_move_pages, 0, 1UL, pages, nullptr, status, 0) != 0) return -1;
  return status[0] < 0 ? -1 : status[0];
}

}  // namespace weft
