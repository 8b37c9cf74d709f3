// weft/detail/exec/fault_injection.hpp — seams through which tests make the
// system fail where it rarely does.
#pragma once

#include <atomic>

namespace weft::detail {

// Called by ThreadPool's constructor just before it starts worker `index`.
// A test that throws from it (e.g. std::system_error(EAGAIN), what a failed
// pthread_create gives) sees exactly what a real thread-creation failure
// does. Null, and one relaxed load per worker started, in normal use.
using WorkerStartHook = void (*)(int index);
extern std::atomic<WorkerStartHook> g_worker_start_hook;

}  // namespace weft::detail
