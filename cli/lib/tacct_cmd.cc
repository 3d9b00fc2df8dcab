// tacct: accounting records of jobs (sacct).
#include <algorithm>

#include "cli/lib/acct_format.h"
#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/help_text.h"
#include "cli/lib/job_view.h"
#include "cli/lib/queue_format.h"
#include "cli/lib/slurm_compat.h"
#include "cli/lib/text_util.h"
#include "common/job_state.h"
#include "cli/lib/time_spec.h"

namespace tessera::cli {
namespace {

constexpr char kUsage[] = R"(Usage: tacct [OPTIONS]
Show accounting data of jobs, as sacct does. Without -j, shows jobs since midnight today;
users other than root see only their own jobs unless -u or -a is given.

Selection:
  -j, --jobs=IDS              these jobs (comma-separated): 1234 (a job, or every element
                              of the array 1234), 1234_7 (one element); no default time window
  -u, --user=USERS            jobs of these users (names or uids, comma-separated)
  -A, --accounts=ACCOUNTS     jobs charged to these accounts (comma-separated)
  -a, --allusers              jobs of all users
  -s, --state=STATES          jobs in these states (names or codes: CD,F,CA,TO,NF,OOM,R,PD,...)
  -S, --starttime=TIME        jobs active at or after TIME (default: midnight today)
  -E, --endtime=TIME          jobs active before TIME
                              TIME: YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY], HH:MM[:SS], now[-N
                              units], today, midnight, ...
  -X, --allocations           only jobs, not their steps (trun)
  -D, --duplicates            also every earlier run of a requeued job, one row each, before
                              the job's own row: state PREEMPTED (requeued by preemption) or
                              REQUEUED, with that run's Start, End, NodeList and Suspended
Output:
  -o, --format=FIELDS         comma-separated fields, each optionally with %WIDTH; fields:
                              Account AllocCPUS AllocNodes AllocTRES Comment Constraints
                              DerivedExitCode Elapsed ElapsedRaw Eligible End ExitCode GID
                              Group JobID JobIDRaw JobName MaxRSS MaxVMSize NCPUS NNodes
                              NodeList NTasks Partition Priority QOS Reason ReqCPUS ReqMem
                              ReqNodes ReqTRES Reservation Start State Submit SubmitLine
                              Suspended SystemCPU Timelimit TimelimitRaw TotalCPU UID User
                              UserCPU WorkDir, the usage fields AveCPU AveRSS AveVMSize
                              AvePages MinCPU MaxPages and the ...Node/...Task companions
                              (names are case-insensitive). Usage is gathered per task from
                              cgroups (steps and .batch); a job's row has the CPU times of
                              all its steps. Job steps (trun) print as JOBID.STEP rows unless
                              -X; array elements print as ARRAYID_INDEX.
                              (default JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode)
  -b, --brief                 JobID,State,ExitCode
  -l, --long                  sacct's long field list (disk, energy, CPU frequency and TRES
                              usage fields print empty: not gathered)
  -n, --noheader              print no header lines
  -p, --parsable              '|' after every field
  -P, --parsable2             '|' between fields
      --json                  print {"jobs":[...]} (the keys of tqueue --json) instead; run
                              as "sacct" refused (it is not Slurm's data_parser schema)
  -h, --help                  show this help
  -V, --version               show the version
Environment: TESSERA_CONF names the configuration file (default /etc/tessera/tessera.conf).
)";

enum Opt { kJobs = 1, kUser, kAllUsers, kState, kStart, kEnd, kAlloc, kFormat, kBrief,
           kNoHeader, kParsable, kParsable2, kHelp, kVersion, kAccounts, kJson, kLongList,
           kDuplicates };

const std::vector<OptionSpec> kSpecs = {
    {"jobs", 'j', ArgKind::kRequired, kJobs},        {"user", 'u', ArgKind::kRequired, kUser},
    {"allusers", 'a', ArgKind::kNone, kAllUsers},    {"state", 's', ArgKind::kRequired, kState},
    {"starttime", 'S', ArgKind::kRequired, kStart},  {"endtime", 'E', ArgKind::kRequired, kEnd},
    {"allocations", 'X', ArgKind::kNone, kAlloc},    {"format", 'o', ArgKind::kRequired, kFormat},
    {"brief", 'b', ArgKind::kNone, kBrief},          {"noheader", 'n', ArgKind::kNone, kNoHeader},
    {"parsable", 'p', ArgKind::kNone, kParsable},    {"parsable2", 'P', ArgKind::kNone, kParsable2},
    {"help", 'h', ArgKind::kNone, kHelp},            {"version", 'V', ArgKind::kNone, kVersion},
    {"accounts", 'A', ArgKind::kRequired, kAccounts}, {"json", 0, ArgKind::kNone, kJson},
    {"long", 'l', ArgKind::kNone, kLongList},
    {"duplicates", 'D', ArgKind::kNone, kDuplicates},
};

struct AcctArgs {
  pb::QueryAccountingRequest req;
  std::string fields = kDefaultAcctFields;
  AcctLayout layout = AcctLayout::kColumns;
  std::vector<std::string> accounts;
  std::vector<JobRef> refs;  // -j (issue 19: "1234_7", whole arrays)
  bool header = true, all_users = false, start_given = false, help = false, version = false,
       json = false, allocations_only = false;
};

Status ApplyOption(CommandContext& ctx, const ParsedOption& o, AcctArgs& a) {
  switch (o.id) {
    case kJobs: {
      auto refs = ParseJobRefList(*o.value);
      if (!refs.ok()) return refs.status();
      a.refs.insert(a.refs.end(), refs->begin(), refs->end());
      a.req.clear_job_ids();
      for (uint64_t id : RefIds(a.refs)) a.req.add_job_ids(id);
      return Status::Ok();
    }
    case kUser: {
      auto uids = ParseUserList(*ctx.names, *o.value);
      if (!uids.ok()) return uids.status();
      for (uint32_t u : *uids) a.req.add_uids(u);
      return Status::Ok();
    }
    case kState:
      for (const auto& s : Split(*o.value, ',')) {
        auto st = ParseJobState(s);
        if (!st) return InvalidArgument("invalid job state specified: " + s);
        a.req.add_states(static_cast<pb::JobState>(*st));
      }
      return Status::Ok();
    case kStart:
    case kEnd: {
      auto t = ParseTimeSpec(*o.value, ctx.now);
      if (!t.ok()) return InvalidArgument(o.name + ": " + t.status().message());
      if (o.id == kStart) {
        a.req.set_start_after(*t);
        a.start_given = true;
      } else {
        a.req.set_end_before(*t);
      }
      return Status::Ok();
    }
    case kFormat: a.fields = *o.value; return Status::Ok();
    case kAccounts:
      for (const auto& acct : Split(*o.value, ',')) a.accounts.push_back(acct);
      return Status::Ok();
    case kJson: a.json = true; return Status::Ok();
    case kBrief: a.fields = kBriefAcctFields; return Status::Ok();
    case kLongList: a.fields = kLongAcctFields; return Status::Ok();
    case kAllUsers: a.all_users = true; return Status::Ok();
    case kNoHeader: a.header = false; return Status::Ok();
    case kParsable: a.layout = AcctLayout::kParsable; return Status::Ok();
    case kParsable2: a.layout = AcctLayout::kParsable2; return Status::Ok();
    case kHelp: a.help = true; return Status::Ok();
    case kVersion: a.version = true; return Status::Ok();
    case kAlloc: a.allocations_only = true; return Status::Ok();
    case kDuplicates: a.req.set_duplicates(true); return Status::Ok();
    default: return Status::Ok();
  }
}

}  // namespace

int RunTacct(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see tacct --help)");
  AcctArgs a;
  for (const auto& o : parsed->options) {
    Status st = ApplyOption(ctx, o, a);
    if (!st.ok()) return Fail(ctx, st.message());
  }
  if (a.help) return (*ctx.out << HelpText(ctx, kUsage), 0);
  if (a.version) return (*ctx.out << VersionLine() << "\n", 0);
  if (!parsed->positionals.empty())
    return Fail(ctx, "unexpected argument \"" + parsed->positionals[0] + "\" (see tacct --help)");
  if (a.json && IsSlurmName(ctx.prog))  // never a look-alike of Slurm's JSON (issue 19)
    return Fail(ctx, "--json is not supported: Tessera does not produce Slurm's data_parser "
                     "v0.0.38 JSON (tacct --json prints Tessera's own)");
  auto cols = ParseAcctFields(a.fields);
  if (!cols.ok()) return Fail(ctx, cols.status().message());
  if (!a.start_given && a.req.job_ids().empty()) a.req.set_start_after(LocalMidnight(ctx.now));
  if (a.req.uids().empty() && !a.all_users && ctx.uid != 0 && a.req.job_ids().empty())
    a.req.add_uids(ctx.uid);
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  auto resp = (*api)->QueryAccounting(a.req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  std::vector<pb::JobInfo> jobs;
  for (const auto& j : resp->jobs()) {
    if (!a.refs.empty() && std::none_of(a.refs.begin(), a.refs.end(),
                                        [&](const JobRef& r) { return JobRefMatches(r, j); }))
      continue;
    if (a.accounts.empty() ||
        std::find(a.accounts.begin(), a.accounts.end(), AccountOf(j)) != a.accounts.end())
      jobs.push_back(j);
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const auto& x, const auto& y) { return x.job_id() < y.job_id(); });
  if (a.json) return (*ctx.out << FormatQueueJson(jobs, *ctx.names, ctx.now), 0);
  std::vector<pb::StepUsage> usage;  // issue 19: gathered per step; CPU totals on job rows
  auto rows = WithSteps(jobs, std::vector<pb::StepInfo>(resp->steps().begin(), resp->steps().end()),
                        &usage);
  if (a.allocations_only) {  // -X: the job rows only (with their steps' CPU totals)
    std::vector<pb::JobInfo> only;
    std::vector<pb::StepUsage> only_usage;
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].array_job_id() != 0 || rows[i].array_task_str().empty())
        only.push_back(rows[i]), only_usage.push_back(usage[i]);
    rows = std::move(only);
    usage = std::move(only_usage);
  }
  *ctx.out << FormatAcct(rows, *cols, a.layout, a.header, *ctx.names, ctx.now, &usage);
  return 0;
}

}  // namespace tessera::cli
