#include "io_error.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace weft::detail {

std::system_error io_error(int err, std::string_view who, std::string_view action, std::string_view name) {
  std::string what;
  what.reserve(who.size() + action.size() + name.size() + 40);
  what.append("weft::").append(who).append(": cannot ").append(action).append(" '").append(name);
  what.append("' (errno ").append(std::to_string(err)).append(")");
  return std::system_error(err, std::generic_category(), what);
}

void io_throw(int err, std::string_view who, std::string_view action, std::string_view name) {
  throw io_error(err, who, action, name);
}

int io_open(const std::string& path, int flags, std::string_view who, std::string_view action) {
  for (;;) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EINTR) io_throw(errno, who, action, path);
  }
}

std::string io_fd_name(int fd, std::string name) {
  if (!name.empty()) return name;
  return "fd " + std::to_string(fd);
}

std::unique_ptr<std::byte[]> io_buffer(int fd, std::size_t size, std::string_view who, const std::string& name) {
  try {
    if (size == 0)
      throw std::invalid_argument("weft::" + std::string(who) + ": buffer size must be > 0 for '" + name + "'");
    return std::make_unique_for_overwrite<std::byte[]>(size);
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace weft::detail
