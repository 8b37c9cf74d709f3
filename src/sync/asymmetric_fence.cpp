#include "weft/detail/sync/asymmetric_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace weft::detail {

std::atomic<bool> g_asymmetric_fences{false};

namespace {
long membarrier(int cmd) noexcept { return syscall(SYS_membarrier, cmd, 0u, 0); }

bool register_expedited() noexcept {
  if (const char* env = std::getenv("WEFT_ASYMMETRIC_FENCE"); env != nullptr && std::strcmp(env, "0") == 0)
    return false;
  const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
  if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0 ||
      (cmds & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
    return false;
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}
}  // namespace

bool enable_asymmetric_fences() noexcept {
  static const bool on = [] {
    const bool ok = register_expedited();
    // relaxed: the threads that read it are started after this (thread
    // creation orders it), and it is written only here.
    if (ok) g_asymmetric_fences.store(true, std::memory_order_relaxed);
    return ok;
  }();
  return on;
}

void heavy_fence() noexcept {
  // seq_cst fence: our own store before what follows, whatever the kernel
  // does (it also fences on entry to and exit from membarrier).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // relaxed: as in light_fence(). The call cannot fail: the process was
  // registered before the flag was set.
  if (g_asymmetric_fences.load(std::memory_order_relaxed)) membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
}

}  // namespace weft::detail
