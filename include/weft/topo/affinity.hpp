/// @file
/// weft/topo/affinity.hpp — pin threads to CPUs, read where a thread runs.
///
/// Pinning to a CPU (or set) that is not in the process's allowed set
/// (process_allowed_cpus()) throws std::system_error(EINVAL) whose message
/// names the CPU(s) and the allowed set, e.g.
/// "weft: cannot pin to CPU 7: not in the allowed set 0-3". So does an empty
/// set. Pinning never silently narrows a request. If the kernel still refuses,
/// std::system_error carries its errno.
#pragma once

#include <thread>

#include "weft/topo/cpu_set.hpp"
#include "weft/topo/topology.hpp"

namespace weft {

///@{

/// Pins the calling thread to one CPU or a set.
void pin_this_thread(int cpu);
void pin_this_thread(const CpuSet& cpus);
///@}
///@{
/// Pins another thread, by its native handle (std::thread and std::jthread alike).
void pin_thread(std::thread& t, int cpu);
void pin_thread(std::thread& t, const CpuSet& cpus);
void pin_thread(std::jthread& t, int cpu);
void pin_thread(std::jthread& t, const CpuSet& cpus);
///@}

/// The CPUs the calling thread may run on now (its affinity mask): the one
/// place weft reads the mask; process_allowed_cpus() is its snapshot at load.
/// Throws std::system_error if the kernel refuses.
CpuSet this_thread_affinity();

/// The OS id of the CPU the calling thread is running on (sched_getcpu).
/// Only a hint unless the thread is pinned to one CPU; -1 if the kernel
/// cannot tell.
int current_cpu() noexcept;

}  // namespace weft
