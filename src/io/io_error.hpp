// Shared by src/io/*.cpp: the errors Reader and Writer throw, and the
// EINTR-retrying system calls they are built on.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>

namespace weft::detail {

// "weft::<who>: cannot <action> '<name>' (errno N)" + ": <strerror>".
std::system_error io_error(int err, std::string_view who, std::string_view action, std::string_view name);
[[noreturn]] void io_throw(int err, std::string_view who, std::string_view action, std::string_view name);

// open(2) with O_CLOEXEC, retrying EINTR; throws io_error on failure.
int io_open(const std::string& path, int flags, std::string_view who, std::string_view action);
// The name error messages use for an adopted descriptor without one.
std::string io_fd_name(int fd, std::string name);

}  // namespace weft::detail
