#include "noded/step_service.h"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <thread>
#include <vector>

#include "common/file_io.h"
#include "common/gpu_bind.h"
#include "noded/job_isolation.h"
#include "noded/task_env.h"
#include "rpc/grpc_util.h"

namespace tessera::noded {

namespace v1 = tessera::v1;

namespace {

std::string StepName(uint64_t job, uint32_t step) {
  return std::to_string(job) + "." + std::to_string(step);
}

// The job's cgroup on this node (its batch step's, or the step cgroup of another node).
std::unique_ptr<CgroupManager> JobCgroup(const std::optional<JobIsolation>& iso,
                                         std::string* name) {
  if (!iso || iso->cgroup_root.empty()) return nullptr;
  auto cg = MakeCgroupManager(DetectCgroupsOnHost(iso->cgroup_root));
  if (!cg || !cg->Procs(iso->cgroup.name).ok()) return nullptr;
  *name = iso->cgroup.name;
  return cg;
}

}  // namespace

StepService::StepService(StepServiceOptions opts, StepGrants& grants,
                         const rpc::CredentialCodec& codec, LogFn log)
    : opts_(std::move(opts)),
      grants_(grants),
      codec_(codec),
      log_(log),
      cgroups_(opts_.planner, opts_.spool_root, log) {}

Result<v1::StepGrant> StepService::Authorize(const grpc::ServerContext& ctx, uint64_t job_id,
                                             uint32_t step_id, std::chrono::milliseconds wait) {
  auto id = rpc::Authenticate(codec_, ctx);
  if (!id.ok()) return id.status();
  auto grant = grants_.Wait(job_id, step_id, wait);
  Status st = CheckStepAccess(grant ? &*grant : nullptr, job_id, step_id, id->uid,
                              opts_.node_name);
  if (!st.ok()) {
    if (log_) log_("step " + StepName(job_id, step_id) + ": refused: " + st.message());
    return st;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto e = mps_errors_.find(job_id);
    if (e != mps_errors_.end())
      return FailedPrecondition("node " + opts_.node_name + ": step " + StepName(job_id, step_id) +
                                " asks MPS: " + e->second);
  }
  v1::StepGrant out = *grant;
  if (out.has_alloc()) CompleteMpsLimits(out.mutable_alloc(), opts_.gpu_memory_mib);
  return out;
}

Result<TaskPlan> StepService::MakePlan(const v1::RunTasksRequest& req, const v1::StepGrant& g) {
  if (req.argv_size() == 0 || req.argv(0).empty())
    return InvalidArgument("RunTasks for step " + StepName(req.job_id(), req.step_id()) +
                           ": argv is empty (no command to run)");
  TaskPlan plan;
  passwd pwd{}, *pw = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(g.uid(), &pwd, buf.data(), buf.size(), &pw) != 0 || !pw)
    return FailedPrecondition("unknown uid " + std::to_string(g.uid()) + " (user '" + g.user() +
                              "') on node " + opts_.node_name);
  plan.uid = g.uid();
  plan.gid = g.gid() != 0 || g.uid() == 0 ? g.gid() : pw->pw_gid;  // gid 0 = not filled in
  if (::geteuid() == 0) {
    auto groups = UserGroups(pw->pw_name, plan.gid);
    if (!groups.ok()) return groups.status();
    plan.groups = *groups;
  }
  plan.cwd = req.cwd();
  plan.argv.assign(req.argv().begin(), req.argv().end());
  plan.kill_wait_ms = opts_.kill_wait_s * 1000;
  plan.pty = req.pty();  // issue 19 (h19 s6): rank 0 on a terminal
  plan.pty_rows = static_cast<uint16_t>(std::min<uint32_t>(req.pty_rows(), 0xffff));
  plan.pty_cols = static_cast<uint16_t>(std::min<uint32_t>(req.pty_cols(), 0xffff));
  if (req.mpi() == "pmi2") {  // issue 19 (h19 s6): a PMI-2 server for the tasks here
    Pmi2Server::Options pmi;
    pmi.size = g.ntasks();
    pmi.jobid = StepName(req.job_id(), req.step_id());
    pmi.process_mapping = req.pmi_process_mapping();
    pmi.local_ranks.assign(g.ranks().begin(), g.ranks().end());
    plan.pmi = std::move(pmi);
  } else if (!req.mpi().empty() && req.mpi() != "none") {
    return InvalidArgument("RunTasks for step " + StepName(req.job_id(), req.step_id()) +
                           ": unknown MPI type \"" + req.mpi() + "\" (pmi2 or none)");
  }
  if (auto b = req.env().find(kTrunGpuBindEnv); b != req.env().end()) {  // issue 19 (h19 s7)
    auto bind = ParseGpuBind(b->second);
    if (!bind.ok())
      return InvalidArgument("RunTasks for step " + StepName(req.job_id(), req.step_id()) + ": " +
                             bind.status().message());
  }
  NodeFacts node;
  node.node_name = opts_.node_name;
  node.gpu_uuids = opts_.gpu_uuids;
  if (auto iso = cgroups_.Find(g.job_id())) {
    node.hcas = iso->hcas;
    node.netdevs = iso->netdevs;
  }
  if (opts_.mps && g.has_alloc() && MpsServers::StepWants(g.alloc())) {
    MpsDirs dirs = opts_.mps->DirsFor(g.alloc().gpu_indices(0));
    node.mps_pipe = dirs.pipe;
    node.mps_log = dirs.log;
  }
  for (int i = 0; i < g.ranks_size(); ++i) {
    TaskPlan::Task t;
    t.rank = g.ranks(i);
    t.env = EnvToStrings(BuildTaskEnv(req, g, static_cast<uint32_t>(i), node));
    auto in = req.task_input().find(t.rank);  // trun -i (issue 19)
    if (in != req.task_input().end() && in->second == kForwardedStdin) {
      t.forward_stdin = true;  // h19 s7: -i all|N, fed by SendInput
    } else if (in != req.task_input().end()) {
      if (in->second.empty() || in->second[0] != '/')
        return InvalidArgument("RunTasks for step " + StepName(req.job_id(), req.step_id()) +
                               ": the input file of task " + std::to_string(t.rank) +
                               " must be an absolute path");
      t.input = in->second;
    }
    plan.tasks.push_back(std::move(t));
  }
  return plan;
}

grpc::Status StepService::RunTasks(grpc::ServerContext* ctx, const v1::RunTasksRequest* req,
                                   grpc::ServerWriter<v1::TaskOutput>* writer) {
  std::string step = StepName(req->job_id(), req->step_id());
  auto grant = Authorize(*ctx, req->job_id(), req->step_id(), opts_.grant_wait);
  if (!grant.ok()) return rpc::ToGrpc(grant.status());
  auto plan = MakePlan(*req, *grant);
  if (!plan.ok()) return rpc::ToGrpc(plan.status());
  if (!grants_.Claim(req->job_id(), req->step_id()))
    return rpc::ToGrpc(FailedPrecondition("step " + step + " was already started on node " +
                                          opts_.node_name));
  std::string cg_name;
  auto iso = cgroups_.Find(req->job_id());
  auto cgroup = JobCgroup(iso, &cg_name);
  std::unique_ptr<TaskUsageCgroups> usage;
  if (cgroup) {
    plan->cgroup = cgroup.get();
    plan->cgroup_name = cg_name;
    usage = std::make_unique<TaskUsageCgroups>(DetectCgroupsOnHost(iso->cgroup_root));
    plan->usage = usage.get();
  }
  plan->usage_step = "step_" + std::to_string(req->step_id());
  plan->node_name = opts_.node_name;
  TaskSet tasks(std::move(*plan), log_);
  if (Status st = tasks.Start(); !st.ok()) {
    if (log_) log_("step " + step + ": cannot start the tasks: " + st.message());
    return rpc::ToGrpc(Status(st.code(), "node " + opts_.node_name +
                                             ": cannot start the tasks of step " + step + ": " +
                                             st.message()));
  }
  StepKey key{req->job_id(), req->step_id()};
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_[key] = &tasks;
  }
  if (log_) log_("step " + step + ": started " + std::to_string(grant->ranks_size()) +
                 " task(s) as uid " + std::to_string(grant->uid()) +
                 (cgroup ? " in cgroup " + cg_name : ""));
  tasks.Run([&](const v1::TaskOutput& m) { return writer->Write(m); },
            [&] { return ctx->IsCancelled(); });
  bool last = true;  // of the job's steps running here
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_.erase(key);
    for (const auto& [k, t] : running_) last = last && k.first != req->job_id();
  }
  bool gone = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    gone = last && ended_.erase(req->job_id()) > 0;
  }
  if (log_) log_("step " + step + ": tasks ended");
  if (last) cgroups_.Remove(req->job_id());  // only once the job ended (StopJob)
  if (gone) JobGone(req->job_id());
  return grpc::Status::OK;
}

grpc::Status StepService::SignalTasks(grpc::ServerContext* ctx,
                                      const v1::SignalTasksRequest* req,
                                      v1::SignalTasksResponse*) {
  if (req->signal() <= 0 || req->signal() >= NSIG)
    return rpc::ToGrpc(InvalidArgument("invalid signal number " + std::to_string(req->signal())));
  auto grant = Authorize(*ctx, req->job_id(), req->step_id(), std::chrono::milliseconds(0));
  if (!grant.ok()) return rpc::ToGrpc(grant.status());
  std::lock_guard<std::mutex> lock(mu_);
  auto it = running_.find({req->job_id(), req->step_id()});
  if (it != running_.end()) it->second->Signal(req->signal());
  return grpc::Status::OK;
}

// Issue 19 (h19, sattach).
grpc::Status StepService::AttachTasks(grpc::ServerContext* ctx,
                                      const v1::AttachTasksRequest* req,
                                      grpc::ServerWriter<v1::TaskOutput>* writer) {
  auto grant = Authorize(*ctx, req->job_id(), req->step_id(), std::chrono::milliseconds(0));
  if (!grant.ok()) return rpc::ToGrpc(grant.status());
  std::shared_ptr<TaskSet::Attached> att;
  TaskSet* tasks = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = running_.find({req->job_id(), req->step_id()});
    if (it != running_.end()) tasks = it->second, att = tasks->Attach();
  }
  if (!att)
    return rpc::ToGrpc(NotFound("step " + StepName(req->job_id(), req->step_id()) +
                                " runs no tasks on node " + opts_.node_name));
  bool ended = false;
  while (!ended && !ctx->IsCancelled()) {
    auto m = att->Next(200, &ended);
    if (m && !writer->Write(*m)) break;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);  // the set outlives this only while it runs
    auto it = running_.find({req->job_id(), req->step_id()});
    if (it != running_.end() && it->second == tasks) tasks->Detach(att);
  }
  return grpc::Status::OK;
}

// Issue 19 (h19 s6, --pty, --mpi=pmi2).
grpc::Status StepService::SendInput(grpc::ServerContext* ctx,
                                    grpc::ServerReader<v1::StepInput>* reader,
                                    v1::SendInputResponse*) {
  v1::StepInput in;
  if (!reader->Read(&in)) return grpc::Status::OK;
  auto grant = Authorize(*ctx, in.job_id(), in.step_id(), opts_.grant_wait);
  if (!grant.ok()) return rpc::ToGrpc(grant.status());
  const StepKey key{in.job_id(), in.step_id()};
  std::string step = StepName(in.job_id(), in.step_id());
  // Its RunTasks may not have started the tasks yet.
  auto deadline = std::chrono::steady_clock::now() + opts_.grant_wait;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (running_.count(key)) break;
    }
    if (std::chrono::steady_clock::now() >= deadline || ctx->IsCancelled())
      return rpc::ToGrpc(FailedPrecondition("step " + step + " runs no tasks on node " +
                                            opts_.node_name));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  do {
    if (in.job_id() != key.first || in.step_id() != key.second)
      return rpc::ToGrpc(InvalidArgument("SendInput for step " + step + " got a message for step " +
                                         StepName(in.job_id(), in.step_id())));
    for (;;) {  // UNAVAILABLE: a task does not read its stdin yet; trun waits meanwhile
      Status st;
      {
        std::lock_guard<std::mutex> lock(mu_);  // the set lives while it is in running_
        auto it = running_.find(key);
        if (it == running_.end())
          return rpc::ToGrpc(
              FailedPrecondition("step " + step + " has ended on node " + opts_.node_name));
        st = it->second->Input(in);
      }
      if (st.ok()) break;
      if (st.code() != Code::kUnavailable || ctx->IsCancelled())
        return rpc::ToGrpc(Status(st.code(), "node " + opts_.node_name + ": step " + step + ": " +
                                                 st.message()));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  } while (reader->Read(&in));
  return grpc::Status::OK;
}

// Issue 19 (h19, sstat): the live usage of this node's tasks of a running step.
grpc::Status StepService::GetStepUsage(grpc::ServerContext* ctx,
                                       const v1::GetStepUsageRequest* req,
                                       v1::GetStepUsageResponse* resp) {
  auto grant = Authorize(*ctx, req->job_id(), req->step_id(), std::chrono::milliseconds(0));
  if (!grant.ok()) return rpc::ToGrpc(grant.status());
  std::lock_guard<std::mutex> lock(mu_);
  auto it = running_.find({req->job_id(), req->step_id()});
  if (it != running_.end()) *resp->mutable_usage() = it->second->LiveUsage();
  return grpc::Status::OK;
}

void StepService::StopJob(uint64_t job_id) {
  grants_.DropJob(job_id);
  bool busy = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, tasks] : running_)
      if (key.first == job_id) tasks->Cancel(), busy = true;
    cgroups_.End(job_id);  // under mu_: a step ending now sees the job ended
    mps_errors_.erase(job_id);
    if (busy) ended_.insert(job_id);  // the last step to end finishes the job here
  }
  if (!busy) cgroups_.Remove(job_id);  // else the last step to end removes it
  if (!busy) JobGone(job_id);
}

void StepService::PrepareMps(const v1::StepGrant& grant) {
  if (!opts_.mps || !grant.has_alloc() || !MpsServers::StepWants(grant.alloc())) return;
  Status st = opts_.mps->PrepareStep(grant.job_id(), grant.alloc());
  std::lock_guard<std::mutex> lock(mu_);
  if (st.ok()) {
    mps_errors_.erase(grant.job_id());
    return;
  }
  if (log_) log_("job " + std::to_string(grant.job_id()) + ": steps here cannot use MPS: " +
                 st.message());
  mps_errors_[grant.job_id()] = st.message();
}

void StepService::JobGone(uint64_t job_id) {
  if (opts_.mps) opts_.mps->ReleaseStep(job_id);
}

size_t StepService::RunningSteps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_.size();
}

}  // namespace tessera::noded
