#include "bench/nodeemu/emulator.h"

#include <csignal>
#include <deque>
#include <fstream>
#include <iostream>
#include <cstdlib>

#include "rpc/grpc_util.h"

namespace tessera::nodeemu {

namespace v1 = tessera::v1;

namespace {
constexpr int64_t kBackoffMinMs = 500;
constexpr int64_t kBackoffMaxMs = 5000;
constexpr int64_t kResendS = 5;  // noded/agent_client.h kFinishedResendSeconds

int64_t EpochMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
int64_t EpochS() { return EpochMs() / 1000; }

// One stream (a reactor serves one call only; a reconnect makes a new Session).
}  // namespace

class Session final : public grpc::ClientBidiReactor<v1::NodeMessage, v1::ControllerMessage> {
 public:
  explicit Session(Node* node) : node_(node) {}
  grpc::ClientContext* ctx() { return &ctx_; }

  void Begin(v1::NodeAgent::Stub* stub, v1::NodeMessage reg) {
    stub->async()->Connect(&ctx_, this);
    StartRead(&in_);
    Send(std::move(reg));
    StartCall();
  }
  // Queues a message; dropped once the stream failed.
  void Send(v1::NodeMessage m) {
    std::lock_guard<std::mutex> l(mu_);
    if (broken_) return;
    out_.push_back(std::move(m));
    if (!writing_) {
      writing_ = true;
      StartWrite(&out_.front());
    }
  }
  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> l(mu_);
    out_.pop_front();
    if (!ok) broken_ = true;
    if (broken_ || out_.empty()) {
      writing_ = false;
      return;
    }
    StartWrite(&out_.front());
  }
  void OnReadDone(bool ok) override {
    if (!ok) {
      std::lock_guard<std::mutex> l(mu_);
      broken_ = true;
      return;
    }
    node_->OnMessage(this, in_);
    StartRead(&in_);
  }
  void OnDone(const grpc::Status& s) override {
    status_ = s;
    node_->OnDone(this);
    delete this;
  }
  const grpc::Status& status() const { return status_; }

 private:
  Node* node_;
  grpc::ClientContext ctx_;
  v1::ControllerMessage in_;
  std::mutex mu_;
  std::deque<v1::NodeMessage> out_;  // front is being written
  bool writing_ = false;
  bool broken_ = false;
  grpc::Status status_;
};

// ---- Timer / WorkPool ----

Timer::Timer() : thread_([this] { Loop(); }) {}
Timer::~Timer() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}
void Timer::At(SteadyTime when, std::function<void()> fn) {
  std::lock_guard<std::mutex> l(mu_);
  bool earliest = q_.empty() || when < q_.top().when;
  q_.push(Item{when, seq_++, std::move(fn)});
  if (earliest) cv_.notify_one();
}
void Timer::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    if (q_.empty()) {
      cv_.wait(l);
      continue;
    }
    auto when = q_.top().when;
    if (std::chrono::steady_clock::now() < when) {
      cv_.wait_until(l, when);
      continue;
    }
    auto fn = std::move(const_cast<Item&>(q_.top()).fn);
    q_.pop();
    l.unlock();
    fn();
    l.lock();
  }
}

WorkPool::WorkPool(int threads) {
  for (int i = 0; i < threads; ++i)
    threads_.emplace_back([this] {
      std::unique_lock<std::mutex> l(mu_);
      while (true) {
        cv_.wait(l, [this] { return stop_ || !q_.empty(); });
        if (q_.empty()) return;
        auto fn = std::move(q_.front());
        q_.pop();
        l.unlock();
        fn();
        l.lock();
      }
    });
}
WorkPool::~WorkPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}
void WorkPool::Run(std::function<void()> fn) {
  std::lock_guard<std::mutex> l(mu_);
  q_.push(std::move(fn));
  cv_.notify_one();
}

// ---- Node ----

v1::NodeMessage Node::BuildRegister() {
  v1::NodeMessage m;
  auto* r = m.mutable_register_();
  r->set_node_name(cfg_.name);
  r->set_cpus(cfg_.cpus);
  r->set_real_memory_mib(cfg_.real_memory_mib);
  for (const auto& [job, run] : running_) {
    r->add_running_jobs(job);
    auto* jr = r->add_running_runs();
    jr->set_job_id(job);
    jr->set_run(run);
  }
  for (const auto& [job, f] : unacked_) *r->add_finished() = f;
  r->set_boot_time(emu_->boot_time());
  r->set_boot_id(emu_->boot_id());
  r->set_version("0.1.0-nodeemu");
  r->set_os("Linux (tessera-nodeemu)");
  r->set_arch("x86_64");
  return m;
}

void Node::Connect() {
  auto* s = new Session(this);
  Status cred = rpc::AttachCredential(emu_->codec(), s->ctx());
  std::lock_guard<std::mutex> l(mu_);
  if (!cred.ok()) {
    std::cerr << "tessera-nodeemu: " << cfg_.name << ": cannot create munge credential: "
              << cred.ToString() << "\n";
    delete s;
    emu_->counters().stream_errors++;
    emu_->timer().At(std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff_ms_),
                     [this] { emu_->pool().Run([this] { Connect(); }); });
    backoff_ms_ = std::min(backoff_ms_ * 2, kBackoffMaxMs);
    return;
  }
  session_ = s;
  ++gen_;
  registered_ = false;
  s->Begin(stub_, BuildRegister());
}

void Node::Send(v1::NodeMessage m) {
  if (session_ && registered_) session_->Send(std::move(m));
}

void Node::OnMessage(Session* s, const v1::ControllerMessage& m) {
  std::lock_guard<std::mutex> l(mu_);
  if (s != session_) return;
  if (!registered_) {
    if (!m.has_registered()) return;  // as noded: nothing counts before Registered
    registered_ = true;
    backoff_ms_ = kBackoffMinMs;
    if (m.registered().heartbeat_interval_s() > 0)
      emu_->set_heartbeat_s(m.registered().heartbeat_interval_s());
    for (uint64_t id : m.registered().kill_jobs()) running_.erase(id);
    emu_->NoteRegistered();
    uint64_t gen = gen_;
    emu_->timer().At(std::chrono::steady_clock::now() + std::chrono::seconds(emu_->heartbeat_s()),
                     [this, gen] { Heartbeat(gen); });
    if (!unacked_.empty())
      emu_->timer().At(std::chrono::steady_clock::now() + std::chrono::seconds(kResendS),
                       [this, gen] { Resend(gen); });
    return;
  }
  switch (m.msg_case()) {
    case v1::ControllerMessage::kLaunch: Launch(m.launch()); break;
    case v1::ControllerMessage::kSignal: {
      int sig = m.signal().signal();
      auto it = running_.find(m.signal().job_id());
      if (it == running_.end()) break;
      if (m.signal().run() != 0 && m.signal().run() != it->second) break;
      if (sig == 0 || sig == SIGTERM || sig == SIGKILL)
        End(it->first, it->second, v1::CANCELLED);
      break;
    }
    case v1::ControllerMessage::kFinishedAck: {
      auto it = unacked_.find(m.finished_ack().job_id());
      if (it != unacked_.end() &&
          (m.finished_ack().run() == 0 || m.finished_ack().run() == it->second.run())) {
        unacked_.erase(it);
        emu_->counters().acked++;
      }
      break;
    }
    case v1::ControllerMessage::kConfigureMig: {
      v1::NodeMessage reply;
      reply.mutable_mig_configured()->set_request_id(m.configure_mig().request_id());
      reply.mutable_mig_configured()->set_error("an emulated node has no GPUs");
      Send(std::move(reply));
      break;
    }
    default: break;  // probes, step grants, GPU drains: nothing to do without processes
  }
}

void Node::Launch(const v1::LaunchJob& l) {
  uint64_t job = l.job_id(), run = l.run();
  auto it = running_.find(job);
  if (it != running_.end() && it->second == run) return;  // idempotent per (job, run)
  if (unacked_.count(job) && unacked_[job].run() == run) return;
  running_[job] = run;
  emu_->counters().launches++;
  v1::NodeMessage started;
  started.mutable_started()->set_job_id(job);
  started.mutable_started()->set_start_time(EpochS());
  started.mutable_started()->set_run(run);
  Send(std::move(started));
  int64_t run_ms = emu_->options().run_ms;
  const std::string& name = l.name();  // "emu-ms=N": this job runs N ms (benchmarks' long jobs)
  if (name.rfind("emu-ms=", 0) == 0) run_ms = std::atoll(name.c_str() + 7);
  emu_->timer().At(std::chrono::steady_clock::now() + std::chrono::milliseconds(run_ms),
                   [this, job, run] {
                     std::lock_guard<std::mutex> g(mu_);
                     auto i = running_.find(job);
                     if (i != running_.end() && i->second == run) End(job, run, v1::COMPLETED);
                   });
}

void Node::End(uint64_t job, uint64_t run, v1::JobState state) {
  running_.erase(job);
  v1::JobFinished f;
  f.set_job_id(job);
  f.set_state(state);
  f.set_exit_code(0);
  f.set_exit_signal(state == v1::CANCELLED ? SIGTERM : 0);
  f.set_end_time(EpochS());
  f.set_run(run);
  bool first_unacked = unacked_.empty();
  unacked_[job] = f;
  emu_->counters().finished++;
  v1::NodeMessage m;
  *m.mutable_finished() = f;
  Send(std::move(m));
  if (first_unacked) {
    uint64_t gen = gen_;
    emu_->timer().At(std::chrono::steady_clock::now() + std::chrono::seconds(kResendS),
                     [this, gen] { Resend(gen); });
  }
}

void Node::Resend(uint64_t gen) {
  std::lock_guard<std::mutex> l(mu_);
  if (gen != gen_ || !registered_ || unacked_.empty()) return;
  for (const auto& [job, f] : unacked_) {
    v1::NodeMessage m;
    *m.mutable_finished() = f;
    Send(std::move(m));
  }
  emu_->timer().At(std::chrono::steady_clock::now() + std::chrono::seconds(kResendS),
                   [this, gen] { Resend(gen); });
}

void Node::Heartbeat(uint64_t gen) {
  std::lock_guard<std::mutex> l(mu_);
  if (gen != gen_ || !registered_) return;
  v1::NodeMessage m;
  auto* hb = m.mutable_heartbeat();
  for (const auto& [job, run] : running_) {
    hb->add_running_jobs(job);
    auto* jr = hb->add_running_runs();
    jr->set_job_id(job);
    jr->set_run(run);
  }
  hb->set_time(EpochS());
  hb->set_cpu_load_x100(0);  // as noded on an idle host would report (values the controller shows)
  hb->set_free_mem_mib(cfg_.real_memory_mib);
  Send(std::move(m));
  emu_->timer().At(std::chrono::steady_clock::now() + std::chrono::seconds(emu_->heartbeat_s()),
                   [this, gen] { Heartbeat(gen); });
}

void Node::OnDone(Session* s) {
  std::lock_guard<std::mutex> l(mu_);
  if (s != session_) return;
  session_ = nullptr;
  ++gen_;
  if (registered_) {
    emu_->counters().registered--;
  } else if (emu_->counters().stream_errors++ % 1000 == 0) {  // a sample of why, not a flood
    std::cerr << "tessera-nodeemu: " << cfg_.name << ": stream ended before registration: "
              << rpc::FromGrpc(s->status()).ToString() << "\n";
  }
  registered_ = false;
  int64_t wait = backoff_ms_;
  backoff_ms_ = std::min(backoff_ms_ * 2, kBackoffMaxMs);
  emu_->timer().At(std::chrono::steady_clock::now() + std::chrono::milliseconds(wait),
                   [this] { emu_->pool().Run([this] { Connect(); }); });
}

// ---- Emulator ----

Emulator::Emulator(const ClusterConfig& cfg, Options opts, const rpc::CredentialCodec& codec)
    : cfg_(cfg), opts_(std::move(opts)), codec_(codec), heartbeat_s_(cfg.HeartbeatInterval()),
      boot_time_(EpochS()), pool_(opts_.connect_threads) {
  std::ifstream bid("/proc/sys/kernel/random/boot_id");
  std::getline(bid, boot_id_);
  if (opts_.per_channel < 1) opts_.per_channel = 1;
  for (size_t i = 0; i < opts_.nodes.size(); ++i) {
    if (i % opts_.per_channel == 0) {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a TCP connection of its own
      args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kBackoffMinMs);
      args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kBackoffMaxMs);
      args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, kBackoffMinMs);
      std::string target = cfg_.ctld_addr + ":" + std::to_string(cfg_.ctld_port);
      std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
      if (cfg_.TlsEnabled()) {
        grpc::SslCredentialsOptions so;
        auto ca = ReadFile(cfg_.tls_ca);
        if (ca.ok()) so.pem_root_certs = *ca;
        creds = grpc::SslCredentials(so);
      }
      stubs_.push_back(v1::NodeAgent::NewStub(grpc::CreateCustomChannel(target, creds, args)));
    }
    const NodeConfig* nc = cfg_.FindNode(opts_.nodes[i]);
    nodes_.push_back(std::make_unique<Node>(this, *nc, stubs_.back().get()));
  }
}

void Emulator::Start() {
  for (auto& n : nodes_) {
    Node* p = n.get();
    pool_.Run([p] { p->Connect(); });
  }
}

void Emulator::NoteRegistered() {
  counters_.registrations++;
  if (++counters_.registered == node_count()) all_registered_ms_ = EpochMs();
}

}  // namespace tessera::nodeemu
