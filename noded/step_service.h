#pragma once
// noded's StepAgent service (step.proto, issue #4 trun): runs the tasks of a step the controller
// granted (StepGrants) and streams their output to trun.
//
// RunTasks: the munge credential is decoded (kUnauthenticated without a valid one); the grant
// for (job, step) is awaited up to kGrantWait (it may trail the controller's CreateStep answer);
// CheckStepAccess decides (PERMISSION_DENIED: no grant, or a caller that is neither the step's
// uid nor root); a step runs at most once per node (FAILED_PRECONDITION for a second RunTasks).
// The tasks (TaskSet) run as the grant's user, in the job's cgroup on this node (the batch
// step's, named by the isolation file in the job's spool directory, or on the job's other nodes
// the one StepCgroups made when the grant arrived), with the environment of BuildTaskEnv (this
// node's GPUs from grant.alloc and opts.gpu_uuids, the HCAs of the job's isolation here). The
// call ends when every task has ended; a cancelled call stops the tasks (SIGTERM, KillWait,
// SIGKILL).
// SignalTasks: same authentication and access check; forwards the signal to the step's tasks
// running here (none running: OK, nothing happens).
// StopJob (agent loop: the job ended) cancels every running step of the job; a step cgroup of
// the job here is removed when the last of them has ended.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "noded/step_cgroups.h"
#include "noded/step_grants.h"
#include "noded/task_set.h"
#include "rpc/munge_codec.h"
#include "tessera/v1/step.grpc.pb.h"

namespace tessera::noded {

struct StepServiceOptions {
  std::string node_name;
  std::string spool_root;          // "<spool>": job.<id>/isolation is read from it
  int64_t kill_wait_s = 30;
  std::chrono::milliseconds grant_wait{5000};
  std::vector<std::string> gpu_uuids;  // this node's GPUs by index (CUDA_VISIBLE_DEVICES)
  std::vector<uint64_t> gpu_memory_mib;  // by index: mps steps' memory limit (CompleteMpsLimits)
  IsolationPlanner* planner = nullptr;  // job cgroups for steps on non-batch nodes (agent thread)
};

class StepService final : public tessera::v1::StepAgent::Service {
 public:
  using LogFn = std::function<void(const std::string&)>;
  StepService(StepServiceOptions opts, StepGrants& grants, const rpc::CredentialCodec& codec,
              LogFn log);

  grpc::Status RunTasks(grpc::ServerContext* ctx, const tessera::v1::RunTasksRequest* req,
                        grpc::ServerWriter<tessera::v1::TaskOutput>* writer) override;
  grpc::Status SignalTasks(grpc::ServerContext* ctx, const tessera::v1::SignalTasksRequest* req,
                           tessera::v1::SignalTasksResponse* resp) override;

  // Agent thread: a StepGrant from the controller. On a node without the job's batch step the
  // job's cgroup here is made first (StepCgroups), then the grant is published.
  void Grant(const tessera::v1::StepGrant& grant) {
    cgroups_.Prepare(grant);
    grants_.Add(grant);
  }
  // Agent thread: forgets the job's grants and cancels its running steps; the job's step
  // cgroup here (if any) is removed once its last step has ended.
  void StopJob(uint64_t job_id);
  size_t RunningSteps() const;

 private:
  // The grant after authentication and the access check.
  Result<tessera::v1::StepGrant> Authorize(const grpc::ServerContext& ctx, uint64_t job_id,
                                           uint32_t step_id, std::chrono::milliseconds wait);
  Result<TaskPlan> MakePlan(const tessera::v1::RunTasksRequest& req,
                            const tessera::v1::StepGrant& grant);

  StepServiceOptions opts_;
  StepGrants& grants_;
  const rpc::CredentialCodec& codec_;
  LogFn log_;
  mutable std::mutex mu_;
  std::map<StepKey, TaskSet*> running_;
  StepCgroups cgroups_;
};

}  // namespace tessera::noded
