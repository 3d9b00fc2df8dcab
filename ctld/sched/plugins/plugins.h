#pragma once
// Registration hooks of the built-in plugins (one per file in this directory).
#include "ctld/sched/registry.h"

namespace tessera::sched {

void RegisterOrderPlugins(Registry& r);      // priority, fifo, gang, nodeorder
void RegisterPredicatesPlugin(Registry& r);  // predicates
void RegisterLifecyclePlugin(Registry& r);   // lifecycle
void RegisterLimitsPlugin(Registry& r);      // limits
void RegisterDrfPlugin(Registry& r);         // drf (issue 16 §3, drf.cc)
void RegisterQueuePlugin(Registry& r);       // queue (issue 16 §2, queue.cc)

template <typename P>
Registry::PluginFactory Simple() {
  return [](const SchedConfig& c) -> Result<std::unique_ptr<Plugin>> {
    return std::unique_ptr<Plugin>(new P(c));
  };
}

}  // namespace tessera::sched
