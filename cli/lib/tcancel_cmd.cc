// tcancel: cancel or signal jobs (scancel).
#include <cctype>
#include <istream>
#include <string>

#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/help_text.h"
#include "cli/lib/signal_names.h"
#include "cli/lib/slurm_compat.h"
#include "cli/lib/text_util.h"
#include "common/control_chars.h"
#include "common/duration.h"
#include "common/job_state.h"

namespace tessera::cli {
namespace {

constexpr char kUsage[] = R"(Usage: tcancel [OPTIONS] [job_id[,job_id...]...]
Cancel jobs, or send them a signal, as scancel does. Prints nothing on success.

  -s, --signal=SIGNAL         send SIGNAL (name such as TERM, SIGUSR1, or a number) to the
                              running jobs instead of cancelling them
  -u, --user=USER             all jobs of USER (name or uid), with the other filters
      --me                    all jobs of the calling user, with the other filters
  -n, --name=NAME             jobs named NAME  (also --jobname)
  -p, --partition=PARTITION   jobs in PARTITION
  -t, --state=STATE           jobs in STATE (PENDING, RUNNING, SUSPENDED or their codes)
  -b, --batch                 with --signal: signal only the batch shell, not its children
  -i, --interactive           ask for confirmation (y/n on standard input) for each job id
  -Q, --quiet                 do not report jobs that could not be cancelled
  -v, --verbose               run as "scancel": also report jobs already finished or unknown
  -h, --help                  show this help
  -V, --version               show the version
Job ids: 1234, or an array element 1234_7 (1234 alone means the whole array).
At least one job id or one filter is required. Exit status 1 when any job could not be
cancelled. Run as "scancel", a job that already ended or that the controller does not know is
not reported (unless -v) and, without --signal, is no error (exit 0), as scancel.
Environment: TESSERA_CONF names the configuration file.
)";

enum Opt { kSignal = 1, kUser, kMe, kName, kPartition, kState, kQuiet, kVerbose, kHelp,
           kVersion, kBatch, kInteractive };

const std::vector<OptionSpec> kSpecs = {
    {"signal", 's', ArgKind::kRequired, kSignal}, {"user", 'u', ArgKind::kRequired, kUser},
    {"me", 0, ArgKind::kNone, kMe},               {"name", 'n', ArgKind::kRequired, kName},
    {"jobname", 0, ArgKind::kRequired, kName},
    {"partition", 'p', ArgKind::kRequired, kPartition},
    {"state", 't', ArgKind::kRequired, kState},   {"quiet", 'Q', ArgKind::kNone, kQuiet},
    {"verbose", 'v', ArgKind::kNone, kVerbose},   {"help", 'h', ArgKind::kNone, kHelp},
    {"version", 'V', ArgKind::kNone, kVersion},
    {"batch", 'b', ArgKind::kNone, kBatch},
    {"interactive", 'i', ArgKind::kNone, kInteractive},
};

struct CancelArgs {
  pb::CancelJobRequest req;
  std::vector<std::pair<uint64_t, uint32_t>> elements;  // 1234_7 -> {1234, 7}
  bool quiet = false, help = false, version = false, interactive = false, verbose = false;
};

// scancel's rule (issue 19): ESLURM_ALREADY_DONE and ESLURM_INVALID_JOB_ID are reported only
// with -v, and are no error when the job was to be killed (no --signal).
bool AlreadyDoneOrUnknown(const std::string& line) {
  return line.find("Invalid job id specified") != std::string::npos ||
         line.find("Job/step already completing or completed") != std::string::npos;
}

Status ApplyOption(CommandContext& ctx, const ParsedOption& o, CancelArgs& a) {
  switch (o.id) {
    case kSignal: {
      auto sig = ParseSignal(*o.value);
      if (!sig.ok()) return sig.status();
      a.req.set_signal(*sig);
      return Status::Ok();
    }
    case kUser: {
      auto uids = ParseUserList(*ctx.names, *o.value);
      if (!uids.ok()) return uids.status();
      if (uids->size() != 1) return InvalidArgument("--user takes one user");
      std::string name = ctx.names->UserName((*uids)[0]);
      a.req.set_user(name.empty() ? std::to_string((*uids)[0]) : name);
      return Status::Ok();
    }
    case kMe: {
      std::string name = ctx.names->UserName(ctx.uid);
      a.req.set_user(name.empty() ? std::to_string(ctx.uid) : name);
      return Status::Ok();
    }
    case kName: a.req.set_name(*o.value); return Status::Ok();
    case kPartition: a.req.set_partition(*o.value); return Status::Ok();
    case kState: {
      auto st = ParseJobState(*o.value);
      if (!st || (*st != JobState::kPending && *st != JobState::kRunning &&
                  *st != JobState::kSuspended))
        return InvalidArgument("invalid job state \"" + *o.value +
                               "\" (PENDING, RUNNING or SUSPENDED)");
      a.req.set_state(static_cast<pb::JobState>(*st));
      return Status::Ok();
    }
    case kQuiet: a.quiet = true; return Status::Ok();
    case kVerbose: a.verbose = true; return Status::Ok();
    case kBatch: a.req.set_batch_only(true); return Status::Ok();
    case kInteractive: a.interactive = true; return Status::Ok();
    case kHelp: a.help = true; return Status::Ok();
    case kVersion: a.version = true; return Status::Ok();
    default: return Status::Ok();
  }
}

// "12: Access/permission denied" -> scancel's "Kill job error on job id 12: ...".
std::string ErrorLine(const std::string& e) {
  size_t colon = e.find(": ");
  bool id_first = colon != std::string::npos && colon > 0;
  for (size_t i = 0; id_first && i < colon; ++i)
    id_first = std::isdigit(static_cast<unsigned char>(e[i]));
  return id_first ? "Kill job error on job id " + e : e;
}

// "12,13", "1234_7": plain ids into the request, array elements into `elements`.
Status AddJobIds(const std::string& arg, CancelArgs& a) {
  for (const std::string& piece : Split(arg, ',')) {
    size_t us = piece.find('_');
    auto id = ParseUint(piece.substr(0, us), "job id");
    if (!id.ok() || *id == 0) return InvalidArgument("Invalid job id " + piece);
    if (us == std::string::npos) {
      a.req.add_job_ids(*id);
      continue;
    }
    auto idx = ParseUint(piece.substr(us + 1), "index");
    if (!idx.ok() || *idx > 0xFFFFFFFFull) return InvalidArgument("Invalid job id " + piece);
    a.elements.emplace_back(*id, static_cast<uint32_t>(*idx));
  }
  return Status::Ok();
}

// Array elements -> their own job ids (each element is a job of its own in the controller).
// Returns the error lines for elements that do not exist.
std::vector<std::string> ResolveElements(ControllerApi& api, CancelArgs& a) {
  std::vector<std::string> errors;
  if (a.elements.empty()) return errors;
  pb::ListJobsRequest lr;
  lr.set_expand_arrays(true);  // each element with its own job id
  auto jobs = api.ListJobs(lr);
  for (auto [array_id, index] : a.elements) {
    uint64_t found = 0;
    if (jobs.ok())
      for (const auto& j : jobs->jobs())
        if (j.array_job_id() == array_id && j.array_task_str().empty() &&
            j.array_task_id() == index)
          found = j.job_id();
    std::string text = std::to_string(array_id) + "_" + std::to_string(index);
    if (found) {
      a.req.add_job_ids(found);
    } else {
      errors.push_back("Kill job error on job id " + text + ": Invalid job id specified");
    }
  }
  return errors;
}

// -i: "Cancel job_id=12 name=x partition=debug [y/n]? " per job; keeps those answered y.
Status Confirm(CommandContext& ctx, ControllerApi& api, CancelArgs& a) {
  std::vector<uint64_t> keep;
  for (uint64_t id : a.req.job_ids()) {
    pb::GetJobRequest g;
    g.set_job_id(id);
    auto job = api.GetJob(g);
    std::string name = job.ok() ? job->spec().name() : "?";
    std::string part = job.ok() ? (job->partition().empty() ? job->spec().partition()
                                                            : job->partition())
                                : "?";
    *ctx.out << "Cancel job_id=" << id << " name=" << EscapeControlChars(name)
             << " partition=" << EscapeControlChars(part)
             << " [y/n]? ";
    ctx.out->flush();
    std::string answer;
    if (!std::getline(*ctx.in, answer)) answer.clear();
    if (!answer.empty() && (answer[0] == 'y' || answer[0] == 'Y')) keep.push_back(id);
  }
  a.req.clear_job_ids();
  for (uint64_t id : keep) a.req.add_job_ids(id);
  return Status::Ok();
}

}  // namespace

int RunTcancel(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see tcancel --help)");
  CancelArgs a;
  for (const auto& o : parsed->options) {
    Status st = ApplyOption(ctx, o, a);
    if (!st.ok()) return Fail(ctx, st.message());
  }
  if (a.help) return (*ctx.out << HelpText(ctx, kUsage), 0);
  if (a.version) return (*ctx.out << VersionLine() << "\n", 0);
  for (const auto& p : parsed->positionals) {
    Status st = AddJobIds(p, a);
    if (!st.ok()) return Fail(ctx, st.message());
  }
  const auto& r = a.req;
  if (r.job_ids().empty() && a.elements.empty() && r.user().empty() && r.name().empty() &&
      r.partition().empty() && r.state() == pb::JOB_STATE_UNSPECIFIED)
    return Fail(ctx, "No job identification provided (see tcancel --help)");
  if (r.batch_only() && r.signal() == 0)
    return Fail(ctx, "--batch needs --signal (see tcancel --help)");
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  std::vector<std::string> errors = ResolveElements(**api, a);
  if (a.interactive) (void)Confirm(ctx, **api, a);
  bool asked = !a.req.job_ids().empty() || a.elements.empty();
  if (a.interactive && a.req.job_ids().empty()) asked = false;
  if (asked) {
    auto resp = (*api)->CancelJob(a.req);
    if (!resp.ok()) return Fail(ctx, resp.status().message());
    for (const auto& e : resp->errors()) errors.push_back(ErrorLine(e));
  }
  if (IsSlurmName(ctx.prog)) {  // scancel's rule for jobs already done or unknown
    bool failed = false;
    for (const auto& e : errors) {
      bool done = AlreadyDoneOrUnknown(e);
      if (!a.quiet && (!done || a.verbose)) Fail(ctx, e);
      failed = failed || !done || a.req.signal() != 0;
    }
    return failed ? 1 : 0;
  }
  if (!a.quiet)
    for (const auto& e : errors) Fail(ctx, e);
  return errors.empty() ? 0 : 1;
}

}  // namespace tessera::cli
