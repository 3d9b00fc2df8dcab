#include "ctld/rpc/agent_service.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "ctld/log.h"
#include "ctld/rpc/convert.h"
#include "ctld/rpc/node_identity.h"
#include "rpc/grpc_util.h"

namespace tessera::ctld::rpc {
using tessera::rpc::ToGrpc;
using Stream = grpc::ServerReaderWriter<v1::ControllerMessage, v1::NodeMessage>;

namespace {

class AgentLink final : public NodeLink {
 public:
  AgentLink(Stream* s, grpc::ServerContext* ctx) : stream_(s), ctx_(ctx) {
    writer_ = std::thread([this] { WriteLoop(); });
  }
  ~AgentLink() override { Close(); }

  void Launch(const JobRecord& job, const JobPayload& payload, int64_t kill_wait_s) override {
    v1::ControllerMessage m;
    ToLaunch(job, payload, kill_wait_s, m.mutable_launch());
    Send(std::move(m));
  }
  void Signal(uint64_t job_id, int signal, uint64_t run) override {
    v1::ControllerMessage m;
    m.mutable_signal()->set_job_id(job_id);
    m.mutable_signal()->set_signal(signal);
    m.mutable_signal()->set_run(run);
    Send(std::move(m));
  }
  void AckFinished(uint64_t job_id, uint64_t run) override {
    v1::ControllerMessage m;
    m.mutable_finished_ack()->set_job_id(job_id);
    m.mutable_finished_ack()->set_run(run);
    Send(std::move(m));
  }
  void Probe() override { Send(v1::ControllerMessage()); }
  // Ends the stream: the handler's Read returns false and the node sees it closed.
  void Disconnect() override { ctx_->TryCancel(); }
  void GrantStep(const Grant& g) override {
    v1::ControllerMessage m;
    auto* p = m.mutable_step_grant();
    p->set_job_id(g.job_id);
    p->set_step_id(g.step_id);
    p->set_uid(g.uid);
    p->set_gid(g.gid);
    p->set_user(g.user);
    for (uint32_t r : g.ranks) p->add_ranks(r);
    p->set_node_index(g.node_index);
    p->set_ntasks(g.ntasks);
    p->set_nodelist(g.nodelist);
    p->set_cpus_per_task(g.cpus_per_task);
    p->set_master_addr(g.master_addr);
    p->set_master_port(g.master_port);
    ToProto(g.alloc, p->mutable_alloc());
    p->set_step_gpus_set(g.step_gpus_set);
    for (uint32_t i : g.step_gpus) p->add_step_gpu_indices(i);
    for (const auto& u : g.step_migs) p->add_step_mig_uuids(u);
    Send(std::move(m));
  }
  void ConfigureMig(uint64_t request_id, uint32_t gpu, const std::vector<MigPlacementReq>& create,
                    const std::vector<std::string>& destroy) override {
    v1::ControllerMessage m;
    auto* c = m.mutable_configure_mig();
    c->set_request_id(request_id);
    c->set_gpu_index(gpu);
    for (const auto& p : create) {
      auto* mi = c->add_create();
      mi->set_profile(p.profile);
      if (p.start >= 0) {  // an explicit start (size != 0 marks it as such)
        mi->set_placement_start(static_cast<uint32_t>(p.start));
        mi->set_placement_size(1);
      }
    }
    for (const auto& u : destroy) c->add_destroy(u);
    Send(std::move(m));
  }
  void SetGpuDrain(uint32_t gpu, bool drain, const std::string& reason) override {
    v1::ControllerMessage m;
    m.mutable_gpu_drain()->set_gpu_index(gpu);
    m.mutable_gpu_drain()->set_drained(drain);
    m.mutable_gpu_drain()->set_reason(reason);
    Send(std::move(m));
  }
  void Send(v1::ControllerMessage m) {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return;
    out_.push_back(std::move(m));
    cv_.notify_one();
  }
  void Close() {
    {
      std::lock_guard<std::mutex> l(mu_);
      closed_ = true;
    }
    cv_.notify_one();
    if (writer_.joinable()) writer_.join();
  }

 private:
  // Writes what is queued in one go: every message but the last with gRPC's buffer hint, so a
  // burst (a cycle's launches, a batch of acks) leaves as one write instead of one per message.
  void WriteLoop() {
    std::deque<v1::ControllerMessage> batch;
    while (true) {
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [this] { return closed_ || !out_.empty(); });
        if (out_.empty()) return;
        batch.swap(out_);
      }
      for (size_t i = 0; i < batch.size(); ++i) {
        grpc::WriteOptions opts;
        if (i + 1 < batch.size()) opts.set_buffer_hint();
        if (!stream_->Write(batch[i], opts)) {
          std::lock_guard<std::mutex> l(mu_);
          closed_ = true;
          return;
        }
      }
      batch.clear();
    }
  }

  Stream* stream_;
  grpc::ServerContext* ctx_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1::ControllerMessage> out_;
  bool closed_ = false;
  std::thread writer_;
};

}  // namespace

grpc::Status AgentService::Connect(grpc::ServerContext* ctx, Stream* stream) {
  auto cfg = ctl_->SharedConfig();
  auto caller = auth_->Check(*ctx, "NodeAgent.Connect", Role::kNode, *cfg);
  if (!caller.ok()) return ToGrpc(caller.status());
  v1::NodeMessage first;
  if (!stream->Read(&first)) return grpc::Status::OK;
  if (!first.has_register_())
    return ToGrpc(InvalidArgument("the first message on a node stream must be register"));
  RegisterInfo info = FromProto(first.register_());
  Status origin = CheckNodeOrigin(*cfg, info.node, caller->origin);
  if (!origin.ok()) {
    Log("auth: refused NodeAgent.Connect registration of " + info.node + " from " + ctx->peer() +
        ": " + origin.message());
    return ToGrpc(origin);
  }
  auto link = std::make_shared<AgentLink>(stream, ctx);
  auto reply = core_->Call([&] { return ctl_->OnRegister(info, link); });
  if (!reply.ok()) {
    Log("auth: refused registration of " + info.node + " from " + ctx->peer() +
        (caller->origin.empty() ? std::string() : " (munge origin " + caller->origin + ")") +
        (info.boot_id.empty() ? std::string() : ", boot id " + info.boot_id) + ": " +
        reply.status().message());
    link->Close();
    return ToGrpc(reply.status());
  }
  v1::ControllerMessage m;
  m.mutable_registered()->set_heartbeat_interval_s(reply->heartbeat_interval_s);
  for (auto id : reply->kill_jobs) m.mutable_registered()->add_kill_jobs(id);
  for (const auto& d : reply->gpu_drains) {
    auto* g = m.mutable_registered()->add_gpu_drains();
    g->set_gpu_index(d.gpu);
    g->set_drained(true);
    g->set_reason(d.reason);
  }
  link->Send(std::move(m));
  const std::string node = info.node;
  v1::NodeMessage msg;
  while (stream->Read(&msg)) {
    if (msg.has_heartbeat()) {
      std::vector<uint64_t> running(msg.heartbeat().running_jobs().begin(), msg.heartbeat().running_jobs().end());
      std::map<uint64_t, uint64_t> runs;
      for (const auto& jr : msg.heartbeat().running_runs()) runs[jr.job_id()] = jr.run();
      core_->Post([this, node, running, runs] { ctl_->OnHeartbeat(node, running, runs); });
      if (msg.heartbeat().cpu_load_x100() != 0 || msg.heartbeat().free_mem_mib() != 0) {
        int32_t load = msg.heartbeat().cpu_load_x100();  // issue 19
        uint64_t free_mib = msg.heartbeat().free_mem_mib();
        core_->Post([this, node, load, free_mib] { ctl_->OnNodeLoad(node, load, free_mib); });
      }
    } else if (msg.has_finished()) {
      auto f = FromProto(msg.finished());
      core_->Post([this, node, f] { ctl_->OnJobFinished(node, f); });
    } else if (msg.has_gpu_health()) {
      GpuState g = FromProto(msg.gpu_health().gpu());
      uint32_t xid = msg.gpu_health().xid();
      core_->Post([this, node, g, xid] { ctl_->OnGpuUpdate(node, g, xid); });
    } else if (msg.has_mig_configured()) {
      const auto& m = msg.mig_configured();
      if (!m.ok()) Log("node " + node + " refused a MIG change: " + m.error());
      GpuState g = FromProto(m.gpu());
      Status st = m.ok() ? Status::Ok() : FailedPrecondition(m.error());
      uint64_t rid = m.request_id();
      core_->Post([this, node, g, st, rid] {
        ctl_->OnGpuUpdate(node, g, 0);
        ctl_->OnMigConfigured(rid, st, g);
      });
    } else if (msg.has_started()) {
      // The start is already durable (it was recorded before the launch was sent).
    } else if (msg.has_register_()) {
      Log("node " + node + " sent a second register on one stream; ignored");
    }
  }
  core_->Call([&] {
    ctl_->OnDisconnect(node, link.get());
    return 0;
  });
  link->Close();
  return grpc::Status::OK;
}

}  // namespace tessera::ctld::rpc
