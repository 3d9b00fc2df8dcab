#pragma once
// tessera-nodeemu: one process holding N NodeAgent.Connect streams to tessera-ctld, each
// registering a distinct node of the config exactly as tessera-noded does (munge credential of
// the calling user, Register first, heartbeats every interval, JobFinished resent until
// FinishedAck). Launched jobs run no process: each "runs" for a fixed time and is reported
// COMPLETED (exit 0) (a job named "emu-ms=N" runs N ms instead); a cancel (SignalJob with signal 0, SIGTERM or SIGKILL) ends it CANCELLED
// at once. For measuring the controller with 1,000-10,000 nodes on one host (bench/nodeemu).
//
// Threads: gRPC's callback threads run the streams; one timer thread runs job ends,
// heartbeats and resends; a small pool opens (and re-opens, with noded's backoff: 0.5 s doubling
// to 5 s, reset on registration) the streams, since each open encodes a munge credential.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "common/cluster_config.h"
#include "rpc/munge_codec.h"
#include "tessera/v1/agent.grpc.pb.h"

namespace tessera::nodeemu {

using SteadyTime = std::chrono::steady_clock::time_point;

struct Options {
  std::vector<std::string> nodes;  // names from the config, in order
  int64_t run_ms = 100;            // how long each launched job "runs"
  int per_channel = 1;             // streams sharing one TCP connection (1: one per node, as noded)
  int connect_threads = 8;
};

struct Counters {
  std::atomic<int64_t> registered{0};   // streams registered now
  std::atomic<int64_t> registrations{0};
  std::atomic<int64_t> launches{0};
  std::atomic<int64_t> finished{0};     // JobFinished sent the first time
  std::atomic<int64_t> acked{0};
  std::atomic<int64_t> stream_errors{0};
};

// Runs `fn` at (or soon after) `when`, in time order, on one thread.
class Timer {
 public:
  Timer();
  ~Timer();
  void At(SteadyTime when, std::function<void()> fn);

 private:
  struct Item {
    SteadyTime when;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Item& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };
  void Loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> q_;
  uint64_t seq_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

// A fixed pool running queued work (stream opens).
class WorkPool {
 public:
  explicit WorkPool(int threads);
  ~WorkPool();
  void Run(std::function<void()> fn);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::queue<std::function<void()>> q_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

class Session;

// One emulated node: its jobs and unacknowledged ends survive its streams.
class Node {
 public:
  Node(class Emulator* emu, const NodeConfig& cfg, tessera::v1::NodeAgent::Stub* stub)
      : emu_(emu), cfg_(cfg), stub_(stub) {}
  void Connect();  // opens a stream (pool thread)

  // Called by the session (gRPC threads).
  void OnMessage(Session* s, const tessera::v1::ControllerMessage& m);
  void OnDone(Session* s);

 private:
  tessera::v1::NodeMessage BuildRegister();
  void Launch(const tessera::v1::LaunchJob& l);
  void End(uint64_t job, uint64_t run, tessera::v1::JobState state);  // mu_ held
  void Heartbeat(uint64_t gen);
  void Resend(uint64_t gen);
  void Send(tessera::v1::NodeMessage m);  // mu_ held; dropped without a live session

  Emulator* emu_;
  const NodeConfig& cfg_;
  tessera::v1::NodeAgent::Stub* stub_;
  std::mutex mu_;
  Session* session_ = nullptr;
  uint64_t gen_ = 0;  // stream generation: timers of an older stream do nothing
  bool registered_ = false;
  int64_t backoff_ms_ = 500;
  std::map<uint64_t, uint64_t> running_;  // job -> run
  std::map<uint64_t, tessera::v1::JobFinished> unacked_;
};

class Emulator {
 public:
  Emulator(const ClusterConfig& cfg, Options opts, const rpc::CredentialCodec& codec);
  // Opens every stream; returns at once (the streams live on gRPC's and the timer's threads).
  void Start();
  int64_t node_count() const { return static_cast<int64_t>(nodes_.size()); }
  Counters& counters() { return counters_; }
  // The last time the registered count reached every node (epoch ms; 0 = never).
  int64_t all_registered_ms() const { return all_registered_ms_.load(); }

  // For Node.
  const rpc::CredentialCodec& codec() const { return codec_; }
  Timer& timer() { return timer_; }
  WorkPool& pool() { return pool_; }
  const Options& options() const { return opts_; }
  int64_t heartbeat_s() const { return heartbeat_s_.load(); }
  void set_heartbeat_s(int64_t s) { heartbeat_s_ = s; }
  const std::string& boot_id() const { return boot_id_; }
  int64_t boot_time() const { return boot_time_; }
  void NoteRegistered();

 private:
  const ClusterConfig& cfg_;
  Options opts_;
  const rpc::CredentialCodec& codec_;
  Counters counters_;
  std::atomic<int64_t> all_registered_ms_{0};
  std::atomic<int64_t> heartbeat_s_;
  std::string boot_id_;
  int64_t boot_time_;
  std::vector<std::unique_ptr<tessera::v1::NodeAgent::Stub>> stubs_;
  std::vector<std::unique_ptr<Node>> nodes_;
  Timer timer_;
  WorkPool pool_;
};

}  // namespace tessera::nodeemu
