// Fair share (issue 16 §3): billing, decay, reset, Fair Tree and classic factors against
// hand-computed examples, and the config keys.
#include <catch2/catch.hpp>

#include <cmath>

#include "common/config_file.h"
#include "ctld/sched/fairshare.h"
#include "ctld/sched/priority.h"
#include "ctld/sched/sched_config.h"

using namespace tessera;
using namespace tessera::sched;
using Catch::Matchers::WithinAbs;

namespace {

SchedConfig Config(const std::string& text) {
  auto lines = ParseConfigText(text, "t.conf");
  REQUIRE(lines.ok());
  auto c = BuildSchedConfig(*lines);
  INFO((c.ok() ? "" : c.status().message()));
  REQUIRE(c.ok());
  return *c;
}

Status ConfigError(const std::string& text) {
  auto lines = ParseConfigText(text, "t.conf");
  REQUIRE(lines.ok());
  auto c = BuildSchedConfig(*lines);
  return c.ok() ? Status::Ok() : c.status();
}

double Fs(const std::vector<ShareRow>& rows, const std::string& a, const std::string& u) {
  return FairshareOf(rows, a, u);
}

const ShareRow* Row(const std::vector<ShareRow>& rows, const std::string& a, const std::string& u) {
  for (const auto& r : rows)
    if (r.account == a && r.user == u) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("billing: TRESBillingWeights sum, MAX_TRES, MAX_TRES_GRES, default CPUs") {
  auto w = ParseBillingWeights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0,GRES/gpu:a100=4.0");
  REQUIRE(w.ok());
  TresCount t;
  t.cpu = 4;
  t.mem_mib = 8192;
  AddGpuUnit(t, "a100", false);
  AddGpuUnit(t, "a100", false);
  // 4*1 + 8 GiB*0.25 + 2*2 (gres/gpu) + 2*4 (gres/gpu:a100) = 18
  CHECK_THAT(Billable(t, *w, 0), WithinAbs(18.0, 1e-9));
  CHECK_THAT(Billable(t, *w, kPriorityFlagMaxTres), WithinAbs(8.0, 1e-9));
  CHECK_THAT(Billable(t, *w, kPriorityFlagMaxTresGres), WithinAbs(4.0 + 4 + 8, 1e-9));
  CHECK_THAT(Billable(t, BillingWeights{}, 0), WithinAbs(4.0, 1e-9));  // no weights: CPUs
}

TEST_CASE("billing: MIG instances by their fraction of a GPU, MPS by percent") {
  auto w = ParseBillingWeights("GRES/gpu=2.0,GRES/gpu:1g.10gb=0.5");
  REQUIRE(w.ok());
  CHECK_THAT(MigGpuFraction("3g.40gb"), WithinAbs(3.0 / 7.0, 1e-12));
  TresCount t;
  AddGpuUnit(t, "3g.40gb", true);
  CHECK_THAT(Billable(t, *w, 0), WithinAbs(2.0 * 3 / 7, 1e-9));
  TresCount u;
  AddGpuUnit(u, "1g.10gb", true);  // 1/7 of a GPU * 2 + one instance * 0.5
  CHECK_THAT(Billable(u, *w, 0), WithinAbs(2.0 / 7 + 0.5, 1e-9));
  auto mem = ParseBillingWeights("Mem=1");  // per MiB without a suffix
  REQUIRE(mem.ok());
  TresCount m;
  m.mem_mib = 100;
  CHECK_THAT(Billable(m, *mem, 0), WithinAbs(100.0, 1e-9));
}

TEST_CASE("billing: bad weights name the item") {
  auto a = ParseBillingWeights("CPU=x");
  REQUIRE_FALSE(a.ok());
  CHECK(a.status().message().find("CPU=x") != std::string::npos);
  auto b = ParseBillingWeights("Foo=1");
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().message().find("unknown TRES") != std::string::npos);
  CHECK_FALSE(ParseBillingWeights("Mem=1Q").ok());
  CHECK_FALSE(ParseBillingWeights("CPU=-1").ok());
}

TEST_CASE("decay: Slurm's per-second factor; charge decays with the period") {
  CHECK_THAT(DecayPerSecond(100), WithinAbs(1 - 0.00693, 1e-15));
  CHECK_THAT(Advance(1000, 0, 100, 100), WithinAbs(498.868673746, 1e-6));  // ~ half
  CHECK_THAT(Advance(1000, 0, 0, 1e6), WithinAbs(1000.0, 1e-12));          // no decay
  CHECK_THAT(Advance(0, 2, 0, 10), WithinAbs(20.0, 1e-12));
  CHECK_THAT(Advance(0, 2, 100, 10), WithinAbs(20 * std::pow(1 - 0.00693, 10), 1e-9));
  CHECK(Advance(5, 1, 100, 0) == 5);
}

TEST_CASE("reset: next reset after the last one, UTC") {
  const int64_t tue_13h = 1796130000;  // 2026-12-01 13:00 UTC, a Tuesday
  CHECK(NextReset(ResetPeriod::kDaily, tue_13h) == 1796169600);   // 12-02 00:00
  CHECK(NextReset(ResetPeriod::kWeekly, tue_13h) == 1796515200);  // Sunday 12-06
  CHECK(NextReset(ResetPeriod::kMonthly, 1797321600) == 1798761600);  // 12-15 -> 01-01
  CHECK(NextReset(ResetPeriod::kQuarterly, 1778371200) == 1782864000);  // 05-10 -> 07-01
  CHECK(NextReset(ResetPeriod::kYearly, tue_13h) == 1798761600);
  CHECK(NextReset(ResetPeriod::kNone, tue_13h) == 0);
  CHECK_FALSE(ParseResetPeriod("sometimes").ok());
  CHECK(*ParseResetPeriod("Weekly") == ResetPeriod::kWeekly);
}

// Root -> A (1), B (1); A: u1 (1), u2 (1); B: u3 (1). Usage u1 30, u2 10, u3 60.
// Level FS: A = 0.5 / 0.4 = 1.25, B = 0.5 / 0.6 = 0.833: A's users rank above B's.
// In A: u2 = 0.5 / 0.25 = 2, u1 = 0.5 / 0.75 = 0.667. Ranks 3, 2, 1 of N = 3.
TEST_CASE("Fair Tree: a higher account's users all rank above a lower account's") {
  SchedConfig c = Config("AccountName=A\nAccountName=B\n");
  UsageMap u = {{{"A", "u1"}, 30}, {{"A", "u2"}, 10}, {{"B", "u3"}, 60}};
  auto rows = ComputeShares(c, u, {});
  CHECK_THAT(Fs(rows, "A", "u2"), WithinAbs(1.0, 1e-12));
  CHECK_THAT(Fs(rows, "A", "u1"), WithinAbs(2.0 / 3, 1e-12));
  CHECK_THAT(Fs(rows, "B", "u3"), WithinAbs(1.0 / 3, 1e-12));
  const ShareRow* a = Row(rows, "A", "");
  REQUIRE(a);
  CHECK_THAT(a->level_fs, WithinAbs(1.25, 1e-12));
  CHECK_THAT(a->effective_usage, WithinAbs(0.4, 1e-12));
  CHECK_THAT(a->norm_shares, WithinAbs(0.5, 1e-12));
  CHECK_THAT(a->raw_usage, WithinAbs(40, 1e-12));
  CHECK(std::isinf(Row(rows, "root", "")->level_fs) == false);
}

TEST_CASE("Fair Tree: shares weigh the level; no usage is infinity and ties") {
  // A has 3 shares, B 1: equal usage -> A's level FS 0.75/0.5 = 1.5 > B's 0.25/0.5 = 0.5.
  SchedConfig c = Config("AccountName=A Fairshare=3\nAccountName=B Fairshare=1\n");
  auto rows = ComputeShares(c, {{{"A", "a"}, 50}, {{"B", "b"}, 50}}, {});
  CHECK(Fs(rows, "A", "a") > Fs(rows, "B", "b"));
  // Nobody has usage: every level FS is infinite, every user ties at rank N.
  auto idle = ComputeShares(c, {}, {{"A", "a"}, {"B", "b"}, {"B", "c"}});
  CHECK(Fs(idle, "A", "a") == 1.0);
  CHECK(Fs(idle, "B", "b") == 1.0);
  CHECK(Fs(idle, "B", "c") == 1.0);
  CHECK(std::isinf(Row(idle, "B", "c")->level_fs));
}

// Tied sibling accounts have their children merged before sorting (Slurm's documented rule):
// A: u1 10, u2 40; B: u3 20, u4 30 -> A and B both 0.5/0.5 = 1. Merged: u1 2.5, u3 1.25,
// u4 0.833, u2 0.625 -> 4/4, 3/4, 2/4, 1/4. (Without merging u3 would be 3/4 tied with u2 and
// u4 1/4.)
TEST_CASE("Fair Tree: tied accounts merge their children") {
  SchedConfig c = Config("AccountName=A\nAccountName=B\n");
  UsageMap u = {{{"A", "u1"}, 10}, {{"A", "u2"}, 40}, {{"B", "u3"}, 20}, {{"B", "u4"}, 30}};
  auto rows = ComputeShares(c, u, {});
  CHECK(Fs(rows, "A", "u1") == 1.0);
  CHECK(Fs(rows, "B", "u3") == 0.75);
  CHECK(Fs(rows, "B", "u4") == 0.5);
  CHECK(Fs(rows, "A", "u2") == 0.25);
}

// A user tied with a sibling account: the account's first user gets the user's rank.
TEST_CASE("Fair Tree: a user tied with a sibling account shares its rank") {
  SchedConfig c = Config("AccountName=A\n");
  auto rows = ComputeShares(c, {{{"root", "r1"}, 50}, {{"A", "u1"}, 50}}, {});
  CHECK(Fs(rows, "root", "r1") == 1.0);
  CHECK(Fs(rows, "A", "u1") == 1.0);
  CHECK(Fs(rows, "", "r1") == 1.0);  // account "" is root
}

TEST_CASE("Fair Tree: sub-accounts and users without an association (shares 1)") {
  SchedConfig c = Config("AccountName=phys\nAccountName=hep Parent=phys Fairshare=2\n"
                         "AccountName=astro Parent=phys\nAccountName=chem Fairshare=1\n");
  UsageMap u = {{{"hep", "h"}, 10}, {{"astro", "a"}, 10}, {{"chem", "c"}, 80}};
  auto rows = ComputeShares(c, u, {{"nowhere", "z"}});
  // phys (20 of 100, 1 of 3 shares at root incl. nowhere) ranks above chem; in phys, hep (2/3
  // shares, 1/2 usage) above astro; nowhere has no usage: infinite, first.
  CHECK(Fs(rows, "nowhere", "z") == 1.0);
  CHECK(Fs(rows, "hep", "h") == 0.75);
  CHECK(Fs(rows, "astro", "a") == 0.5);
  CHECK(Fs(rows, "chem", "c") == 0.25);
  CHECK(Row(rows, "hep", "")->parent == "phys");
  CHECK(Row(rows, "phys", "")->raw_usage == 20);
}

// Classic: A (1) u1 75, B (1) u2 25. u1: S = 0.5, UE = 0.75 -> 2^-1.5; u2: 2^-0.5.
TEST_CASE("classic fair share (NO_FAIR_TREE): 2^(-UE/S)") {
  SchedConfig c = Config("PriorityFlags=NO_FAIR_TREE\nAccountName=A\nAccountName=B\n");
  auto rows = ComputeShares(c, {{{"A", "u1"}, 75}, {{"B", "u2"}, 25}}, {});
  CHECK_THAT(Fs(rows, "A", "u1"), WithinAbs(std::pow(2.0, -1.5), 1e-12));
  CHECK_THAT(Fs(rows, "B", "u2"), WithinAbs(std::pow(2.0, -0.5), 1e-12));
  // Two users in A (shares 1 each): u1 UE = 0.75 + (0.75 - 0.75)... with u3 0 usage:
  auto two = ComputeShares(c, {{{"A", "u1"}, 75}, {{"B", "u2"}, 25}}, {{"A", "u3"}});
  // u1: S = 0.25, UE = 0.75 + (0.75 - 0.75) * 0.5 = 0.75 -> 2^-3; u3: UE = 0 + 0.75*0.5 -> 2^-1.5
  CHECK_THAT(Fs(two, "A", "u1"), WithinAbs(std::pow(2.0, -3), 1e-12));
  CHECK_THAT(Fs(two, "A", "u3"), WithinAbs(std::pow(2.0, -1.5), 1e-12));
}

TEST_CASE("FillFairshare fills pending jobs' factor; the priority weighs it") {
  SchedConfig c = Config("PriorityWeightFairshare=1000\nAccountName=A\nAccountName=B\n");
  ClusterSnapshot snap;
  snap.now = 100;
  JobSnap heavy, light;
  heavy.id = 1, heavy.account = "A", heavy.user = "h";
  light.id = 2, light.account = "B", light.user = "l";
  snap.pending = {heavy, light};
  FillFairshare(snap, c, {{{"A", "h"}, 100}, {{"B", "l"}, 1}});
  CHECK(snap.pending[0].fairshare == 0.5);
  CHECK(snap.pending[1].fairshare == 1.0);
  PriorityContext ctx = MakePriorityContext(snap, c);
  auto f = MultifactorFactors(snap.pending[0], 1, 0, 1, c, ctx);
  CHECK(f.fairshare == 500);
  CHECK(f.total == 500);
  CHECK(MultifactorPriority(snap.pending[1], 1, 0, 1, c, ctx) == 1000);
}

TEST_CASE("FillFairshare: a job without an account charges the user's default account") {
  SchedConfig c = Config("AccountName=A\nAccountName=B\n");
  c.default_account["h"] = "A";
  ClusterSnapshot snap;
  JobSnap j;
  j.id = 1, j.user = "h";  // no account: A (h's default), heavy there
  JobSnap k;
  k.id = 2, k.user = "l", k.account = "B";
  snap.pending = {j, k};
  FillFairshare(snap, c, {{{"A", "h"}, 100}, {{"B", "l"}, 1}});
  CHECK(snap.pending[0].fairshare == 0.5);
  CHECK(snap.pending[1].fairshare == 1.0);
}

TEST_CASE("config: fair-share keys and their refusals") {
  SchedConfig c = Config(
      "PriorityDecayHalfLife=14-0\nPriorityUsageResetPeriod=weekly\n"
      "PriorityFlags=MAX_TRES,NO_FAIR_TREE\nAccountName=a Fairshare=5\n"
      "PartitionName=gpu Nodes=n1 TRESBillingWeights=CPU=1.0,GRES/gpu=4\n");
  CHECK(c.priority_decay_half_life == 14 * 86400);
  CHECK(c.priority_usage_reset == "WEEKLY");
  CHECK(c.priority_flags == (kPriorityFlagMaxTres | kPriorityFlagNoFairTree));
  CHECK(c.accounts.at("a").fairshare == 5);
  CHECK(c.tres_billing_weights.at("gpu") == "CPU=1.0,GRES/gpu=4");
  Status f = ConfigError("PriorityFlags=BOGUS\n");
  CHECK(f.message().find("t.conf:1") != std::string::npos);
  CHECK(f.message().find("unknown flag \"bogus\"") != std::string::npos);
  CHECK(ConfigError("PriorityUsageResetPeriod=sometimes\n").message().find("WEEKLY") !=
        std::string::npos);
  Status b = ConfigError("PartitionName=gpu Nodes=n1 TRESBillingWeights=GPU=2\n");
  CHECK(b.message().find("partition gpu") != std::string::npos);
  CHECK(ConfigError("AccountName=a Fairshare=lots\n").message().find("Fairshare") !=
        std::string::npos);
  CHECK(ConfigError("PriorityDecayHalfLife=soon\n").message().find("PriorityDecayHalfLife") !=
        std::string::npos);
}
