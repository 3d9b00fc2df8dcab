#include "sim/fairshare.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <cstdio>
#include <ostream>
#include <set>

namespace tessera::sim {

SimUsage::SimUsage(const sched::SchedConfig& cfg) : cfg_(cfg), on_(cfg.weight_fairshare > 0) {
  for (const auto& [part, text] : cfg.tres_billing_weights) {
    auto w = sched::ParseBillingWeights(text);
    if (w.ok()) weights_[part] = *w;
  }
}

void SimUsage::Advance(int64_t now, const std::map<uint64_t, sched::RunningSnap>& running) {
  if (!on_) return;
  if (last_ < 0 || now <= last_) {
    last_ = std::max(last_, now);
    return;
  }
  double dt = double(now - last_);
  int64_t hl = cfg_.priority_decay_half_life;
  double decay = sched::DecayOver(hl, dt);
  for (auto& [key, u] : usage_) u *= decay;
  for (const auto& [id, r] : running) {
    sched::TresCount t;
    for (const auto& n : r.nodes) {
      t.cpu += n.cpus, t.mem_mib += double(n.mem_mib), t.node += 1, t.gpu += n.gpus;
    }
    auto w = weights_.find(r.partition);
    double billing = sched::Billable(t, w == weights_.end() ? sched::BillingWeights{} : w->second,
                                     cfg_.priority_flags);
    usage_[{r.account, r.user}] += billing * dt * decay;
  }
  last_ = now;
}

void SimUsage::Fill(sched::ClusterSnapshot& snap) const {
  if (on_) sched::FillFairshare(snap, cfg_, usage_);
}

Status AssignAccounts(const std::string& mode, std::vector<TraceJob>& trace) {
  if (mode == "group") return Status::Ok();
  uint64_t mod = 0;
  if (mode.rfind("user-mod:", 0) == 0) {
    mod = std::strtoull(mode.c_str() + 9, nullptr, 10);
    if (mod == 0) return InvalidArgument("--accounts user-mod:N needs N > 0");
  } else if (mode != "user" && mode != "qos") {
    return InvalidArgument("--accounts \"" + mode + "\": expected group, user, qos or user-mod:N");
  }
  for (auto& j : trace) {
    if (mode == "user") j.account = j.user;
    else if (mode == "qos") j.account = j.qos;
    else {
      uint64_t id = 0;
      if (j.user.size() > 1 && j.user[0] == 'u')
        id = std::strtoull(j.user.c_str() + 1, nullptr, 10);
      else
        id = std::hash<std::string>()(j.user);
      j.account = "a" + std::to_string(id % mod);
    }
  }
  return Status::Ok();
}

namespace {

// Time-weighted per-window means of the queue samples (each holds until the next sample).
void QueueColumns(const SimRun& run, ShareTable& t, size_t windows) {
  const auto& qs = run.queue_samples;
  if (qs.empty()) return;
  std::map<std::string, size_t> col;
  for (const auto& s : qs)
    for (size_t k = 0; k < s.accounts.size(); ++k)
      if (!col.count(s.accounts[k])) {
        col[s.accounts[k]] = t.queue_accounts.size();
        t.queue_accounts.push_back(s.accounts[k]);
        t.guarantee.push_back(s.guarantee[k]);
      }
  t.queue_rows.assign(windows, std::vector<ShareTable::QueueCell>(t.queue_accounts.size()));
  std::vector<double> span(windows, 0);
  int64_t last = std::max(run.last_end, qs.back().t + 1);
  for (size_t i = 0; i < qs.size(); ++i) {
    int64_t end = i + 1 < qs.size() ? qs[i + 1].t : last;
    for (int64_t s = std::max(qs[i].t, run.first_submit); s < end;) {
      size_t w = std::min(windows - 1, size_t((s - run.first_submit) / t.window_s));
      int64_t wend = run.first_submit + int64_t(w + 1) * t.window_s;
      int64_t e = w + 1 == windows ? end : std::min(end, wend);
      double dt = double(e - s);
      span[w] += dt;
      for (size_t k = 0; k < qs[i].accounts.size(); ++k) {
        auto& c = t.queue_rows[w][col[qs[i].accounts[k]]];
        double a = double(qs[i].allocated[k]);
        c.allocated += a * dt;
        c.deserved += double(qs[i].deserved[k]) * dt;
        c.borrowed += std::max(0.0, a - double(std::max<int64_t>(0, qs[i].guarantee[k]))) * dt;
      }
      s = e;
    }
  }
  for (size_t w = 0; w < windows; ++w)
    for (auto& c : t.queue_rows[w])
      if (span[w] > 0) c.allocated /= span[w], c.deserved /= span[w], c.borrowed /= span[w];
}

}  // namespace

ShareTable ComputeShareTable(const SimRun& run, int64_t window_s) {
  ShareTable t;
  t.window_s = std::max<int64_t>(1, window_s);
  std::set<std::string> accts;
  int64_t last = run.first_submit;
  for (const auto& j : run.jobs)
    if (j.start >= 0) accts.insert(j.trace.account), last = std::max(last, j.end);
  t.accounts.assign(accts.begin(), accts.end());
  size_t windows = size_t((last - run.first_submit) / t.window_s + 1);
  std::vector<std::map<std::string, double>> used(windows);
  for (const auto& j : run.jobs) {
    if (j.start < 0) continue;
    double amount = run.total_gpus ? j.gpus : j.cpus;
    for (int64_t s = std::max(j.start, run.first_submit); s < j.end;) {
      size_t w = std::min(windows - 1, size_t((s - run.first_submit) / t.window_s));
      int64_t wend = run.first_submit + int64_t(w + 1) * t.window_s;
      int64_t e = w + 1 == windows ? j.end : std::min(j.end, wend);
      used[w][j.trace.account] += amount * double(e - s);
      s = e;
    }
  }
  std::map<std::string, std::pair<double, double>> wait;  // account -> (sum, count)
  for (const auto& j : run.jobs)
    if (j.start >= 0) {
      auto& w = wait[j.trace.account];
      w.first += double(j.start - j.trace.submit), w.second += 1;
    }
  for (const auto& a : t.accounts)
    t.mean_wait_s.push_back(wait[a].second > 0 ? wait[a].first / wait[a].second : 0);
  QueueColumns(run, t, windows);
  for (const auto& m : used) {
    double total = 0;
    for (const auto& [a, v] : m) total += v;
    std::vector<double> row;
    for (const auto& a : t.accounts) {
      auto it = m.find(a);
      row.push_back(total > 0 && it != m.end() ? it->second / total : 0);
    }
    t.rows.push_back(row);
  }
  return t;
}

void PrintShareTable(std::ostream& out, const std::string& label, const ShareTable& t) {
  out << "\nper-account share of used resource-seconds, " << label << ", windows of "
      << t.window_s / 3600.0 << " h\n\n| window |";
  for (const auto& a : t.accounts) out << " " << a << " |";
  out << "\n|---|";
  for (size_t i = 0; i < t.accounts.size(); ++i) out << "---|";
  out << "\n";
  for (size_t w = 0; w < t.rows.size(); ++w) {
    out << "| " << w << " |";
    for (double v : t.rows[w]) {
      char b[32];
      snprintf(b, sizeof b, " %.1f%% |", 100 * v);
      out << b;
    }
    out << "\n";
  }
  out << "| mean wait (s) |";
  for (double w : t.mean_wait_s) {
    char b[32];
    snprintf(b, sizeof b, " %.0f |", w);
    out << b;
  }
  out << "\n";
  if (t.queue_accounts.empty()) return;  // issue 16 §2: queues
  out << "\nqueues, " << label << ": mean units held / deserved / borrowed (above the guarantee g) per window\n\n| window |";
  for (size_t k = 0; k < t.queue_accounts.size(); ++k)
    out << " " << t.queue_accounts[k] << " (g=" << (t.guarantee[k] < 0 ? std::string("-") : std::to_string(t.guarantee[k])) << ") |";
  out << "\n|---|";
  for (size_t k = 0; k < t.queue_accounts.size(); ++k) out << "---|";
  out << "\n";
  for (size_t w = 0; w < t.queue_rows.size(); ++w) {
    out << "| " << w << " |";
    for (const auto& c : t.queue_rows[w]) {
      char b[64];
      snprintf(b, sizeof b, " %.1f / %.1f / %.1f |", c.allocated, c.deserved, c.borrowed);
      out << b;
    }
    out << "\n";
  }
}

}  // namespace tessera::sim
