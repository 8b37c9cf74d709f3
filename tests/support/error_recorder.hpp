// Installs a recording weft error handler (weft/error.hpp) for one scope
// and puts the previous handler back at the end of it.
#pragma once

#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "weft/error.hpp"

namespace weft::test {

class ErrorRecorder {
 public:
  struct Entry {
    std::string where;
    std::string what;
    int code = 0;  // the errno of a std::system_error, else 0
  };

  ErrorRecorder() {
    {
      std::lock_guard lock(mutex());
      active() = this;
    }
    previous_ = weft::set_error_handler(&record);
  }
  ErrorRecorder(const ErrorRecorder&) = delete;
  ErrorRecorder& operator=(const ErrorRecorder&) = delete;
  ~ErrorRecorder() {
    weft::set_error_handler(previous_);
    std::lock_guard lock(mutex());
    active() = nullptr;
  }

  std::vector<Entry> entries() const {
    std::lock_guard lock(mutex());
    return entries_;
  }

 private:
  static void record(const weft::UnhandledError& e) noexcept {
    Entry entry{std::string(e.where), "", 0};
    try {
      std::rethrow_exception(e.error);
    } catch (const std::system_error& x) {
      entry.what = x.what();
      entry.code = x.code().value();
    } catch (const std::exception& x) {
      entry.what = x.what();
    } catch (...) {
      entry.what = "(not a std::exception)";
    }
    std::lock_guard lock(mutex());
    if (active() != nullptr) active()->entries_.push_back(std::move(entry));
  }
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static ErrorRecorder*& active() {
    static ErrorRecorder* r = nullptr;
    return r;
  }

  weft::ErrorHandler previous_ = nullptr;
  std::vector<Entry> entries_;
};

}  // namespace weft::test
