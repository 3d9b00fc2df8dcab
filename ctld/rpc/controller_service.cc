#include "ctld/rpc/controller_service.h"

#include <string_view>
#include <unordered_map>
#include <pwd.h>

#include <algorithm>
#include <map>
#include <future>
#include <set>

#include "common/array_spec.h"
#include "common/control_chars.h"
#include "common/duration.h"
#include "common/hostlist.h"
#include "ctld/log.h"
#include "ctld/rpc/accounting_live.h"
#include "ctld/rpc/accounting_runs.h"
#include "ctld/rpc/convert.h"
#include "ctld/rpc/job_listing.h"
#include "ctld/rpc/local_server.h"
#include "ctld/sched/preempt_config.h"
#include "ctld/submit_checks.h"
#include "rpc/grpc_util.h"

namespace tessera::ctld::rpc {
using tessera::rpc::ToGrpc;

namespace {

// The submitting host: this host for local-socket calls, the peer's address on the TCP wire
// (both LocalCallContext::host), else the peer's address
// ("ipv4:127.0.0.1:5000" -> "127.0.0.1").
std::string PeerHost(const grpc::ServerContext* ctx) {
  if (auto* local = dynamic_cast<const LocalCallContext*>(ctx)) return local->host();
  std::string peer = ctx->peer();
  std::string s = peer.substr(peer.find(':') + 1);
  size_t colon = s.rfind(':');
  return colon == std::string::npos ? s : s.substr(0, colon);
}

constexpr int kMaxSubmitBatch = 10000;

// "<id>: <message>", which tcancel prints as scancel's "Kill job error on job id <id>: ...",
// with Slurm's texts for the common refusals.
std::string CancelErrorLine(uint64_t id, const Status& s) {
  std::string text = s.code() == Code::kPermissionDenied ? "Access/permission denied"
                     : s.code() == Code::kNotFound       ? "Invalid job id specified"
                                                         : s.message();
  return std::to_string(id) + ": " + text;
}

}  // namespace

// ------------------------------------------------------------- WatchHub

std::shared_ptr<WatchHub::Sub> WatchHub::Subscribe() {
  auto s = std::make_shared<Sub>();
  std::lock_guard<std::mutex> l(mu_);
  subs_.push_back(s);
  return s;
}

void WatchHub::Unsubscribe(const std::shared_ptr<Sub>& s) {
  std::lock_guard<std::mutex> l(mu_);
  subs_.remove(s);
}

void WatchHub::Publish(const JobEvent& e) {
  std::lock_guard<std::mutex> l(mu_);
  for (auto& s : subs_) {
    std::lock_guard<std::mutex> sl(s->mu);
    if (s->events.size() < 100000) s->events.push_back(e);
    s->cv.notify_one();
  }
}

// ------------------------------------------------------------- handlers

Result<Caller> ControllerService::Check(grpc::ServerContext* ctx, const char* method, Role role) {
  auto cfg = ctl_->SharedConfig();
  Result<Caller> c = [&] {
    if (auto* local = dynamic_cast<const LocalCallContext*>(ctx)) {  // local socket, TCP wire
      auto c = auth_->Authorize(local->uid(), local->gid(), local->where(), method, role, *cfg);
      if (c.ok()) c->origin = local->origin();
      return c;
    }
    return auth_->Check(*ctx, method, role, *cfg);
  }();
  // The caller the running RpcTimer books this call under (sdiag by user, metrics by role).
  if (c.ok()) NoteCaller(c->uid, c->admin ? "admin" : c->operator_ ? "operator" : "user");
  return c;
}

Status ControllerService::CheckSpec(const v1::JobSpec& pb, const Caller& caller,
                                    std::vector<std::string>* warnings, JobSpec* spec) {
  Status fields = CheckRequestOnlyFields(pb, warnings);
  if (!fields.ok()) return fields;
  if (pb.priority() > 0 && !caller.admin)
    return PermissionDenied("--priority requires an operator or administrator");
  if (pb.k8s_pod_uids_size() > 0 && caller.uid != 0)  // the bridge's identity (issue 18)
    return PermissionDenied("k8s_pod_uids is set by tessera-bridge only (root)");
  *spec = FromProto(pb);
  return CheckSubmitInput(*spec, {pb.deadline(), pb.time_min_s()}, caller, clock_->Now());
}

grpc::Status ControllerService::SubmitJob(grpc::ServerContext* ctx, const v1::SubmitJobRequest* req,
                                          v1::SubmitJobResponse* resp) {
  RpcTimer timer(&rpc_stats_, "SubmitJob");
  auto caller = Check(ctx, "SubmitJob", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  std::vector<std::string> warnings;
  JobSpec spec;
  Status checked = CheckSpec(req->spec(), *caller, &warnings, &spec);
  if (!checked.ok()) return ToGrpc(checked);
  std::string host = PeerHost(ctx);
  std::promise<Result<uint64_t>> done;
  auto fut = done.get_future();
  Controller::WhatIf what_if;
  core_->Post([&, spec = std::move(spec)]() mutable {
    auto draft = ctl_->PrepareSubmit(std::move(spec), *caller, req->spec().uid(), host);
    if (!draft.ok()) return done.set_value(draft.status());
    draft->priority = req->spec().priority();
    if (req->test_only()) {
      what_if = ctl_->WouldStart(*draft);
      return done.set_value(ctl_->jobs().PeekNextId());  // the id it would get (sbatch)
    }
    ctl_->Submit(std::move(*draft), [&done](Result<uint64_t> r) { done.set_value(std::move(r)); });
  });
  auto r = fut.get();
  if (!r.ok()) return ToGrpc(r.status());
  resp->set_job_id(*r);
  for (const auto& w : warnings) resp->add_warnings(w);
  if (req->test_only()) {
    resp->set_expected_start_time(what_if.start_time);
    resp->set_expected_nodes(what_if.nodes);
    resp->set_expected_partition(what_if.partition);
    resp->set_expected_cpus(what_if.cpus);
  }
  return grpc::Status::OK;
}

grpc::Status ControllerService::SubmitJobs(grpc::ServerContext* ctx, const v1::SubmitJobsRequest* req,
                                           v1::SubmitJobsResponse* resp) {
  RpcTimer timer(&rpc_stats_, "SubmitJobs");
  auto caller = Check(ctx, "SubmitJobs", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  int n = req->specs_size();
  if (n > kMaxSubmitBatch)
    return ToGrpc(InvalidArgument("SubmitJobs: " + std::to_string(n) + " specs, at most " +
                                  std::to_string(kMaxSubmitBatch) + " per call"));
  auto refuse = [resp](int i, const Status& s) {
    resp->mutable_results(i)->set_code(static_cast<int32_t>(s.code()));
    resp->mutable_results(i)->set_error(s.message());
  };
  std::vector<JobSpec> specs(n);
  std::vector<bool> ok(n, false);
  for (int i = 0; i < n; ++i) {
    std::vector<std::string> warnings;
    auto* r = resp->add_results();
    Status s = CheckSpec(req->specs(i), *caller, &warnings, &specs[i]);
    for (auto& w : warnings) r->add_warnings(std::move(w));
    if (s.ok()) ok[i] = true;
    else refuse(i, s);
  }
  std::string host = PeerHost(ctx);
  std::promise<void> all;
  int left = 1;  // touched only on the core thread; 1 = the posting task itself
  core_->Post([&] {
    auto one_done = [&] {
      if (--left == 0) all.set_value();
    };
    for (int i = 0; i < n; ++i) {
      if (!ok[i]) continue;
      auto draft = ctl_->PrepareSubmit(std::move(specs[i]), *caller, req->specs(i).uid(), host);
      if (!draft.ok()) {
        refuse(i, draft.status());
        continue;
      }
      draft->priority = req->specs(i).priority();
      ++left;
      ctl_->Submit(std::move(*draft), [&, i, one_done](Result<uint64_t> r) {
        if (r.ok()) resp->mutable_results(i)->set_job_id(*r);
        else refuse(i, r.status());
        one_done();
      });
    }
    one_done();
  });
  all.get_future().wait();
  return grpc::Status::OK;
}

grpc::Status ControllerService::GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* req, v1::JobInfo* resp) {
  RpcTimer timer(&rpc_stats_, "GetJob");
  auto caller = Check(ctx, "GetJob", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  bool found = core_->Call([&] {
    const JobRecord* j = ctl_->jobs().Find(req->job_id());
    if (j) ToProto(*j, resp);
    return j != nullptr;
  });
  if (found) return grpc::Status::OK;
  AccountingFilter f;
  f.job_ids = {req->job_id()};
  auto acct = store_->QueryAccounting(f);
  if (!acct.ok()) return ToGrpc(acct.status());
  if (acct->empty()) return ToGrpc(NotFound("Invalid job id specified: " + std::to_string(req->job_id())));
  ToProto(acct->front(), resp);
  return grpc::Status::OK;
}

grpc::Status ControllerService::ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest* req,
                                         v1::ListJobsResponse* resp) {
  RpcTimer timer(&rpc_stats_, "ListJobs");
  auto caller = Check(ctx, "ListJobs", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  core_->Call([&] {
    FillListJobs(ctl_->jobs(), *req, resp);
    return 0;
  });
  return grpc::Status::OK;
}

grpc::Status ControllerService::WatchJobs(grpc::ServerContext* ctx, const v1::WatchJobsRequest* req,
                                          grpc::ServerWriter<v1::JobEvent>* writer) {
  RpcTimer timer(&rpc_stats_, "WatchJobs");
  auto caller = Check(ctx, "WatchJobs", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  auto sub = hub_->Subscribe();
  uint64_t last = req->since_seq();
  if (last > 0) {
    auto past = store_->EventsSince(last, 1'000'000);
    if (!past.ok()) {
      hub_->Unsubscribe(sub);
      return ToGrpc(past.status());
    }
    for (const auto& e : *past) {
      v1::JobEvent pe;
      ToProto(e, &pe);
      if (!writer->Write(pe)) break;
      last = e.seq;
    }
  }
  while (!ctx->IsCancelled()) {
    std::deque<JobEvent> batch;
    {
      std::unique_lock<std::mutex> l(sub->mu);
      sub->cv.wait_for(l, std::chrono::milliseconds(500), [&] { return !sub->events.empty(); });
      batch.swap(sub->events);
    }
    bool ok = true;
    for (const auto& e : batch) {
      if (e.seq <= last) continue;
      v1::JobEvent pe;
      ToProto(e, &pe);
      if (!(ok = writer->Write(pe))) break;
      last = e.seq;
    }
    if (!ok) break;
  }
  hub_->Unsubscribe(sub);
  return grpc::Status::OK;
}

grpc::Status ControllerService::UpdateJob(grpc::ServerContext* ctx, const v1::UpdateJobRequest* req,
                                          v1::UpdateJobResponse* resp) {
  RpcTimer timer(&rpc_stats_, "UpdateJob");
  auto caller = Check(ctx, "UpdateJob", Role::kOwner);
  if (!caller.ok()) return ToGrpc(caller.status());
  bool many = req->job_ids_size() > 0;
  if (many && req->action() != v1::UpdateJobRequest::HOLD &&
      req->action() != v1::UpdateJobRequest::RELEASE)
    return ToGrpc(InvalidArgument("UpdateJob: job_ids is for HOLD and RELEASE only"));
  if (many) {
    core_->Call([&] {
      std::vector<uint64_t> ids(req->job_ids().begin(), req->job_ids().end());
      bool hold = req->action() == v1::UpdateJobRequest::HOLD;
      std::vector<Status> results = ctl_->jobs().HoldMany(ids, *caller, hold);
      for (size_t i = 0; i < ids.size(); ++i)
        if (!results[i].ok())
          resp->add_errors(std::to_string(ids[i]) + ": " + results[i].message());
      if (!hold) ctl_->RequestSchedule();
      return 0;
    });
    return grpc::Status::OK;
  }
  Status st = core_->Call([&]() -> Status {
    uint64_t id = req->job_id();
    Status s;
    switch (req->action()) {
      case v1::UpdateJobRequest::HOLD: s = ctl_->jobs().Hold(id, *caller); break;
      case v1::UpdateJobRequest::RELEASE: s = ctl_->jobs().Release(id, *caller); ctl_->RequestSchedule(); break;
      case v1::UpdateJobRequest::REQUEUE: s = ctl_->Requeue(id, *caller); break;
      case v1::UpdateJobRequest::SUSPEND: s = ctl_->Suspend(id, *caller, true); break;
      case v1::UpdateJobRequest::RESUME: s = ctl_->Suspend(id, *caller, false); break;
      case v1::UpdateJobRequest::SET: {
        JobUpdate u;
        u.partition = req->partition();
        u.num_nodes = req->num_nodes();
        u.time_limit_s = req->time_limit_s();
        u.priority = req->priority() == 0 ? -1 : req->priority();
        u.set_nice = req->nice() != 0;
        u.nice = req->nice();
        u.set_comment = !req->comment().empty();
        u.comment = req->comment();
        s = ctl_->UpdateJob(id, *caller, u);
        break;
      }
      default: return InvalidArgument("UpdateJob: no action given");
    }
    if (s.ok())
      if (const JobRecord* j = ctl_->jobs().Find(id)) ToProto(*j, resp->mutable_job());
    return s;
  });
  return ToGrpc(st);
}

grpc::Status ControllerService::CancelJob(grpc::ServerContext* ctx, const v1::CancelJobRequest* req,
                                          v1::CancelJobResponse* resp) {
  RpcTimer timer(&rpc_stats_, "CancelJob");
  auto caller = Check(ctx, "CancelJob", Role::kOwner);
  if (!caller.ok()) return ToGrpc(caller.status());
  if (req->signal() < 0 || req->signal() > 64) return ToGrpc(InvalidArgument("invalid signal " + std::to_string(req->signal())));
  uint32_t filter_uid = UINT32_MAX;
  if (!req->user().empty()) {
    struct passwd* pw = getpwnam(req->user().c_str());
    if (!pw) return ToGrpc(InvalidArgument("Invalid user name: " + req->user()));
    filter_uid = pw->pw_uid;
  }
  core_->Call([&] {
    std::vector<uint64_t> ids(req->job_ids().begin(), req->job_ids().end());
    bool by_filter = ids.empty();
    if (by_filter) {
      if (filter_uid == UINT32_MAX && req->name().empty() && req->partition().empty() && req->state() == 0)
        return 0;
      for (const auto& [id, j] : ctl_->jobs().jobs()) {
        if (IsFinished(j.State()) || !ctl_->jobs().IsDurable(id)) continue;
        if (filter_uid != UINT32_MAX && j.uid != filter_uid) continue;
        if (!req->name().empty() && j.spec.name != req->name()) continue;
        if (!req->partition().empty() && j.partition != req->partition()) continue;
        if (req->state() != 0 && j.state != req->state()) continue;
        ids.push_back(id);  // another user's job gets its own permission error below, as scancel
      }
    }
    // Cancelling an array's id cancels all of its elements still active (as scancel does).
    std::vector<uint64_t> expanded;
    for (uint64_t id : ids) {
      size_t before = expanded.size();
      if (!by_filter)
        for (const auto& [eid, j] : ctl_->jobs().jobs())
          if (j.array_job_id == id && eid != id && !IsFinished(j.State())) expanded.push_back(eid);
      const JobRecord* self = ctl_->jobs().Find(id);
      bool self_done = self && IsFinished(self->State());
      if (expanded.size() == before || !self_done) expanded.push_back(id);
    }
    std::vector<Status> results = ctl_->CancelMany(expanded, *caller, req->signal());
    for (size_t i = 0; i < expanded.size(); ++i) {
      uint64_t id = expanded[i];
      const Status& s = results[i];
      if (s.ok()) {
        resp->add_cancelled(id);
      } else {
        resp->add_errors(CancelErrorLine(id, s));
        if (s.code() == Code::kPermissionDenied)
          Log("auth: refused CancelJob of job " + std::to_string(id) + " for uid " + std::to_string(caller->uid));
      }
    }
    return 0;
  });
  return grpc::Status::OK;
}

grpc::Status ControllerService::ListNodes(grpc::ServerContext* ctx, const v1::ListNodesRequest* req,
                                          v1::ListNodesResponse* resp) {
  RpcTimer timer(&rpc_stats_, "ListNodes");
  auto caller = Check(ctx, "ListNodes", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  if (req->state_summary() && req->names().empty())  // issue 20 §2: sinfo's default rows
    return ToGrpc(core_->Call([&]() -> Status {
      uint64_t generation = 0;
      for (const auto& g : ctl_->StateSummary(&generation)) {
        auto* out = resp->add_groups();
        out->set_partition(g.partition);
        out->set_state(NodeStateOf(g.state));
        out->set_count(g.count);
        out->set_nodes(g.nodes);
      }
      resp->set_generation(generation);
      return Status::Ok();
    }));
  return ToGrpc(core_->Call([&]() -> Status {
    int64_t now = clock_->Now();
    for (const auto& name : req->names())
      if (!ctl_->nodes().Find(name)) return NotFound("Node " + name + " not found");
    for (const auto& name : ctl_->nodes().order()) {
      if (!InFilter(req->names(), name)) continue;
      auto* out = resp->add_nodes();
      ToProto(*ctl_->nodes().Find(name), now, out);
      const auto& units = ctl_->topology().unit_of_node;  // issue 15
      if (auto u = units.find(name); u != units.end()) out->set_topology_unit(u->second);
    }
    return Status::Ok();
  }));
}

grpc::Status ControllerService::UpdateNode(grpc::ServerContext* ctx, const v1::UpdateNodeRequest* req,
                                           v1::UpdateNodeResponse* resp) {
  RpcTimer timer(&rpc_stats_, "UpdateNode");
  auto caller = Check(ctx, "UpdateNode", Role::kAdmin);
  if (!caller.ok()) return ToGrpc(caller.status());
  const char* action = req->action() == v1::UpdateNodeRequest::DRAIN    ? "DRAIN"
                       : req->action() == v1::UpdateNodeRequest::RESUME ? "RESUME"
                       : req->action() == v1::UpdateNodeRequest::DOWN   ? "DOWN"
                                                                        : "";
  if (!*action) return ToGrpc(InvalidArgument("UpdateNode: no action given"));
  if (req->has_gpu_index())  // one GPU of the node(s) (issue 14)
    return ToGrpc(core_->Call([&] {
      Status s = ctl_->UpdateGpu(req->name(), req->gpu_index(), action, req->reason(), caller->uid);
      Log("GPU update " + req->name() + " gpu " + std::to_string(req->gpu_index()) + " " + action +
          " by uid " + std::to_string(caller->uid) + ": " + s.ToString());
      return s;
    }));
  return ToGrpc(core_->Call([&] {
    Status s = ctl_->UpdateNode(req->name(), action, req->reason(), caller->uid);
    Log("node update " + req->name() + " " + action + " by uid " + std::to_string(caller->uid) + ": " + s.ToString());
    return s;
  }));
}

grpc::Status ControllerService::ListPartitions(grpc::ServerContext* ctx, const v1::ListPartitionsRequest*,
                                               v1::ListPartitionsResponse* resp) {
  RpcTimer timer(&rpc_stats_, "ListPartitions");
  auto caller = Check(ctx, "ListPartitions", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  core_->Call([&] {
    const ClusterConfig& cfg = ctl_->config();
    const PartitionConfig* def = cfg.DefaultPartition();
    // name -> node, once: a lookup per node of each partition was O(nodes^2) (issue 20 §2:
    // 10,000 nodes).
    std::unordered_map<std::string_view, const NodeConfig*> by_name;
    by_name.reserve(cfg.nodes.size());
    for (const auto& n : cfg.nodes) by_name.emplace(n.name, &n);
    for (const auto& p : cfg.partitions) {
      auto* out = resp->add_partitions();
      out->set_name(p.name);
      out->set_is_default(&p == def);
      out->set_up(p.up);
      out->set_max_time_s(p.max_time_s);
      out->set_default_time_s(p.default_time_s);
      // The partition's node names (scontrol prints them, not "ALL"; issue 19).
      out->set_nodes(p.nodes.empty() ? p.nodes_expr : CompressHostlist(p.nodes));
      out->set_total_nodes(static_cast<uint32_t>(p.nodes.size()));
      uint32_t cpus = 0;
      uint64_t mem = 0;
      for (const auto& n : p.nodes) {
        auto it = by_name.find(n);
        if (it == by_name.end()) continue;  // a validated config names only its nodes
        cpus += it->second->cpus;
        mem += it->second->real_memory_mib;
      }
      out->set_total_cpus(cpus);
      out->set_total_mem_mib(mem);
      const sched::SchedConfig& sc = ctl_->sched_config();  // PreemptMode=, GraceTime=
      sched::PreemptModeKind mode = sc.preempt_mode.kind;
      if (auto pp = sc.partition_preempt.find(p.name); pp != sc.partition_preempt.end()) {
        if (pp->second.mode != sched::PreemptModeKind::kUnset) mode = pp->second.mode;
        out->set_grace_time_s(pp->second.grace_time);
      }
      if (mode == sched::PreemptModeKind::kUnset)
        mode = sc.preempt_type == sched::PreemptType::kNone ? sched::PreemptModeKind::kOff
                                                             : sched::PreemptModeKind::kCancel;
      out->set_preempt_mode(sched::PreemptModeName(mode));
      out->set_max_nodes(p.max_nodes);
      out->set_priority_tier(p.priority_tier);
    }
    return 0;
  });
  return grpc::Status::OK;
}

grpc::Status ControllerService::Reconfigure(grpc::ServerContext* ctx, const v1::ReconfigureRequest*,
                                            v1::ReconfigureResponse* resp) {
  RpcTimer timer(&rpc_stats_, "Reconfigure");
  auto caller = Check(ctx, "Reconfigure", Role::kAdmin);
  if (!caller.ok()) return ToGrpc(caller.status());
  auto cfg = loader_();
  if (!cfg.ok()) return ToGrpc(cfg.status());
  for (const auto& w : cfg->warnings) resp->add_warnings(w);
  core_->Call([&] {
    ctl_->Reconfigure(cfg->cluster, cfg->sched);
    return 0;
  });
  Log("reconfigured by uid " + std::to_string(caller->uid));
  return grpc::Status::OK;
}

grpc::Status ControllerService::QueryAccounting(grpc::ServerContext* ctx, const v1::QueryAccountingRequest* req,
                                                v1::QueryAccountingResponse* resp) {
  RpcTimer timer(&rpc_stats_, "QueryAccounting");
  auto caller = Check(ctx, "QueryAccounting", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  AccountingFilter f;
  f.job_ids.assign(req->job_ids().begin(), req->job_ids().end());
  f.array_span = core_->Call([&] { return ctl_->config().max_array_size; });  // sacct -j ARRAY
  f.uids.assign(req->uids().begin(), req->uids().end());
  f.start_after = req->start_after();
  f.end_before = req->end_before();
  for (int s : req->states()) f.states.push_back(s);
  // tacct -D (issue 16 §4): a state filter applies to every run's row, so jobs are read whatever
  // their last state and the rows filtered below.
  std::vector<int> row_states;
  if (req->duplicates()) std::swap(row_states, f.states);
  auto done = store_->QueryAccounting(f);
  if (!done.ok()) return ToGrpc(done.status());
  std::set<uint64_t> seen;
  for (const auto& j : *done) {
    seen.insert(j.job_id);
    ToProto(j, resp->add_jobs());
  }
  // Jobs still active are part of accounting too (sacct shows pending and running jobs), and so
  // are jobs that ended but whose archive row is not committed yet (accounting_live.h).
  core_->Call([&] {
    for (const auto& [id, j] : ctl_->jobs().jobs()) {
      if (seen.count(id) || !ctl_->jobs().IsDurable(id) || !LiveJobMatches(j, f)) continue;
      ToProto(j, resp->add_jobs());
    }
    return 0;
  });
  std::sort(resp->mutable_jobs()->begin(), resp->mutable_jobs()->end(),
            [](const v1::JobInfo& a, const v1::JobInfo& b) { return a.job_id() < b.job_id(); });
  std::vector<uint64_t> ids;
  for (const auto& j : resp->jobs()) ids.push_back(j.job_id());
  auto steps = store_->StepsForJobs(ids);
  if (!steps.ok()) return ToGrpc(steps.status());
  for (const auto& s : *steps) {
    auto* p = resp->add_steps();
    p->set_job_id(s.job_id);
    p->set_step_id(s.step_id);
    p->set_name(s.name);
    p->set_nodelist(s.nodelist);
    p->set_ntasks(s.ntasks);
    p->set_ncpus(s.ncpus);
    p->set_state(static_cast<v1::JobState>(s.state));
    p->set_exit_code(s.exit_code);
    p->set_exit_signal(s.exit_signal);
    p->set_start_time(s.start_time);
    p->set_end_time(s.end_time);
    if (!s.usage.empty()) (void)p->mutable_usage()->ParseFromString(s.usage);  // issue 19
  }
  if (req->duplicates()) {  // issue 16 §4: tacct -D, the earlier runs of requeued jobs
    google::protobuf::RepeatedPtrField<v1::JobInfo> all;
    for (auto& j : *resp->mutable_jobs()) {
      if (j.requeue_count() > 0)
        if (auto ev = store_->EventsForJob(j.job_id()); ev.ok())
          for (auto& r : EarlierRuns(j, *ev))
            if (InFilter(row_states, static_cast<int>(r.state()))) *all.Add() = std::move(r);
      if (InFilter(row_states, static_cast<int>(j.state()))) *all.Add() = std::move(j);
    }
    resp->mutable_jobs()->Swap(&all);
  }
  return grpc::Status::OK;
}

}  // namespace tessera::ctld::rpc
