// tinfo: partitions and nodes (sinfo).
#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/help_text.h"
#include <map>
#include <set>

#include <algorithm>
#include <ctime>

#include "cli/lib/gpu_view.h"
#include "cli/lib/info_custom.h"
#include "cli/lib/info_format.h"
#include "cli/lib/slurm_compat.h"
#include "cli/lib/resv_view.h"
#include "cli/lib/text_util.h"

namespace tessera::cli {
namespace {

constexpr char kUsage[] = R"(Usage: tinfo [OPTIONS]
Show partitions and nodes, as sinfo does.

  (default)                   one line per partition and node state:
                              PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST
  -N, --Node                  one line per node (and partition):
                              NODELIST   NODES PARTITION STATE
  -o, --format=FORMAT         sinfo's format codes with widths ("%.10l", "%-9P"): %P %R %a %l
                              %L %D %t %T %N %n %c %C %m %G %f %E %s %r %h %g %z %d %w %O %e;
                              lines are grouped as sinfo groups them (one per node with -N)
  -l, --long                  sinfo's long view (with -N: the long node view), after a
                              date line
  -s, --summarize             one line per partition: NODES(A/I/O/T) = nodes allocated/
                              idle/other (down, drained, ...)/total
  -R, --list-reasons          why nodes are down, drained or failed:
                              REASON USER TIMESTAMP NODELIST
      --gpus                  the GPU pool: one line per GPU node, one character per GPU
                              (. free, # allocated, X unhealthy, - on a drained/down node,
                              m/M MIG idle/in use), the job of each allocated GPU, MIG
                              layouts, then a summary
  -T, --reservation           advance reservations: RESV_NAME STATE START_TIME END_TIME
                              DURATION NODELIST (tcontrol show reservation has the details)
  -p, --partition=PARTITIONS  only these partitions (comma-separated)
  -t, --states=STATES         only nodes in these states (idle, mix, alloc, drng, drain, down,
                              fail, unk, or their long names; comma-separated)
      --json                  print {"partitions":[...],"nodes":[...]} (Tessera's JSON; run
                              as "sinfo" refused: it is not Slurm's data_parser schema)
  -h, --noheader              print no header line
      --help                  show this help
  -V, --version               show the version
States: idle, mix (partly allocated), alloc, drng (draining), drain (drained), down, fail,
unk (never registered). The default partition is marked with '*'.
Environment: TESSERA_CONF names the configuration file (default /etc/tessera/tessera.conf).
)";

enum Opt { kNode = 1, kReasons, kPartition, kNoHeader, kHelp, kVersion, kGpus, kStates, kJson,
           kFormat, kLong, kSummarize, kReservation };

const std::vector<OptionSpec> kSpecs = {
    {"Node", 'N', ArgKind::kNone, kNode},
    {"list-reasons", 'R', ArgKind::kNone, kReasons},
    {"partition", 'p', ArgKind::kRequired, kPartition},
    {"noheader", 'h', ArgKind::kNone, kNoHeader},
    {"help", 0, ArgKind::kNone, kHelp},
    {"version", 'V', ArgKind::kNone, kVersion},
    {"gpus", 0, ArgKind::kNone, kGpus},
    {"states", 't', ArgKind::kRequired, kStates},
    {"json", 0, ArgKind::kNone, kJson},
    {"format", 'o', ArgKind::kRequired, kFormat},
    {"long", 'l', ArgKind::kNone, kLong},
    {"summarize", 's', ArgKind::kNone, kSummarize},
    {"reservation", 'T', ArgKind::kNone, kReservation},  // issue 17 §1
};

// sinfo -t names -> the compact state names NodeStateCompact prints.
Result<std::set<std::string>> ParseNodeStates(const std::string& list) {
  static const std::map<std::string, std::string> kNames = {
      {"idle", "idle"},       {"mix", "mix"},       {"mixed", "mix"},   {"alloc", "alloc"},
      {"allocated", "alloc"}, {"drng", "drng"},     {"draining", "drng"}, {"drain", "drain"},
      {"drained", "drain"},   {"down", "down"},     {"fail", "fail"},   {"unk", "unk"},
      {"unknown", "unk"}};
  std::set<std::string> out;
  for (const auto& s : Split(list, ',')) {
    auto it = kNames.find(ToLower(s));
    if (it == kNames.end()) return InvalidArgument("invalid node state specified: " + s);
    out.insert(it->second);
    if (it->second == "drain") out.insert("drng");  // sinfo: drain matches draining too
  }
  return out;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

std::string InfoJson(const std::vector<pb::PartitionInfo>& parts, const std::vector<pb::NodeInfo>& nodes) {
  std::string out = "{\"partitions\":[";
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& p = parts[i];
    out += std::string(i ? "," : "") + "{\"name\":" + JsonString(p.name()) +
           ",\"default\":" + (p.is_default() ? "true" : "false") + ",\"up\":" +
           (p.up() ? "true" : "false") + ",\"max_time_s\":" + std::to_string(p.max_time_s()) +
           ",\"nodes\":" + JsonString(p.nodes()) + ",\"total_nodes\":" +
           std::to_string(p.total_nodes()) + ",\"total_cpus\":" + std::to_string(p.total_cpus()) + "}";
  }
  out += "],\"nodes\":[";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    out += std::string(i ? "," : "") + "{\"name\":" + JsonString(n.name()) + ",\"state\":" +
           JsonString(NodeStateLong(n)) + ",\"reason\":" + JsonString(n.reason()) +
           ",\"cpus\":" + std::to_string(n.cpus()) + ",\"alloc_cpus\":" +
           std::to_string(n.alloc_cpus()) + ",\"real_memory_mib\":" +
           std::to_string(n.real_memory_mib()) + ",\"alloc_memory_mib\":" +
           std::to_string(n.alloc_memory_mib()) + ",\"gpus\":" + std::to_string(n.gpus_size()) +
           ",\"alloc_gpus\":" + std::to_string(n.alloc_gpu_indices_size()) + "}";
  }
  return out + "]}\n";
}

}  // namespace

int RunTinfo(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see tinfo --help)");
  InfoOptions opts;
  opts.names = ctx.names;
  bool help = false, version = false, gpus = false, json = false, long_view = false,
       summarize = false;
  bool reservations = false;
  std::string format;
  std::set<std::string> states;
  for (const auto& o : parsed->options) {
    switch (o.id) {
      case kNode: opts.node_oriented = true; break;
      case kReasons: opts.list_reasons = true; break;
      case kPartition:
        for (const auto& p : Split(*o.value, ',')) opts.partitions.push_back(p);
        break;
      case kNoHeader: opts.header = false; break;
      case kGpus: gpus = true; break;
      case kJson: json = true; break;
      case kFormat: format = *o.value; break;
      case kLong: long_view = true; break;
      case kSummarize: summarize = true; break;
      case kReservation: reservations = true; break;
      case kStates: {
        auto st = ParseNodeStates(*o.value);
        if (!st.ok()) return Fail(ctx, st.status().message());
        states.insert(st->begin(), st->end());
        break;
      }
      case kHelp: help = true; break;
      case kVersion: version = true; break;
    }
  }
  if (help) return (*ctx.out << HelpText(ctx, kUsage), 0);
  if (version) return (*ctx.out << VersionLine() << "\n", 0);
  if (!parsed->positionals.empty())
    return Fail(ctx, "unexpected argument \"" + parsed->positionals[0] + "\" (see tinfo --help)");
  if (json && IsSlurmName(ctx.prog))  // never a look-alike of Slurm's JSON (issue 19)
    return Fail(ctx, "--json is not supported: Tessera does not produce Slurm's data_parser "
                     "v0.0.38 JSON (tinfo --json prints Tessera's own)");
  if (format.empty() && summarize) format = kSummarizeInfoFormat;
  if (format.empty() && long_view) format = opts.node_oriented ? kLongNodeInfoFormat : kLongInfoFormat;
  Result<InfoFormat> custom = InfoFormat{};
  if (!format.empty()) {
    custom = ParseInfoFormat(format);
    if (!custom.ok()) return Fail(ctx, custom.status().message());
  }
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  if (reservations) return PrintReservationTable(ctx, **api, opts.header);  // sinfo -T
  auto parts = (*api)->ListPartitions({});
  if (!parts.ok()) return Fail(ctx, parts.status().message());
  // The default view needs no node records: ctld's node-state summary (issue 20 §2) is one row
  // per partition and state. A controller without it answers with no generation: then the
  // records it sent instead are used.
  bool summary_view = format.empty() && !opts.node_oriented && !opts.list_reasons && !json && !gpus;
  pb::ListNodesRequest nreq;
  nreq.set_state_summary(summary_view);
  auto nodes = (*api)->ListNodes(nreq);
  if (!nodes.ok()) return Fail(ctx, nodes.status().message());
  for (const auto& want : opts.partitions) {
    bool known = false;
    for (const auto& p : parts->partitions()) known = known || p.name() == want;
    if (!known) return Fail(ctx, "invalid partition name specified: " + want);
  }
  std::vector<pb::PartitionInfo> pv(parts->partitions().begin(), parts->partitions().end());
  if (summary_view && nodes->generation() != 0) {
    std::vector<pb::ListNodesResponse::StateGroup> groups;
    for (const auto& g : nodes->groups())
      if (states.empty() || states.count(NodeStateCompact(g.state()))) groups.push_back(g);
    *ctx.out << FormatInfoSummary(pv, groups, opts);
    return 0;
  }
  std::vector<pb::NodeInfo> nv;
  for (const auto& n : nodes->nodes())
    if (states.empty() || states.count(NodeStateCompact(n.state()))) nv.push_back(n);
  if (json) return (*ctx.out << InfoJson(pv, nv), 0);
  if (gpus) {
    pb::ListJobsRequest lr;
    lr.add_states(pb::RUNNING);
    lr.add_states(pb::SUSPENDED);
    lr.add_states(pb::COMPLETING);
    auto jobs = (*api)->ListJobs(lr);
    if (!jobs.ok()) return Fail(ctx, jobs.status().message());
    std::vector<pb::JobInfo> jv(jobs->jobs().begin(), jobs->jobs().end());
    *ctx.out << FormatGpuPool(nv, jv);
    return 0;
  }
  if (!format.empty() && !opts.list_reasons) {
    std::vector<pb::PartitionInfo> shown;
    for (const auto& p : pv)
      if (opts.partitions.empty() || std::count(opts.partitions.begin(), opts.partitions.end(), p.name()))
        shown.push_back(p);
    if (long_view) {
      time_t t = static_cast<time_t>(ctx.now);
      struct tm tm {};
      localtime_r(&t, &tm);
      char buf[64];
      std::strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", &tm);
      *ctx.out << buf << "\n";
    }
    *ctx.out << FormatInfoCustom(shown, nv, *custom, opts.node_oriented, opts.header);
    return 0;
  }
  *ctx.out << FormatInfo(pv, nv, opts);
  return 0;
}

}  // namespace tessera::cli
