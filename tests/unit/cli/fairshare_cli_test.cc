// tshare (sshare) and tprio (sprio) output against Slurm's layouts (issue 16 §3).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "tests/unit/cli/fake_controller.h"

using namespace tessera;
using namespace tessera::cli;
using namespace tessera::cli::testing;

namespace {

void AddShare(pb::GetSharesResponse& r, const std::string& acct, const std::string& user,
              uint32_t depth, double norm, double raw, double eff, double fs, double lfs) {
  auto* s = r.add_shares();
  s->set_account(acct);
  s->set_user(user);
  s->set_depth(depth);
  s->set_raw_shares(1);
  s->set_norm_shares(norm);
  s->set_raw_usage(raw);
  s->set_effective_usage(eff);
  s->set_fairshare(fs);
  s->set_level_fs(lfs);
}

pb::GetSharesResponse Tree() {
  pb::GetSharesResponse r;
  r.set_fair_tree(true);
  AddShare(r, "root", "", 0, 1, 100, 1, 0, 0);
  AddShare(r, "A", "", 1, 0.5, 40, 0.4, 0, 1.25);
  AddShare(r, "A", "alice", 2, 1, 40, 1, 1, 1);
  AddShare(r, "A", "bob", 2, 1, 0, 0, 1, std::numeric_limits<double>::infinity());
  return r;
}

}  // namespace

TEST_CASE("tshare: sshare's default layout, tree-indented accounts, own user rows only") {
  CommandRun r;  // uid 1001 = alice
  r.ctld.GetShares_result = Tree();
  int rc = r.Run(RunTshare, {});
  INFO(r.err);
  REQUIRE(rc == 0);
  CHECK(r.out ==
        "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n"
        "-------------------- ---------- ---------- ----------- ----------- ------------- ---------- \n"
        "root                                          0.000000         100      1.000000            \n"
        " A                                       1    0.500000          40      0.400000            \n"
        "  A                       alice          1    1.000000          40      1.000000   1.000000 \n");
}

TEST_CASE("tshare: -a -P -n -o and -l LevelFS (inf without usage)") {
  CommandRun r;
  r.ctld.GetShares_result = Tree();
  REQUIRE(r.Run(RunTshare, {"-a", "-P", "-n", "-o", "Account,User,RawUsage,LevelFS"}) == 0);
  CHECK(r.out == "root||100|\n A||40|1.250000\n  A|alice|40|1.000000\n  A|bob|0|inf\n");
  CommandRun l;
  l.ctld.GetShares_result = Tree();
  REQUIRE(l.Run(RunTshare, {"-l", "-U", "-u", "bob", "-p", "-n"}) == 0);
  CHECK(l.out == "  A|bob|1|1.000000|0|0.000000|0.000000|1.000000|inf|\n");
  CommandRun bad;
  bad.ctld.GetShares_result = Tree();
  CHECK(bad.Run(RunTshare, {"-o", "Bogus"}) == 1);
  CHECK(bad.err.find("Invalid field requested: \"Bogus\"") != std::string::npos);
}

TEST_CASE("tprio: sprio's default columns (non-zero weights), -w, -n, -j") {
  CommandRun r;
  pb::GetPrioritiesResponse p;
  p.mutable_weights()->set_age(1000);
  p.mutable_weights()->set_fairshare(10000);
  auto* j = p.add_jobs();
  j->set_job_id(7);
  j->set_partition("debug");
  j->set_user("alice");
  j->set_priority(1500);
  j->set_age(500);
  j->set_fairshare(1000);
  auto* k = p.add_jobs();
  k->set_job_id(8);
  k->set_partition("debug");
  k->set_user("bob");
  k->set_priority(9000);
  k->set_fairshare(9000);
  r.ctld.GetPriorities_result = p;
  REQUIRE(r.Run(RunTprio, {}) == 0);
  CHECK(r.out ==
        "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE\n"
        "              8 debug           9000          0          0       9000\n"
        "              7 debug           1500          0        500       1000\n");
  CommandRun w;
  w.ctld.GetPriorities_result = p;
  REQUIRE(w.Run(RunTprio, {"-w"}) == 0);
  CHECK(w.out ==
        "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE\n"
        "        Weights                                       1000      10000\n");
  CommandRun n;
  n.ctld.GetPriorities_result = p;
  REQUIRE(n.Run(RunTprio, {"-n", "-h", "-j", "7", "-o", "%i %f %a"}) == 0);
  CHECK(n.out == "7 0.1000000 0.5000000\n");
  CommandRun none;
  none.ctld.GetPriorities_result = p;
  REQUIRE(none.Run(RunTprio, {"-j", "99"}) == 0);
  CHECK(none.out.find("Unable to find jobs matching user/id(s) specified") != std::string::npos);
}

// Each header word ends where its column's numbers end (cutting rows at the header's word ends,
// as tests/integration/test_policy.py does, gives whole values). PARTITION is left-justified
// text in sprio's layout, so only numbers are checked.
void CheckHeaderEndsMatch(const std::string& out) {
  auto nl = out.find('\n');
  std::string head = out.substr(0, nl), row = out.substr(nl + 1);
  row = row.substr(0, row.find('\n'));
  auto ends = [](const std::string& l) {
    std::vector<size_t> e;
    for (size_t i = 0; i < l.size(); ++i)
      if (l[i] != ' ' && (i + 1 == l.size() || l[i + 1] == ' ')) e.push_back(i + 1);
    return e;
  };
  for (size_t e : ends(row)) {
    if (!std::isdigit(static_cast<unsigned char>(row[e - 1]))) continue;
    INFO(head << "\n" << row << "\nvalue ending at column " << e);
    auto h = ends(head);
    CHECK(std::find(h.begin(), h.end(), e) != h.end());
  }
}

TEST_CASE("tprio -n: the header is as wide as the normalized values (issue 17)") {
  pb::GetPrioritiesResponse p;
  p.mutable_weights()->set_age(7000);
  p.mutable_weights()->set_time_limit(4000);
  auto* j = p.add_jobs();
  j->set_job_id(12);
  j->set_partition("batch");
  j->set_user("alice");
  j->set_priority(5500);
  j->set_age(3500);
  j->set_time_limit_factor(2000);
  CommandRun n;
  n.ctld.GetPriorities_result = p;
  REQUIRE(n.Run(RunTprio, {"-n"}) == 0);
  CHECK(n.out ==
        "          JOBID PARTITION   PRIORITY        AGE  TIMELIMIT\n"
        "             12 batch      0.5000000  0.5000000  0.5000000\n");
  CheckHeaderEndsMatch(n.out);
  CommandRun l;
  l.ctld.GetPriorities_result = p;
  REQUIRE(l.Run(RunTprio, {"-n", "-l"}) == 0);
  CheckHeaderEndsMatch(l.out);
}
