// weft/weft.hpp — the umbrella header: every public layer of weft.
#pragma once

#include "weft/exec/future.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/io/reader.hpp"
#include "weft/io/writer.hpp"
#include "weft/mem/pool_allocator.hpp"
#include "weft/mem/pool_resource.hpp"
#include "weft/sync/cpu_relax.hpp"
#include "weft/sync/event.hpp"
#include "weft/sync/parker.hpp"
#include "weft/sync/wait_options.hpp"
#include "weft/topo/affinity.hpp"
#include "weft/topo/cpu_set.hpp"
#include "weft/topo/placement.hpp"
#include "weft/topo/topology.hpp"
