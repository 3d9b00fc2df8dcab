#include "cli/lib/batch_options.h"

#include <limits>

#include "cli/lib/text_util.h"
#include "cli/lib/time_spec.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {

using K = ArgKind;

Status BadValue(const ParsedOption& opt, const std::string& why = "") {
  std::string msg = "invalid " + opt.name + " value \"" + opt.value.value_or("") + "\"";
  if (!why.empty()) msg += " (" + why + ")";
  return InvalidArgument(msg);
}

Result<uint32_t> PositiveCount(const ParsedOption& opt, const std::string& s) {
  auto n = ParseUint(s, "count");
  if (!n.ok() || *n == 0 || *n > std::numeric_limits<uint32_t>::max())
    return BadValue(opt, "expected a positive integer");
  return static_cast<uint32_t>(*n);
}

// -N "min[-max]".
Status ApplyNodes(const ParsedOption& opt, BatchOptions& out) {
  const std::string& v = *opt.value;
  size_t dash = v.find('-');
  auto min = PositiveCount(opt, v.substr(0, dash));
  if (!min.ok()) return min.status();
  uint32_t max = *min;
  if (dash != std::string::npos) {
    auto m = PositiveCount(opt, v.substr(dash + 1));
    if (!m.ok()) return m.status();
    if (*m < *min) return BadValue(opt, "maximum below minimum");
    max = *m;
  }
  out.nodes_min = *min;
  out.nodes_max = max;
  return Status::Ok();
}

Status ApplyMemory(const ParsedOption& opt, BatchOptions& out) {
  auto mib = ParseMemMiB(*opt.value);
  if (!mib.ok()) return BadValue(opt, "expected a size such as 4096, 500M or 16G");
  if (*mib == 0)
    return BadValue(opt, "0 (all of a node's memory) is not supported; use --exclusive");
  if (opt.id == kOptMem) {
    out.mem_mib = *mib;
    out.mem_per_cpu_mib.reset();
  } else {
    out.mem_per_cpu_mib = *mib;
    out.mem_mib.reset();
  }
  return Status::Ok();
}

Status ApplyNice(const ParsedOption& opt, BatchOptions& out) {
  if (!opt.value) {
    out.nice = 100;  // sbatch's default adjustment for a bare --nice
    return Status::Ok();
  }
  std::string v = *opt.value;
  bool neg = !v.empty() && v[0] == '-';
  if (neg || (!v.empty() && v[0] == '+')) v = v.substr(1);
  auto n = ParseUint(v, "nice");
  if (!n.ok() || *n > 2147483645ull) return BadValue(opt, "expected an integer");
  out.nice = static_cast<int32_t>(neg ? -static_cast<int64_t>(*n) : static_cast<int64_t>(*n));
  return Status::Ok();
}

Status ApplyGpuOption(const ParsedOption& opt, BatchOptions& out) {
  if (opt.id == kOptGres) {
    auto g = ParseGres(*opt.value);
    if (!g.ok()) return BadValue(opt, g.status().message());
    if (*g) {
      out.gpus_per_node = **g;
    } else {
      out.gpus_per_node.reset();
    }
    return Status::Ok();
  }
  auto g = ParseGpuCount(*opt.value);
  if (!g.ok()) return BadValue(opt, g.status().message());
  if (opt.id == kOptGpus) {
    out.gpus_total = *g;
  } else {
    out.gpus_per_node = *g;
  }
  return Status::Ok();
}

std::optional<std::string>* StringField(int id, BatchOptions& o) {
  switch (id) {
    case kOptJobName: return &o.job_name;
    case kOptPartition: return &o.partition;
    case kOptOutput: return &o.output;
    case kOptError: return &o.error;
    case kOptChdir: return &o.chdir;
    case kOptExport: return &o.export_spec;
    case kOptAccount: return &o.account;
    case kOptQos: return &o.qos;
    case kOptConstraint: return &o.constraint;
    case kOptNodelist: return &o.nodelist;
    case kOptExclude: return &o.exclude;
    case kOptComment: return &o.comment;
    case kOptDependency: return &o.dependency;
    case kOptWrap: return &o.wrap;
    default: return nullptr;
  }
}

std::optional<uint32_t>* CountField(int id, BatchOptions& o) {
  switch (id) {
    case kOptNtasks: return &o.ntasks;
    case kOptNtasksPerNode: return &o.ntasks_per_node;
    case kOptCpusPerTask: return &o.cpus_per_task;
    default: return nullptr;
  }
}

// Options that only make sense on the command line.
Status CheckSource(const ParsedOption& opt, OptionSource source) {
  bool cmdline_only = opt.id == kOptWrap || opt.id == kOptHelp || opt.id == kOptUsage ||
                      opt.id == kOptVersion;
  if (cmdline_only && source != OptionSource::kCommandLine)
    return InvalidArgument(opt.name + " is only valid on the command line");
  return Status::Ok();
}

// Flags and the options that only record something.
bool ApplyFlag(const ParsedOption& opt, BatchOptions& out) {
  switch (opt.id) {
    case kOptExclusive: out.exclusive = true; return true;
    case kOptHold: out.hold = true; return true;
    case kOptRequeue: out.requeue = true; return true;
    case kOptNoRequeue: out.requeue = false; return true;
    case kOptParsable: out.parsable = true; return true;
    case kOptTestOnly: out.test_only = true; return true;
    case kOptHelp: out.help = true; return true;
    case kOptUsage: out.usage = true; return true;
    case kOptVersion: out.version = true; return true;
    case kOptQuiet: out.quiet = true; return true;
    case kOptVerbose: return true;
    case kOptMailType:
    case kOptMailUser:
      out.warnings.push_back(opt.name + " is accepted but ignored: Tessera does not send mail");
      return true;
    default: return false;
  }
}

}  // namespace

const std::vector<OptionSpec>& BatchOptionSpecs() {
  static const std::vector<OptionSpec> kSpecs = {
      {"job-name", 'J', K::kRequired, kOptJobName},
      {"partition", 'p', K::kRequired, kOptPartition},
      {"nodes", 'N', K::kRequired, kOptNodes},
      {"ntasks", 'n', K::kRequired, kOptNtasks},
      {"ntasks-per-node", 0, K::kRequired, kOptNtasksPerNode},
      {"cpus-per-task", 'c', K::kRequired, kOptCpusPerTask},
      {"mem", 0, K::kRequired, kOptMem},
      {"mem-per-cpu", 0, K::kRequired, kOptMemPerCpu},
      {"time", 't', K::kRequired, kOptTime},
      {"output", 'o', K::kRequired, kOptOutput},
      {"error", 'e', K::kRequired, kOptError},
      {"chdir", 'D', K::kRequired, kOptChdir},
      {"export", 0, K::kRequired, kOptExport},
      {"account", 'A', K::kRequired, kOptAccount},
      {"qos", 'q', K::kRequired, kOptQos},
      {"gres", 0, K::kRequired, kOptGres},
      {"gpus", 'G', K::kRequired, kOptGpus},
      {"gpus-per-node", 0, K::kRequired, kOptGpusPerNode},
      {"constraint", 'C', K::kRequired, kOptConstraint},
      {"nodelist", 'w', K::kRequired, kOptNodelist},
      {"exclude", 'x', K::kRequired, kOptExclude},
      {"exclusive", 0, K::kOptional, kOptExclusive},
      {"hold", 'H', K::kNone, kOptHold},
      {"requeue", 0, K::kNone, kOptRequeue},
      {"no-requeue", 0, K::kNone, kOptNoRequeue},
      {"comment", 0, K::kRequired, kOptComment},
      {"nice", 0, K::kOptional, kOptNice},
      {"begin", 'b', K::kRequired, kOptBegin},
      {"wrap", 0, K::kRequired, kOptWrap},
      {"parsable", 0, K::kNone, kOptParsable},
      {"test-only", 0, K::kNone, kOptTestOnly},
      {"dependency", 'd', K::kRequired, kOptDependency},
      {"mail-type", 0, K::kRequired, kOptMailType},
      {"mail-user", 0, K::kRequired, kOptMailUser},
      {"help", 'h', K::kNone, kOptHelp},
      {"usage", 0, K::kNone, kOptUsage},
      {"version", 'V', K::kNone, kOptVersion},
      {"quiet", 'Q', K::kNone, kOptQuiet},
      {"verbose", 'v', K::kNone, kOptVerbose},
  };
  return kSpecs;
}

Status ApplyBatchOption(const ParsedOption& opt, OptionSource source, int64_t now,
                        BatchOptions& out) {
  TESSERA_RETURN_IF_ERROR(CheckSource(opt, source));
  if (ApplyFlag(opt, out)) return Status::Ok();
  if (auto* field = StringField(opt.id, out)) {
    if (opt.value->empty() && opt.id != kOptComment) return BadValue(opt, "empty");
    *field = *opt.value;
    return Status::Ok();
  }
  if (auto* field = CountField(opt.id, out)) {
    auto n = PositiveCount(opt, *opt.value);
    if (!n.ok()) return n.status();
    *field = *n;
    return Status::Ok();
  }
  switch (opt.id) {
    case kOptNodes: return ApplyNodes(opt, out);
    case kOptMem:
    case kOptMemPerCpu: return ApplyMemory(opt, out);
    case kOptNice: return ApplyNice(opt, out);
    case kOptGres:
    case kOptGpus:
    case kOptGpusPerNode: return ApplyGpuOption(opt, out);
    case kOptTime: {
      auto t = ParseTimeLimit(*opt.value);
      if (!t.ok() || *t == 0) return BadValue(opt);
      out.time_limit_s = *t;
      return Status::Ok();
    }
    case kOptBegin: {
      auto t = ParseTimeSpec(*opt.value, now);
      if (!t.ok()) return BadValue(opt);
      out.begin_time = *t;
      return Status::Ok();
    }
    default: return Internal("unhandled option " + opt.name);
  }
}

Result<GpuRequest> ParseGpuCount(const std::string& value) {
  GpuRequest g;
  std::string count = value;
  size_t colon = value.rfind(':');
  if (colon != std::string::npos) {
    g.model = value.substr(0, colon);
    count = value.substr(colon + 1);
    if (g.model.empty() || g.model.find(':') != std::string::npos)
      return InvalidArgument("expected [type:]count");
  }
  auto n = ParseUint(count, "count");
  if (!n.ok() || *n == 0 || *n > 1024) return InvalidArgument("expected [type:]count");
  g.count = static_cast<uint32_t>(*n);
  return g;
}

Result<std::optional<GpuRequest>> ParseGres(const std::string& value) {
  if (EqualsIgnoreCase(value, "none")) return std::optional<GpuRequest>();
  std::optional<GpuRequest> gpu;
  for (std::string item : Split(value, ',')) {
    if (StartsWith(item, "gres:") || StartsWith(item, "gres/")) item = item.substr(5);
    auto parts = Split(item, ':');
    if (parts.empty() || parts[0] != "gpu")
      return InvalidArgument("only gpu GRES are supported, not \"" + item + "\"");
    if (parts.size() > 3) return InvalidArgument("expected gpu[:type][:count]");
    GpuRequest g;
    g.count = 1;
    if (parts.size() >= 2) {
      auto n = ParseUint(parts.back(), "count");
      if (n.ok()) {
        g.count = static_cast<uint32_t>(*n);
        if (parts.size() == 3) g.model = parts[1];
      } else if (parts.size() == 2) {
        g.model = parts[1];
      } else {
        return InvalidArgument("expected gpu[:type][:count]");
      }
    }
    if (g.count == 0 || g.count > 1024) return InvalidArgument("bad GPU count");
    gpu = g;
  }
  if (!gpu) return InvalidArgument("empty");
  return gpu;
}

Result<BatchOptions> BatchOptionsFromEnv(const std::map<std::string, std::string>& env,
                                         int64_t now) {
  static const std::pair<const char*, const char*> kVars[] = {
      {"SBATCH_ACCOUNT", "account"},       {"SBATCH_CONSTRAINT", "constraint"},
      {"SBATCH_EXPORT", "export"},         {"SBATCH_GPUS", "gpus"},
      {"SBATCH_GPUS_PER_NODE", "gpus-per-node"}, {"SBATCH_GRES", "gres"},
      {"SBATCH_JOB_NAME", "job-name"},     {"SBATCH_MEM_PER_CPU", "mem-per-cpu"},
      {"SBATCH_MEM_PER_NODE", "mem"},      {"SBATCH_PARTITION", "partition"},
      {"SBATCH_QOS", "qos"},               {"SBATCH_TIMELIMIT", "time"},
      {"SBATCH_EXCLUSIVE", "exclusive"},   {"SBATCH_REQUEUE", "requeue"},
      {"SBATCH_NO_REQUEUE", "no-requeue"},
  };
  BatchOptions out;
  for (const auto& [var, opt_name] : kVars) {
    auto it = env.find(var);
    if (it == env.end()) continue;
    const OptionSpec* spec = nullptr;
    for (const auto& s : BatchOptionSpecs())
      if (s.long_name == opt_name) spec = &s;
    ParsedOption opt{spec->id, std::string("--") + opt_name, std::nullopt};
    if (spec->arg == ArgKind::kRequired) opt.value = it->second;
    Status st = ApplyBatchOption(opt, OptionSource::kEnvironment, now, out);
    if (!st.ok())
      return InvalidArgument(std::string("environment variable ") + var + ": " + st.message());
  }
  return out;
}

void MergeBatchOptions(const BatchOptions& over, BatchOptions& base) {
#define TESSERA_MERGE(f) \
  if (over.f) base.f = over.f
  TESSERA_MERGE(job_name); TESSERA_MERGE(partition); TESSERA_MERGE(output);
  TESSERA_MERGE(error); TESSERA_MERGE(chdir); TESSERA_MERGE(export_spec);
  TESSERA_MERGE(account); TESSERA_MERGE(qos); TESSERA_MERGE(constraint);
  TESSERA_MERGE(nodelist); TESSERA_MERGE(exclude); TESSERA_MERGE(comment);
  TESSERA_MERGE(dependency); TESSERA_MERGE(wrap); TESSERA_MERGE(nodes_min);
  TESSERA_MERGE(nodes_max); TESSERA_MERGE(ntasks); TESSERA_MERGE(ntasks_per_node);
  TESSERA_MERGE(cpus_per_task); TESSERA_MERGE(time_limit_s); TESSERA_MERGE(begin_time);
  TESSERA_MERGE(gpus_per_node); TESSERA_MERGE(gpus_total); TESSERA_MERGE(exclusive);
  TESSERA_MERGE(hold); TESSERA_MERGE(requeue); TESSERA_MERGE(nice);
#undef TESSERA_MERGE
  if (over.mem_mib || over.mem_per_cpu_mib) {
    base.mem_mib = over.mem_mib;
    base.mem_per_cpu_mib = over.mem_per_cpu_mib;
  }
  base.parsable = base.parsable || over.parsable;
  base.test_only = base.test_only || over.test_only;
  base.quiet = base.quiet || over.quiet;
  base.help = base.help || over.help;
  base.usage = base.usage || over.usage;
  base.version = base.version || over.version;
  base.warnings.insert(base.warnings.end(), over.warnings.begin(), over.warnings.end());
}

}  // namespace tessera::cli
