#include "weft/topo/affinity.hpp"

#include "../exec/native_thread.hpp"

#include <pthread.h>
#include <sched.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "weft/topo/topology.hpp"

namespace weft {

namespace {

std::string describe(const CpuSet& cpus) {
  return (cpus.count() == 1 ? "CPU " : "CPUs ") + cpus.to_string();
}

[[noreturn]] void refuse(const std::string& what, const std::string& why) {
  throw std::system_error(std::make_error_code(std::errc::invalid_argument),
                          "weft: cannot pin to " + what + ": " + why);
}

// Checked before the kernel sees the request so the error names the CPUs at
// fault and the set that was allowed, which EINVAL alone does not.
void validate(const CpuSet& cpus) {
  if (cpus.empty()) refuse("an empty CPU set", "a thread needs at least one CPU");
  const CpuSet allowed = process_allowed_cpus();
  const CpuSet outside = cpus - allowed;
  if (!outside.empty()) refuse(describe(outside), "not in the allowed set " + allowed.to_string());
}

CpuSet single(int cpu) {
  if (cpu < 0 || cpu >= CpuSet::kMaxCpus) {
    refuse("CPU " + std::to_string(cpu), "not in the allowed set " + process_allowed_cpus().to_string() +
                                             " (CPU ids run from 0 to " + std::to_string(CpuSet::kMaxCpus - 1) +
                                             ")");
  }
  return CpuSet{cpu};
}

cpu_set_t to_native(const CpuSet& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int cpu : cpus) CPU_SET(static_cast<std::size_t>(cpu), &set);
  return set;
}

void apply(pthread_t thread, const CpuSet& cpus) {
  validate(cpus);
  const cpu_set_t set = to_native(cpus);
  // pthread_setaffinity_np returns the error rather than setting errno.
  if (const int rc = pthread_setaffinity_np(thread, sizeof(set), &set); rc != 0) {
    throw std::system_error(rc, std::generic_category(),
                            "weft: pthread_setaffinity_np to " + describe(cpus) + " failed");
  }
}

pthread_t handle_of(std::thread& t) {
  if (!t.joinable()) {
    throw std::system_error(std::make_error_code(std::errc::invalid_argument),
                            "weft: cannot pin a std::thread that is not running (not joinable)");
  }
  return t.native_handle();
}

pthread_t handle_of(std::jthread& t) {
  if (!t.joinable()) {
    throw std::system_error(std::make_error_code(std::errc::invalid_argument),
                            "weft: cannot pin a std::jthread that is not running (not joinable)");
  }
  return t.native_handle();
}

}  // namespace

void pin_this_thread(int cpu) { apply(pthread_self(), single(cpu)); }
void pin_this_thread(const CpuSet& cpus) { apply(pthread_self(), cpus); }
void pin_thread(std::thread& t, int cpu) { apply(handle_of(t), single(cpu)); }
void pin_thread(std::thread& t, const CpuSet& cpus) { apply(handle_of(t), cpus); }
void pin_thread(std::jthread& t, int cpu) { apply(handle_of(t), single(cpu)); }
void pin_thread(std::jthread& t, const CpuSet& cpus) { apply(handle_of(t), cpus); }
namespace detail {
void pin_native_thread(pthread_t thread, int cpu) { apply(thread, single(cpu)); }
}  // namespace detail

CpuSet this_thread_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (const int rc = pthread_getaffinity_np(pthread_self(), sizeof(set), &set); rc != 0) {
    throw std::system_error(rc, std::generic_category(), "weft: pthread_getaffinity_np failed");
  }
  CpuSet out;
  for (int cpu = 0; cpu < CpuSet::kMaxCpus && cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(static_cast<std::size_t>(cpu), &set)) out.add(cpu);
  }
  return out;
}

int current_cpu() noexcept { return sched_getcpu(); }

}  // namespace weft
