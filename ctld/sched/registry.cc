#include "ctld/sched/registry.h"

#include "ctld/sched/plugins/plugins.h"

namespace tessera::sched {
namespace {

template <typename M>
std::string Names(const M& m) {
  std::string out;
  for (const auto& [k, v] : m) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

Registry Registry::Builtin() {
  Registry r;
  RegisterBuiltinPlugins(r);
  RegisterBuiltinActions(r);
  RegisterMigPlanAction(r);
  RegisterPreemptAction(r);  // issue 16 §4 (actions/preempt.cc)
  RegisterDrfPlugin(r);  // issue 16 §3
  RegisterQueuePlugin(r);  // issue 16 §2 (plugins/queue.cc; reclaim: actions/preempt.cc)
  return r;
}

std::string Registry::PluginNames() const { return Names(plugins_); }
std::string Registry::ActionNames() const { return Names(actions_); }

Result<std::unique_ptr<Plugin>> Registry::MakePlugin(const std::string& name,
                                                     const SchedConfig& c) const {
  auto it = plugins_.find(name);
  if (it == plugins_.end())
    return NotFound("unknown scheduler plugin \"" + name + "\" (known: " + PluginNames() + ")");
  return it->second(c);
}

Result<std::unique_ptr<Action>> Registry::MakeAction(const std::string& name,
                                                     const SchedConfig& c) const {
  auto it = actions_.find(name);
  if (it == actions_.end())
    return NotFound("unknown scheduler action \"" + name + "\" (known: " + ActionNames() + ")");
  return it->second(c);
}

Status Registry::Validate(const SchedConfig& c) const {
  for (const auto& a : c.actions) {
    auto made = MakeAction(a, c);
    if (!made.ok()) return made.status();
  }
  for (const auto& p : c.plugins) {
    auto made = MakePlugin(p, c);
    if (!made.ok()) return made.status();
  }
  return Status::Ok();
}

}  // namespace tessera::sched
