// ControllerService, continued (controller_service.h): the operations and diagnostics calls
// (Ping, sdiag's Diagnostics, job steps, MIG layouts, Backup, job events, topology). The job,
// node and partition calls are in controller_service.cc, associations in
// controller_service_assoc.cc.
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

grpc::Status ControllerService::Ping(grpc::ServerContext* ctx, const v1::PingRequest*, v1::PingResponse* resp) {
  RpcTimer timer(&rpc_stats_, "Ping");
  auto caller = Check(ctx, "Ping", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  resp->set_version("0.1.0");
  resp->set_caller_uid(caller->uid);
  resp->set_caller_gid(caller->gid);
  resp->set_caller_is_admin(caller->admin);
  resp->set_start_time(core_->Call([&] { return ctl_->stats().start_time; }));
  return grpc::Status::OK;
}

grpc::Status ControllerService::Diagnostics(grpc::ServerContext* ctx, const v1::DiagnosticsRequest* req,
                                            v1::DiagnosticsResponse* resp) {
  RpcTimer timer(&rpc_stats_, "Diagnostics");
  auto caller = Check(ctx, "Diagnostics", req->reset() ? Role::kAdmin : Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  if (req->reset()) {  // sdiag --reset (issue 20 §3)
    core_->Call([&] {
      ctl_->ResetStats();
      return 0;
    });
    rpc_stats_.Reset();
    Log("sdiag statistics reset by uid " + std::to_string(caller->uid));
    return grpc::Status::OK;
  }
  resp->set_server_thread_count(rpc_stats_.InFlight());
  core_->Call([&] {
    FillDiagnosticsExtra(resp);
    const CtldStats& s = ctl_->stats();
    resp->set_server_time(clock_->Now());
    resp->set_start_time(s.start_time);
    resp->set_jobs_submitted(static_cast<uint32_t>(s.jobs_submitted));
    resp->set_jobs_started(static_cast<uint32_t>(s.jobs_started));
    resp->set_jobs_completed(static_cast<uint32_t>(s.jobs_completed));
    resp->set_jobs_canceled(static_cast<uint32_t>(s.jobs_cancelled));
    resp->set_jobs_failed(static_cast<uint32_t>(s.jobs_failed));
    uint32_t pending = 0, running = 0;
    for (const auto& [id, j] : ctl_->jobs().jobs()) {
      pending += j.State() == JobState::kPending;
      running += j.State() == JobState::kRunning;
    }
    resp->set_jobs_pending(pending);
    resp->set_jobs_running(running);
    resp->set_schedule_cycles(static_cast<uint32_t>(s.cycles));
    resp->set_schedule_cycle_last_us(static_cast<uint64_t>(s.last_cycle_us));
    resp->set_schedule_cycle_max_us(static_cast<uint64_t>(s.max_cycle_us));
    resp->set_schedule_cycle_mean_us(s.cycles ? static_cast<uint64_t>(s.total_cycle_us / static_cast<int64_t>(s.cycles)) : 0);
    resp->set_backfilled_jobs(static_cast<uint32_t>(s.jobs_backfilled));
    return 0;
  });
  for (const auto& [name, st] : rpc_stats_.ByMethod()) {
    auto* r = resp->add_rpc_stats();
    r->set_name(name);
    r->set_count(st.count);
    r->set_total_time_us(st.total_us);
  }
  for (const auto& [uid, st] : rpc_stats_.ByUser()) {  // issue 20 §3
    auto* u = resp->add_user_stats();
    u->set_uid(uid);
    u->set_count(st.count);
    u->set_total_time_us(st.total_us);
  }
  return grpc::Status::OK;
}

void ControllerService::FillDiagnosticsExtra(v1::DiagnosticsResponse* resp) {
  const CtldStats& s = ctl_->stats();
  uint32_t queued = 0, busy = 0, writing = 0;
  for (auto& [name, n] : ctl_->nodes().nodes()) {
    if (!n.link) continue;
    NodeLink::Backlog b = n.link->backlog();
    queued += b.queued;
    busy += b.queued > 0 || b.writing;
    writing += b.writing;
  }
  resp->set_agent_queue_size(queued);
  resp->set_agent_count(busy);
  resp->set_agent_thread_count(writing);
  resp->set_dbd_agent_queue_size(static_cast<uint32_t>(store_ ? store_->Stats().queued : 0));
  resp->set_job_states_ts(clock_->Now());
  auto per = [](uint64_t total, uint64_t n) { return static_cast<uint32_t>(n ? total / n : 0); };
  resp->set_schedule_cycle_depth_mean(per(s.depth_total, s.cycles));
  resp->set_schedule_queue_length(static_cast<uint32_t>(s.last_queue_length));
  auto* bf = resp->mutable_backfill();
  bf->set_backfilled_jobs_since_start(static_cast<uint32_t>(s.jobs_backfilled_since_start));
  bf->set_backfilled_jobs(static_cast<uint32_t>(s.jobs_backfilled));
  bf->set_cycles(static_cast<uint32_t>(s.bf_cycles));
  bf->set_last_cycle_when(s.bf_last_when);
  bf->set_last_cycle_us(static_cast<uint64_t>(s.bf_last_us));
  bf->set_max_cycle_us(static_cast<uint64_t>(s.bf_max_us));
  bf->set_mean_cycle_us(per(static_cast<uint64_t>(s.bf_total_us), s.bf_cycles));
  bf->set_last_depth(static_cast<uint32_t>(s.bf_last_depth));
  bf->set_last_depth_try(static_cast<uint32_t>(s.bf_last_depth_try));
  bf->set_depth_mean(per(s.bf_depth_total, s.bf_cycles));
  bf->set_depth_try_mean(per(s.bf_depth_try_total, s.bf_cycles));
  bf->set_queue_length(static_cast<uint32_t>(s.bf_last_queue));
  bf->set_queue_length_mean(per(s.bf_queue_total, s.bf_cycles));
  bf->set_reservations(static_cast<uint32_t>(s.bf_last_reserved));
}

grpc::Status ControllerService::CreateStep(grpc::ServerContext* ctx, const v1::CreateStepRequest* req,
                                           v1::CreateStepResponse* resp) {
  RpcTimer timer(&rpc_stats_, "CreateStep");
  auto caller = Check(ctx, "CreateStep", Role::kOwner);
  if (!caller.ok()) return ToGrpc(caller.status());
  Status named = CheckNoControlChars("step name (-J)", req->name());
  if (!named.ok()) return ToGrpc(named);
  StepRequest sr{req->ntasks(), req->ntasks_per_node(), req->nodes(), req->cpus_per_task(),
                 req->gpus_per_node(), req->gpus(), req->gpus_per_task(), req->gpu_type(),
                 {req->node_names().begin(), req->node_names().end()}};
  return ToGrpc(core_->Call([&]() -> Status {
    auto r = ctl_->CreateStep(req->job_id(), *caller, sr, req->name());
    if (!r.ok()) return r.status();
    resp->set_step_id(r->step_id);
    for (size_t i = 0; i < r->layout.size(); ++i) {
      auto* n = resp->add_nodes();
      n->set_node(r->layout[i].node);
      n->set_address(r->nodes[i]->addr);
      n->set_port(r->nodes[i]->port);
      for (uint32_t rank : r->layout[i].ranks) n->add_ranks(rank);
    }
    resp->set_ntasks(r->ntasks);
    resp->set_nodelist(r->nodelist);
    resp->set_master_addr(r->master_addr);
    resp->set_master_port(r->master_port);
    return Status::Ok();
  }));
}

grpc::Status ControllerService::CompleteStep(grpc::ServerContext* ctx, const v1::CompleteStepRequest* req,
                                             v1::CompleteStepResponse*) {
  RpcTimer timer(&rpc_stats_, "CompleteStep");
  auto caller = Check(ctx, "CompleteStep", Role::kOwner);
  if (!caller.ok()) return ToGrpc(caller.status());
  return ToGrpc(core_->Call([&] {
    return ctl_->CompleteStep(req->job_id(), req->step_id(), *caller, static_cast<JobState>(req->state()),
                              req->exit_code(), req->exit_signal(),
                              req->has_usage() ? req->usage().SerializeAsString() : std::string());
  }));
}

grpc::Status ControllerService::ConfigureMig(grpc::ServerContext* ctx, const v1::ConfigureMigRequest* req,
                                             v1::ConfigureMigResponse* resp) {
  RpcTimer timer(&rpc_stats_, "ConfigureMig");
  auto caller = Check(ctx, "ConfigureMig", Role::kAdmin);
  if (!caller.ok()) return ToGrpc(caller.status());
  std::vector<NodeLink::MigPlacementReq> create;
  for (const auto& c : req->create()) {
    NodeLink::MigPlacementReq p{c, -1};
    if (size_t at = c.find('@'); at != std::string::npos) {
      auto start = ParseUint(c.substr(at + 1), "placement start");
      if (!start.ok() || *start > 7) return ToGrpc(InvalidArgument("bad MIG placement \"" + c + "\" (profile[@start])"));
      p = {c.substr(0, at), static_cast<int64_t>(*start)};
    }
    if (p.profile.empty()) return ToGrpc(InvalidArgument("empty MIG profile"));
    create.push_back(p);
  }
  std::promise<Result<GpuState>> done;
  auto fut = done.get_future();
  core_->Post([&] {
    ctl_->ConfigureMig(req->node(), req->gpu_index(), req->destroy_all(),
                       {req->destroy().begin(), req->destroy().end()}, create,
                       [&done](Result<GpuState> r) { done.set_value(std::move(r)); });
  });
  auto r = fut.get();
  if (!r.ok()) return ToGrpc(r.status());
  ToProto(*r, resp->mutable_gpu());
  Log("MIG layout of " + req->node() + " GPU " + std::to_string(req->gpu_index()) + " changed by uid " +
      std::to_string(caller->uid));
  return grpc::Status::OK;
}

grpc::Status ControllerService::Backup(grpc::ServerContext* ctx, const v1::BackupRequest* req,
                                       v1::BackupResponse* resp) {
  RpcTimer timer(&rpc_stats_, "Backup");
  auto caller = Check(ctx, "Backup", Role::kAdmin);
  if (!caller.ok()) return ToGrpc(caller.status());
  auto r = store_->Backup(req->path());  // off the core thread: jobs keep flowing
  Log("backup of the state to " + req->path() + " by uid " + std::to_string(caller->uid) + ": " +
      (r.ok() ? std::to_string(r->bytes) + " bytes" : r.status().message()));
  if (!r.ok()) return ToGrpc(r.status());
  resp->set_path(r->path);
  resp->set_pages(r->pages);
  resp->set_bytes(r->bytes);
  return grpc::Status::OK;
}

grpc::Status ControllerService::GetJobEvents(grpc::ServerContext* ctx, const v1::GetJobEventsRequest* req,
                                             v1::GetJobEventsResponse* resp) {
  RpcTimer timer(&rpc_stats_, "GetJobEvents");
  auto caller = Check(ctx, "GetJobEvents", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  auto events = store_->EventsForJob(req->job_id());
  if (!events.ok()) return ToGrpc(events.status());
  if (events->empty()) return ToGrpc(NotFound("Invalid job id specified: " + std::to_string(req->job_id())));
  for (const auto& e : *events) ToProto(e, resp->add_events());
  return grpc::Status::OK;
}

// Issue 15 (helper topoconf): Slurm's scontrol show topology records, filtered.
grpc::Status ControllerService::ShowTopology(grpc::ServerContext* ctx,
                                             const v1::ShowTopologyRequest* req,
                                             v1::ShowTopologyResponse* resp) {
  RpcTimer timer(&rpc_stats_, "ShowTopology");
  auto caller = Check(ctx, "ShowTopology", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  std::vector<std::string> want;
  if (!req->nodes().empty()) {
    auto n = ExpandHostlist(req->nodes());
    if (!n.ok()) return ToGrpc(InvalidArgument("nodes: " + n.status().message()));
    want = std::move(*n);
  }
  return ToGrpc(core_->Call([&]() -> Status {
    const LiveTopology& topo = ctl_->topology();
    resp->set_plugin(TopologyPluginName(topo.kind));
    if (!topo.config) return Status::Ok();
    resp->set_path(topo.config->path);
    for (const auto& r : TopologyRecords(*topo.config, ctl_->config())) {
      if (!req->unit().empty() && r.name != req->unit()) continue;
      if (!want.empty()) {
        auto have = ExpandHostlist(r.nodes);
        std::set<std::string> in(have.ok() ? have->begin() : want.end(),
                                 have.ok() ? have->end() : want.end());
        if (!std::all_of(want.begin(), want.end(), [&](const auto& n) { return in.count(n); }))
          continue;
      }
      ToProto(r, resp->add_records());
    }
    if (resp->records().empty() && (!req->unit().empty() || !want.empty()))
      return NotFound(std::string("Topology information contains no ") +
                      (topo.kind == TopologyKind::kTree ? "switch" : "block") +
                      (req->unit().empty() ? "" : " named " + req->unit()) +
                      (want.empty() ? "" : " with nodes " + req->nodes()));
    return Status::Ok();
  }));
}

}  // namespace tessera::ctld::rpc
