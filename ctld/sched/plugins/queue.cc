// queue: hierarchical queues (issue 16 §2; the model in ctld/sched/queues.h). Registers nothing
// unless queues are active (some account sets Guarantee=, Limit=, Weight= or Reclaimable=no).
//  - Job order: accounts take turns by how full their deserved share is (progressive filling,
//    below), so idle capacity is shared out by Weight within one cycle; within an account,
//    priority. First in SchedulerPlugins= (as RunCycle adds it) it decides the order; later,
//    it only breaks ties.
//  - Allocatable: a job its account's Limit= (or an ancestor's) cannot hold waits with reason
//    AssocGrpGRES / AssocGrpCpuLimit / AssocGrpMemLimit; jobs started in the cycle count.
//  - At session close: CycleResult::queues (guarantee, limit, weight, allocated, demand,
//    deserved per account) for tshare, tessera-sim and the scenarios.
// The table is built at the first callback (after enqueue: demand = eligible jobs).
#include <algorithm>
#include <memory>
#include <queue>
#include <unordered_map>

#include "ctld/sched/plugins/plugins.h"
#include "ctld/sched/queues.h"
#include "ctld/sched/session.h"

namespace tessera::sched {
namespace {

struct QueueState {
  bool built = false;
  QueueTable table;
  std::vector<int> account;  // JobInfo::idx -> queue
  std::vector<uint32_t> rank;  // JobInfo::idx -> position
};

// Progressive filling (as drf.cc, against deserved shares): the account whose allocation is the
// smallest fraction of its deserved share takes its next job (priority, submit time, id), whose
// request is then added, and so on; ties go to the name. A job its account's deserved share
// does not cover (fraction > 1) comes after every job that is covered.
double Fraction(const Amount& used, const QueueShare& q) {
  const int64_t u[3] = {used.cpus, used.mem, used.gpus};
  const int64_t d[3] = {q.deserved.cpu, q.deserved.mem, q.deserved.gpu};
  double f = 0;
  for (int k = 0; k < 3; ++k) {
    if (u[k] <= 0) continue;
    f = std::max(f, d[k] > 0 ? double(u[k]) / double(d[k]) : 1e9 + double(u[k]));
  }
  return f;
}

void Build(Session& s, QueueState& st) {
  st.built = true;
  std::vector<std::pair<const std::string*, QueueAmount>> demand;
  for (const auto& j : s.jobs())
    if (j.stage != JobInfo::Stage::kPending)
      demand.push_back({&j.snap->account, Requested(*j.snap, j.total)});
  st.table.Build(s.config(), s.snapshot(), demand);
  st.account.assign(s.jobs().size(), -1);
  st.rank.assign(s.jobs().size(), 0);
  // One entry per account that has jobs (ids local to this function; no string work per job
  // beyond one hash lookup).
  struct Acct {
    const std::string* name;
    int table = -1;
    uint32_t name_rank = 0;  // position among the names (ties between fractions)
    QueueShare share;        // deserved, allocated (zero for an account not in the table)
    Amount used;
    std::vector<const JobInfo*> jobs;
    size_t next = 0;
  };
  std::vector<Acct> accts;
  std::unordered_map<std::string, uint32_t> local;
  for (const auto& j : s.jobs()) {
    auto [it, fresh] = local.try_emplace(j.snap->account, uint32_t(accts.size()));
    if (fresh) {
      accts.emplace_back();
      accts.back().name = &it->first;
      accts.back().table = st.table.Find(j.snap->account);
      if (accts.back().table >= 0) accts.back().share = st.table.Share(accts.back().table);
    }
    Acct& a = accts[it->second];
    st.account[j.idx] = a.table;
    a.jobs.push_back(&j);
  }
  std::vector<uint32_t> by_name(accts.size());
  for (uint32_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(),
            [&](uint32_t a, uint32_t b) { return *accts[a].name < *accts[b].name; });
  for (uint32_t r = 0; r < by_name.size(); ++r) accts[by_name[r]].name_rank = r;
  for (auto& a : accts) {
    a.used = {a.share.allocated.cpu, a.share.allocated.mem, a.share.allocated.gpu};
    std::sort(a.jobs.begin(), a.jobs.end(), [](const JobInfo* x, const JobInfo* y) {
      if (x->priority != y->priority) return x->priority > y->priority;
      if (x->snap->submit_time != y->snap->submit_time) return x->snap->submit_time < y->snap->submit_time;
      return x->snap->id < y->snap->id;
    });
  }
  using Entry = std::pair<double, uint32_t>;  // (fraction after its next job, name rank)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  auto push = [&](uint32_t i) {
    const Acct& a = accts[i];
    if (a.next >= a.jobs.size()) return;
    Amount after = a.used;
    after += a.jobs[a.next]->total;
    heap.push({Fraction(after, a.share), a.name_rank});
  };
  for (uint32_t i = 0; i < accts.size(); ++i) push(i);
  uint32_t pos = 0;
  while (!heap.empty()) {
    uint32_t i = by_name[heap.top().second];
    heap.pop();
    Acct& a = accts[i];
    const JobInfo* j = a.jobs[a.next++];
    st.rank[j->idx] = pos++;
    a.used += j->total;
    push(i);
  }
}

class QueuePlugin : public Plugin {
 public:
  explicit QueuePlugin(const SchedConfig& c) : active_(QueuesActive(c)) {}
  std::string Name() const override { return "queue"; }

  void OnSessionOpen(Session& s) override {
    if (!active_) return;
    auto st = std::make_shared<QueueState>();
    st_ = st;
    Session* sp = &s;
    s.AddJobRank([st, sp]() -> const std::vector<uint32_t>& {
      if (!st->built) Build(*sp, *st);
      return st->rank;
    });
    s.AddAllocatable([st, sp](const JobInfo& j) {
      if (!st->built) Build(*sp, *st);
      return st->table.OverLimit(st->account[j.idx], Requested(*j.snap, j.total));
    });
    s.AddOnAllocated([st, sp](const JobInfo& j, const std::vector<NodePlacement>& p) {
      if (!st->built) Build(*sp, *st);
      st->table.Charge(st->account[j.idx], PlacedAmount(p));
    });
  }

  void OnSessionClose(Session& s) override {
    if (!st_) return;
    if (!st_->built) Build(s, *st_);
    s.result().queues = st_->table.Shares();
    for (const auto& w : st_->table.warnings()) s.result().warnings.push_back(w);
  }

 private:
  bool active_;
  std::shared_ptr<QueueState> st_;
};

}  // namespace

void RegisterQueuePlugin(Registry& r) { r.AddPlugin("queue", Simple<QueuePlugin>()); }

}  // namespace tessera::sched
