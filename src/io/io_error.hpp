// Shared by src/io/*.cpp: the errors Reader and Writer throw, and the
// EINTR-retrying system calls they are built on.
#pragma once

#include <cstddef>
#include <memory>
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

// The buffer of a Reader or Writer being built on descriptor `fd`: on a size
// of 0 (std::invalid_argument naming the file) or a failed allocation, `fd`
// is closed before the exception leaves, so the constructor that throws
// (leaving no object to close it) leaks no descriptor.
std::unique_ptr<std::byte[]> io_buffer(int fd, std::size_t size, std::string_view who, const std::string& name);

}  // namespace weft::detail
