#pragma once
// The steps the controller allowed on this node (agent.proto StepGrant, issue #4 trun), kept in
// memory only: a noded restart forgets them (trun's RunTasks then fails; the job goes on).
//
// Invariants:
//  - At most one grant per (job_id, step_id); a repeated grant replaces the old one unless
//    that step already started here (the controller's resend is idempotent).
//  - A grant can be claimed (RunTasks started) once; a second claim is refused.
//  - DropJob forgets every grant of a job (job ended: FinishedAck or cancel) and says which
//    steps were running so the caller can stop their tasks.
//  - At most kMaxGrants grants are kept; the oldest unclaimed ones are dropped beyond that.
// Thread-safe: the agent loop adds and drops, StepAgent handlers wait, check and claim.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "common/status.h"
#include "tessera/v1/agent.pb.h"

namespace tessera::noded {

using StepKey = std::pair<uint64_t, uint32_t>;  // (job_id, step_id)

// Pure: may `caller_uid` run the tasks of `grant`? Root (uid 0) always may. `grant` null = the
// controller did not grant that step on this node. kPermissionDenied with a message that names
// the step, the node and the uids.
Status CheckStepAccess(const tessera::v1::StepGrant* grant, uint64_t job_id, uint32_t step_id,
                       uint32_t caller_uid, const std::string& node);

class StepGrants {
 public:
  static constexpr size_t kMaxGrants = 4096;

  void Add(const tessera::v1::StepGrant& grant);
  // Waits up to `wait` for the grant to arrive (it travels on the agent stream and may lag the
  // controller's CreateStep answer by a moment). nullopt when none came.
  std::optional<tessera::v1::StepGrant> Wait(uint64_t job_id, uint32_t step_id,
                                             std::chrono::milliseconds wait);
  // Marks the step started. False when it already was (or the grant is gone).
  bool Claim(uint64_t job_id, uint32_t step_id);
  // Forgets every grant of the job.
  void DropJob(uint64_t job_id);
  size_t size() const;

 private:
  struct Entry {
    tessera::v1::StepGrant grant;
    bool claimed = false;
  };
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<StepKey, Entry> grants_;
  std::deque<StepKey> order_;  // arrival order, for the cap
};

}  // namespace tessera::noded
