#pragma once
// Workload traces for tessera-sim. Every reader returns jobs sorted by submit time, or an
// error naming "file:line: what is wrong".
//
//  - SWF (Parallel Workloads Archive, 18 blank-separated fields; ';' comments). One CPU per
//    requested processor (field 8, else field 5); requested time field 9 (-1: the run time is
//    used as a perfect estimate); user field 12 becomes "u<id>", group field 13 "g<id>" the
//    account, queue field 15 "q<id>" is ignored.
//  - CSV (GPU traces), header line required, columns in this order:
//      submit,runtime,req_time,gpus,cpus,mem_mib,nodes,user,account,partition,qos[,gpu_model]
//    submit/runtime/req_time in seconds (req_time 0 = runtime), gpus/cpus/mem_mib are totals
//    for the job, nodes = node count (0 or 1 = one node); empty partition/qos = defaults.
//  - openb (Alibaba cluster-trace-gpu-v2023 pod list): name,cpu_milli,memory_mib,num_gpu,
//    gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time. A pod is a
//    one-node job; fractional GPUs round up to one whole GPU; gpu_spec "A|B" becomes a
//    constraint over node features named after GPU models; qos becomes QoS and account
//    (lower-cased); runtime = deletion - scheduled (or creation) time.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::sim {

struct TraceJob {
  uint64_t id = 0;
  int64_t submit = 0;
  int64_t runtime = 0;
  int64_t req_time = 0;   // 0 = runtime
  uint32_t gpus = 0;      // total
  uint32_t cpus = 1;      // total
  uint64_t mem_mib = 0;   // total; 0 = proportional to CPUs
  uint32_t nodes = 0;     // 0/1 = one node
  std::string user, account, partition, qos, gpu_model, constraint;
  uint64_t gpu_mem_mib = 0;  // useful memory per GPU unit; 0 = from gpu_model (sim/mig.h)
};

Result<std::vector<TraceJob>> ReadSwf(const std::string& path);
Result<std::vector<TraceJob>> ReadCsv(const std::string& path);
Result<std::vector<TraceJob>> ReadOpenb(const std::string& path);
// Picks the reader by name ("swf", "csv", "openb") or, when empty, by extension/header.
Result<std::vector<TraceJob>> ReadTrace(const std::string& path, const std::string& format);

// tessera.conf text for the openb node list (sn,cpu_milli,memory_mib,gpu,model): one NodeName
// line per node with Features=<model>, a partition over all nodes and QoS lines for LS/BE/...
Result<std::string> OpenbNodesToConf(const std::string& node_csv);

}  // namespace tessera::sim
