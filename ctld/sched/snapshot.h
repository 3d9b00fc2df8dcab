#pragma once
// The scheduler's input: an immutable picture of the cluster at `now`.
// Built by ctld's sched_bridge from live state (and by tessera-sim from a trace).
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::sched {

struct GpuSnap {
  uint32_t index = 0;
  std::string model;
  bool free = true;
  bool healthy = true;
};

struct NodeSnap {
  std::string name;
  bool schedulable = true;     // up, registered, not draining
  uint32_t cpus_total = 0;
  uint32_t cpus_free = 0;
  uint64_t mem_total = 0;      // MiB
  uint64_t mem_free = 0;
  bool idle = true;            // nothing allocated (for --exclusive)
  std::vector<GpuSnap> gpus;
  std::vector<std::string> partitions;
  std::vector<std::string> features;
};

struct Req {
  uint32_t cpus = 0;
  uint64_t mem_mib = 0;
  uint32_t gpus = 0;
  std::string gpu_model;  // "" = any
};

struct GroupReq {
  std::string name;
  uint32_t count = 1;
  Req per_task;
  uint32_t tasks_per_node = 0;  // maximum per node; 0 = no limit
  Req per_node;
};

struct JobSnap {
  uint64_t id = 0;
  std::string partition;
  int64_t priority = 0;        // higher first
  int64_t submit_time = 0;
  std::vector<GroupReq> groups;
  uint32_t nodes_min = 0;
  uint32_t nodes_max = 0;      // 0 = unlimited
  bool exclusive = false;
  std::vector<std::string> nodelist;  // required nodes
  std::vector<std::string> exclude;
  int64_t begin_time = 0;
};

struct PartitionSnap {
  std::string name;
  bool up = true;
  uint32_t max_nodes = 0;
};

struct ClusterSnapshot {
  int64_t now = 0;
  std::vector<NodeSnap> nodes;
  std::vector<PartitionSnap> partitions;
  std::vector<JobSnap> pending;   // eligible to be considered (not held)
};

}  // namespace tessera::sched
