#pragma once
// Set-up shared by the tessera-sim unit tests (sim_test, sim_preempt_test, sim_resv_test).
#include <cstdint>

#include "ctld/sched/snapshot.h"

namespace tessera::sched::testing {

// One node "n1" (4 CPUs, 4000 MiB, `gpus` a100 GPUs) in partition "p".
inline ClusterSnapshot SimOneNode(uint32_t gpus = 0) {
  ClusterSnapshot c;
  NodeSnap n;
  n.name = "n1";
  n.cpus_total = n.cpus_free = 4;
  n.mem_total = n.mem_free = 4000;
  n.partitions = {"p"};
  for (uint32_t i = 0; i < gpus; ++i) n.gpus.push_back({i, "a100", true, true});
  c.nodes = {n};
  c.partitions = {{"p", true, 0, -1, -1, 1}};
  return c;
}

}  // namespace tessera::sched::testing
