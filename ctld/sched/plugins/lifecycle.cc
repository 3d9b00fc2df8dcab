// lifecycle: holds, begin time, dependencies (incl. singleton) and job-array % throttles.
#include <set>
#include <unordered_map>

#include "ctld/sched/plugins/plugins.h"
#include "ctld/sched/session.h"

namespace tessera::sched {
namespace {

class LifecyclePlugin : public Plugin {
 public:
  explicit LifecyclePlugin(const SchedConfig&) {}
  std::string Name() const override { return "lifecycle"; }

  void OnSessionOpen(Session& s) override {
    const ClusterSnapshot& snap = s.snapshot();
    for (const auto& p : snap.pending) states_[p.id] = DepJobState::kPending;
    for (const auto& r : snap.running) {
      states_[r.id] = DepJobState::kRunning;
      running_names_.insert({r.user, r.name});
      if (r.array_job_id) ++array_running_[r.array_job_id];
    }
    for (const auto& f : snap.finished)
      states_[f.id] = f.ok ? DepJobState::kCompletedOk : DepJobState::kEndedNotOk;
    int64_t now = s.now();
    s.AddEligible([this, now](const JobInfo& j) -> std::string {
      const JobSnap& js = *j.snap;
      if (!js.hold_reason.empty()) return js.hold_reason;
      if (js.begin_time > now) return "BeginTime";
      if (j.dependency.Empty()) return "";
      bool free = !running_names_.count({js.user, js.name});
      auto lookup = [this](uint64_t id) {
        auto it = states_.find(id);
        return it == states_.end() ? DepJobState::kUnknown : it->second;
      };
      switch (EvalDependency(j.dependency, lookup, free)) {
        case DepOutcome::kSatisfied: return "";
        case DepOutcome::kWaiting: return "Dependency";
        case DepOutcome::kNever: return "DependencyNeverSatisfied";
      }
      return "";
    });
    s.AddAllocatable([this](const JobInfo& j) -> std::string {
      const JobSnap& js = *j.snap;
      if (js.array_job_id && js.array_max_running) {
        auto it = array_running_.find(js.array_job_id);
        if (it != array_running_.end() && it->second >= js.array_max_running) return "JobArrayTaskLimit";
      }
      if (j.dependency.HasSingleton() && running_names_.count({js.user, js.name})) return "Dependency";
      return "";
    });
    s.AddOnAllocated([this](const JobInfo& j, const std::vector<NodePlacement>&) {
      if (j.snap->array_job_id) ++array_running_[j.snap->array_job_id];
      running_names_.insert({j.snap->user, j.snap->name});
    });
  }

 private:
  std::unordered_map<uint64_t, DepJobState> states_;
  std::set<std::pair<std::string, std::string>> running_names_;
  std::unordered_map<uint64_t, uint32_t> array_running_;
};

}  // namespace

void RegisterLifecyclePlugin(Registry& r) { r.AddPlugin("lifecycle", Simple<LifecyclePlugin>()); }

}  // namespace tessera::sched
