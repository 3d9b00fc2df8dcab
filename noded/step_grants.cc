#include "noded/step_grants.h"

#include <algorithm>

namespace tessera::noded {

namespace v1 = tessera::v1;

namespace {
std::string StepName(uint64_t job_id, uint32_t step_id) {
  return std::to_string(job_id) + "." + std::to_string(step_id);
}
}  // namespace

Status CheckStepAccess(const v1::StepGrant* grant, uint64_t job_id, uint32_t step_id,
                       uint32_t caller_uid, const std::string& node) {
  if (!grant)
    return PermissionDenied("step " + StepName(job_id, step_id) + " is not granted on node " +
                            node + " (the controller did not create it here, or the job ended)");
  if (caller_uid != 0 && caller_uid != grant->uid())
    return PermissionDenied("uid " + std::to_string(caller_uid) +
                            " may not run tasks of step " + StepName(job_id, step_id) +
                            " on node " + node + ": it belongs to uid " +
                            std::to_string(grant->uid()) +
                            (grant->user().empty() ? "" : " (" + grant->user() + ")"));
  if (grant->ranks_size() == 0)
    return PermissionDenied("step " + StepName(job_id, step_id) + " has no tasks on node " + node);
  return Status::Ok();
}

void StepGrants::Add(const v1::StepGrant& grant) {
  std::lock_guard<std::mutex> lock(mu_);
  StepKey key{grant.job_id(), grant.step_id()};
  auto it = grants_.find(key);
  if (it != grants_.end()) {
    if (!it->second.claimed) it->second.grant = grant;
    return;
  }
  grants_[key] = Entry{grant, false};
  order_.push_back(key);
  for (auto it = order_.begin(); grants_.size() > kMaxGrants && it != order_.end();) {
    auto g = grants_.find(*it);
    if (g != grants_.end() && g->second.claimed) {
      ++it;
      continue;
    }
    if (g != grants_.end()) grants_.erase(g);
    it = order_.erase(it);
  }
  cv_.notify_all();
}

std::optional<v1::StepGrant> StepGrants::Wait(uint64_t job_id, uint32_t step_id,
                                              std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  StepKey key{job_id, step_id};
  cv_.wait_for(lock, wait, [&] { return grants_.count(key) > 0; });
  auto it = grants_.find(key);
  if (it == grants_.end()) return std::nullopt;
  return it->second.grant;
}

bool StepGrants::Claim(uint64_t job_id, uint32_t step_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = grants_.find({job_id, step_id});
  if (it == grants_.end() || it->second.claimed) return false;
  it->second.claimed = true;
  return true;
}

void StepGrants::DropJob(uint64_t job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = grants_.begin(); it != grants_.end();)
    it = it->first.first == job_id ? grants_.erase(it) : std::next(it);
  order_.erase(std::remove_if(order_.begin(), order_.end(),
                              [&](const StepKey& k) { return k.first == job_id; }),
               order_.end());
}

size_t StepGrants::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return grants_.size();
}

}  // namespace tessera::noded
