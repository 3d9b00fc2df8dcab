#pragma once
// Registry: names -> factories for plugins and actions. Registry::Builtin() knows every
// built-in one; tests and the simulator may add their own. Unknown names are errors that name
// the bad name, so ctld fails at startup rather than scheduling with a silent gap.
//
// Built-in actions: enqueue, allocate, migplan, preempt, backfill (reclaim: a reserved name that
// is not implemented yet; configuring it is an error that says so).
// Built-in plugins: priority (multifactor job order), fifo (submit-time order), gang (gang
// readiness), predicates (constraints, node lists, partition, BadConstraints), nodeorder
// (binpack/spread scores), lifecycle (holds, begin time, dependencies, array %), limits
// (partition and QoS limits, per-user and group TRES, account GrpTRES).
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/status.h"
#include "ctld/sched/plugin.h"
#include "ctld/sched/sched_config.h"

namespace tessera::sched {

class Registry {
 public:
  using PluginFactory = std::function<Result<std::unique_ptr<Plugin>>(const SchedConfig&)>;
  using ActionFactory = std::function<Result<std::unique_ptr<Action>>(const SchedConfig&)>;

  // Every built-in plugin and action.
  static Registry Builtin();

  void AddPlugin(const std::string& name, PluginFactory f) { plugins_[name] = std::move(f); }
  void AddAction(const std::string& name, ActionFactory f) { actions_[name] = std::move(f); }
  bool HasPlugin(const std::string& name) const { return plugins_.count(name) > 0; }
  bool HasAction(const std::string& name) const { return actions_.count(name) > 0; }
  std::string PluginNames() const;
  std::string ActionNames() const;

  // NotFound naming the name when unknown; the factory's error when it refuses.
  Result<std::unique_ptr<Plugin>> MakePlugin(const std::string& name, const SchedConfig& c) const;
  Result<std::unique_ptr<Action>> MakeAction(const std::string& name, const SchedConfig& c) const;
  // OK when every configured action and plugin exists and can be built.
  Status Validate(const SchedConfig& c) const;

 private:
  std::map<std::string, PluginFactory> plugins_;
  std::map<std::string, ActionFactory> actions_;
};

// Defined in plugins/*.cc and actions/actions.cc.
void RegisterBuiltinPlugins(Registry& r);
void RegisterBuiltinActions(Registry& r);
// actions/mig_plan.cc: "migplan" (dynamic MIG, see that file).
void RegisterMigPlanAction(Registry& r);
// actions/preempt.cc: "preempt" (issue 16 §4, see that file).
void RegisterPreemptAction(Registry& r);

}  // namespace tessera::sched
