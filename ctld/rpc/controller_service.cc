#include "ctld/rpc/controller_service.h"

#include <pwd.h>

#include <algorithm>
#include <future>
#include <set>

#include "ctld/log.h"
#include "ctld/rpc/convert.h"
#include "rpc/grpc_util.h"

namespace tessera::ctld::rpc {
using tessera::rpc::ToGrpc;

namespace {

std::string PeerHost(const std::string& peer) {  // "ipv4:127.0.0.1:5000" -> "127.0.0.1"
  std::string s = peer.substr(peer.find(':') + 1);
  size_t colon = s.rfind(':');
  return colon == std::string::npos ? s : s.substr(0, colon);
}

bool Has(const auto& list, const auto& x) {
  return list.empty() || std::find(list.begin(), list.end(), x) != list.end();
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
  return auth_->Check(*ctx, method, role, *cfg);
}

grpc::Status ControllerService::SubmitJob(grpc::ServerContext* ctx, const v1::SubmitJobRequest* req,
                                          v1::SubmitJobResponse* resp) {
  auto caller = Check(ctx, "SubmitJob", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  JobSpec spec = FromProto(req->spec());
  std::string host = PeerHost(ctx->peer());
  std::promise<Result<uint64_t>> done;
  auto fut = done.get_future();
  core_->Post([&, spec = std::move(spec)]() mutable {
    auto draft = ctl_->PrepareSubmit(std::move(spec), *caller, req->spec().uid(), host);
    if (!draft.ok()) return done.set_value(draft.status());
    if (req->test_only()) return done.set_value(uint64_t{0});
    ctl_->Submit(std::move(*draft), [&done](Result<uint64_t> r) { done.set_value(std::move(r)); });
  });
  auto r = fut.get();
  if (!r.ok()) return ToGrpc(r.status());
  resp->set_job_id(*r);
  return grpc::Status::OK;
}

grpc::Status ControllerService::GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* req, v1::JobInfo* resp) {
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
  auto caller = Check(ctx, "ListJobs", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  std::vector<int> states;
  for (int s : req->states()) states.push_back(s);
  core_->Call([&] {
    for (const auto& [id, j] : ctl_->jobs().jobs()) {
      if (!ctl_->jobs().IsDurable(id)) continue;
      if (!req->include_finished() && states.empty() && IsFinished(j.State())) continue;
      if (!Has(req->job_ids(), id) || !Has(req->uids(), j.uid) || !Has(states, j.state) ||
          !Has(req->partitions(), j.partition) || !Has(req->accounts(), j.spec.account))
        continue;
      ToProto(j, resp->add_jobs());
    }
    return 0;
  });
  return grpc::Status::OK;
}

grpc::Status ControllerService::WatchJobs(grpc::ServerContext* ctx, const v1::WatchJobsRequest* req,
                                          grpc::ServerWriter<v1::JobEvent>* writer) {
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
  auto caller = Check(ctx, "UpdateJob", Role::kOwner);
  if (!caller.ok()) return ToGrpc(caller.status());
  Status st = core_->Call([&]() -> Status {
    uint64_t id = req->job_id();
    Status s;
    switch (req->action()) {
      case v1::UpdateJobRequest::HOLD: s = ctl_->jobs().Hold(id, *caller); break;
      case v1::UpdateJobRequest::RELEASE: s = ctl_->jobs().Release(id, *caller); ctl_->RequestSchedule(); break;
      case v1::UpdateJobRequest::REQUEUE: s = ctl_->Requeue(id, *caller); break;
      case v1::UpdateJobRequest::SET: {
        JobUpdate u;
        u.time_limit_s = req->time_limit_s();
        u.priority = req->priority() == 0 ? -1 : req->priority();
        u.set_nice = req->nice() != 0;
        u.nice = req->nice();
        u.set_comment = !req->comment().empty();
        u.comment = req->comment();
        s = ctl_->jobs().Update(id, *caller, u);
        ctl_->RequestSchedule();
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
        if (!caller->MayControl(j)) continue;
        ids.push_back(id);
      }
    }
    for (uint64_t id : ids) {
      Status s = ctl_->Cancel(id, *caller, req->signal());
      if (s.ok()) {
        resp->add_cancelled(id);
      } else {
        resp->add_errors("job " + std::to_string(id) + ": " + s.message());
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
  auto caller = Check(ctx, "ListNodes", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  return ToGrpc(core_->Call([&]() -> Status {
    int64_t now = clock_->Now();
    for (const auto& name : req->names())
      if (!ctl_->nodes().Find(name)) return NotFound("Node " + name + " not found");
    for (const auto& name : ctl_->nodes().order()) {
      if (!Has(req->names(), name)) continue;
      ToProto(*ctl_->nodes().Find(name), now, resp->add_nodes());
    }
    return Status::Ok();
  }));
}

grpc::Status ControllerService::UpdateNode(grpc::ServerContext* ctx, const v1::UpdateNodeRequest* req,
                                           v1::UpdateNodeResponse* resp) {
  auto caller = Check(ctx, "UpdateNode", Role::kAdmin);
  if (!caller.ok()) return ToGrpc(caller.status());
  const char* action = req->action() == v1::UpdateNodeRequest::DRAIN    ? "DRAIN"
                       : req->action() == v1::UpdateNodeRequest::RESUME ? "RESUME"
                       : req->action() == v1::UpdateNodeRequest::DOWN   ? "DOWN"
                                                                        : "";
  if (!*action) return ToGrpc(InvalidArgument("UpdateNode: no action given"));
  return ToGrpc(core_->Call([&] {
    Status s = ctl_->UpdateNode(req->name(), action, req->reason());
    Log("node update " + req->name() + " " + action + " by uid " + std::to_string(caller->uid) + ": " + s.ToString());
    return s;
  }));
}

grpc::Status ControllerService::ListPartitions(grpc::ServerContext* ctx, const v1::ListPartitionsRequest*,
                                               v1::ListPartitionsResponse* resp) {
  auto caller = Check(ctx, "ListPartitions", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  core_->Call([&] {
    const ClusterConfig& cfg = ctl_->config();
    const PartitionConfig* def = cfg.DefaultPartition();
    for (const auto& p : cfg.partitions) {
      auto* out = resp->add_partitions();
      out->set_name(p.name);
      out->set_is_default(&p == def);
      out->set_up(p.up);
      out->set_max_time_s(p.max_time_s);
      out->set_default_time_s(p.default_time_s);
      out->set_nodes(p.nodes_expr);
      out->set_total_nodes(static_cast<uint32_t>(p.nodes.size()));
      uint32_t cpus = 0;
      for (const auto& n : p.nodes) cpus += cfg.FindNode(n)->cpus;
      out->set_total_cpus(cpus);
      out->set_max_nodes(p.max_nodes);
      out->set_priority_tier(p.priority_tier);
    }
    return 0;
  });
  return grpc::Status::OK;
}

grpc::Status ControllerService::Reconfigure(grpc::ServerContext* ctx, const v1::ReconfigureRequest*,
                                            v1::ReconfigureResponse* resp) {
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
  auto caller = Check(ctx, "QueryAccounting", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  AccountingFilter f;
  f.job_ids.assign(req->job_ids().begin(), req->job_ids().end());
  f.uids.assign(req->uids().begin(), req->uids().end());
  f.start_after = req->start_after();
  f.end_before = req->end_before();
  for (int s : req->states()) f.states.push_back(s);
  auto done = store_->QueryAccounting(f);
  if (!done.ok()) return ToGrpc(done.status());
  std::set<uint64_t> seen;
  for (const auto& j : *done) {
    seen.insert(j.job_id);
    ToProto(j, resp->add_jobs());
  }
  // Jobs still active are part of accounting too (sacct shows pending and running jobs).
  core_->Call([&] {
    for (const auto& [id, j] : ctl_->jobs().jobs()) {
      if (seen.count(id) || IsFinished(j.State()) || !ctl_->jobs().IsDurable(id)) continue;
      if (!Has(f.job_ids, id) || !Has(f.uids, j.uid) || !Has(f.states, j.state)) continue;
      if (f.end_before && j.submit_time > f.end_before) continue;
      ToProto(j, resp->add_jobs());
    }
    return 0;
  });
  std::sort(resp->mutable_jobs()->begin(), resp->mutable_jobs()->end(),
            [](const v1::JobInfo& a, const v1::JobInfo& b) { return a.job_id() < b.job_id(); });
  return grpc::Status::OK;
}

grpc::Status ControllerService::Ping(grpc::ServerContext* ctx, const v1::PingRequest*, v1::PingResponse* resp) {
  auto caller = Check(ctx, "Ping", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  resp->set_version("0.1.0");
  resp->set_caller_uid(caller->uid);
  resp->set_caller_gid(caller->gid);
  resp->set_caller_is_admin(caller->admin);
  resp->set_start_time(core_->Call([&] { return ctl_->stats().start_time; }));
  return grpc::Status::OK;
}

grpc::Status ControllerService::GetJobEvents(grpc::ServerContext* ctx, const v1::GetJobEventsRequest* req,
                                             v1::GetJobEventsResponse* resp) {
  auto caller = Check(ctx, "GetJobEvents", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  auto events = store_->EventsForJob(req->job_id());
  if (!events.ok()) return ToGrpc(events.status());
  if (events->empty()) return ToGrpc(NotFound("Invalid job id specified: " + std::to_string(req->job_id())));
  for (const auto& e : *events) ToProto(e, resp->add_events());
  return grpc::Status::OK;
}

}  // namespace tessera::ctld::rpc
