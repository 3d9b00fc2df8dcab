// tstat (sstat, issue 19 h19): live usage of running job steps, read by each step's nodes from
// the tasks' cgroups (StepAgent.GetStepUsage) and added up here.
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/lib/acct_format.h"
#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/text_util.h"
#include "cli/lib/tstat.h"
#include "common/duration.h"
#include "cli/lib/help_text.h"
#include "common/hostlist.h"
#include "rpc/step_usage.h"

namespace tessera::cli {
namespace {

constexpr char kUsage[] = R"(Usage: tstat -j JOB[.STEP][,...] [OPTIONS]
Live resource usage of running job steps (trun / srun steps), as sstat prints it: each node
of a step reads its tasks' cgroups now (memory peak and current use, CPU time) and /proc
(virtual memory); the figures of all nodes are added up.

  -j, --jobs=LIST          JOB (every running step of the job) or JOB.STEP, comma-separated
  -a, --allsteps           every running step of each JOB (also the default without .STEP)
  -o, --format, --fields=FIELDS
                           comma-separated fields, each optionally with %WIDTH (sacct's
                           field names; default: sstat's list, JobID MaxVMSize ... AveDiskWrite)
  -n, --noheader           print no header lines
  -p, --parsable           '|' after every field
  -P, --parsable2          '|' between fields
  -e, --helpformat         list the fields
  -h, --help               show this help
  -V, --version            show the version
The batch script's own step (JOB.batch) is not served live: sacct shows its usage after the
job. Environment: TESSERA_CONF names the configuration file.
)";

constexpr char kDefaultFields[] =
    "JobID,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,"
    "MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,"
    "AveCPUFreq,ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ConsumedEnergy,MaxDiskRead,"
    "MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,"
    "MaxDiskWriteTask,AveDiskWrite";

enum Opt { kJobs = 1, kAll, kFormat, kNoHeader, kParsable, kParsable2, kHelpFormat, kHelp, kVersion };

const std::vector<OptionSpec> kSpecs = {
    {"jobs", 'j', ArgKind::kRequired, kJobs},       {"allsteps", 'a', ArgKind::kNone, kAll},
    {"format", 'o', ArgKind::kRequired, kFormat},   {"fields", 0, ArgKind::kRequired, kFormat},
    {"noheader", 'n', ArgKind::kNone, kNoHeader},   {"parsable", 'p', ArgKind::kNone, kParsable},
    {"parsable2", 'P', ArgKind::kNone, kParsable2}, {"helpformat", 'e', ArgKind::kNone, kHelpFormat},
    {"help", 'h', ArgKind::kNone, kHelp},           {"version", 'V', ArgKind::kNone, kVersion},
};

struct Ref {
  uint64_t job = 0;
  std::optional<uint32_t> step;  // nullopt = every running step
};

Result<std::vector<Ref>> ParseRefs(const std::string& list) {
  std::vector<Ref> out;
  for (const std::string& item : Split(list, ',')) {
    std::string t = Trim(item);
    if (t.empty()) continue;
    Ref r;
    size_t dot = t.find('.');
    auto job = ParseUint(t.substr(0, dot), "job id");
    if (!job.ok() || *job == 0) return InvalidArgument("invalid job id \"" + t + "\"");
    r.job = *job;
    if (dot != std::string::npos) {
      std::string s = t.substr(dot + 1);
      if (s == "batch" || s == "extern")
        return InvalidArgument("step " + t + ": the ." + s +
                               " step's live usage is not served (sacct shows .batch after the job)");
      auto step = ParseUint(s, "step id");
      if (!step.ok()) return InvalidArgument("invalid step id \"" + t + "\"");
      r.step = static_cast<uint32_t>(*step);
    }
    out.push_back(r);
  }
  if (out.empty()) return InvalidArgument("no job given (-j JOB[.STEP])");
  return out;
}

// The nodes of a running step (address and port from the controller's node list).
Result<std::vector<pb::StepNode>> StepNodesOf(ControllerApi& api, const pb::StepInfo& s) {
  auto nodes = api.ListNodes(pb::ListNodesRequest());
  if (!nodes.ok()) return nodes.status();
  auto hosts = ExpandHostlist(s.nodelist());
  if (!hosts.ok()) return hosts.status();
  std::vector<pb::StepNode> out;
  for (const auto& h : *hosts)
    for (const auto& n : nodes->nodes())
      if (n.name() == h) {
        pb::StepNode sn;
        sn.set_node(h);
        sn.set_address(n.address());
        sn.set_port(n.port());
        out.push_back(sn);
      }
  return out;
}

constexpr char kAttachUsage[] = R"(Usage: tattach [OPTIONS] JOB.STEP
Attach to a running job step (trun / srun), as sattach does: its tasks' output from now on,
from every node of the step, until the tasks end.

  -l, --label              prefix each line with the task's rank ("0: ")
      --output-filter=RANK only this task's stdout
      --error-filter=RANK  only this task's stderr
      --layout             print the step's layout (nodes and tasks) and exit
  -Q, --quiet              no informational messages
  -h, --help               show this help
  -V, --version            show the version
stdin is not forwarded to the tasks; --pty and --input-filter are refused.
)";

enum AttachOpt { kALabel = 1, kAOut, kAErr, kALayout, kAQuiet, kAHelp, kAPty, kAIn, kAVersion };

const std::vector<OptionSpec> kAttachSpecs = {
    {"label", 'l', ArgKind::kNone, kALabel},
    {"output-filter", 0, ArgKind::kRequired, kAOut},
    {"error-filter", 0, ArgKind::kRequired, kAErr},
    {"layout", 0, ArgKind::kNone, kALayout},
    {"quiet", 'Q', ArgKind::kNone, kAQuiet},
    {"help", 'h', ArgKind::kNone, kAHelp},
    {"pty", 0, ArgKind::kNone, kAPty},
    {"input-filter", 0, ArgKind::kRequired, kAIn},
    {"version", 'V', ArgKind::kNone, kAVersion},
};

}  // namespace

int RunTattachWith(CommandContext& ctx, const NodeConnector& connect_node) {
  auto parsed = ParseArgs(ctx.args, kAttachSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see " + ctx.prog + " --help)");
  bool label = false, layout = false;
  std::optional<uint32_t> out_rank, err_rank;
  for (const auto& o : parsed->options) {
    if (o.id == kAHelp) return (*ctx.out << HelpText(ctx, kAttachUsage), 0);
    if (o.id == kAVersion) return (*ctx.out << VersionLine() << "\n", 0);
    if (o.id == kAPty) return Fail(ctx, "--pty: a terminal on the node is not supported");
    if (o.id == kAIn) return Fail(ctx, "--input-filter: stdin is not forwarded to the tasks");
    if (o.id == kALabel) label = true;
    if (o.id == kALayout) layout = true;
    if (o.id == kAOut || o.id == kAErr) {
      auto n = ParseUint(o.value.value_or(""), "task id");
      if (!n.ok()) return Fail(ctx, "invalid task id \"" + o.value.value_or("") + "\"");
      (o.id == kAOut ? out_rank : err_rank) = static_cast<uint32_t>(*n);
    }
  }
  if (parsed->positionals.size() != 1)
    return Fail(ctx, "one job step is required: " + ctx.prog + " JOB.STEP");
  const std::string& ref = parsed->positionals[0];
  size_t dot = ref.find('.');
  auto job = ParseUint(ref.substr(0, dot), "job id");
  auto step = dot == std::string::npos ? Result<uint64_t>(InvalidArgument("no step"))
                                       : ParseUint(ref.substr(dot + 1), "step id");
  if (!job.ok() || !step.ok())
    return Fail(ctx, "invalid job step \"" + ref + "\" (JOB.STEP, e.g. 42.0)");
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  pb::QueryAccountingRequest q;
  q.add_job_ids(*job);
  auto acct = (*api)->QueryAccounting(q);
  if (!acct.ok()) return Fail(ctx, acct.status().message());
  const pb::StepInfo* found = nullptr;
  for (const auto& s : acct->steps())
    if (s.step_id() == *step && s.state() == pb::RUNNING) found = &s;
  if (!found) return Fail(ctx, "job step " + ref + " is not running");
  auto nodes = StepNodesOf(**api, *found);
  if (!nodes.ok()) return Fail(ctx, nodes.status().message());
  if (layout) {
    *ctx.out << "Job step layout:\n  " << found->ntasks() << " tasks, " << nodes->size()
             << " nodes (" << found->nodelist() << ")\n";
    return 0;
  }
  std::mutex mu;
  std::map<std::pair<uint32_t, uint32_t>, std::string> partial;  // (rank, stream) -> line start
  auto emit = [&](const pb::TaskOutput& m) {
    if (!m.has_data()) return;
    const auto& d = m.data();
    if ((d.stream() == 1 && out_rank && *out_rank != d.rank()) ||
        (d.stream() == 2 && err_rank && *err_rank != d.rank()))
      return;
    std::lock_guard<std::mutex> lock(mu);
    std::ostream& os = d.stream() == 2 ? *ctx.err : *ctx.out;
    if (!label) {
      os << d.data();
      os.flush();
      return;
    }
    std::string& buf = partial[{d.rank(), d.stream()}];
    buf += d.data();
    for (size_t nl; (nl = buf.find('\n')) != std::string::npos; buf.erase(0, nl + 1))
      os << d.rank() << ": " << buf.substr(0, nl + 1);
    os.flush();
  };
  std::vector<std::thread> threads;
  std::vector<std::string> errors(nodes->size());
  for (size_t i = 0; i < nodes->size(); ++i)
    threads.emplace_back([&, i] {
      auto c = connect_node((*nodes)[i]);
      Status st = c.ok() ? (*c)->AttachTasks(*job, static_cast<uint32_t>(*step), emit) : c.status();
      if (!st.ok()) errors[i] = st.message();
    });
  for (auto& t : threads) t.join();
  for (const auto& [key, rest] : partial)
    if (!rest.empty()) (key.second == 2 ? *ctx.err : *ctx.out) << key.first << ": " << rest << "\n";
  int rc = 0;
  for (const auto& e : errors)
    if (!e.empty()) Warn(ctx, e), rc = 1;
  return rc;
}

int RunTstatWith(CommandContext& ctx, const NodeConnector& connect_node) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see " + ctx.prog + " --help)");
  std::string jobs, fields = kDefaultFields;
  bool header = true;
  AcctLayout layout = AcctLayout::kColumns;
  for (const auto& o : parsed->options) {
    if (o.id == kHelp) return (*ctx.out << HelpText(ctx, kUsage), 0);
    if (o.id == kVersion) return (*ctx.out << VersionLine() << "\n", 0);
    if (o.id == kHelpFormat) return (*ctx.out << AcctFieldList(), 0);
    if (o.id == kJobs) jobs += (jobs.empty() ? "" : ",") + o.value.value_or("");
    if (o.id == kFormat) fields = o.value.value_or("");
    if (o.id == kNoHeader) header = false;
    if (o.id == kParsable) layout = AcctLayout::kParsable;
    if (o.id == kParsable2) layout = AcctLayout::kParsable2;
  }
  if (!parsed->positionals.empty() && jobs.empty()) jobs = parsed->positionals[0];
  if (jobs.empty()) return Fail(ctx, "no job given: " + ctx.prog + " -j JOB[.STEP]");
  auto refs = ParseRefs(jobs);
  if (!refs.ok()) return Fail(ctx, refs.status().message());
  auto cols = ParseAcctFields(fields);
  if (!cols.ok()) return Fail(ctx, cols.status().message());
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  pb::QueryAccountingRequest q;
  for (const auto& r : *refs) q.add_job_ids(r.job);
  auto acct = (*api)->QueryAccounting(q);
  if (!acct.ok()) return Fail(ctx, acct.status().message());
  auto nodes = (*api)->ListNodes(pb::ListNodesRequest());
  if (!nodes.ok()) return Fail(ctx, nodes.status().message());
  std::map<std::string, const pb::NodeInfo*> by_name;
  for (const auto& n : nodes->nodes()) by_name[n.name()] = &n;
  std::vector<pb::JobInfo> rows;
  std::vector<pb::StepUsage> usage;
  int rc = 0;
  for (const auto& r : *refs) {
    bool found = false;
    for (const auto& s : acct->steps()) {
      if (s.job_id() != r.job || s.state() != pb::RUNNING || s.step_id() >= 0xfffffff0u) continue;
      if (r.step && s.step_id() != *r.step) continue;
      found = true;
      auto hosts = ExpandHostlist(s.nodelist());
      pb::StepUsage total;
      for (const auto& h : hosts.ok() ? *hosts : std::vector<std::string>{}) {
        auto it = by_name.find(h);
        if (it == by_name.end()) continue;
        pb::StepNode sn;
        sn.set_node(h);
        sn.set_address(it->second->address());
        sn.set_port(it->second->port());
        auto client = connect_node(sn);
        if (!client.ok()) {
          Warn(ctx, "node " + h + ": " + client.status().message());
          continue;
        }
        auto u = (*client)->GetStepUsage(s.job_id(), s.step_id());
        if (!u.ok()) {
          Warn(ctx, "step " + std::to_string(s.job_id()) + "." + std::to_string(s.step_id()) +
                        " on " + h + ": " + u.status().message());
          continue;
        }
        rpc::AddStepUsage(*u, &total);
      }
      pb::JobInfo row;
      row.set_job_id(s.job_id());
      row.set_array_task_str(std::to_string(s.job_id()) + "." + std::to_string(s.step_id()));
      row.set_nodelist(s.nodelist());
      row.set_num_tasks(total.ntasks() ? total.ntasks() : s.ntasks());
      row.set_state(pb::RUNNING);
      rows.push_back(row);
      usage.push_back(total);
    }
    if (!found) {
      *ctx.err << ctx.prog << ": error: no steps running for job " << r.job
               << (r.step ? "." + std::to_string(*r.step) : std::string()) << "\n";
      rc = 1;
    }
  }
  *ctx.out << FormatAcct(rows, *cols, layout, header, *ctx.names, ctx.now, &usage);
  return rc;
}

}  // namespace tessera::cli
