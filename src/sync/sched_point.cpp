#include "weft/detail/sched_point.hpp"

#if defined(WEFT_SCHED_POINTS)
namespace weft::detail {
SchedHook g_sched_hook = nullptr;
}  // namespace weft::detail
#endif
