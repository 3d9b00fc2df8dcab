#pragma once
// The discrete-event replay. Events are submissions and job ends; after the events of one
// instant are applied, one scheduling cycle runs: a ClusterSnapshot is built from the live
// nodes, the pending queue and the running jobs (with their expected end = start + time limit)
// and handed to the same tessera_sched RunCycle ctld calls. Starts are applied at once; a job
// ends at start + min(runtime, time limit) (preemption: sim/preempt.h). Virtual time only; the one wall-clock reading is the
// cycle-time measurement, which never feeds back into decisions, so schedules are reproducible.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ctld/sched/scheduler.h"
#include "sim/trace.h"

namespace tessera::sim {

struct SimJob {
  TraceJob trace;
  sched::JobSnap snap;
  int64_t start = -1;     // -1 = never started
  int64_t end = -1;
  uint32_t gpus = 0, cpus = 0;  // allocated (whole GPUs; MIG instances count in gpu_mem_mib)
  uint64_t gpu_mem_mib = 0;     // useful GPU memory while running (sim/mig.h)
  std::string rejected;   // CheckSatisfiable's message when rejected at submit
  std::vector<uint32_t> nodes;  // issue 15: the nodes it ran on (index in the cluster's nodes)
  // Issue 16 §4 (sim/preempt.h): the mode of its last preemption ("" = none), its requeues and
  // its suspended seconds (its end was pushed by them).
  std::string preempted;
  uint32_t requeues = 0;
  int64_t suspended_s = 0;
};

struct Sample {
  int64_t t = 0;
  double gpu_util = 0, cpu_util = 0;
  size_t queued = 0;
  double gpu_mem_util = 0;
};

struct SimRun {
  std::string label;
  std::vector<SimJob> jobs;
  std::vector<Sample> samples;
  std::vector<double> cycle_ms;
  int64_t total_gpus = 0, total_cpus = 0;  // physical GPUs (a GPU cut into MIG counts once)
  uint64_t total_gpu_mem_mib = 0;
  uint64_t mig_reconfigs = 0;
  int64_t first_submit = 0, last_end = 0;
  std::string error;      // a cycle failed (bad configuration)
  // issue 16 §2 (queues, h16q): per cycle with queues on, each account's guarantee, deserved
  // share (CycleResult::queues) and allocation after the cycle's starts (with its children's)
  // in GPU units (CPUs when the cluster has no GPUs); guarantee -1 = none.
  struct QueueSample {
    int64_t t = 0;
    std::vector<std::string> accounts;
    std::vector<int64_t> guarantee, deserved, allocated;
  };
  std::vector<QueueSample> queue_samples;
  std::map<std::string, uint64_t> preemptions;  // issue 16 §4: victims per mode (CANCEL, ...)
};

// `cluster` holds nodes, partitions and the topology (no jobs); every cycle's snapshot gets the
// cluster's topology (null = flat). The default partition gets jobs that name none.
// `gpu_mem_mib`: the memory of one whole GPU, for GPU-memory utilization (0 = not measured).
// MIG: placements on instances mark them busy; CycleResult::mig_reconfigs take the GPU out of
// scheduling for SchedConfig::mig_reconfig_seconds, then its new instances are schedulable.
// A multi-node trace job (totals over `nodes` nodes, one task per node) as task groups: the
// first total % nodes tasks get one unit more of each dimension, so a 20-GPU job over 3 nodes
// asks 7 + 7 + 6 GPUs (never 3 x 6). At least one CPU per task.
std::vector<sched::GroupReq> SpreadOverNodes(const TraceJob& t, uint32_t nodes);

SimRun Simulate(const sched::ClusterSnapshot& cluster, const std::string& default_partition,
                const sched::SchedConfig& cfg, const std::vector<TraceJob>& trace,
                const std::string& label, uint64_t gpu_mem_mib = 0);

}  // namespace tessera::sim
