#include "noded/agent_client.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "noded/host_stats.h"
#include "noded/log.h"
#include "rpc/grpc_util.h"

namespace tessera::noded {

namespace v1 = tessera::v1;

namespace {
constexpr int64_t kBackoffMinMs = 500;
constexpr int64_t kBackoffMaxMs = 5000;
constexpr int64_t kRegisterTimeoutS = 30;

void Log(const std::string& m) { LogLine("tessera-noded", m); }

// As rpc::MakeCtldChannel, but gRPC's own reconnect backoff is capped at our 5 s (its default of
// 120 s would delay re-registration long after ctld is back) and the channel gets a private
// subchannel pool so each new channel really dials again.
std::shared_ptr<grpc::Channel> MakeAgentChannel(const ClusterConfig& cfg) {
  std::string target = cfg.ctld_addr + ":" + std::to_string(cfg.ctld_port);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, static_cast<int>(kBackoffMinMs));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, static_cast<int>(kBackoffMaxMs));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, static_cast<int>(kBackoffMinMs));
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (!cfg.TlsEnabled())
    return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  grpc::SslCredentialsOptions opts;
  auto ca = ReadFile(cfg.tls_ca);
  if (ca.ok()) opts.pem_root_certs = *ca;
  return grpc::CreateCustomChannel(target, grpc::SslCredentials(opts), args);
}
}  // namespace

AgentClient::AgentClient(const ClusterConfig& cfg, NodeDescription node, JobManager& jobs,
                         const rpc::CredentialCodec& codec, const Clock& clock, GpuManager* gpus,
                         StepService* steps)
    : cfg_(cfg), node_(std::move(node)), jobs_(jobs), gpus_(gpus), steps_(steps), codec_(codec),
      clock_(clock),
      stub_(v1::NodeAgent::NewStub(MakeAgentChannel(cfg))),
      heartbeat_s_(cfg.HeartbeatInterval()) {}

void AgentClient::Wake() {
  std::lock_guard<std::mutex> lock(mu_);
  woken_ = true;
  poll_all_ = true;
  cv_.notify_all();
}

void AgentClient::WakeFor(const std::vector<uint64_t>& job_ids) {
  std::lock_guard<std::mutex> lock(mu_);
  woken_ = true;
  ended_.insert(ended_.end(), job_ids.begin(), job_ids.end());
  cv_.notify_all();
}

void AgentClient::Sleep(int64_t ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return woken_; });
  woken_ = false;
}

v1::NodeMessage AgentClient::BuildRegister() {
  v1::NodeMessage m;
  auto* r = m.mutable_register_();
  r->set_node_name(node_.name);
  r->set_cpus(node_.cpus);
  r->set_real_memory_mib(node_.memory_mib);
  auto in_use = jobs_.MigInUse();
  for (const GpuInfo& g : gpus_ ? gpus_->gpus() : node_.gpus) FillGpuDevice(g, in_use, r->add_gpus());
  for (const RdmaPort& p : node_.hcas) {
    auto* h = r->add_hcas();
    h->set_name(p.device);
    h->set_port(p.port);
    h->set_state(p.state);
    h->set_rate(p.rate);
    h->set_link_layer(p.link_layer);
    h->set_numa_node(p.numa_node);
    h->set_pci_bus_id(p.pci_path.substr(p.pci_path.rfind('/') + 1));
    h->set_netdev(p.netdev);
  }
  for (uint64_t id : jobs_.Running()) {
    r->add_running_jobs(id);
    auto* jr = r->add_running_runs();
    jr->set_job_id(id);
    jr->set_run(jobs_.RunOf(id));
  }
  for (const auto& f : jobs_.Unacked()) *r->add_finished() = f;
  r->set_boot_time(node_.boot_time);
  r->set_boot_id(node_.boot_id);
  r->set_version(node_.version);
  HostUname un = DiscoverUname();  // issue 19: scontrol show node OS=, Arch=
  r->set_os(un.os);
  r->set_arch(un.arch);
  return m;
}

void AgentClient::Run(const std::atomic<bool>& stop) {
  int64_t backoff = kBackoffMinMs;
  while (!stop) {
    if (Session(stop)) backoff = kBackoffMinMs;
    if (stop) break;
    Log("reconnecting to tessera-ctld at " + cfg_.ctld_addr + ":" + std::to_string(cfg_.ctld_port) +
        " in " + std::to_string(backoff) + " ms");
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff);
    while (!stop && std::chrono::steady_clock::now() < until) {
      Sleep(std::min<int64_t>(backoff, 1000));
      if (gpus_) gpus_->Poll();  // GPU health too; Register reports the result
      jobs_.Poll();  // keep noticing job ends (status files are written for them)
    }
    backoff = std::min(backoff * 2, kBackoffMaxMs);
  }
}

void AgentClient::Apply(const v1::ControllerMessage& m) {
  switch (m.msg_case()) {
    case v1::ControllerMessage::kLaunch: jobs_.Launch(m.launch()); break;
    case v1::ControllerMessage::kSignal:
      jobs_.Signal(m.signal().job_id(), m.signal().signal(), m.signal().run());
      if (steps_ && m.signal().signal() == 0) steps_->StopJob(m.signal().job_id());
      break;
    case v1::ControllerMessage::kFinishedAck:
      jobs_.Ack(m.finished_ack().job_id(), m.finished_ack().run());
      if (steps_) steps_->StopJob(m.finished_ack().job_id());
      break;
    case v1::ControllerMessage::kStepGrant:
      if (steps_) steps_->Grant(m.step_grant());
      else Log("ignoring a StepGrant: this noded serves no steps");
      break;
    case v1::ControllerMessage::kGpuDrain:
      if (gpus_)
        gpus_->SetDrain(m.gpu_drain().gpu_index(), m.gpu_drain().drained(), m.gpu_drain().reason());
      break;
    case v1::ControllerMessage::kRegistered: Log("ignoring a second Registered"); break;
    case v1::ControllerMessage::kConfigureMig:
      if (gpus_) {
        gpus_->Configure(m.configure_mig(), jobs_.MigInUse());
      } else {
        v1::NodeMessage reply;
        reply.mutable_mig_configured()->set_request_id(m.configure_mig().request_id());
        reply.mutable_mig_configured()->set_error("this node has no GPU manager");
        pending_.push_back(std::move(reply));
      }
      break;
    case v1::ControllerMessage::MSG_NOT_SET: break;  // ctld's liveness probe of this stream
    default: Log("ignoring an unknown controller message"); break;
  }
}

void AgentClient::Handle(const v1::ControllerMessage& m, bool* registered) {
  if (*registered) {
    Apply(m);
  } else if (m.has_registered()) {
    *registered = true;
    if (m.registered().heartbeat_interval_s() > 0)
      heartbeat_s_ = m.registered().heartbeat_interval_s();
    if (gpus_) {  // the controller's durable GPU drains are the truth for every GPU
      std::map<uint32_t, std::string> drained;
      for (const auto& d : m.registered().gpu_drains())
        if (d.drained()) drained[d.gpu_index()] = d.reason();
      gpus_->SyncDrains(drained);
    }
    Log("registered with tessera-ctld; heartbeat every " + std::to_string(heartbeat_s_) + " s");
    for (uint64_t id : m.registered().kill_jobs()) {
      Log("job " + std::to_string(id) + ": unknown to the controller, cancelling");
      jobs_.Signal(id, 0);
      if (steps_) steps_->StopJob(id);
    }
  } else {
    Log("ignoring a controller message received before Registered");
  }
}

bool AgentClient::Flush(Stream* stream, int64_t now, int64_t* last_hb, int64_t* last_resend,
                        const std::vector<uint64_t>& ended, bool full) {
  if (full) jobs_.Poll();
  else
    for (uint64_t id : ended) jobs_.PollJob(id);
  std::vector<v1::NodeMessage> out = jobs_.TakeOutbox();
  if (gpus_) {
    if (full) gpus_->Poll();
    for (auto& m : gpus_->TakeOutbox()) out.push_back(std::move(m));
  }
  for (auto& m : pending_) out.push_back(std::move(m));
  pending_.clear();
  if (now - *last_hb >= heartbeat_s_) {
    v1::NodeMessage hb;
    for (uint64_t id : jobs_.Running()) {
      hb.mutable_heartbeat()->add_running_jobs(id);
      auto* jr = hb.mutable_heartbeat()->add_running_runs();
      jr->set_job_id(id);
      jr->set_run(jobs_.RunOf(id));
    }
    hb.mutable_heartbeat()->set_time(now);
    hb.mutable_heartbeat()->set_cpu_load_x100(ReadLoadAvgX100());  // issue 19
    hb.mutable_heartbeat()->set_free_mem_mib(ReadMemFreeMib());
    out.push_back(std::move(hb));
    *last_hb = now;
  }
  if (now - *last_resend >= kFinishedResendSeconds) {
    for (const auto& f : jobs_.Unacked()) {
      v1::NodeMessage m;
      *m.mutable_finished() = f;
      out.push_back(std::move(m));
    }
    *last_resend = now;
  }
  // One write for the lot: every message but the last carries gRPC's buffer hint.
  bool ok = true;
  for (size_t i = 0; ok && i < out.size(); ++i) {
    grpc::WriteOptions opts;
    if (i + 1 < out.size()) opts.set_buffer_hint();
    ok = stream->Write(out[i], opts);
  }
  return ok;
}

bool AgentClient::Session(const std::atomic<bool>& stop) {
  grpc::ClientContext ctx;
  Status cred = rpc::AttachCredential(codec_, &ctx);
  if (!cred.ok()) {
    Log("cannot create munge credential: " + cred.ToString());
    return false;
  }
  auto stream = stub_->Connect(&ctx);
  {
    std::lock_guard<std::mutex> lock(mu_);
    inbox_.clear();
    reader_done_ = false;
  }
  std::thread reader([&] {
    v1::ControllerMessage m;
    while (stream->Read(&m)) {
      std::lock_guard<std::mutex> lock(mu_);
      inbox_.push_back(m);
      cv_.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu_);
    reader_done_ = true;
    cv_.notify_all();
  });
  jobs_.Poll();
  jobs_.TakeOutbox();  // Register carries all of it
  if (gpus_) {
    gpus_->Poll();
    gpus_->TakeOutbox();
  }
  bool registered = false, ok = stream->Write(BuildRegister()), server_closed = false;
  int64_t start = clock_.Now(), last_hb = start, last_resend = start;
  auto last_full = std::chrono::steady_clock::now();
  while (ok && !stop) {
    std::deque<v1::ControllerMessage> msgs;
    std::vector<uint64_t> ended;
    bool dead = false, full = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(1),
                   [&] { return !inbox_.empty() || reader_done_ || woken_; });
      msgs.swap(inbox_);
      ended.swap(ended_);
      dead = reader_done_;
      full = poll_all_;
      woken_ = poll_all_ = false;
    }
    // Every running job (and the GPUs) at least once a second: a stepd whose notification got
    // lost, or that died without a status, is noticed within that second.
    auto tnow = std::chrono::steady_clock::now();
    if (tnow - last_full >= std::chrono::seconds(1)) full = true;
    if (full) last_full = tnow;
    for (const auto& m : msgs) Handle(m, &registered);
    if (dead) {
      server_closed = true;
      break;
    }
    int64_t now = clock_.Now();
    if (!registered) {
      if (now - start >= kRegisterTimeoutS) {
        Log("no Registered from tessera-ctld after " + std::to_string(kRegisterTimeoutS) + " s");
        break;
      }
      continue;
    }
    ok = Flush(stream.get(), now, &last_hb, &last_resend, ended, full);
  }
  // A stream the controller ended carries its reason (e.g. a refused registration): cancelling
  // it first would replace that with CANCELLED.
  if (!server_closed) ctx.TryCancel();
  reader.join();
  grpc::Status st = stream->Finish();
  if (!stop)
    Log(std::string(registered ? "connection to tessera-ctld ended: "
                               : "registration with tessera-ctld failed: ") +
        (st.ok() ? std::string("closed by the controller") : rpc::FromGrpc(st).ToString()));
  return registered;
}

}  // namespace tessera::noded
