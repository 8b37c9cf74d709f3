// weft/weft.hpp — the umbrella header: every public layer of weft.
#pragma once

#include "weft/sync/cpu_relax.hpp"
#include "weft/sync/event.hpp"
#include "weft/sync/parker.hpp"
#include "weft/sync/wait_options.hpp"
#include "weft/topo/affinity.hpp"
#include "weft/topo/cpu_set.hpp"
#include "weft/topo/placement.hpp"
#include "weft/topo/topology.hpp"
