// drf: dominant-resource fairness between queues (accounts), issue 16 §3.
//
// An account's dominant share is the largest of its running jobs' CPUs, memory and GPUs as a
// fraction of the cluster's (snapshot nodes' totals). The plugin orders pending jobs by
// progressive filling (Ghodsi et al., DRF): the account with the lowest dominant share takes its
// next job, whose whole request is then added to that account's share, and so on; ties between
// accounts go to the name. Within one account, jobs keep the order of the plugins listed before
// drf (their priority as computed at session open), then submit time, then id.
//
// Combination (Session: the first non-zero job-order answer wins, in plugin order):
//   SchedulerPlugins=drf,priority,...   accounts take turns by dominant share; priority (with
//                                       fair share in it) orders each account's own jobs;
//   SchedulerPlugins=priority,drf,...   priority decides; DRF only breaks equal priorities.
// The ranking is computed once, when jobs are first ordered (after every plugin opened, so the
// priority plugin's JobInfo::priority is set whichever comes first in the list).
#include <algorithm>
#include <map>
#include <memory>
#include <queue>

#include "ctld/sched/plugins/plugins.h"
#include "ctld/sched/session.h"

namespace tessera::sched {
namespace {

struct DrfState {
  bool built = false;
  std::vector<uint32_t> rank;  // JobInfo::idx -> position
};

double Dominant(const Amount& a, const Amount& total) {
  double d = 0;
  if (total.cpus > 0) d = std::max(d, double(a.cpus) / double(total.cpus));
  if (total.mem > 0) d = std::max(d, double(a.mem) / double(total.mem));
  if (total.gpus > 0) d = std::max(d, double(a.gpus) / double(total.gpus));
  return d;
}

void Build(Session& s, DrfState& st) {
  st.built = true;
  const ClusterSnapshot& snap = s.snapshot();
  Amount total;
  for (const auto& n : snap.nodes)
    total += {int64_t(n.cpus_total), int64_t(n.mem_total), int64_t(n.gpus.size())};
  std::map<std::string, Amount> used;
  for (const auto& r : snap.running)
    for (const auto& u : r.nodes)
      used[r.account] += {int64_t(u.cpus), int64_t(u.mem_mib), int64_t(u.gpus)};
  st.rank.assign(s.jobs().size(), 0);
  std::map<std::string, std::vector<const JobInfo*>> queues;
  for (const auto& j : s.jobs()) queues[j.snap->account].push_back(&j);
  for (auto& [acct, q] : queues)
    std::sort(q.begin(), q.end(), [](const JobInfo* a, const JobInfo* b) {
      if (a->priority != b->priority) return a->priority > b->priority;
      if (a->snap->submit_time != b->snap->submit_time)
        return a->snap->submit_time < b->snap->submit_time;
      return a->snap->id < b->snap->id;
    });
  using Entry = std::pair<double, std::string>;  // (dominant share, account): smallest first
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  std::map<std::string, size_t> next;
  for (const auto& [acct, q] : queues) heap.push({Dominant(used[acct], total), acct});
  uint32_t pos = 0;
  while (!heap.empty()) {
    auto [share, acct] = heap.top();
    heap.pop();
    const auto& q = queues[acct];
    size_t& i = next[acct];
    const JobInfo* j = q[i++];
    st.rank[j->idx] = pos++;
    used[acct] += j->total;
    if (i < q.size()) heap.push({Dominant(used[acct], total), acct});
  }
}

class DrfPlugin : public Plugin {
 public:
  explicit DrfPlugin(const SchedConfig&) {}
  std::string Name() const override { return "drf"; }
  void OnSessionOpen(Session& s) override {
    auto st = std::make_shared<DrfState>();
    Session* sp = &s;
    s.AddJobRank([st, sp]() -> const std::vector<uint32_t>& {
      if (!st->built) Build(*sp, *st);
      return st->rank;
    });
  }
};

}  // namespace

void RegisterDrfPlugin(Registry& r) { r.AddPlugin("drf", Simple<DrfPlugin>()); }

}  // namespace tessera::sched
