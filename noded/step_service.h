#pragma once
// noded's StepAgent service (step.proto, issue #4 trun): runs the tasks of a step the controller
// granted (StepGrants) and streams their output to trun.
//
// RunTasks: the munge credential is decoded (kUnauthenticated without a valid one); the grant
// for (job, step) is awaited up to kGrantWait (it may trail the controller's CreateStep answer);
// CheckStepAccess decides (PERMISSION_DENIED: no grant, or a caller that is neither the step's
// uid nor root); a step runs at most once per node (FAILED_PRECONDITION for a second RunTasks).
// The tasks (TaskSet) run as the grant's user, in the job's cgroup when this node has one for
// the job (the isolation file in the job's spool directory names it), with the environment of
// BuildTaskEnv. The call ends when every task has ended; a cancelled call stops the tasks
// (SIGTERM, KillWait, SIGKILL).
// SignalTasks: same authentication and access check; forwards the signal to the step's tasks
// running here (none running: OK, nothing happens).
// StopJob (agent loop: the job ended) cancels every running step of the job.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

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

  // Thread-safe: a StepGrant from the controller (agent stream).
  void Grant(const tessera::v1::StepGrant& grant) { grants_.Add(grant); }
  // Thread-safe: forgets the job's grants and cancels its running steps.
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
};

}  // namespace tessera::noded
