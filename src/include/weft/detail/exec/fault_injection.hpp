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

// Called by a push from a thread outside the pool just before it takes its
// injection deque. A test that throws from it (std::bad_alloc, or the
// std::system_error a failed mutex gives) sees what a real failure to set
// up that deque does. Null, and one relaxed load per outside push, in
// normal use.
using InjectorHook = void (*)();
extern std::atomic<InjectorHook> g_injector_hook;

// Called by a work-stealing deque just before it grows (doubles its
// array). A test that throws std::bad_alloc from it sees what a real
// failure to grow does: the push that needed the room throws, its task not
// queued. Null, and one relaxed load per growth, in normal use.
using DequeGrowHook = void (*)();
extern std::atomic<DequeGrowHook> g_deque_grow_hook;

// While true, weft::AsyncFile's io_uring rings keep the kernel's eventfd
// signals off, as if every signal were lost in the window the submitters'
// toggling leaves (src/aio/async_file.cpp): a completion that the
// submitting thread does not take itself is then delivered only by the
// completion thread's sweep. False, and a relaxed load each time a ring
// turns its signals off or on (twice a drain), in normal use.
extern std::atomic<bool> g_aio_signals_lost;

}  // namespace weft::detail
