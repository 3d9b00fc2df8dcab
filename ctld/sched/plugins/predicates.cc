// predicates: which nodes a job may use (partition, constraint, node lists) and whether any
// node of its partition could ever match its constraint (else BadConstraints).
#include <algorithm>
#include <map>

#include "ctld/sched/plugins/plugins.h"
#include "ctld/sched/session.h"

namespace tessera::sched {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class PredicatesPlugin : public Plugin {
 public:
  explicit PredicatesPlugin(const SchedConfig&) {}
  std::string Name() const override { return "predicates"; }
  void OnSessionOpen(Session& s) override {
    s.AddPredicate([](const JobInfo& j, const NodeRt& n) {
      const JobSnap& js = *j.snap;
      if (std::find(n.partitions.begin(), n.partitions.end(), static_cast<uint32_t>(j.partition)) ==
          n.partitions.end())
        return false;
      if (!js.exclude.empty() && Contains(js.exclude, n.snap->name)) return false;
      // A node list at least as large as the job's node count restricts it to those nodes;
      // a shorter one only says which nodes must be included.
      if (!js.nodelist.empty() && js.nodelist.size() >= std::max<uint32_t>(1, js.nodes_min) &&
          !Contains(js.nodelist, n.snap->name))
        return false;
      return j.constraint.Empty() || j.constraint.Matches(n.features);
    });
    Session* sp = &s;
    s.AddEligible([this, sp](const JobInfo& j) -> std::string {
      if (j.constraint.Empty()) return "";
      std::string key = std::to_string(j.partition) + "|" + j.snap->constraint;
      auto it = satisfiable_.find(key);
      if (it == satisfiable_.end()) {
        bool any = false;
        for (uint32_t i : sp->state().PartitionNodes(j.partition))
          if ((any = j.constraint.Matches(sp->state().nodes()[i].features))) break;
        it = satisfiable_.emplace(key, any).first;
      }
      return it->second ? "" : "BadConstraints";
    });
  }

 private:
  std::map<std::string, bool> satisfiable_;
};

}  // namespace

void RegisterPredicatesPlugin(Registry& r) { r.AddPlugin("predicates", Simple<PredicatesPlugin>()); }

}  // namespace tessera::sched
