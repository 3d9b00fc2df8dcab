#pragma once
// Fair share (issue 16 §3), the pure parts: billing (TRESBillingWeights), usage decay
// (PriorityDecayHalfLife), usage reset (PriorityUsageResetPeriod) and the fair-share factor over
// the account tree (Slurm's Fair Tree, or classic with PriorityFlags=NO_FAIR_TREE). No clock:
// every time is an argument. ctld/usage.h keeps the live usage; tessera-sim keeps its own.
//
// Billing (Slurm's assoc_mgr_tres_weighted): TRESBillingWeights="CPU=1.0,Mem=0.25G,
// GRES/gpu=2.0,GRES/gpu:a100=4.0" (per partition). Mem's weight is per MiB, or per unit of its
// suffix (K, M, G, T: "0.25G" = 0.25 per GiB). Every TRES the job holds counts with its weight:
// a job with 2 a100 GPUs counts 2 x GRES/gpu AND 2 x GRES/gpu:a100 (as in Slurm). MIG instances
// count toward GRES/gpu by their fraction of a GPU (compute slices / the model's compute slices,
// common/mig_profiles.h: 3g.40gb on an A100 = 3/7) and toward GRES/gpu:<profile> as one each;
// an MPS share counts its percent / 100 toward GRES/gpu.
// Default (no weights): the job's CPU count. PriorityFlags=MAX_TRES: max of the node TRES
// (cpu, mem, node, every gres) terms instead of their sum; MAX_TRES_GRES: max(cpu, mem, node) +
// the sum of the gres terms.
//
// Decay (Slurm's priority/multifactor): per second, factor f = 1 - 0.693 / half_life; over dt
// seconds usage becomes usage * f^dt + billing * dt * f^dt for each job that ran over it.
// half_life <= 0: no decay (f = 1).
//
// Reset: NONE, NOW (once, when the config is read), DAILY, WEEKLY (Sunday 00:00),
// MONTHLY, QUARTERLY, YEARLY: at 00:00 UTC of the period's first day after the last reset
// (Slurm uses local time; Tessera uses UTC so the result is a pure function of epoch seconds).
//
// Factor: see ComputeShares.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ctld/sched/sched_config.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

// ---------------------------------------------------------------- billing
struct BillingWeights {
  bool set = false;  // false: billing = CPUs
  double cpu = 0, mem_per_mib = 0, node = 0, gpu = 0;
  std::map<std::string, double> gpu_type;  // lower-case type or MIG profile -> weight
};
// Errors name the item ("TRESBillingWeights item \"Foo=1\": unknown TRES ...").
Result<BillingWeights> ParseBillingWeights(const std::string& s);

// What a job holds (whole job, all nodes).
struct TresCount {
  double cpu = 0, mem_mib = 0, node = 0;
  double gpu = 0;                          // whole GPUs + fractions (MIG, MPS)
  std::map<std::string, double> gpu_type;  // lower-case type/profile -> count
};
// Adds one allocated GPU unit: a whole GPU of `model`, or a MIG instance of `profile`.
void AddGpuUnit(TresCount& t, const std::string& model_or_profile, bool mig);
// Fraction of a whole GPU a MIG profile is (compute slices / the model's); 0 when unknown.
double MigGpuFraction(const std::string& profile);
double Billable(const TresCount& t, const BillingWeights& w, uint32_t priority_flags);

// ---------------------------------------------------------------- decay and reset
double DecayPerSecond(int64_t half_life_s);            // 1 - 0.693 / hl (1 when hl <= 0)
double DecayOver(int64_t half_life_s, double dt_s);    // DecayPerSecond^dt (>= DBL_MIN)
// Usage after dt seconds in which `billing` units were charged per second (Slurm's formula).
double Advance(double usage, double billing, int64_t half_life_s, double dt_s);

enum class ResetPeriod { kNone, kNow, kDaily, kWeekly, kMonthly, kQuarterly, kYearly };
Result<ResetPeriod> ParseResetPeriod(const std::string& s);
// The first reset strictly after `last_reset` (epoch s, UTC); 0 for NONE and NOW.
int64_t NextReset(ResetPeriod p, int64_t last_reset);

// ---------------------------------------------------------------- the factor
// Usage by association: (account, user) -> raw usage; user "" never appears (accounts sum
// their children).
using UsageMap = std::map<std::pair<std::string, std::string>, double>;

struct ShareRow {
  std::string account;       // the association's account (an account row: itself)
  std::string user;          // "" for an account row
  std::string parent;        // account rows: parent account ("root" at the top)
  uint32_t depth = 0;        // 0 = root
  uint32_t raw_shares = 1;
  double norm_shares = 0;    // Fair Tree: shares / siblings' shares; classic: product to root
  double raw_usage = 0;      // decayed billing-seconds (accounts: sum of their subtree)
  double norm_usage = 0;     // raw / root's raw
  double effective_usage = 0;  // Fair Tree: raw / parent's raw; classic: Slurm's usage_efctv
  double level_fs = 0;       // Fair Tree: norm_shares / effective_usage (inf: no usage)
  double fairshare = 0;      // users: the factor in [0, 1]; accounts: 0
};

// All associations in tree order (root first, then each account followed by its children,
// users before sub-accounts, alphabetical). The tree: cfg.accounts (parent "" or "root" = top
// level), cfg.user_assocs, plus `extra` (account, user) pairs (jobs, usage) that have no
// association: shares 1 under their account (an unknown account is added under root with
// shares 1; account "" is the user's SchedConfig::default_account, else "root").
//
// Fair Tree (default; Slurm's fair_tree.c): every association's Level FS = S / U with S =
// shares / siblings' shares and U = usage / parent's usage (S == 0: 0; U == 0: infinity).
// From the root, siblings are sorted by Level FS (descending; at equal values users before
// accounts); accounts recurse in that order; each user met gets rank r (from the number of
// user associations N down) and factor r / N. Ties: sibling users with equal Level FS share a
// rank; sibling accounts with equal Level FS have their children merged before sorting; a
// subtree reached tied with the previous user starts at that user's rank. (Slurm's source
// compares the wrong way in _count_tied_accounts and never merges tied accounts; Tessera does
// what Slurm's documentation says.)
// Classic (NO_FAIR_TREE): factor = 2^(-effective_usage / norm_shares) (0 when norm_shares is
// 0) with effective_usage = norm_usage + (parent's effective - norm_usage) * shares / siblings'
// shares (the root's is 1; a top-level account's is its norm_usage).
std::vector<ShareRow> ComputeShares(const SchedConfig& cfg, const UsageMap& usage,
                                    const std::vector<std::pair<std::string, std::string>>& extra);

// The factor of (account, user) in `rows` (account "" = "root"); 0 when absent.
double FairshareOf(const std::vector<ShareRow>& rows, const std::string& account,
                   const std::string& user);

// Fills every pending job's JobSnap::fairshare from `usage` (jobs' (account, user) pairs join
// the tree as `extra`). Returns the rows (for tshare).
std::vector<ShareRow> FillFairshare(ClusterSnapshot& snap, const SchedConfig& cfg,
                                    const UsageMap& usage);

}  // namespace tessera::sched
