// The acct helper's scenario expectation (issue 16 §1; tests/scenarios/README.md, "Associations"):
//   expect assoc ID [account=A] [maxjobs=N] [maxsubmit=N] [maxwall=SECONDS] [maxtres=TRES]
//                   [qos=a,b] [defqos=Q]
// checks the association the job runs under (its account, else the user's DefaultAccount) and
// that association's effective limits with inheritance (ctld/sched/assoc.h).
#include <map>

#include "ctld/sched/assoc.h"
#include "tests/unit/sched/scenario.h"

namespace tessera::sched::testing {

std::string CheckAssocExpect(const Expect& e, const JobSnap& job, const SchedConfig& cfg) {
  AssocIndex idx(cfg);
  std::string account = job.account.empty() ? idx.DefaultAccount(job.user) : job.account;
  AssocLimits eff = idx.Effective(job.user, account);
  std::string qos;
  for (const auto& q : idx.AllowedQos(job.user, account)) qos += (qos.empty() ? "" : ",") + q;
  std::map<std::string, std::string> got = {
      {"account", account},
      {"maxjobs", std::to_string(eff.max_jobs)},
      {"maxsubmit", std::to_string(eff.max_submit_jobs)},
      {"maxwall", std::to_string(eff.max_wall)},
      {"maxtres", FormatTres(eff.max_tres_per_job)},
      {"qos", qos},
      {"defqos", idx.DefaultQos(job.user, account)},
  };
  for (const auto& a : e.args) {
    size_t eq = a.find('=');
    std::string key = a.substr(0, eq), want = eq == std::string::npos ? "" : a.substr(eq + 1);
    auto it = got.find(key);
    if (it == got.end()) return "expect assoc: unknown key " + key;
    if (it->second != want) return "expected assoc " + key + "=" + want + " got " + it->second;
  }
  return "";
}

}  // namespace tessera::sched::testing
