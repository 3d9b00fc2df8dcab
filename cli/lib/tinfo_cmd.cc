// tinfo: partitions and nodes (sinfo).
#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/info_format.h"
#include "cli/lib/text_util.h"

namespace tessera::cli {
namespace {

constexpr char kUsage[] = R"(Usage: tinfo [OPTIONS]
Show partitions and nodes, as sinfo does.

  (default)                   one line per partition and node state:
                              PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST
  -N, --Node                  one line per node (and partition):
                              NODELIST   NODES PARTITION STATE
  -R, --list-reasons          why nodes are down, drained or failed:
                              REASON USER TIMESTAMP NODELIST
  -p, --partition=PARTITIONS  only these partitions (comma-separated)
  -h, --noheader              print no header line
      --help                  show this help
  -V, --version               show the version
States: idle, mix (partly allocated), alloc, drng (draining), drain (drained), down, fail,
unk (never registered). The default partition is marked with '*'.
Environment: TESSERA_CONF names the configuration file (default /etc/tessera/tessera.conf).
)";

enum Opt { kNode = 1, kReasons, kPartition, kNoHeader, kHelp, kVersion };

const std::vector<OptionSpec> kSpecs = {
    {"Node", 'N', ArgKind::kNone, kNode},
    {"list-reasons", 'R', ArgKind::kNone, kReasons},
    {"partition", 'p', ArgKind::kRequired, kPartition},
    {"noheader", 'h', ArgKind::kNone, kNoHeader},
    {"help", 0, ArgKind::kNone, kHelp},
    {"version", 'V', ArgKind::kNone, kVersion},
};

}  // namespace

int RunTinfo(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see tinfo --help)");
  InfoOptions opts;
  bool help = false, version = false;
  for (const auto& o : parsed->options) {
    switch (o.id) {
      case kNode: opts.node_oriented = true; break;
      case kReasons: opts.list_reasons = true; break;
      case kPartition:
        for (const auto& p : Split(*o.value, ',')) opts.partitions.push_back(p);
        break;
      case kNoHeader: opts.header = false; break;
      case kHelp: help = true; break;
      case kVersion: version = true; break;
    }
  }
  if (help) return (*ctx.out << kUsage, 0);
  if (version) return (*ctx.out << VersionLine() << "\n", 0);
  if (!parsed->positionals.empty())
    return Fail(ctx, "unexpected argument \"" + parsed->positionals[0] + "\" (see tinfo --help)");
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  auto parts = (*api)->ListPartitions({});
  if (!parts.ok()) return Fail(ctx, parts.status().message());
  auto nodes = (*api)->ListNodes({});
  if (!nodes.ok()) return Fail(ctx, nodes.status().message());
  for (const auto& want : opts.partitions) {
    bool known = false;
    for (const auto& p : parts->partitions()) known = known || p.name() == want;
    if (!known) return Fail(ctx, "invalid partition name specified: " + want);
  }
  std::vector<pb::PartitionInfo> pv(parts->partitions().begin(), parts->partitions().end());
  std::vector<pb::NodeInfo> nv(nodes->nodes().begin(), nodes->nodes().end());
  *ctx.out << FormatInfo(pv, nv, opts);
  return 0;
}

}  // namespace tessera::cli
