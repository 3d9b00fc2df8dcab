// Dynamic MIG (MigStrategy=dynamic): ctld applies the scheduler's MigReconfigs. Each is checked
// against the live node (connected, GPU in MIG mode, every destroyed instance still free), sent
// to noded as ConfigureMig with explicit starts, and the GPU is held (MigInFlight: the next
// snapshots list it busy with its units not free) until noded answers MigConfigured. The answer
// updates the node's GPU layout (OnGpuUpdate, agent_service.cc) and a new cycle starts the jobs
// on the new instances. A refused or unanswered reconfiguration is logged, the GPU released and
// not planned again for a minute. A gang's reconfigurations (one job, several nodes) are each
// sent to their node; the job starts once every node has answered (the scheduler keeps it in
// MigReconfiguring while any is in flight). When the live check refuses one of them, those of
// the same cycle serving only the same job(s) are not sent either (all or nothing).
#include <algorithm>
#include <set>

#include "ctld/controller.h"
#include "ctld/log.h"
#include "ctld/nodes/gpu_use.h"

namespace tessera::ctld {
namespace {

constexpr int64_t kRefusedCooldownS = 60;

std::string Describe(const sched::MigReconfig& r) {
  std::string s = "node " + r.node + " GPU " + std::to_string(r.gpu_index) + ": destroy " +
                  std::to_string(r.destroy.size()) + " instance(s), create";
  for (const auto& [p, st] : r.create) s += " " + p + "@" + std::to_string(st);
  s += " for job(s)";
  for (uint64_t j : r.for_jobs) s += " " + std::to_string(j);
  return s;
}

// Why the live node no longer allows `r` ("" = it does).
std::string LiveRefusal(const NodeRuntime* n, const sched::MigReconfig& r) {
  if (!n || !n->link) return "node not connected";
  auto g = std::find_if(n->gpus.begin(), n->gpus.end(),
                        [&](const GpuState& s) { return s.index == r.gpu_index; });
  if (g == n->gpus.end()) return "no such GPU";
  if (std::count(n->alloc_gpus.begin(), n->alloc_gpus.end(), r.gpu_index)) return "GPU held whole";
  for (const auto& m : g->mig)
    if (m.in_use_by_job && std::count(r.destroy.begin(), r.destroy.end(), m.uuid))
      return "instance " + m.uuid + " in use by job " + std::to_string(m.in_use_by_job);
  return "";
}

}  // namespace

void Controller::ApplyMigReconfigs(const std::vector<sched::MigReconfig>& reconfigs) {
  int64_t now = clock_->Now();
  // A gang's reconfigurations (several nodes, one job) go all or nothing: when the live state
  // refuses one, the others made only for the jobs it serves are not applied either.
  std::vector<std::string> why(reconfigs.size());
  std::set<uint64_t> refused_jobs;
  for (size_t i = 0; i < reconfigs.size(); ++i) {
    why[i] = LiveRefusal(nodes_.Find(reconfigs[i].node), reconfigs[i]);
    const auto& jobs = reconfigs[i].for_jobs;
    if (!why[i].empty()) refused_jobs.insert(jobs.begin(), jobs.end());
  }
  for (size_t i = 0; i < reconfigs.size(); ++i) {
    const auto& r = reconfigs[i];
    if (mig_in_flight_.Find(r.node, r.gpu_index)) continue;
    auto refused = [&](uint64_t j) { return refused_jobs.count(j) > 0; };
    if (why[i].empty() && !r.for_jobs.empty() &&
        std::all_of(r.for_jobs.begin(), r.for_jobs.end(), refused))
      why[i] = "another node of the same job refused its reconfiguration";
    if (!why[i].empty()) {
      Log("dynamic MIG: not applied (" + why[i] + "): " + Describe(r));
      continue;
    }
    std::vector<NodeLink::MigPlacementReq> create;
    for (const auto& [p, st] : r.create) create.push_back({p, static_cast<int64_t>(st)});
    int64_t until = now + std::max<int64_t>(1, sched_cfg_->mig_reconfig_seconds);
    mig_in_flight_.Start(r.node, r.gpu_index, {until, r.for_jobs});
    Log("dynamic MIG: reconfiguring " + Describe(r));
    std::string node = r.node;
    uint32_t gpu = r.gpu_index;
    ConfigureMig(node, gpu, false, r.destroy, create, [this, node, gpu](Result<GpuState> res) {
      mig_in_flight_.Finish(node, gpu);
      if (res.ok()) {
        Log("dynamic MIG: node " + node + " GPU " + std::to_string(gpu) + " reconfigured");
      } else {
        Log("dynamic MIG: node " + node + " GPU " + std::to_string(gpu) +
            " reconfiguration refused: " + res.status().message() + " (GPU released)");
        mig_in_flight_.Refused(node, gpu, clock_->Now() + kRefusedCooldownS);
      }
      RequestSchedule();
    });
  }
}

void Controller::ConfigureMig(const std::string& node, uint32_t gpu, bool destroy_all,
                              std::vector<std::string> destroy,
                              const std::vector<NodeLink::MigPlacementReq>& create, MigDone done) {
  NodeRuntime* n = nodes_.Find(node);
  if (!n) return done(NotFound("Invalid node name specified: " + node));
  if (!n->link) return done(Unavailable("node " + node + " is not connected"));
  auto g = std::find_if(n->gpus.begin(), n->gpus.end(), [&](const GpuState& s) { return s.index == gpu; });
  if (g == n->gpus.end()) return done(NotFound("node " + node + " has no GPU " + std::to_string(gpu)));
  if (Status busy = MigChangeAllowed(*n, gpu); !busy.ok()) return done(busy);
  if (!g->mig_enabled) return done(FailedPrecondition("GPU " + std::to_string(gpu) + " of " + node + " is not in MIG mode"));
  if (destroy_all)
    for (const auto& m : g->mig) destroy.push_back(m.uuid);
  uint64_t id = next_mig_request_++;
  mig_requests_[id] = std::move(done);
  n->link->ConfigureMig(id, gpu, create, destroy);
  // A node that never answers must not leave the caller waiting forever.
  auto timer = std::make_shared<boost::asio::steady_timer>(core_->io(), std::chrono::seconds(15));
  timer->async_wait([this, id, timer](const boost::system::error_code&) {
    auto it = mig_requests_.find(id);
    if (it == mig_requests_.end()) return;
    auto cb = std::move(it->second);
    mig_requests_.erase(it);
    cb(Status(Code::kDeadlineExceeded, "the node did not answer the MIG request in 15 s"));
  });
}

void Controller::OnMigConfigured(uint64_t request_id, const Status& st, const GpuState& gpu) {
  auto it = mig_requests_.find(request_id);
  if (it == mig_requests_.end()) return;
  auto cb = std::move(it->second);
  mig_requests_.erase(it);
  if (st.ok()) cb(gpu);
  else cb(st);
}

}  // namespace tessera::ctld
