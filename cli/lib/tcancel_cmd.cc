// tcancel: cancel or signal jobs (scancel).
#include <cctype>

#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/signal_names.h"
#include "cli/lib/text_util.h"
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
  -Q, --quiet                 do not report jobs that could not be cancelled
  -v, --verbose               accepted for compatibility
  -h, --help                  show this help
  -V, --version               show the version
At least one job id or one filter is required. Exit status 1 when any job could not be
cancelled. Environment: TESSERA_CONF names the configuration file.
)";

enum Opt { kSignal = 1, kUser, kMe, kName, kPartition, kState, kQuiet, kVerbose, kHelp,
           kVersion };

const std::vector<OptionSpec> kSpecs = {
    {"signal", 's', ArgKind::kRequired, kSignal}, {"user", 'u', ArgKind::kRequired, kUser},
    {"me", 0, ArgKind::kNone, kMe},               {"name", 'n', ArgKind::kRequired, kName},
    {"jobname", 0, ArgKind::kRequired, kName},
    {"partition", 'p', ArgKind::kRequired, kPartition},
    {"state", 't', ArgKind::kRequired, kState},   {"quiet", 'Q', ArgKind::kNone, kQuiet},
    {"verbose", 'v', ArgKind::kNone, kVerbose},   {"help", 'h', ArgKind::kNone, kHelp},
    {"version", 'V', ArgKind::kNone, kVersion},
};

struct CancelArgs {
  pb::CancelJobRequest req;
  bool quiet = false, help = false, version = false;
};

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

}  // namespace

int RunTcancel(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see tcancel --help)");
  CancelArgs a;
  for (const auto& o : parsed->options) {
    Status st = ApplyOption(ctx, o, a);
    if (!st.ok()) return Fail(ctx, st.message());
  }
  if (a.help) return (*ctx.out << kUsage, 0);
  if (a.version) return (*ctx.out << VersionLine() << "\n", 0);
  for (const auto& p : parsed->positionals) {
    auto ids = ParseJobIdList(p);
    if (!ids.ok()) return Fail(ctx, "Invalid job id " + p);
    for (uint64_t id : *ids) a.req.add_job_ids(id);
  }
  const auto& r = a.req;
  if (r.job_ids().empty() && r.user().empty() && r.name().empty() && r.partition().empty() &&
      r.state() == pb::JOB_STATE_UNSPECIFIED)
    return Fail(ctx, "No job identification provided (see tcancel --help)");
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  auto resp = (*api)->CancelJob(a.req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  if (!a.quiet)
    for (const auto& e : resp->errors()) Fail(ctx, ErrorLine(e));
  return resp->errors().empty() ? 0 : 1;
}

}  // namespace tessera::cli
