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
// MPS (issue 14): a grant whose allocation here asks MPS (an mps job, on any of its nodes) makes
// the job's steps a user of that GPU's MPS control daemon before the grant is published
// (MpsServers::PrepareStep: started on first use); the tasks get its CUDA_MPS_PIPE_DIRECTORY /
// CUDA_MPS_LOG_DIRECTORY with the job's limits; the job's steps stop using it (ReleaseStep: the
// daemon stops after its last user) when the job has left the node and its last step here has
// ended. A daemon that does not start fails the job's steps here (FAILED_PRECONDITION with the
// reason) instead of running them without MPS.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "noded/mps_control.h"
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
  MpsServers* mps = nullptr;            // MPS daemons of mps steps (null: steps get no MPS)
};

// RunTasksRequest.task_input's value for a task whose stdin is trun's (issue 19, h19 s7: srun
// -i all | -i TASKID): a pipe fed by SendInput (TaskPlan::Task::forward_stdin). Any other value
// is a file (an absolute path). trun's twin: cli/lib/trun_stdin.h kForwardedInput.
inline constexpr char kForwardedStdin[] = "-";

class StepService final : public tessera::v1::StepAgent::Service {
 public:
  using LogFn = std::function<void(const std::string&)>;
  StepService(StepServiceOptions opts, StepGrants& grants, const rpc::CredentialCodec& codec,
              LogFn log);

  grpc::Status RunTasks(grpc::ServerContext* ctx, const tessera::v1::RunTasksRequest* req,
                        grpc::ServerWriter<tessera::v1::TaskOutput>* writer) override;
  // Issue 19 (h19, sstat): the live usage of this node's tasks of a running step; the grant's
  // user or root (as SignalTasks). An unknown or ended step answers an empty usage.
  grpc::Status GetStepUsage(grpc::ServerContext* ctx, const tessera::v1::GetStepUsageRequest* req,
                            tessera::v1::GetStepUsageResponse* resp) override;
  grpc::Status SignalTasks(grpc::ServerContext* ctx, const tessera::v1::SignalTasksRequest* req,
                           tessera::v1::SignalTasksResponse* resp) override;
  // Issue 19 (h19, sattach): a copy of this node's tasks' output of a running step from now on,
  // until they have all ended here (or the caller goes); the grant's user or root. A step not
  // running here: NOT_FOUND.
  grpc::Status AttachTasks(grpc::ServerContext* ctx, const tessera::v1::AttachTasksRequest* req,
                           grpc::ServerWriter<tessera::v1::TaskOutput>* writer) override;
  // Issue 19 (h19 s6, --pty / --mpi=pmi2; h19 s7, -i all|N): trun's input for a step running
  // here (TaskSet::Input for each message; a message a task is not ready to take is retried
  // every 20 ms, which holds trun back). The first message names the step; its RunTasks may
  // trail by up to grant_wait. Every message must name the same step (INVALID_ARGUMENT). The
  // step's user or root.
  grpc::Status SendInput(grpc::ServerContext* ctx,
                         grpc::ServerReader<tessera::v1::StepInput>* reader,
                         tessera::v1::SendInputResponse* resp) override;

  // Agent thread: a StepGrant from the controller. On a node without the job's batch step the
  // job's cgroup here is made first (StepCgroups), then the grant is published.
  void Grant(const tessera::v1::StepGrant& grant) {
    cgroups_.Prepare(grant);
    PrepareMps(grant);
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
  void PrepareMps(const tessera::v1::StepGrant& grant);
  // The job's steps here are over (ended, none running): its cgroup and MPS use go. Not under mu_.
  void JobGone(uint64_t job_id);

  StepServiceOptions opts_;
  StepGrants& grants_;
  const rpc::CredentialCodec& codec_;
  LogFn log_;
  mutable std::mutex mu_;
  std::map<StepKey, TaskSet*> running_;
  std::map<uint64_t, std::string> mps_errors_;  // job -> why its MPS daemon did not start
  std::set<uint64_t> ended_;  // jobs that ended here while steps still ran (StopJob)
  StepCgroups cgroups_;
};

}  // namespace tessera::noded
