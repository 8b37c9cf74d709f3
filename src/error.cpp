#include "weft/error.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string_view>
#include <utility>

namespace weft {

namespace {

// relaxed everywhere: the handler is a plain function pointer; no data is
// published along with it.
std::atomic<ErrorHandler> g_handler{&print_error};

void write_line(std::string_view where, const char* what) noexcept {
  char separator[] = ": ";
  char newline[] = "\n";
  iovec parts[4] = {{const_cast<char*>(where.data()), where.size()},
                    {separator, 2},
                    {const_cast<char*>(what), std::strlen(what)},
                    {newline, 1}};
  (void)!::writev(STDERR_FILENO, parts, 4);
}

}  // namespace

void print_error(const UnhandledError& e) noexcept {
  if (!e.error) return write_line(e.where, "(no exception)");
  try {
    std::rethrow_exception(e.error);
  } catch (const std::exception& x) {
    write_line(e.where, x.what());
  } catch (...) {
    write_line(e.where, "an exception not derived from std::exception");
  }
}

ErrorHandler set_error_handler(ErrorHandler handler) noexcept {
  // relaxed: see g_handler.
  return g_handler.exchange(handler != nullptr ? handler : &print_error, std::memory_order_relaxed);
}

void report_error(std::string_view where, std::exception_ptr error) noexcept {
  // relaxed: see g_handler.
  g_handler.load(std::memory_order_relaxed)({where, std::move(error)});
}

}  // namespace weft
