#pragma once
// Metrics of a simulated run and their presentation (text table, JSON, SVG).
//  - utilization: allocated GPU (CPU) seconds / (total GPUs (CPUs) x makespan); GPUs held whole
//  - GPU-memory utilization (MIG comparisons, sim/mig.h): useful GPU memory-seconds / (memory of
//    all GPUs x makespan); printed when the run knows the GPU memory
//  - wait = start - submit (mean, p50, p95, max) over started jobs
//  - bounded slowdown = max(1, (wait + run) / max(run, 10 s)), mean
//  - job completion time = end - submit, mean
//  - per-account share of the allocated GPU-seconds (CPU-seconds when the cluster has no GPUs)
//  - preemptions per mode (CANCEL, REQUEUE, SUSPEND; printed when any run preempted); a
//    suspended job's run time excludes its suspended time; a requeued job counts its last run
//  - makespan = last end - first submit; scheduler cycle time (mean, p99) in ms (wall clock)
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "sim/engine.h"

namespace tessera::sim {

struct Metrics {
  std::string label;
  size_t jobs = 0, started = 0, rejected = 0, never_started = 0;
  double gpu_util = 0, cpu_util = 0;
  double gpu_mem_util = -1;   // -1 = not measured
  uint64_t mig_reconfigs = 0;
  double wait_mean = 0, wait_p50 = 0, wait_p95 = 0, wait_max = 0;
  double bounded_slowdown = 0, jct_mean = 0;
  int64_t makespan = 0;
  double cycle_mean_ms = 0, cycle_p99_ms = 0;
  size_t cycles = 0;
  std::map<std::string, double> account_share;
  std::map<std::string, uint64_t> preemptions;  // issue 16 §4: victims per mode
};

Metrics Compute(const SimRun& run);
void PrintTable(std::ostream& out, const std::vector<Metrics>& runs);
void PrintJson(std::ostream& out, const std::vector<Metrics>& runs);
// Utilization (GPU, or CPU when there are no GPUs) and queue length over time, one panel per run.
void PrintSvg(std::ostream& out, const std::vector<SimRun>& runs);
// `--worst N` (issue 17 §2): the run's N started jobs with the longest waits, longest first
// (trace id, submit, wait, run time, time limit, GPUs, CPUs, nodes, account): who bears the max.
void PrintWorstWaits(std::ostream& out, const SimRun& run, size_t n);
// `--jobs-csv FILE` (issue 17 §2): one row per trace job and run, for analysis:
// config,trace_id,submit,start,end,wait,gpus,cpus,nodes (start/end/wait -1: never started;
// nodes: the node names it ran on, space-separated; `node_names` indexed as SimJob::nodes).
void PrintJobsCsv(std::ostream& out, const SimRun& run, const std::vector<std::string>& node_names,
                  bool header);

}  // namespace tessera::sim
