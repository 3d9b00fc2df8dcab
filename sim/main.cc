// tessera-sim: replay a workload trace through tessera_sched in virtual time.
//
//   tessera-sim --trace FILE [--format swf|csv|openb] --conf tessera.conf
//               [--compare default,easy,conservative,fifo,spread,mig-whole,mig-static,mig-dynamic]
//               [--mig-layout "7g.80gb;4g.40gb,3g.40gb"] [--limit N] [--arrival-scale F]
//               [--json out.json] [--svg out.svg]
//               [--topology FILE --topology-plugin topology/tree|block | --gen-topology SPEC]
//               [--topology-mode required|preferred] [--compare topo-aware,topo-blind]
//               [--reservations FILE]   (issue 17 §1: sim/reservations.h)
//               [--worst N]   (issue 17 §2: the N longest waits per configuration)
//               [--jobs-csv F] (issue 17 §2: every job's submit, start, end and nodes)
//   tessera-sim --openb-nodes openb_node_list_gpu_node.csv --emit-conf out.conf
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "common/cluster_config.h"
#include "common/config_file.h"
#include "sim/engine.h"
#include "sim/fairshare.h"
#include "sim/mig.h"
#include "sim/options.h"
#include "sim/report.h"
#include "sim/reservations.h"
#include "sim/topology.h"

using namespace tessera;

namespace {

// A whole option value as a number; NaN when it is not one ("1e3" and "0.25" are).
double Number(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  return s.empty() || *end ? std::nan("") : v;
}

int Usage() {
  std::cerr << "usage: tessera-sim --trace FILE [--format swf|csv|openb] --conf tessera.conf\n"
               "         [--compare default,easy,conservative,fifo,spread,mig-whole,mig-static,mig-dynamic]\n"
               "         [--mig-layout \"P1,P2;P3\"] [--limit N] [--arrival-scale F] [--json F] [--svg F]\n"
               "         [--topology FILE --topology-plugin topology/tree|topology/block |\n"
               "          --gen-topology fat-tree:L,S|block:B] [--topology-mode required|preferred]\n"
               "         [--compare topo-aware,topo-blind]\n"
               "         [--accounts group|user|user-mod:N|qos] [--share-table SECONDS]\n"
               "         [--worst N] [--jobs-csv F]\n"
               "         [--reservations FILE]  (scontrol create lines; StartTime=+SECONDS)\n"
               "       tessera-sim --openb-nodes NODES.csv --emit-conf OUT.conf\n";
  return 2;
}

sched::ClusterSnapshot ClusterFrom(const ClusterConfig& c) {
  sched::ClusterSnapshot s;
  for (const auto& n : c.nodes) {
    sched::NodeSnap ns;
    ns.name = n.name;
    ns.schedulable = n.initial_state.empty();
    ns.cpus_total = ns.cpus_free = n.cpus;
    ns.mem_total = ns.mem_free = n.real_memory_mib;
    ns.partitions = n.partitions;
    ns.features = n.features;
    ns.weight = n.weight;
    uint32_t idx = 0;
    for (const auto& [model, count] : n.gres_gpus)
      for (uint32_t i = 0; i < count; ++i) ns.gpus.push_back({idx++, model, true, true});
    s.nodes.push_back(std::move(ns));
  }
  for (const auto& p : c.partitions)
    s.partitions.push_back({p.name, p.up, p.max_nodes, p.max_time_s, p.default_time_s, p.priority_tier});
  return s;
}

// Named variants of the configuration loaded from --conf.
Result<sched::SchedConfig> Preset(const std::string& name, sched::SchedConfig base) {
  if (name == "default" || sim::MigVariantByName(name) != sim::MigVariant::kNone ||
      sim::IsTopologyVariant(name))
    return base;
  bool policy = false;  // easy, conservative, fifo (sim/options.h)
  base = sim::PolicyPreset(name, std::move(base), &policy);
  if (policy) return base;
  if (name == "fairshare" || name == "nofairshare") {  // issue 16 §3
    if (name == "nofairshare") base.weight_fairshare = 0;
    else if (base.weight_fairshare == 0) base.weight_fairshare = 10000;
    return base;
  }
  if (name == "drf") {
    base.plugins.insert(base.plugins.begin(), "drf");
    return base;
  }
  if (name == "spread") {
    base.binpack_weight = 0;
    base.spread_weight = 1;
    base.endtime_weight = 0;  // issue 17 §2's placement rule packs too
    base.size_weight = 0;
    base.scarce_weight = 0;
    return base;
  }
  return InvalidArgument("unknown --compare configuration \"" + name + "\" (default, easy, conservative, fifo, spread, fairshare, nofairshare, drf, mig-whole, mig-static, mig-dynamic)");
}

}  // namespace

int main(int argc, char** argv) {
  auto args = sim::ParseSimArgs(argc, argv);
  if (!args.ok()) {
    std::cerr << "tessera-sim: " << args.status().message() << "\n";
    return Usage();
  }
  std::map<std::string, std::string>& a = *args;
  if (a.count("share-table") && !(Number(a["share-table"]) >= 1)) {
    std::cerr << "tessera-sim: --share-table must be a number of seconds >= 1\n";
    return 2;
  }
  if (a.count("worst") && !(Number(a["worst"]) >= 1 && Number(a["worst"]) == std::floor(Number(a["worst"])))) {
    std::cerr << "tessera-sim: --worst must be a whole number >= 1\n";
    return 2;
  }
  if (a.count("openb-nodes")) {
    auto conf = sim::OpenbNodesToConf(a["openb-nodes"]);
    if (!conf.ok()) { std::cerr << "tessera-sim: " << conf.status().message() << "\n"; return 1; }
    if (!a.count("emit-conf")) { std::cout << *conf; return 0; }
    std::ofstream(a["emit-conf"]) << *conf;
    return 0;
  }
  if (!a.count("trace") || !a.count("conf")) return Usage();
  auto cluster_cfg = LoadClusterConfig(a["conf"]);
  if (!cluster_cfg.ok()) { std::cerr << "tessera-sim: " << cluster_cfg.status().message() << "\n"; return 1; }
  auto lines = ParseConfigFile(a["conf"]);
  if (!lines.ok()) { std::cerr << "tessera-sim: " << lines.status().message() << "\n"; return 1; }
  auto sched_cfg = sched::BuildSchedConfig(*lines);
  if (!sched_cfg.ok()) { std::cerr << "tessera-sim: " << sched_cfg.status().message() << "\n"; return 1; }
  sched::PrintConfigWarnings(std::cerr, "tessera-sim", sched::ConfigWarnings(cluster_cfg->warnings, *sched_cfg));
  auto trace = sim::ReadTrace(a["trace"], a.count("format") ? a["format"] : "");
  if (!trace.ok()) { std::cerr << "tessera-sim: " << trace.status().message() << "\n"; return 1; }
  if (a.count("arrival-scale")) {  // compress (<1) or stretch (>1) inter-arrival times
    double f = Number(a["arrival-scale"]);
    if (!(f > 0)) { std::cerr << "tessera-sim: --arrival-scale must be a number > 0\n"; return 2; }
    int64_t t0 = trace->empty() ? 0 : trace->front().submit;
    for (auto& j : *trace) j.submit = t0 + static_cast<int64_t>(double(j.submit - t0) * f);
  }
  if (a.count("accounts")) {  // issue 16 §3: whose account a trace job charges
    Status st = sim::AssignAccounts(a["accounts"], *trace);
    if (!st.ok()) { std::cerr << "tessera-sim: " << st.message() << "\n"; return 2; }
  }
  if (a.count("limit")) {
    double lim = Number(a["limit"]);
    if (!(lim >= 1) || lim != std::floor(lim)) { std::cerr << "tessera-sim: --limit must be a whole number >= 1\n"; return 2; }
    auto n = static_cast<size_t>(lim);
    if (trace->size() > n) trace->resize(n);
  }
  sched::ClusterSnapshot cluster = ClusterFrom(*cluster_cfg);
  std::vector<std::string> topo_warnings;
  if (Status st = sim::ApplyTopologyArgs(a, &cluster, &topo_warnings); !st.ok()) {
    std::cerr << "tessera-sim: " << st.message() << "\n";
    return 1;
  }
  for (const auto& w : topo_warnings) std::cerr << "tessera-sim: warning: " << w << "\n";
  if (a.count("reservations")) {  // issue 17 §1: maintenance windows and other reservations
    std::ifstream rf(a["reservations"]);
    std::stringstream text;
    text << rf.rdbuf();
    Status st = rf ? sim::LoadReservations(text.str(), a["reservations"],
                                           trace->empty() ? 0 : trace->front().submit, &cluster)
                   : NotFound("cannot read " + a["reservations"]);
    if (!st.ok()) { std::cerr << "tessera-sim: " << st.message() << "\n"; return 2; }
  }
  const PartitionConfig* dp = cluster_cfg->DefaultPartition();
  std::string default_part = dp ? dp->name : (cluster.partitions.empty() ? "" : cluster.partitions[0].name);
  std::vector<std::string> names;
  std::stringstream ss(a.count("compare") ? a["compare"] : "default");
  for (std::string n; std::getline(ss, n, ',');) names.push_back(n);
  std::vector<sim::SimRun> runs;
  std::vector<sim::Metrics> metrics;
  auto layout = sim::ParseMigLayouts(a.count("mig-layout") ? a["mig-layout"] : "");
  for (const auto& n : names) {
    auto cfg = Preset(n, *sched_cfg);
    if (!cfg.ok()) { std::cerr << "tessera-sim: " << cfg.status().message() << "\n"; return 2; }
    sim::MigVariant mv = sim::MigVariantByName(n);
    if (n == "topo-blind") {  // the scheduler sees no topology; spread is still measured
      sched::ClusterSnapshot flat = cluster;
      flat.topology = nullptr;
      runs.push_back(sim::Simulate(flat, default_part, *cfg, *trace, n));
    } else if (mv == sim::MigVariant::kNone) {
      runs.push_back(sim::Simulate(cluster, default_part, *cfg, *trace, n));
    } else {
      sched::ClusterSnapshot c = cluster;
      Status st = sim::ApplyMigVariant(*cluster_cfg, mv, layout, c.nodes);
      if (!st.ok()) { std::cerr << "tessera-sim: " << n << ": " << st.message() << "\n"; return 1; }
      std::vector<sim::TraceJob> t = *trace;
      sim::ApplyMigVariant(mv, t);
      runs.push_back(sim::Simulate(c, default_part, *cfg, t, n, sim::WholeGpuMemMib(*cluster_cfg)));
    }
    if (!runs.back().error.empty()) { std::cerr << "tessera-sim: " << n << ": " << runs.back().error << "\n"; return 1; }
    metrics.push_back(sim::Compute(runs.back()));
  }
  sim::PrintTable(std::cout, metrics);
  if (cluster.topology) {
    std::vector<sim::SpreadMetrics> spread;
    for (const auto& r : runs) spread.push_back(sim::ComputeSpread(r, *cluster.topology));
    std::cout << "\n";
    sim::PrintSpreadTable(std::cout, spread);
  }
  if (a.count("share-table"))  // issue 16 §3: per-account share over time, per configuration
    for (const auto& r : runs)
      sim::PrintShareTable(std::cout, r.label,
                           sim::ComputeShareTable(r, static_cast<int64_t>(Number(a["share-table"]))));
  if (a.count("worst")) {  // issue 17 §2: which jobs bear the maximum wait
    double w = Number(a["worst"]);
    for (const auto& r : runs) sim::PrintWorstWaits(std::cout, r, static_cast<size_t>(w));
  }
  if (a.count("jobs-csv")) {  // issue 17 §2: per-job starts and nodes, for analysis
    std::ofstream out(a["jobs-csv"]);
    std::vector<std::string> names;
    for (const auto& nd : cluster.nodes) names.push_back(nd.name);
    for (size_t i = 0; i < runs.size(); ++i) sim::PrintJobsCsv(out, runs[i], names, i == 0);
    if (!out) { std::cerr << "tessera-sim: cannot write " << a["jobs-csv"] << "\n"; return 1; }
  }
  if (a.count("json")) {
    std::ofstream out(a["json"]);
    sim::PrintJson(out, metrics);
  }
  if (a.count("svg")) {
    std::ofstream out(a["svg"]);
    sim::PrintSvg(out, runs);
  }
  return 0;
}
