#pragma once
// The job cgroups of trun steps on the nodes of a job that do not run its batch step (issue 14:
// every node of a job gets its own allocation). On the batch node stepd makes the job's cgroup
// (job.<id>/isolation); on every other node the first StepGrant that carries this node's
// allocation makes one here: the same plan as a batch job's (IsolationPlanner: cores from the
// node's core map, memory, devices = the standard set + only the allocated GPUs (+ the shared
// NVIDIA devices) + the RDMA devices when HCAs are chosen), same name scheme
// (`tessera/<node>-<spool hash>/job_<id>`). The step's tasks are put into it (TaskSet).
//
// Invariants:
//  - At most one cgroup per job here; later grants of the job reuse it.
//  - Nothing is made where the job has a batch isolation file (the batch node) or where the
//    grant carries no allocation (an older ctld); Find then reads the batch file.
//  - End (the job ended here: SignalJob cancel, FinishedAck, kill_jobs) returns the cores to the
//    planner and marks the job ended; its cgroup is killed (KillAll) and removed by Remove once
//    no step of the job runs any more (the caller decides when; Remove of a job that has not
//    ended does nothing).
//  - Memory only: a noded restart forgets them (its grants too); a stale cgroup of the same
//    name is killed and recreated by the next Create (CgroupManager contract).
// Thread-safety: Prepare and End on the agent thread (they use the planner, which JobManager
// uses on that thread too); Find and Remove on any thread.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "noded/job_isolation.h"
#include "tessera/v1/agent.pb.h"

namespace tessera::noded {

class StepCgroups {
 public:
  using LogFn = std::function<void(const std::string&)>;
  // `planner` null: no isolation for steps (Find still reads batch isolation files).
  StepCgroups(IsolationPlanner* planner, std::string spool_root, LogFn log);

  // Makes the job's isolation here for `grant` (see above). A cgroup that cannot be created is
  // logged; the tasks then run without one (HCAs still chosen).
  void Prepare(const tessera::v1::StepGrant& grant);
  // The job's isolation on this node: the one Prepare made, else the batch step's file; nullopt
  // when there is none.
  std::optional<JobIsolation> Find(uint64_t job) const;
  void End(uint64_t job);
  void Remove(uint64_t job);

 private:
  struct Entry {
    JobIsolation iso;
    bool ended = false;
  };
  std::string BatchFile(uint64_t job) const;

  IsolationPlanner* planner_;
  std::string spool_root_;
  LogFn log_;
  mutable std::mutex mu_;
  std::map<uint64_t, Entry> jobs_;
};

}  // namespace tessera::noded
