#include "native_thread.hpp"

#include <limits.h>
#include <unistd.h>

#include <cassert>
#include <memory>
#include <string>
#include <system_error>

namespace weft::detail {

namespace {
void* thread_entry(void* arg) {
  const std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(arg));
  (*fn)();
  return nullptr;
}

// pthread_attr_t owned for one start().
struct Attr {
  pthread_attr_t a;
  Attr() {
    if (const int rc = pthread_attr_init(&a); rc != 0)
      throw std::system_error(rc, std::generic_category(), "weft: pthread_attr_init failed");
  }
  ~Attr() { pthread_attr_destroy(&a); }
  Attr(const Attr&) = delete;
  Attr& operator=(const Attr&) = delete;
};
}  // namespace

std::size_t min_stack_size() noexcept { return static_cast<std::size_t>(PTHREAD_STACK_MIN); }

NativeThread::~NativeThread() { assert(!started_ && "a NativeThread must be joined before it is destroyed"); }

void NativeThread::start(std::size_t stack_size, std::function<void()> fn) {
  Attr attr;
  if (stack_size != 0) {
    // Whole pages: glibc refuses a size that is not a multiple of one on some targets.
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t size = (stack_size + page - 1) / page * page;
    if (const int rc = pthread_attr_setstacksize(&attr.a, size); rc != 0)
      throw std::system_error(rc, std::generic_category(),
                              "weft: a worker stack of " + std::to_string(stack_size) + " bytes is not allowed");
  }
  auto owned = std::make_unique<std::function<void()>>(std::move(fn));
  if (const int rc = pthread_create(&handle_, &attr.a, &thread_entry, owned.get()); rc != 0) {
    throw std::system_error(rc, std::generic_category(),
                            stack_size != 0 ? "weft: pthread_create with a " + std::to_string(stack_size) +
                                                  "-byte stack failed"
                                            : std::string("weft: pthread_create failed"));
  }
  owned.release();  // the thread owns it now
  started_ = true;
}

void NativeThread::join() {
  if (!started_) return;
  pthread_join(handle_, nullptr);
  started_ = false;
}

}  // namespace weft::detail
