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
#include <map>
#include <memory>
#include <queue>

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
  std::vector<std::pair<const std::string*, Amount>> demand;
  for (const auto& j : s.jobs())
    if (j.stage != JobInfo::Stage::kPending) demand.push_back({&j.snap->account, j.total});
  st.table.Build(s.config(), s.snapshot(), demand);
  std::map<std::string, QueueShare> shares;
  for (auto& q : st.table.Shares()) shares[q.account] = q;
  st.account.assign(s.jobs().size(), -1);
  st.rank.assign(s.jobs().size(), 0);
  std::map<std::string, std::vector<const JobInfo*>> queues;
  for (const auto& j : s.jobs()) {
    st.account[j.idx] = st.table.Find(j.snap->account);
    queues[j.snap->account].push_back(&j);
  }
  for (auto& [acct, q] : queues)
    std::sort(q.begin(), q.end(), [](const JobInfo* a, const JobInfo* b) {
      if (a->priority != b->priority) return a->priority > b->priority;
      if (a->snap->submit_time != b->snap->submit_time) return a->snap->submit_time < b->snap->submit_time;
      return a->snap->id < b->snap->id;
    });
  std::map<std::string, Amount> used;
  for (const auto& [acct, q] : shares) used[acct] = {q.allocated.cpu, q.allocated.mem, q.allocated.gpu};
  using Entry = std::pair<double, std::string>;  // (fraction after its next job, account)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  std::map<std::string, size_t> next;
  auto push = [&](const std::string& acct) {
    const auto& q = queues[acct];
    size_t i = next[acct];
    if (i >= q.size()) return;
    Amount after = used[acct];
    after += q[i]->total;
    heap.push({Fraction(after, shares[acct]), acct});
  };
  for (const auto& [acct, q] : queues) push(acct);
  uint32_t pos = 0;
  while (!heap.empty()) {
    std::string acct = heap.top().second;
    heap.pop();
    const JobInfo* j = queues[acct][next[acct]++];
    st.rank[j->idx] = pos++;
    used[acct] += j->total;
    push(acct);
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
    s.AddJobOrder([st, sp](const JobInfo& a, const JobInfo& b) {
      if (!st->built) Build(*sp, *st);
      uint32_t ra = st->rank[a.idx], rb = st->rank[b.idx];
      return ra == rb ? 0 : ra < rb ? -1 : 1;
    });
    s.AddAllocatable([st, sp](const JobInfo& j) {
      if (!st->built) Build(*sp, *st);
      return st->table.OverLimit(st->account[j.idx], j.total);
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
  }

 private:
  bool active_;
  std::shared_ptr<QueueState> st_;
};

}  // namespace

void RegisterQueuePlugin(Registry& r) { r.AddPlugin("queue", Simple<QueuePlugin>()); }

}  // namespace tessera::sched
