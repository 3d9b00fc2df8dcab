#pragma once
// noded's side of NodeAgent.Connect: one long-lived bidi stream to ctld, re-opened forever with
// backoff (0.5 s doubling to 5 s, reset after a successful registration) when it fails.
//
// Per connection: Register (node facts, running jobs, unacked JobFinished) is sent first; the
// first answer must be Registered (heartbeat interval, kill_jobs -> cancelled), else the
// connection is dropped after 30 s. Then, on one thread: controller messages are applied to the
// JobManager, job events are sent as they appear, Heartbeat every interval, and every unacked
// JobFinished is resent every 5 s. GPU health changes and MIG replies (GpuManager) are sent as
// they appear; ConfigureMig is handed to the GpuManager. A reader thread only moves received messages into a queue.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/cluster_config.h"
#include "noded/gpu_backend.h"
#include "noded/gpu_manager.h"
#include "noded/rdma.h"
#include "noded/job_manager.h"
#include "noded/step_service.h"
#include "rpc/munge_codec.h"
#include "tessera/v1/agent.grpc.pb.h"

namespace tessera::noded {

struct NodeDescription {
  std::string name;
  uint32_t cpus = 0;
  uint64_t memory_mib = 0;
  std::vector<GpuInfo> gpus;
  std::vector<RdmaPort> hcas;
  int64_t boot_time = 0;
  std::string boot_id;  // DiscoverBootId()
  std::string version = "0.1.0";
};

inline constexpr int64_t kFinishedResendSeconds = 5;

class AgentClient {
 public:
  // `gpus` (may be null): GPU health and MIG reconfiguration; Register then reports its current
  // view of the GPUs (health, MIG layout with the jobs using each slice) instead of node.gpus.
  // `steps` (may be null): StepGrants are handed to it; a job's end (FinishedAck, cancel,
  // kill_jobs) stops the job's steps and forgets its grants.
  AgentClient(const ClusterConfig& cfg, NodeDescription node, JobManager& jobs,
              const rpc::CredentialCodec& codec, const Clock& clock, GpuManager* gpus = nullptr,
              StepService* steps = nullptr);

  // Connects, serves and reconnects until `stop` becomes true (then returns promptly after a
  // Wake()).
  void Run(const std::atomic<bool>& stop);
  // Thread-safe: wakes the loop (a job may have ended, or stop was requested); every running
  // job is checked.
  void Wake();
  // Thread-safe: wakes the loop because jobs `job_ids` ended (stepds' notifications); only those
  // jobs are checked now (all of them are at least once a second anyway).
  void WakeFor(const std::vector<uint64_t>& job_ids);

  tessera::v1::NodeMessage BuildRegister();

 private:
  // One connection. Returns true when it got as far as Registered.
  bool Session(const std::atomic<bool>& stop);
  using Stream =
      grpc::ClientReaderWriter<tessera::v1::NodeMessage, tessera::v1::ControllerMessage>;
  void Apply(const tessera::v1::ControllerMessage& m);
  // Before registration only Registered is accepted; afterwards messages go to Apply.
  void Handle(const tessera::v1::ControllerMessage& m, bool* registered);
  // Sends job events, a due heartbeat and due resends. False when the stream broke.
  // `ended`: jobs whose stepd notified; `full`: check every running job and the GPUs.
  bool Flush(Stream* stream, int64_t now, int64_t* last_hb, int64_t* last_resend,
             const std::vector<uint64_t>& ended, bool full);
  // Sleeps up to `ms`, returning early on Wake().
  void Sleep(int64_t ms);

  const ClusterConfig& cfg_;
  NodeDescription node_;
  JobManager& jobs_;
  GpuManager* gpus_;
  StepService* steps_;
  const rpc::CredentialCodec& codec_;
  const Clock& clock_;
  std::unique_ptr<tessera::v1::NodeAgent::Stub> stub_;
  int64_t heartbeat_s_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<tessera::v1::ControllerMessage> inbox_;
  bool reader_done_ = false;
  bool woken_ = false;
  bool poll_all_ = false;              // a Wake() asked for a check of every running job
  std::vector<uint64_t> ended_;        // WakeFor() ids not handled yet
  std::vector<tessera::v1::NodeMessage> pending_;  // replies produced by Apply (loop thread)
};

}  // namespace tessera::noded
