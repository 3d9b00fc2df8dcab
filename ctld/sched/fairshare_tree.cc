// The fair-share factor over the account tree: Fair Tree and classic (contract in fairshare.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ctld/sched/fairshare.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Node {
  std::string name, account;  // account: the association's account (users: their account)
  bool user = false;
  int parent = -1;
  std::vector<int> children;
  uint32_t shares = 1;
  double usage = 0, level_shares = 0, norm_shares = 0, eff = 0, level_fs = 0, fs = 0;
};

class Tree {
 public:
  explicit Tree(const SchedConfig& cfg) {
    nodes_.push_back({"root", "root"});
    for (const auto& [name, a] : cfg.accounts) Account(name).shares = a.fairshare;
    for (const auto& [name, a] : cfg.accounts) {
      if (name == "root") continue;
      std::string p = a.parent.empty() ? "root" : a.parent;
      int pi = Account(p).self, me = accounts_[name];
      if (Reaches(pi, me)) pi = 0;  // a cycle: hang it under root
      nodes_[me].parent = pi;
    }
    for (const auto& u : cfg.user_assocs) User(u.account, u.user).shares = u.fairshare;
  }

  Node& User(const std::string& account, const std::string& user) {
    std::string acct = account.empty() ? "root" : account;
    auto key = std::make_pair(acct, user);
    auto it = users_.find(key);
    if (it != users_.end()) return nodes_[it->second];
    int a = Account(acct).self;
    Node n{user, acct, true, a};
    nodes_.push_back(n);
    users_[key] = static_cast<int>(nodes_.size() - 1);
    return nodes_.back();
  }

  // Links children (users first, then accounts; by name), sums usage bottom-up.
  void Finish(const UsageMap& usage) {
    for (size_t i = 1; i < nodes_.size(); ++i) nodes_[nodes_[i].parent].children.push_back(int(i));
    for (auto& n : nodes_)
      std::sort(n.children.begin(), n.children.end(), [&](int a, int b) {
        if (nodes_[a].user != nodes_[b].user) return nodes_[a].user;
        return nodes_[a].name < nodes_[b].name;
      });
    for (const auto& [key, idx] : users_) {
      auto it = usage.find(key);
      if (it != usage.end()) nodes_[idx].usage = std::max(0.0, it->second);
    }
    SumUsage(0);
    for (auto& n : nodes_) {
      double sum = 0;
      for (int c : n.children) sum += nodes_[c].shares;
      for (int c : n.children) nodes_[c].level_shares = sum;
    }
  }

  std::vector<Node>& nodes() { return nodes_; }
  size_t user_count() const { return users_.size(); }

 private:
  struct AccountRef {
    int self;
    uint32_t& shares;
  };
  AccountRef Account(const std::string& name) {
    auto it = accounts_.find(name);
    if (it == accounts_.end()) {
      if (name == "root") {
        accounts_[name] = 0;
      } else {
        nodes_.push_back({name, name, false, 0});
        accounts_[name] = static_cast<int>(nodes_.size() - 1);
      }
      it = accounts_.find(name);
    }
    return {it->second, nodes_[it->second].shares};
  }
  bool Reaches(int from, int target) const {  // is `target` an ancestor-or-self of `from`
    for (int i = from, hops = 0; i >= 0 && hops <= int(nodes_.size()); i = nodes_[i].parent, ++hops)
      if (i == target) return true;
    return false;
  }
  double SumUsage(int i) {
    Node& n = nodes_[i];
    if (n.user) return n.usage;
    double s = 0;
    for (int c : n.children) s += SumUsage(c);
    nodes_[i].usage = s;
    return s;
  }

  std::vector<Node> nodes_;
  std::map<std::string, int> accounts_;
  std::map<std::pair<std::string, std::string>, int> users_;
};

// Fair Tree's traversal (fair_tree.c _calc_tree_fs), ties as documented.
class FairTree {
 public:
  FairTree(std::vector<Node>& n, size_t users) : n_(n), count_(users), rank_(users), rnt_(users) {}
  void Run() { Level(n_[0].children, false); }

 private:
  void Level(std::vector<int> sib, bool account_tied) {
    for (int i : sib) {
      Node& a = n_[i];
      const Node& p = n_[a.parent];
      a.norm_shares = a.level_shares > 0 ? a.shares / a.level_shares : 0;
      a.eff = p.usage > 0 ? a.usage / p.usage : 0;
      a.level_fs = a.norm_shares == 0 ? 0 : a.eff == 0 ? kInf : a.norm_shares / a.eff;
    }
    std::stable_sort(sib.begin(), sib.end(), [&](int x, int y) {
      if (n_[x].level_fs != n_[y].level_fs) return n_[x].level_fs > n_[y].level_fs;
      return n_[x].user && !n_[y].user;
    });
    bool has_prev = false;
    double prev = 0;
    for (size_t i = 0; i < sib.size(); ++i) {
      Node& a = n_[sib[i]];
      bool tied = (i == 0 && account_tied) || (has_prev && prev == a.level_fs);
      if (a.user) {
        if (!tied) rank_ = rnt_;
        a.fs = count_ ? double(rank_) / double(count_) : 0;
        --rnt_;
      } else {
        std::vector<int> merged = a.children;
        while (i + 1 < sib.size() && !n_[sib[i + 1]].user &&
               n_[sib[i + 1]].level_fs == a.level_fs) {
          ++i;
          const auto& more = n_[sib[i]].children;
          merged.insert(merged.end(), more.begin(), more.end());
        }
        Level(std::move(merged), tied);
      }
      has_prev = true;
      prev = a.level_fs;
    }
  }

  std::vector<Node>& n_;
  size_t count_;
  size_t rank_, rnt_;
};

void Classic(std::vector<Node>& n) {
  double total = n[0].usage;
  n[0].norm_shares = 1;
  n[0].eff = 1;
  // Nodes are created parents-first except accounts named before their parent: walk the tree.
  std::vector<int> stack = {0};
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    for (int c : n[i].children) {
      Node& a = n[c];
      double frac = a.level_shares > 0 ? a.shares / a.level_shares : 0;
      a.norm_shares = n[i].norm_shares * frac;
      double norm_usage = total > 0 ? a.usage / total : 0;
      if (i == 0) a.eff = norm_usage;
      else if (a.level_shares <= 0) a.eff = n[i].eff;
      else a.eff = norm_usage + (n[i].eff - norm_usage) * frac;
      a.fs = a.user ? (a.norm_shares > 0 ? std::pow(2.0, -a.eff / a.norm_shares) : 0) : 0;
      stack.push_back(c);
    }
  }
}

void Emit(const std::vector<Node>& n, int i, uint32_t depth, std::vector<ShareRow>& out) {
  const Node& a = n[i];
  ShareRow r;
  r.account = a.account;
  r.user = a.user ? a.name : "";
  r.parent = a.parent >= 0 ? n[a.parent].name : "";
  r.depth = depth;
  r.raw_shares = a.shares;
  r.norm_shares = i == 0 ? 1 : a.norm_shares;
  r.raw_usage = a.usage;
  r.norm_usage = n[0].usage > 0 ? a.usage / n[0].usage : 0;
  r.effective_usage = i == 0 ? 1 : a.eff;
  r.level_fs = a.level_fs;
  r.fairshare = a.user ? a.fs : 0;
  out.push_back(r);
  for (int c : a.children) Emit(n, c, depth + 1, out);
}

// A job without an account charges the user's DefaultAccount (SchedConfig::default_account),
// else root.
std::string AccountOf(const SchedConfig& cfg, const std::string& account, const std::string& user) {
  if (!account.empty()) return account;
  auto it = cfg.default_account.find(user);
  return it == cfg.default_account.end() || it->second.empty() ? "root" : it->second;
}

}  // namespace

std::vector<ShareRow> ComputeShares(const SchedConfig& cfg, const UsageMap& usage,
                                    const std::vector<std::pair<std::string, std::string>>& extra) {
  Tree t(cfg);
  for (const auto& [acct, user] : extra) t.User(AccountOf(cfg, acct, user), user);
  for (const auto& [key, u] : usage) t.User(key.first, key.second);
  t.Finish(usage);
  if (cfg.priority_flags & kPriorityFlagNoFairTree) {
    Classic(t.nodes());
  } else {
    FairTree(t.nodes(), t.user_count()).Run();
  }
  std::vector<ShareRow> out;
  Emit(t.nodes(), 0, 0, out);
  return out;
}

double FairshareOf(const std::vector<ShareRow>& rows, const std::string& account,
                   const std::string& user) {
  const std::string& acct = account.empty() ? std::string("root") : account;
  for (const auto& r : rows)
    if (!r.user.empty() && r.user == user && r.account == acct) return r.fairshare;
  return 0;
}

std::vector<ShareRow> FillFairshare(ClusterSnapshot& snap, const SchedConfig& cfg,
                                    const UsageMap& usage) {
  // Each (account, user) once, in order of first appearance (as ComputeShares would see them:
  // a repeated pair adds nothing), and one hash lookup per job: no string copies per job.
  using Key = std::pair<std::string_view, std::string_view>;
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<std::string_view>()(k.first) * 1000003u ^ std::hash<std::string_view>()(k.second);
    }
  };
  std::unordered_set<Key, KeyHash> seen;
  std::vector<std::pair<std::string, std::string>> extra;
  auto note = [&](const std::string& account, const std::string& user) {
    if (seen.insert({account, user}).second) extra.emplace_back(account, user);
  };
  for (const auto& j : snap.pending) note(j.account, j.user);
  for (const auto& r : snap.running) note(r.account, r.user);
  std::vector<ShareRow> rows = ComputeShares(cfg, usage, extra);
  std::unordered_map<Key, double, KeyHash> f;
  for (const auto& r : rows)
    if (!r.user.empty()) f[{r.account, r.user}] = r.fairshare;
  static const std::string kRoot = "root";
  for (auto& j : snap.pending) {
    std::string_view account = j.account;  // AccountOf, without a copy
    if (account.empty()) {
      auto d = cfg.default_account.find(j.user);
      account = d == cfg.default_account.end() || d->second.empty() ? kRoot : d->second;
    }
    auto it = f.find({account, j.user});
    j.fairshare = it == f.end() ? 0 : it->second;
  }
  return rows;
}

}  // namespace tessera::sched
