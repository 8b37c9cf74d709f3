/// @file
/// weft/error.hpp — where an error goes when nobody can be told of it.
///
/// Some failures happen where no caller is left to throw to: a Writer's
/// destructor whose final flush fails, a ThreadPool destroyed while a
/// post()ed task's exception was never rethrown by wait_idle(), a TaskGroup
/// destroyed with an exception nobody wait()ed for. weft drops none of them:
/// each goes to one process-wide handler.
///
///   weft::set_error_handler([](const weft::UnhandledError& e) noexcept {
///     log_somewhere(e.where, e.error);   // or count it, or std::abort()
///   });
///
/// The default handler writes one line to stderr, "<where>: <what()>", e.g.
///   "weft::Writer destroyed with an unreported failure: weft::Writer: cannot
///    write '/dev/full' (errno 28): No space left on device"
///
/// Contract
/// - The handler runs on the thread whose destructor met the error, possibly
///   on several threads at once, and inside a destructor: it must not throw
///   (the type says noexcept) and should return quickly.
/// - set_error_handler() may be called from any thread at any time; a
///   destructor running concurrently uses either the old or the new handler.
///   A handler may still be running after it was replaced.
/// - `where` and `error` are valid only during the call.
#pragma once

#include <exception>
#include <string_view>

namespace weft {

/// An error weft met where it could not throw it: what the handler gets.
struct UnhandledError {
  std::string_view where;    ///< who met it and why it could not be thrown
  std::exception_ptr error;  ///< what happened; never null
};

/// Called with each error weft cannot throw (set_error_handler()).
using ErrorHandler = void (*)(const UnhandledError& e) noexcept;

/// The default: one line on stderr, written with a single system call so
/// that it is not interleaved with other output, and without allocating.
void print_error(const UnhandledError& e) noexcept;

/// Installs `handler` (nullptr: print_error); returns the one it replaces.
ErrorHandler set_error_handler(ErrorHandler handler) noexcept;

/// Hands an error to the installed handler. weft's destructors call it; so
/// may a user's own, to send their errors the same way.
void report_error(std::string_view where, std::exception_ptr error) noexcept;

}  // namespace weft
