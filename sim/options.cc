#include "sim/options.h"

#include <algorithm>

namespace tessera::sim {

const std::vector<std::string> kSimOptions = {
    "trace",    "format",         "conf",         "compare",       "limit",   "arrival-scale",
    "json",     "svg",            "mig-layout",   "topology",      "topology-plugin",
    "gen-topology", "topology-mode", "accounts",  "share-table",   "openb-nodes", "emit-conf",
    "reservations", "worst", "jobs-csv"};

Result<std::map<std::string, std::string>> ParseSimArgs(int argc, const char* const* argv) {
  std::map<std::string, std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k.rfind("--", 0) != 0) return InvalidArgument("unexpected argument \"" + k + "\"");
    std::string name = k.substr(2);
    if (std::find(kSimOptions.begin(), kSimOptions.end(), name) == kSimOptions.end()) {
      std::string known;
      for (const auto& o : kSimOptions) known += (known.empty() ? "--" : ", --") + o;
      return InvalidArgument("unknown option " + k + " (known: " + known + ")");
    }
    if (i + 1 >= argc) return InvalidArgument("option " + k + " needs a value");
    if (out.count(name)) return InvalidArgument("option " + k + " given twice");
    out[name] = argv[++i];
  }
  return out;
}

namespace {

// FCFS order: the fifo plugin in place of priority (or first, when priority is absent).
void Fcfs(sched::SchedConfig& c) {
  auto& p = c.plugins;
  auto it = std::find(p.begin(), p.end(), "priority");
  if (it != p.end()) *it = "fifo";
  else if (std::find(p.begin(), p.end(), "fifo") == p.end()) p.insert(p.begin(), "fifo");
}

void WithBackfill(sched::SchedConfig& c) {
  if (std::find(c.actions.begin(), c.actions.end(), "backfill") == c.actions.end())
    c.actions.push_back("backfill");
}

}  // namespace

sched::SchedConfig PolicyPreset(const std::string& name, sched::SchedConfig base, bool* handled) {
  *handled = true;
  if (name == "easy") {
    Fcfs(base);
    WithBackfill(base);
    base.bf_reservation_depth = 1;
    base.bf_oldest = 0;  // FCFS order: its head is the oldest anyway
  } else if (name == "conservative") {
    Fcfs(base);
    WithBackfill(base);
    base.bf_reservation_depth = kEveryJob;
    base.bf_oldest = 0;
  } else if (name == "fifo") {
    base.actions = {"enqueue", "allocate"};
    base.bf_oldest = 0;
    Fcfs(base);
  } else {
    *handled = false;
  }
  return base;
}

}  // namespace tessera::sim
