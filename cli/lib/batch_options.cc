#include "cli/lib/batch_options.h"

#include <limits>
#include <tuple>

#include "cli/lib/text_util.h"
#include "cli/lib/time_spec.h"
#include "common/duration.h"
#include "common/gpu_bind.h"
#include "common/input_limits.h"

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
  if (*mib == 0 && opt.id != kOptMem) return BadValue(opt, "must be positive");
  out.mem_mib.reset();
  out.mem_per_cpu_mib.reset();
  out.mem_per_gpu_mib.reset();
  out.mem_whole_node.reset();
  if (opt.id == kOptMem && *mib == 0) {
    out.mem_whole_node = true;  // Slurm: all the memory of each node
  } else if (opt.id == kOptMem) {
    out.mem_mib = *mib;
  } else if (opt.id == kOptMemPerCpu) {
    out.mem_per_cpu_mib = *mib;
  } else {
    out.mem_per_gpu_mib = *mib;
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
    auto shares = ParseGresShares(*opt.value);
    if (!shares.ok()) return BadValue(opt, shares.status().message());
    out.gres_shares = *shares;
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
  } else if (opt.id == kOptGpusPerTask) {
    out.gpus_per_task = *g;
  } else {
    out.gpus_per_node = *g;
  }
  return Status::Ok();
}

// Options whose values have a structure of their own (batch_values.h).
Status ApplyStructured(const ParsedOption& opt, BatchOptions& out) {
  const std::string& v = *opt.value;
  switch (opt.id) {
    case kOptArray: {
      auto n = ValidateArraySpec(v);
      if (!n.ok()) return BadValue(opt, n.status().message());
      out.array = v;
      return Status::Ok();
    }
    case kOptSignal: {
      auto sig = ParseSignalSpec(v);
      if (!sig.ok()) return BadValue(opt, sig.status().message());
      out.signal = *sig;
      return Status::Ok();
    }
    case kOptSwitches: {
      auto sw = ParseSwitches(v);
      if (!sw.ok()) return BadValue(opt, sw.status().message());
      out.switches = *sw;
      return Status::Ok();
    }
    case kOptGpuBind: {  // issue 19 (h19 s7): the job's steps bind their tasks so
      auto b = ParseGpuBind(v);
      if (!b.ok()) return b.status();  // names --gpu-bind and the value
      out.gpu_bind = v;
      return Status::Ok();
    }
    case kOptOpenMode:
      if (!EqualsIgnoreCase(v, "append") && !EqualsIgnoreCase(v, "truncate"))
        return BadValue(opt, "expected append or truncate");
      out.open_mode = ToLower(v);
      return Status::Ok();
    case kOptPriority: {
      auto n = ParseUint(v, "priority");
      if (!n.ok() || *n == 0 || *n >= 0xFFFFFFFFull) return BadValue(opt, "expected a positive integer");
      out.priority = static_cast<uint32_t>(*n);
      return Status::Ok();
    }
    case kOptGpuMem: {
      auto m = ParseMemMiB(v);
      if (!m.ok() || *m == 0) return BadValue(opt, "expected a size such as 40G");
      out.gpu_min_mem_mib = *m;
      return Status::Ok();
    }
    case kOptTaskGroup: {
      auto g = ParseTaskGroup(v);
      if (!g.ok()) return BadValue(opt, g.status().message());
      for (const auto& have : out.task_groups)
        if (have.name == g->name) return BadValue(opt, "group \"" + g->name + "\" given twice");
      out.task_groups.push_back(*g);
      return Status::Ok();
    }
    default: return Internal("unhandled option " + opt.name);
  }
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
    case kOptInput: return &o.input;
    case kOptExportFile: return &o.export_file;
    case kOptReservation: return &o.reservation;
    case kOptUid: return &o.uid;
    default: return nullptr;
  }
}

std::optional<uint32_t>* CountField(int id, BatchOptions& o) {
  switch (id) {
    case kOptNtasks: return &o.ntasks;
    case kOptNtasksPerNode: return &o.ntasks_per_node;
    case kOptCpusPerTask: return &o.cpus_per_task;
    case kOptCpusPerGpu: return &o.cpus_per_gpu;
    case kOptNtasksPerGpu: return &o.ntasks_per_gpu;
    case kOptSegment: return &o.segment;
    default: return nullptr;
  }
}

// Options that only make sense on the command line.
Status CheckSource(const ParsedOption& opt, OptionSource source) {
  bool cmdline_only = opt.id == kOptWrap || opt.id == kOptHelp || opt.id == kOptUsage ||
                      opt.id == kOptVersion || opt.id == kOptWait;
  if (cmdline_only && source != OptionSource::kCommandLine)
    return InvalidArgument(opt.name + " is only valid on the command line");
  bool tessera_only = opt.id == kOptGpuMem || opt.id == kOptTaskGroup;
  if (tessera_only && source == OptionSource::kDirective)
    return InvalidArgument(opt.name + " is a Tessera option: use a #TESSERA line, not #SBATCH");
  return Status::Ok();
}

std::string IgnoredWhy(const std::string& name) {
  if (name == "--mail-type" || name == "--mail-user") return "Tessera does not send mail";
  if (name == "--get-user-env") return "the job gets the environment chosen by --export";
  if (name == "--licenses" || name == "--wckey" || name == "--cluster" || name == "--clusters")
    return "Tessera has no " + name.substr(2);
  return "Tessera does not implement it";
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
    case kOptWait: out.wait = true; return true;
    case kOptNoKill: out.no_kill = true; return true;
    case kOptIgnored:
      out.warnings.push_back(opt.name + " is accepted but ignored: " + IgnoredWhy(opt.name));
      return true;
    default: return false;
  }
}

}  // namespace

const std::vector<std::tuple<std::string, char, ArgKind>>& IgnoredOptions() {
  static const std::vector<std::tuple<std::string, char, ArgKind>> kIgnored = {
      {"mail-type", 0, K::kRequired},      {"mail-user", 0, K::kRequired},
      {"get-user-env", 0, K::kOptional},   {"wckey", 0, K::kRequired},
      {"licenses", 'L', K::kRequired},     {"hint", 0, K::kRequired},
      {"ntasks-per-core", 0, K::kRequired}, {"ntasks-per-socket", 0, K::kRequired},
      {"sockets-per-node", 0, K::kRequired}, {"cores-per-socket", 0, K::kRequired},
      {"threads-per-core", 0, K::kRequired}, {"extra-node-info", 'B', K::kRequired},
      {"tmp", 0, K::kRequired},            {"kill-on-invalid-dep", 0, K::kRequired},
      {"distribution", 'm', K::kRequired}, {"mcs-label", 0, K::kRequired},
      {"profile", 0, K::kRequired},        {"acctg-freq", 0, K::kRequired},
      {"propagate", 0, K::kOptional},
      {"gpu-freq", 0, K::kRequired},       {"cpu-freq", 0, K::kRequired},
      {"mem-bind", 0, K::kRequired},       {"spread-job", 0, K::kNone},
      {"use-min-nodes", 0, K::kNone},      {"oversubscribe", 's', K::kNone},
      {"overcommit", 'O', K::kNone},       {"core-spec", 'S', K::kRequired},
      {"thread-spec", 0, K::kRequired},    {"network", 0, K::kRequired},
      {"reboot", 0, K::kNone},             {"cluster", 'M', K::kRequired},
      {"clusters", 0, K::kRequired},       {"bb", 0, K::kRequired},
      {"bbf", 0, K::kRequired},            {"power", 0, K::kRequired},
      {"delay-boot", 0, K::kRequired},     {"container", 0, K::kRequired},
      {"ignore-pbs", 0, K::kNone},         {"gid", 0, K::kRequired},
      {"kill-command", 'K', K::kOptional}, {"nodefile", 'F', K::kRequired},
      {"mincpus", 0, K::kRequired},        {"gres-flags", 0, K::kRequired},
      {"wait-all-nodes", 0, K::kRequired},  // issue 19: validated, see ApplyBatchOption
  };
  return kIgnored;
}

const std::vector<OptionSpec>& BatchOptionSpecs() {
  static const std::vector<OptionSpec> kSpecs = [] {
    std::vector<OptionSpec> v = {
        {"job-name", 'J', K::kRequired, kOptJobName},
        {"partition", 'p', K::kRequired, kOptPartition},
        {"nodes", 'N', K::kRequired, kOptNodes},
        {"ntasks", 'n', K::kRequired, kOptNtasks},
        {"ntasks-per-node", 0, K::kRequired, kOptNtasksPerNode},
        {"tasks-per-node", 0, K::kRequired, kOptNtasksPerNode},  // Slurm's alias
        {"ntasks-per-gpu", 0, K::kRequired, kOptNtasksPerGpu},
        {"cpus-per-task", 'c', K::kRequired, kOptCpusPerTask},
        {"cpus-per-gpu", 0, K::kRequired, kOptCpusPerGpu},
        {"mem", 0, K::kRequired, kOptMem},
        {"mem-per-cpu", 0, K::kRequired, kOptMemPerCpu},
        {"mem-per-gpu", 0, K::kRequired, kOptMemPerGpu},
        {"time", 't', K::kRequired, kOptTime},
        {"time-min", 0, K::kRequired, kOptTimeMin},
        {"output", 'o', K::kRequired, kOptOutput},
        {"error", 'e', K::kRequired, kOptError},
        {"input", 'i', K::kRequired, kOptInput},
        {"chdir", 'D', K::kRequired, kOptChdir},
        {"workdir", 0, K::kRequired, kOptChdir},  // Slurm's old spelling
        {"export", 0, K::kRequired, kOptExport},
        {"export-file", 0, K::kRequired, kOptExportFile},
        {"account", 'A', K::kRequired, kOptAccount},
        {"qos", 'q', K::kRequired, kOptQos},
        {"gres", 0, K::kRequired, kOptGres},
        {"gpus", 'G', K::kRequired, kOptGpus},
        {"gpus-per-node", 0, K::kRequired, kOptGpusPerNode},
        {"gpus-per-task", 0, K::kRequired, kOptGpusPerTask},
        {"constraint", 'C', K::kRequired, kOptConstraint},
        {"nodelist", 'w', K::kRequired, kOptNodelist},
        {"exclude", 'x', K::kRequired, kOptExclude},
        {"exclusive", 0, K::kOptional, kOptExclusive},
        {"hold", 'H', K::kNone, kOptHold},
        {"requeue", 0, K::kNone, kOptRequeue},
        {"no-requeue", 0, K::kNone, kOptNoRequeue},
        {"no-kill", 'k', K::kOptional, kOptNoKill},
        {"comment", 0, K::kRequired, kOptComment},
        {"nice", 0, K::kOptional, kOptNice},
        {"priority", 0, K::kRequired, kOptPriority},
        {"begin", 'b', K::kRequired, kOptBegin},
        {"deadline", 0, K::kRequired, kOptDeadline},
        {"array", 'a', K::kRequired, kOptArray},
        {"dependency", 'd', K::kRequired, kOptDependency},
        {"reservation", 0, K::kRequired, kOptReservation},
        {"signal", 0, K::kRequired, kOptSignal},
        {"open-mode", 0, K::kRequired, kOptOpenMode},
        {"switches", 0, K::kRequired, kOptSwitches},
        {"segment", 0, K::kRequired, kOptSegment},
        {"gpu-bind", 0, K::kRequired, kOptGpuBind},
        {"uid", 0, K::kRequired, kOptUid},
        {"gpu-mem", 0, K::kRequired, kOptGpuMem},        // Tessera-only
        {"task-group", 0, K::kRequired, kOptTaskGroup},  // Tessera-only
        {"wrap", 0, K::kRequired, kOptWrap},
        {"parsable", 0, K::kNone, kOptParsable},
        {"test-only", 0, K::kNone, kOptTestOnly},
        {"wait", 'W', K::kNone, kOptWait},
        {"help", 'h', K::kNone, kOptHelp},
        {"usage", 0, K::kNone, kOptUsage},
        {"version", 'V', K::kNone, kOptVersion},
        {"quiet", 'Q', K::kNone, kOptQuiet},
        {"verbose", 'v', K::kNone, kOptVerbose},
    };
    for (const auto& [name, short_name, arg] : IgnoredOptions())
      v.push_back({name, short_name, arg, kOptIgnored});
    return v;
  }();
  return kSpecs;
}

Status ApplyBatchOption(const ParsedOption& opt, OptionSource source, int64_t now,
                        BatchOptions& out) {
  TESSERA_RETURN_IF_ERROR(CheckSource(opt, source));
  // --wait-all-nodes=0|1 (issue 19): Tessera launches a batch job only on nodes that are up and
  // registered, which is what 1 asks; both values are accepted without a warning.
  if (opt.id == kOptIgnored && opt.name == "--wait-all-nodes") {
    if (*opt.value == "0" || *opt.value == "1") return Status::Ok();
    return InvalidArgument("invalid --wait-all-nodes value \"" + *opt.value + "\" (0 or 1)");
  }
  if (ApplyFlag(opt, out)) return Status::Ok();
  if (auto* field = StringField(opt.id, out)) {
    // --constraint="" is no constraint, as Slurm takes it (NCSA Delta's job templates carry it;
    // issue 19 corpus).
    if (opt.value->empty() && opt.id == kOptConstraint) return field->reset(), Status::Ok();
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
    case kOptMemPerCpu:
    case kOptMemPerGpu: return ApplyMemory(opt, out);
    case kOptNice: return ApplyNice(opt, out);
    case kOptGres:
    case kOptGpus:
    case kOptGpusPerNode:
    case kOptGpusPerTask: return ApplyGpuOption(opt, out);
    case kOptTimeMin: {
      auto t = ParseTimeLimit(*opt.value);
      if (!t.ok() || *t <= 0) return BadValue(opt);
      if (*t > kMaxTimeLimitS) return BadValue(opt, "more than 100 years");
      out.time_min_s = *t;
      return Status::Ok();
    }
    case kOptTime: {
      auto t = ParseTimeLimit(*opt.value);
      if (!t.ok() || *t == 0) return BadValue(opt);
      if (*t > kMaxTimeLimitS)
        return BadValue(opt, "more than 100 years; use UNLIMITED for no limit");
      out.time_limit_s = *t;
      return Status::Ok();
    }
    case kOptBegin:
    case kOptDeadline: {
      auto t = ParseTimeSpec(*opt.value, now);
      if (!t.ok()) return BadValue(opt);
      if (*t < 0 || *t > now + kMaxTimeAheadS)
        return BadValue(opt, "times must lie between 1970 and 100 years from now");
      (opt.id == kOptBegin ? out.begin_time : out.deadline) = *t;
      return Status::Ok();
    }
    default: return ApplyStructured(opt, out);
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
  bool shares = false;
  for (std::string item : Split(value, ',')) {
    if (StartsWith(item, "gres:") || StartsWith(item, "gres/")) item = item.substr(5);
    auto parts = Split(item, ':');
    if (!parts.empty() && (parts[0] == "mps" || parts[0] == "shard")) {
      shares = true;  // ParseGresShares reads it
      continue;
    }
    if (parts.empty() || parts[0] != "gpu")
      return InvalidArgument("only gpu, mps and shard GRES are supported, not \"" + item + "\"");
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
  if (!gpu && !shares) return InvalidArgument("empty");
  return gpu;
}

Result<GresShares> ParseGresShares(const std::string& value) {
  GresShares out;
  if (EqualsIgnoreCase(value, "none")) return out;
  for (std::string item : Split(value, ',')) {
    if (StartsWith(item, "gres:") || StartsWith(item, "gres/")) item = item.substr(5);
    auto parts = Split(item, ':');
    if (parts.empty() || (parts[0] != "mps" && parts[0] != "shard")) continue;
    bool mps = parts[0] == "mps";
    // mps:N or shard:N, or with a GPU type (mps:a100:50): only GPUs of that type share
    if (parts.size() != 2 && parts.size() != 3)
      return InvalidArgument("expected " + parts[0] + "[:type]:count, not \"" + item + "\"");
    if (parts.size() == 3) {
      if (parts[1].empty()) return InvalidArgument("empty GPU type in \"" + item + "\"");
      if (!out.model.empty() && out.model != parts[1])
        return InvalidArgument("shares of two GPU types (" + out.model + ", " + parts[1] +
                               ") in one job: a job shares one GPU per node");
      out.model = parts[1];
    }
    auto n = ParseUint(parts.back(), "count");
    if (!n.ok() || *n == 0 || *n > 1024)
      return InvalidArgument(std::string("bad ") + parts[0] + " count \"" + parts.back() +
                             "\": expected 1..1024");
    (mps ? out.mps : out.shards) = static_cast<uint32_t>(*n);
  }
  if (out.mps && out.shards) return InvalidArgument("mps and shard cannot be combined in one job");
  return out;
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
      {"SBATCH_NO_REQUEUE", "no-requeue"}, {"SBATCH_ARRAY_INX", "array"},
      {"SBATCH_MEM_PER_GPU", "mem-per-gpu"}, {"SBATCH_GPUS_PER_TASK", "gpus-per-task"},
      {"SBATCH_CPUS_PER_GPU", "cpus-per-gpu"}, {"SBATCH_RESERVATION", "reservation"},
      {"SBATCH_SIGNAL", "signal"},         {"SBATCH_OPEN_MODE", "open-mode"},
      // issue 19: the rest of sbatch's INPUT ENVIRONMENT VARIABLES that map to options here
      {"SBATCH_OUTPUT", "output"}, {"SBATCH_ERROR", "error"}, {"SBATCH_INPUT", "input"},
      {"SBATCH_NO_KILL", "no-kill"}, {"SBATCH_GPU_BIND", "gpu-bind"},
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
  TESSERA_MERGE(input); TESSERA_MERGE(export_file); TESSERA_MERGE(array);
  TESSERA_MERGE(reservation); TESSERA_MERGE(open_mode); TESSERA_MERGE(uid);
  TESSERA_MERGE(gpu_bind);
  TESSERA_MERGE(cpus_per_gpu); TESSERA_MERGE(ntasks_per_gpu); TESSERA_MERGE(priority);
  TESSERA_MERGE(time_min_s); TESSERA_MERGE(deadline); TESSERA_MERGE(gpus_per_task);
  TESSERA_MERGE(signal); TESSERA_MERGE(switches); TESSERA_MERGE(gpu_min_mem_mib);
  TESSERA_MERGE(no_kill); TESSERA_MERGE(gres_shares); TESSERA_MERGE(segment);
#undef TESSERA_MERGE
  if (over.mem_mib || over.mem_per_cpu_mib || over.mem_per_gpu_mib || over.mem_whole_node) {
    base.mem_mib = over.mem_mib;
    base.mem_per_cpu_mib = over.mem_per_cpu_mib;
    base.mem_per_gpu_mib = over.mem_per_gpu_mib;
    base.mem_whole_node = over.mem_whole_node;
  }
  if (!over.task_groups.empty()) base.task_groups = over.task_groups;
  base.wait = base.wait || over.wait;
  base.parsable = base.parsable || over.parsable;
  base.test_only = base.test_only || over.test_only;
  base.quiet = base.quiet || over.quiet;
  base.help = base.help || over.help;
  base.usage = base.usage || over.usage;
  base.version = base.version || over.version;
  base.warnings.insert(base.warnings.end(), over.warnings.begin(), over.warnings.end());
}

}  // namespace tessera::cli
