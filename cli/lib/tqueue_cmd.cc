// tqueue: show the queue (squeue).
#include <algorithm>
#include <ctime>
#include <set>

#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/help_text.h"
#include "cli/lib/queue_format.h"
#include "cli/lib/queue_summary.h"
#include "cli/lib/slurm_compat.h"
#include "cli/lib/text_util.h"
#include "common/duration.h"
#include "common/hostlist.h"
#include "common/job_state.h"

namespace tessera::cli {
namespace {

constexpr char kUsage[] = R"(Usage: tqueue [OPTIONS]
Show jobs in the queue, as squeue does.

Filters (comma-separated lists; a job must match every filter given):
  -u, --user=USERS            jobs of these users (names or uids)
      --me                    jobs of the calling user
  -j, --jobs=IDS              these jobs: 1234 (a job or a whole array), 1234_7 (an array
                              element); any state unless -t is given (run as "squeue": the
                              default states unless -t is given, and a single unknown id
                              is an error, as squeue)
  -t, --states=STATES         states by name or code (PD,R,S,CG,CD,CA,F,TO,NF,PR,OOM,BF,DL)
                              or "all"; default: pending, running, suspended, completing
  -p, --partition=PARTITIONS  jobs in these partitions
  -A, --account=ACCOUNTS      jobs charged to these accounts
  -n, --name=NAMES            jobs with these names
  -q, --qos=QOS               jobs with these QOS
  -w, --nodelist=HOSTLIST     jobs running on any of these nodes
      --start                 pending jobs with their expected start times (N/A = not known)
Output:
  -o, --format=FORMAT         squeue format, e.g. "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
                              "%[.][width]c": "." right-justifies, width pads and cuts
                              fields: %i %A job id, %j name, %u user, %U uid, %g group, %G gid,
                              %t state code, %T state, %M elapsed, %l time limit, %L time left,
                              %D nodes, %C cpus, %P partition, %R reason or nodes, %r reason,
                              %N nodes, %V submit time, %S start time, %e end time, %a account,
                              %q qos, %b GPUs per node, %Q priority, %Z workdir, %o command,
                              %k comment, %E dependency, %f features, %y nice, %F array job
                              id, %K array task id, %c min cpus, %m min memory, %v reservation,
                              %x excluded nodes, %B exec host, %p priority (0..1), %n requested
                              nodes, %Y expected nodes (SCHEDNODES), %% a literal %
  -O, --Format=FIELDS         squeue long fields "Field[:[.]width],..." (default width 20,
                              "." right-justifies): JobID JobArrayID ArrayJobID ArrayTaskID Name
                              UserName UserID GroupName GroupID State StateCompact Partition
                              TimeUsed TimeLimit TimeLeft NumNodes NumCPUs NumTasks NodeList
                              Reason ReasonList SubmitTime StartTime EndTime Priority
                              PriorityLong Account QOS WorkDir Command Comment Dependency
                              Feature Nice tres-per-node Gres tres-alloc GresAlloc Reservation
                              ExcNodes BatchHost MinCpus MinMemory ReqNodes SchedNodes
  -S, --sort=KEYS             sort by format letters, each with + (ascending, default) or -
                              (descending), e.g. "-t,+i" or "P,-p" (default: partition, state,
                              priority, job id)
  -r, --array                 one line per array element (pending arrays are otherwise shown
                              as one line: 1230_[5-15%4])
  -i, --iterate=SECONDS       print the queue again every SECONDS until interrupted
  -l, --long                  long format (state names, time limit) with a date line
  -h, --noheader              print no header line
      --json                  print {"jobs":[...]} (Tessera's JSON) instead of columns; run
                              as "squeue" refused (it is not Slurm's data_parser schema)
  -a, --all                   accepted for compatibility (all partitions are always shown)
      --help                  show this help
  -V, --version               show the version
Environment: TESSERA_CONF names the configuration file (default /etc/tessera/tessera.conf).
)";

enum Opt { kUser = 1, kMe, kJobs, kStates, kPartition, kAccount, kName, kFormat, kLong,
           kNoHeader, kJson, kAll, kHelp, kVersion, kQos, kNodes, kStart, kLongFormat, kSort,
           kArray, kIterate };

const std::vector<OptionSpec> kSpecs = {
    {"user", 'u', ArgKind::kRequired, kUser},       {"me", 0, ArgKind::kNone, kMe},
    {"jobs", 'j', ArgKind::kRequired, kJobs},       {"states", 't', ArgKind::kRequired, kStates},
    {"partition", 'p', ArgKind::kRequired, kPartition},
    {"account", 'A', ArgKind::kRequired, kAccount}, {"name", 'n', ArgKind::kRequired, kName},
    {"format", 'o', ArgKind::kRequired, kFormat},   {"long", 'l', ArgKind::kNone, kLong},
    {"noheader", 'h', ArgKind::kNone, kNoHeader},   {"json", 0, ArgKind::kNone, kJson},
    {"all", 'a', ArgKind::kNone, kAll},             {"help", 0, ArgKind::kNone, kHelp},
    {"version", 'V', ArgKind::kNone, kVersion},      {"qos", 'q', ArgKind::kRequired, kQos},
    {"nodelist", 'w', ArgKind::kRequired, kNodes},   {"start", 0, ArgKind::kNone, kStart},
    {"Format", 'O', ArgKind::kRequired, kLongFormat}, {"sort", 'S', ArgKind::kRequired, kSort},
    {"array", 'r', ArgKind::kNone, kArray},         {"iterate", 'i', ArgKind::kRequired, kIterate},
};

struct QueueArgs {
  pb::ListJobsRequest req;
  std::set<std::string> names, qos, nodes;
  std::string format, long_format, sort;
  int64_t iterate = 0;
  bool start = false, array = false;
  std::vector<JobRef> refs;  // -j (issue 19: array elements "1234_7")
  bool long_view = false, header = true, json = false, help = false, version = false,
       states_given = false;
};

Status AddStates(const std::string& list, QueueArgs& a) {
  a.states_given = true;
  for (const std::string& s : Split(list, ',')) {
    if (EqualsIgnoreCase(s, "all")) {
      for (int v = 1; v <= 13; ++v) a.req.add_states(static_cast<pb::JobState>(v));
      continue;
    }
    auto st = ParseJobState(s);
    if (!st) return InvalidArgument("invalid job state specified: " + s);
    a.req.add_states(static_cast<pb::JobState>(*st));
  }
  return Status::Ok();
}

Status ApplyOption(CommandContext& ctx, const ParsedOption& o, QueueArgs& a) {
  switch (o.id) {
    case kUser: {
      auto uids = ParseUserList(*ctx.names, *o.value);
      if (!uids.ok()) return uids.status();
      for (uint32_t u : *uids) a.req.add_uids(u);
      return Status::Ok();
    }
    case kMe: a.req.add_uids(ctx.uid); return Status::Ok();
    case kJobs: {
      auto refs = ParseJobRefList(*o.value);
      if (!refs.ok()) return refs.status();
      a.refs.insert(a.refs.end(), refs->begin(), refs->end());
      a.req.clear_job_ids();
      for (uint64_t id : RefIds(a.refs)) a.req.add_job_ids(id);
      return Status::Ok();
    }
    case kStates: return AddStates(*o.value, a);
    case kPartition:
      for (const auto& p : Split(*o.value, ',')) a.req.add_partitions(p);
      return Status::Ok();
    case kAccount:
      for (const auto& p : Split(*o.value, ',')) a.req.add_accounts(p);
      return Status::Ok();
    case kName:
      for (const auto& n : Split(*o.value, ',')) a.names.insert(n);
      return Status::Ok();
    case kFormat: a.format = *o.value; return Status::Ok();
    case kLongFormat: a.long_format = *o.value; return Status::Ok();
    case kSort: a.sort = *o.value; return Status::Ok();
    case kStart: a.start = true; return Status::Ok();
    case kArray: a.array = true; return Status::Ok();
    case kQos:
      for (const auto& q : Split(*o.value, ',')) a.qos.insert(q);
      return Status::Ok();
    case kNodes: {
      auto hosts = ExpandHostlist(*o.value);
      if (!hosts.ok()) return InvalidArgument("invalid --nodelist \"" + *o.value + "\"");
      a.nodes.insert(hosts->begin(), hosts->end());
      return Status::Ok();
    }
    case kIterate: {
      auto n = ParseUint(*o.value, "seconds");
      if (!n.ok() || *n == 0 || *n > 86400)
        return InvalidArgument("invalid --iterate value \"" + *o.value + "\" (seconds, 1-86400)");
      a.iterate = static_cast<int64_t>(*n);
      return Status::Ok();
    }
    case kLong: a.long_view = true; return Status::Ok();
    case kNoHeader: a.header = false; return Status::Ok();
    case kJson: a.json = true; return Status::Ok();
    case kHelp: a.help = true; return Status::Ok();
    case kVersion: a.version = true; return Status::Ok();
    default: return Status::Ok();  // -a
  }
}

template <typename C, typename V>
bool In(const C& c, const V& v) {
  return c.empty() || std::find(c.begin(), c.end(), v) != c.end();
}

bool OnNodes(const pb::JobInfo& j, const std::set<std::string>& nodes) {
  for (const auto& al : j.alloc())
    if (nodes.count(al.node())) return true;
  auto hosts = ExpandHostlist(j.nodelist());
  if (hosts.ok())
    for (const auto& h : *hosts)
      if (nodes.count(h)) return true;
  return false;
}

// The server filters too; filtering again keeps the output right whatever it returns.
std::vector<pb::JobInfo> Filter(pb::ListJobsResponse& resp, const QueueArgs& a) {
  std::vector<pb::JobInfo> jobs;
  jobs.reserve(static_cast<size_t>(resp.jobs_size()));
  for (auto& j : *resp.mutable_jobs()) {
    if (!a.refs.empty() &&
        std::none_of(a.refs.begin(), a.refs.end(), [&](const JobRef& r) { return JobRefMatches(r, j); }))
      continue;
    if (!In(a.req.uids(), j.uid()) ||
        !In(a.req.states(), j.state()) || !In(a.names, j.spec().name()))
      continue;
    std::string part = j.partition().empty() ? j.spec().partition() : j.partition();
    std::string acct = j.account().empty() ? j.spec().account() : j.account();
    if (!In(a.req.partitions(), part) || !In(a.req.accounts(), acct) || !In(a.qos, j.spec().qos()))
      continue;
    if (!a.nodes.empty() && !OnNodes(j, a.nodes)) continue;
    NarrowRemainder(a.refs, j);
    jobs.push_back(std::move(j));
  }
  return jobs;
}

std::string DateLine(int64_t now) {
  time_t t = static_cast<time_t>(now);
  struct tm tm {};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", &tm);
  return std::string(buf) + "\n";
}

// The columnar fast path (queue_summary.h) serves formats of summary fields in default order
// with the server-side filters (and -n); everything else takes the JobInfo path.
bool UseSummary(const QueueArgs& a, const QueueFormat& fmt) {
  return !a.json && a.sort.empty() && !a.array && a.qos.empty() && a.nodes.empty() &&
         a.refs.empty() && SummaryCovers(fmt);
}

SummaryFilter SummaryFilterOf(const QueueArgs& a) {
  SummaryFilter f;
  f.job_ids.assign(a.req.job_ids().begin(), a.req.job_ids().end());
  f.uids.assign(a.req.uids().begin(), a.req.uids().end());
  f.states.assign(a.req.states().begin(), a.req.states().end());
  f.partitions.assign(a.req.partitions().begin(), a.req.partitions().end());
  f.accounts.assign(a.req.accounts().begin(), a.req.accounts().end());
  f.names = a.names;
  return f;
}

int PrintSummary(CommandContext& ctx, const pb::ListJobsResponse& resp, const QueueArgs& a,
                 const QueueFormat& fmt) {
  if (a.long_view || a.iterate) *ctx.out << DateLine(ctx.now);
  Status st = PrintSummaryQueue(resp.summary(), SummaryFilterOf(a), fmt, a.header, *ctx.names,
                                ctx.now, *ctx.out);
  if (!st.ok()) return Fail(ctx, st.message());
  ctx.out->flush();
  return 0;
}

int PrintOnce(CommandContext& ctx, ControllerApi& api, const QueueArgs& a, const QueueFormat& fmt) {
  // squeue -j with one id asks for that job alone and fails when the controller does not know
  // it (any state): "slurm_load_jobs error: Invalid job id specified", exit 1.
  bool one_id = a.refs.size() == 1 && IsSlurmName(ctx.prog);
  pb::ListJobsRequest req = a.req;
  if (one_id) {
    req.clear_states();
    req.set_include_finished(true);
  }
  auto resp = api.ListJobs(req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  if (one_id && std::none_of(resp->jobs().begin(), resp->jobs().end(), [&](const pb::JobInfo& j) {
        return j.job_id() == a.req.job_ids(0) || j.array_job_id() == a.req.job_ids(0);
      })) {
    *ctx.err << "slurm_load_jobs error: Invalid job id specified\n";
    return 1;
  }
  // A controller that predates summaries answers with JobInfo messages: print those.
  if (a.req.summary() && resp->jobs_size() == 0) return PrintSummary(ctx, *resp, a, fmt);
  std::vector<pb::JobInfo> jobs = Filter(*resp, a);
  if (a.array) jobs = ExpandArrayRecords(jobs);
  SortQueue(jobs);
  if (!a.sort.empty()) (void)SortQueueBy(jobs, a.sort, *ctx.names, ctx.now);
  if (a.json) return (*ctx.out << FormatQueueJson(jobs, *ctx.names, ctx.now), 0);
  if (a.long_view || a.iterate) *ctx.out << DateLine(ctx.now);
  *ctx.out << FormatQueue(jobs, fmt, a.header, *ctx.names, ctx.now);
  ctx.out->flush();
  return 0;
}

}  // namespace

int RunTqueue(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see tqueue --help)");
  QueueArgs a;
  for (const auto& o : parsed->options) {
    Status st = ApplyOption(ctx, o, a);
    if (!st.ok()) return Fail(ctx, st.message());
  }
  if (a.help) return (*ctx.out << HelpText(ctx, kUsage), 0);
  if (a.version) return (*ctx.out << VersionLine() << "\n", 0);
  if (!parsed->positionals.empty())
    return Fail(ctx, "unexpected argument \"" + parsed->positionals[0] + "\" (see tqueue --help)");
  if (a.json && IsSlurmName(ctx.prog))  // never a look-alike of Slurm's JSON (issue 19)
    return Fail(ctx, "--json is not supported: Tessera does not produce Slurm's data_parser "
                     "v0.0.38 JSON (tqueue --json prints Tessera's own)");
  if (a.start && !a.states_given) {
    a.states_given = true;
    a.req.add_states(pb::PENDING);
  }
  if (a.start && a.sort.empty()) a.sort = "S";  // squeue --start's order
  if (a.format.empty()) a.format = a.start ? kStartQueueFormat
                                   : a.long_view ? kLongQueueFormat : kDefaultQueueFormat;
  auto fmt = a.long_format.empty() ? ParseQueueFormat(a.format) : ParseQueueLongFormat(a.long_format);
  if (!fmt.ok()) return Fail(ctx, fmt.status().message());
  if (!a.sort.empty()) {
    std::vector<pb::JobInfo> none;
    Status st = SortQueueBy(none, a.sort, *ctx.names, ctx.now);
    if (!st.ok()) return Fail(ctx, st.message());
  }
  // squeue shows the default states for -j too (tqueue: any state, as documented).
  if (!a.states_given && (a.req.job_ids().empty() || IsSlurmName(ctx.prog))) {
    for (auto s : {pb::PENDING, pb::RUNNING, pb::SUSPENDED, pb::COMPLETING}) a.req.add_states(s);
  }
  a.req.set_include_finished(a.req.states().empty() ||
                             std::any_of(a.req.states().begin(), a.req.states().end(), [](int s) {
                               return IsFinished(static_cast<JobState>(s));
                             }));
  a.req.set_summary(UseSummary(a, *fmt));
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  for (;;) {
    int rc = PrintOnce(ctx, **api, a, *fmt);
    if (rc != 0 || a.iterate == 0) return rc;
    if (!ctx.sleep(a.iterate)) return 0;
    ctx.now = ctx.clock();
    *ctx.out << "\n";
  }
}

}  // namespace tessera::cli
