// tqueue: show the queue (squeue).
#include <algorithm>
#include <ctime>
#include <set>

#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/queue_format.h"
#include "cli/lib/text_util.h"
#include "common/job_state.h"

namespace tessera::cli {
namespace {

constexpr char kUsage[] = R"(Usage: tqueue [OPTIONS]
Show jobs in the queue, as squeue does.

Filters (comma-separated lists; a job must match every filter given):
  -u, --user=USERS            jobs of these users (names or uids)
      --me                    jobs of the calling user
  -j, --jobs=IDS              these jobs (any state unless -t is given)
  -t, --states=STATES         states by name or code (PD,R,S,CG,CD,CA,F,TO,NF,PR,OOM,BF,DL)
                              or "all"; default: pending, running, suspended, completing
  -p, --partition=PARTITIONS  jobs in these partitions
  -A, --account=ACCOUNTS      jobs charged to these accounts
  -n, --name=NAMES            jobs with these names
Output:
  -o, --format=FORMAT         squeue format, e.g. "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
                              "%[.][width]c": "." right-justifies, width pads and cuts
                              fields: %i %A job id, %j name, %u user, %U uid, %g group, %G gid,
                              %t state code, %T state, %M elapsed, %l time limit, %L time left,
                              %D nodes, %C cpus, %P partition, %R reason or nodes, %r reason,
                              %N nodes, %V submit time, %S start time, %e end time, %a account,
                              %q qos, %b GPUs per node, %Q priority, %Z workdir, %o command,
                              %k comment, %E dependency, %f features, %y nice, %% a literal %
  -l, --long                  long format (state names, time limit) with a date line
  -h, --noheader              print no header line
      --json                  print {"jobs":[...]} (JSON) instead of columns
  -a, --all                   accepted for compatibility (all partitions are always shown)
      --help                  show this help
  -V, --version               show the version
Environment: TESSERA_CONF names the configuration file (default /etc/tessera/tessera.conf).
)";

enum Opt { kUser = 1, kMe, kJobs, kStates, kPartition, kAccount, kName, kFormat, kLong,
           kNoHeader, kJson, kAll, kHelp, kVersion };

const std::vector<OptionSpec> kSpecs = {
    {"user", 'u', ArgKind::kRequired, kUser},       {"me", 0, ArgKind::kNone, kMe},
    {"jobs", 'j', ArgKind::kRequired, kJobs},       {"states", 't', ArgKind::kRequired, kStates},
    {"partition", 'p', ArgKind::kRequired, kPartition},
    {"account", 'A', ArgKind::kRequired, kAccount}, {"name", 'n', ArgKind::kRequired, kName},
    {"format", 'o', ArgKind::kRequired, kFormat},   {"long", 'l', ArgKind::kNone, kLong},
    {"noheader", 'h', ArgKind::kNone, kNoHeader},   {"json", 0, ArgKind::kNone, kJson},
    {"all", 'a', ArgKind::kNone, kAll},             {"help", 0, ArgKind::kNone, kHelp},
    {"version", 'V', ArgKind::kNone, kVersion},
};

struct QueueArgs {
  pb::ListJobsRequest req;
  std::set<std::string> names;
  std::string format;
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
      auto ids = ParseJobIdList(*o.value);
      if (!ids.ok()) return ids.status();
      for (uint64_t id : *ids) a.req.add_job_ids(id);
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

// The server filters too; filtering again keeps the output right whatever it returns.
std::vector<pb::JobInfo> Filter(const pb::ListJobsResponse& resp, const QueueArgs& a) {
  std::vector<pb::JobInfo> jobs;
  for (const auto& j : resp.jobs()) {
    if (!In(a.req.job_ids(), j.job_id()) || !In(a.req.uids(), j.uid()) ||
        !In(a.req.states(), j.state()) || !In(a.names, j.spec().name()))
      continue;
    std::string part = j.partition().empty() ? j.spec().partition() : j.partition();
    std::string acct = j.account().empty() ? j.spec().account() : j.account();
    if (!In(a.req.partitions(), part) || !In(a.req.accounts(), acct)) continue;
    jobs.push_back(j);
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

}  // namespace

int RunTqueue(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see tqueue --help)");
  QueueArgs a;
  for (const auto& o : parsed->options) {
    Status st = ApplyOption(ctx, o, a);
    if (!st.ok()) return Fail(ctx, st.message());
  }
  if (a.help) return (*ctx.out << kUsage, 0);
  if (a.version) return (*ctx.out << VersionLine() << "\n", 0);
  if (!parsed->positionals.empty())
    return Fail(ctx, "unexpected argument \"" + parsed->positionals[0] + "\" (see tqueue --help)");
  if (a.format.empty()) a.format = a.long_view ? kLongQueueFormat : kDefaultQueueFormat;
  auto fmt = ParseQueueFormat(a.format);
  if (!fmt.ok()) return Fail(ctx, fmt.status().message());
  if (!a.states_given && a.req.job_ids().empty()) {
    for (auto s : {pb::PENDING, pb::RUNNING, pb::SUSPENDED, pb::COMPLETING}) a.req.add_states(s);
  }
  a.req.set_include_finished(a.req.states().empty() ||
                             std::any_of(a.req.states().begin(), a.req.states().end(), [](int s) {
                               return IsFinished(static_cast<JobState>(s));
                             }));
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  auto resp = (*api)->ListJobs(a.req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  std::vector<pb::JobInfo> jobs = Filter(*resp, a);
  SortQueue(jobs);
  if (a.json) return (*ctx.out << FormatQueueJson(jobs, *ctx.names, ctx.now), 0);
  if (a.long_view) *ctx.out << DateLine(ctx.now);
  *ctx.out << FormatQueue(jobs, *fmt, a.header, *ctx.names, ctx.now);
  return 0;
}

}  // namespace tessera::cli
