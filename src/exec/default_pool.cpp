#include "weft/exec/default_pool.hpp"

namespace weft {

ThreadPool& default_pool() {
  // Leaked on purpose: never destroyed, see the header for why.
  static ThreadPool* const pool = new ThreadPool();
  return *pool;
}

}  // namespace weft
