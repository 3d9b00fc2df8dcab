#include "ctld/rpc/agent_service.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "ctld/log.h"
#include "ctld/rpc/convert.h"
#include "ctld/rpc/node_identity.h"
#include "rpc/grpc_util.h"

namespace tessera::ctld::rpc {
using tessera::rpc::ToGrpc;

// A few threads for the blocking parts of opening a stream (munge decode, NodeAddr lookup);
// everything else runs on gRPC's callback threads and the core thread.
class AgentService::Pool {
 public:
  explicit Pool(int n) {
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this] {
        std::unique_lock<std::mutex> l(mu_);
        while (true) {
          cv_.wait(l, [this] { return stop_ || !q_.empty(); });
          if (q_.empty()) return;
          auto fn = std::move(q_.front());
          q_.pop_front();
          l.unlock();
          fn();
          l.lock();
        }
      });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void Run(std::function<void()> fn) {
    std::lock_guard<std::mutex> l(mu_);
    q_.push_back(std::move(fn));
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

namespace {

class AgentLink;

// One node's stream. Reads: the first message (register) after the caller's credential was
// checked on the pool, then one message at a time, each posted to the core. Writes: whatever
// the link queued, in order, one in flight (a burst leaves with gRPC's buffer hint on all but
// its last message). Deletes itself when gRPC is done with the call.
class AgentReactor final : public grpc::ServerBidiReactor<v1::NodeMessage, v1::ControllerMessage> {
 public:
  AgentReactor(grpc::CallbackServerContext* ctx, Controller* ctl, Core* core,
               const Authorizer* auth, AgentService::Pool* pool);
  void Send(v1::ControllerMessage m) {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return;
    out_.push_back(std::move(m));
    if (!writing_) {
      writing_ = true;
      WriteFront();
    }
  }
  void Cancel() { ctx_->TryCancel(); }
  NodeLink::Backlog Queued() {  // sdiag (issue 20 §3)
    std::lock_guard<std::mutex> l(mu_);
    return {static_cast<uint32_t>(out_.size() - (writing_ ? 1 : 0)), writing_};
  }
  // Ends the call with `st` once the write in flight (if any) is done; later sends are dropped.
  void Close(const grpc::Status& st) {
    std::lock_guard<std::mutex> l(mu_);
    if (!closed_) finish_status_ = st;
    closed_ = true;
    MaybeFinish();
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> l(mu_);
    out_.pop_front();
    if (!ok) closed_ = true;
    if (closed_ || out_.empty()) {
      writing_ = false;
      MaybeFinish();
      return;
    }
    WriteFront();
  }
  void OnReadDone(bool ok) override;
  void OnDone() override;

 private:
  void WriteFront() {  // mu_ held
    grpc::WriteOptions opts;
    if (out_.size() > 1) opts.set_buffer_hint();
    StartWrite(&out_.front(), opts);
  }
  void MaybeFinish() {  // mu_ held
    if (closed_ && !writing_ && !finished_) {
      finished_ = true;
      Finish(finish_status_);
    }
  }
  void Authenticate();     // pool
  void Register();         // pool, then core
  void Dispatch(const v1::NodeMessage& msg);

  grpc::CallbackServerContext* ctx_;
  Controller* ctl_;
  Core* core_;
  const Authorizer* auth_;
  AgentService::Pool* pool_;
  std::shared_ptr<AgentLink> link_;
  std::string node_;
  std::string origin_;
  bool registered_ = false;  // touched by the read path only (one read at a time)
  v1::NodeMessage in_;
  std::mutex mu_;
  std::deque<v1::ControllerMessage> out_;  // front: being written
  bool writing_ = false, closed_ = false, finished_ = false;
  grpc::Status finish_status_;
};

class AgentLink final : public NodeLink {
 public:
  explicit AgentLink(AgentReactor* r) : r_(r) {}

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
  Backlog backlog() override {
    std::lock_guard<std::mutex> l(mu_);
    return r_ ? r_->Queued() : Backlog{};
  }
  // Ends the stream: the pending read fails and the node sees it closed.
  void Disconnect() override {
    std::lock_guard<std::mutex> l(mu_);
    if (r_) r_->Cancel();
  }
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
    if (r_) r_->Send(std::move(m));
  }
  // The reactor is done: later messages are dropped.
  void Detach() {
    std::lock_guard<std::mutex> l(mu_);
    r_ = nullptr;
  }

 private:
  std::mutex mu_;
  AgentReactor* r_;
};

AgentReactor::AgentReactor(grpc::CallbackServerContext* ctx, Controller* ctl, Core* core,
                           const Authorizer* auth, AgentService::Pool* pool)
    : ctx_(ctx), ctl_(ctl), core_(core), auth_(auth), pool_(pool),
      link_(std::make_shared<AgentLink>(this)) {
  pool_->Run([this] { Authenticate(); });
}

void AgentReactor::Authenticate() {
  auto cfg = ctl_->SharedConfig();
  auto caller = auth_->Check(*ctx_, "NodeAgent.Connect", Role::kNode, *cfg);
  if (!caller.ok()) {
    Close(ToGrpc(caller.status()));
    return;
  }
  origin_ = caller->origin;
  StartRead(&in_);
}

void AgentReactor::Register() {
  if (!in_.has_register_()) {
    Close(ToGrpc(InvalidArgument("the first message on a node stream must be register")));
    return;
  }
  auto cfg = ctl_->SharedConfig();
  RegisterInfo info = FromProto(in_.register_());
  Status origin = CheckNodeOrigin(*cfg, info.node, origin_);
  if (!origin.ok()) {
    Log("auth: refused NodeAgent.Connect registration of " + info.node + " from " + ctx_->peer() +
        ": " + origin.message());
    Close(ToGrpc(origin));
    return;
  }
  node_ = info.node;
  core_->Post([this, info = std::move(info)] {
    auto reply = ctl_->OnRegister(info, link_);
    if (!reply.ok()) {
      Log("auth: refused registration of " + info.node + " from " + ctx_->peer() +
          (origin_.empty() ? std::string() : " (munge origin " + origin_ + ")") +
          (info.boot_id.empty() ? std::string() : ", boot id " + info.boot_id) + ": " +
          reply.status().message());
      link_->Detach();
      Close(ToGrpc(reply.status()));
      return;
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
    Send(std::move(m));
    registered_ = true;
    StartRead(&in_);
  });
}

void AgentReactor::OnReadDone(bool ok) {
  if (!ok) {
    if (registered_) {
      auto link = link_;
      std::string node = node_;
      Controller* ctl = ctl_;
      core_->Post([ctl, node, link] { ctl->OnDisconnect(node, link.get()); });
    }
    Close(grpc::Status::OK);
    return;
  }
  if (!registered_) {
    pool_->Run([this] { Register(); });
    return;
  }
  Dispatch(in_);
  StartRead(&in_);
}

void AgentReactor::OnDone() {
  link_->Detach();
  delete this;
}

void AgentReactor::Dispatch(const v1::NodeMessage& msg) {
  const std::string& node = node_;
  Controller* ctl = ctl_;  // the posted work may outlive this stream
  if (msg.has_heartbeat()) {
    std::vector<uint64_t> running(msg.heartbeat().running_jobs().begin(), msg.heartbeat().running_jobs().end());
    std::map<uint64_t, uint64_t> runs;
    for (const auto& jr : msg.heartbeat().running_runs()) runs[jr.job_id()] = jr.run();
    core_->Post([ctl, node, running, runs] { ctl->OnHeartbeat(node, running, runs); });
    if (msg.heartbeat().cpu_load_x100() != 0 || msg.heartbeat().free_mem_mib() != 0) {
      int32_t load = msg.heartbeat().cpu_load_x100();  // issue 19
      uint64_t free_mib = msg.heartbeat().free_mem_mib();
      core_->Post([ctl, node, load, free_mib] { ctl->OnNodeLoad(node, load, free_mib); });
    }
  } else if (msg.has_finished()) {
    auto f = FromProto(msg.finished());
    core_->Post([ctl, node, f] { ctl->OnJobFinished(node, f); });
  } else if (msg.has_gpu_health()) {
    GpuState g = FromProto(msg.gpu_health().gpu());
    uint32_t xid = msg.gpu_health().xid();
    core_->Post([ctl, node, g, xid] { ctl->OnGpuUpdate(node, g, xid); });
  } else if (msg.has_mig_configured()) {
    const auto& m = msg.mig_configured();
    if (!m.ok()) Log("node " + node + " refused a MIG change: " + m.error());
    GpuState g = FromProto(m.gpu());
    Status st = m.ok() ? Status::Ok() : FailedPrecondition(m.error());
    uint64_t rid = m.request_id();
    core_->Post([ctl, node, g, st, rid] {
      ctl->OnGpuUpdate(node, g, 0);
      ctl->OnMigConfigured(rid, st, g);
    });
  } else if (msg.has_started()) {
    // The start is already durable (it was recorded before the launch was sent).
  } else if (msg.has_register_()) {
    Log("node " + node + " sent a second register on one stream; ignored");
  }
}

}  // namespace

AgentService::AgentService(Controller* ctl, Core* core, const Authorizer* auth)
    : ctl_(ctl), core_(core), auth_(auth), pool_(std::make_unique<Pool>(4)) {}
AgentService::~AgentService() = default;

grpc::ServerBidiReactor<v1::NodeMessage, v1::ControllerMessage>* AgentService::Connect(
    grpc::CallbackServerContext* ctx) {
  return new AgentReactor(ctx, ctl_, core_, auth_, pool_.get());
}

}  // namespace tessera::ctld::rpc
