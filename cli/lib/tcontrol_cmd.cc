// tcontrol: show and change jobs, nodes and partitions (scontrol).
#include <algorithm>

#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/show_format.h"
#include "cli/lib/text_util.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {

constexpr char kUsage[] = R"(Usage: tcontrol [OPTIONS] COMMAND [ARGUMENTS]
Show and change jobs, nodes and partitions, as scontrol does.

Commands:
  show job [JOBID] [--events]   one job (or all jobs); --events prints its event log
  show node [NODENAME]          one node (or all nodes)
  show partition [NAME]         one partition (or all partitions)
  hold JOBID[,JOBID...]         keep pending jobs from starting
  release JOBID[,JOBID...]      undo hold
  requeue JOBID[,JOBID...]      put jobs back in the queue
  update job JOBID KEY=VALUE... change a job: TimeLimit=TIME, Comment=TEXT, Nice=N,
                                Priority=N (admins); also "update JobId=JOBID ..."
  update node HOSTLIST State=DRAIN|RESUME|DOWN [Reason=TEXT]
                                drain, resume or down nodes (a reason is required for DRAIN and
                                DOWN); also "update NodeName=HOSTLIST ..."
  drain HOSTLIST Reason=TEXT    the same as update node HOSTLIST State=DRAIN Reason=TEXT
  resume HOSTLIST               the same as update node HOSTLIST State=RESUME
  reconfigure                   make the controller re-read its configuration files
  ping                          check that the controller answers
  version                       show the version
Options:
  -o, --oneliner                print each record of "show" on one line
  -d, --details                 accepted for compatibility (show always prints all details)
  -h, --help                    show this help
  -V, --version                 show the version
Keys are case-insensitive. Environment: TESSERA_CONF names the configuration file.
)";

enum Opt { kOneLiner = 1, kHelp, kVersion, kEvents, kDetails };

const std::vector<OptionSpec> kSpecs = {
    {"oneliner", 'o', ArgKind::kNone, kOneLiner},
    {"help", 'h', ArgKind::kNone, kHelp},
    {"version", 'V', ArgKind::kNone, kVersion},
    {"events", 0, ArgKind::kNone, kEvents},
    {"details", 'd', ArgKind::kNone, kDetails},
};

struct ControlArgs {
  std::vector<std::string> words;
  bool oneliner = false, events = false;
};

struct KeyValue {
  std::string key;  // lower-case
  std::string value;
};

Result<std::vector<KeyValue>> ParseKeyValues(const std::vector<std::string>& words, size_t from) {
  std::vector<KeyValue> out;
  for (size_t i = from; i < words.size(); ++i) {
    size_t eq = words[i].find('=');
    if (eq == std::string::npos || eq == 0)
      return InvalidArgument("expected KEY=VALUE, got \"" + words[i] + "\"");
    out.push_back({ToLower(words[i].substr(0, eq)), words[i].substr(eq + 1)});
  }
  return out;
}

std::string OneLine(std::string record, bool oneliner) {
  if (!oneliner) return record;
  for (size_t pos = 0; (pos = record.find("\n   ")) != std::string::npos;)
    record.replace(pos, 4, " ");
  return record;
}

Result<std::vector<uint64_t>> JobIds(const std::vector<std::string>& words, size_t from) {
  std::vector<uint64_t> ids;
  for (size_t i = from; i < words.size(); ++i) {
    auto part = ParseJobIdList(words[i]);
    if (!part.ok()) return part.status();
    ids.insert(ids.end(), part->begin(), part->end());
  }
  if (ids.empty()) return InvalidArgument("a job id is required");
  return ids;
}

int ShowJobs(CommandContext& ctx, ControllerApi& api, const ControlArgs& a) {
  std::string id_text = a.words.size() > 2 ? a.words[2] : "";
  if (StartsWith(ToLower(id_text), "jobid=")) id_text = id_text.substr(6);
  if (id_text.empty()) {
    if (a.events) return Fail(ctx, "--events needs a job id");
    pb::ListJobsRequest req;
    req.set_include_finished(true);
    auto resp = api.ListJobs(req);
    if (!resp.ok()) return Fail(ctx, resp.status().message());
    if (resp->jobs().empty()) *ctx.out << "No jobs in the system\n";
    for (const auto& j : resp->jobs())
      *ctx.out << OneLine(FormatJobDetail(j, *ctx.names, ctx.now), a.oneliner);
    return 0;
  }
  auto ids = ParseJobIdList(id_text);
  if (!ids.ok()) return Fail(ctx, ids.status().message());
  int rc = 0;
  for (uint64_t id : *ids) {
    pb::GetJobRequest req;
    req.set_job_id(id);
    if (a.events) {
      pb::GetJobEventsRequest ereq;
      ereq.set_job_id(id);
      auto ev = api.GetJobEvents(ereq);
      if (!ev.ok()) rc = Fail(ctx, "job " + std::to_string(id) + ": " + ev.status().message());
      else *ctx.out << FormatJobEvents(id, {ev->events().begin(), ev->events().end()});
      continue;
    }
    auto job = api.GetJob(req);
    if (!job.ok()) rc = Fail(ctx, "job " + std::to_string(id) + ": " + job.status().message());
    else *ctx.out << OneLine(FormatJobDetail(*job, *ctx.names, ctx.now), a.oneliner);
  }
  return rc;
}

int ShowNodes(CommandContext& ctx, ControllerApi& api, const ControlArgs& a) {
  pb::ListNodesRequest req;
  if (a.words.size() > 2) req.add_names(a.words[2]);
  auto resp = api.ListNodes(req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  if (resp->nodes().empty() && a.words.size() > 2)
    return Fail(ctx, "node " + a.words[2] + " not found");
  for (const auto& n : resp->nodes()) *ctx.out << OneLine(FormatNodeDetail(n), a.oneliner);
  return 0;
}

int ShowPartitions(CommandContext& ctx, ControllerApi& api, const ControlArgs& a) {
  auto resp = api.ListPartitions({});
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  std::string want = a.words.size() > 2 ? a.words[2] : "";
  bool found = false;
  for (const auto& p : resp->partitions()) {
    if (!want.empty() && p.name() != want) continue;
    found = true;
    *ctx.out << OneLine(FormatPartitionDetail(p), a.oneliner);
  }
  if (!want.empty() && !found) return Fail(ctx, "partition " + want + " not found");
  return 0;
}

int Show(CommandContext& ctx, ControllerApi& api, const ControlArgs& a) {
  if (a.words.size() < 2) return Fail(ctx, "show what? (job, node or partition)");
  std::string what = ToLower(a.words[1]);
  if (what.size() > 1 && what.back() == 's') what.pop_back();  // jobs, nodes, partitions
  if (a.words.size() > 3) return Fail(ctx, "too many arguments for show " + what);
  if (what == "job") return ShowJobs(ctx, api, a);
  if (what == "node") return ShowNodes(ctx, api, a);
  if (what == "partition") return ShowPartitions(ctx, api, a);
  return Fail(ctx, "invalid entity \"" + a.words[1] + "\" for show (job, node or partition)");
}

int JobAction(CommandContext& ctx, ControllerApi& api, const ControlArgs& a,
              pb::UpdateJobRequest::Action action) {
  auto ids = JobIds(a.words, 1);
  if (!ids.ok()) return Fail(ctx, ids.status().message());
  int rc = 0;
  for (uint64_t id : *ids) {
    pb::UpdateJobRequest req;
    req.set_job_id(id);
    req.set_action(action);
    req.set_priority(-1);
    auto resp = api.UpdateJob(req);
    if (!resp.ok()) rc = Fail(ctx, "job " + std::to_string(id) + ": " + resp.status().message());
  }
  return rc;
}

Status ApplyJobKey(const KeyValue& kv, pb::UpdateJobRequest& req) {
  if (kv.key == "timelimit") {
    auto t = ParseTimeLimit(kv.value);
    if (!t.ok() || *t == 0) return InvalidArgument("invalid TimeLimit \"" + kv.value + "\"");
    req.set_time_limit_s(*t);
  } else if (kv.key == "comment") {
    req.set_comment(kv.value);
  } else if (kv.key == "nice" || kv.key == "priority") {
    std::string v = kv.value;
    bool neg = !v.empty() && v[0] == '-';
    auto n = ParseUint(neg ? v.substr(1) : v, kv.key);
    if (!n.ok() || *n > 2147483645ull || (neg && kv.key == "priority"))
      return InvalidArgument("invalid " + kv.key + " value \"" + kv.value + "\"");
    int32_t val = static_cast<int32_t>(neg ? -static_cast<int64_t>(*n) : *n);
    if (kv.key == "nice") req.set_nice(val);
    else req.set_priority(val);
  } else {
    return InvalidArgument("update of this parameter is not supported: " + kv.key + "=" +
                           kv.value + " (TimeLimit, Comment, Nice, Priority)");
  }
  return Status::Ok();
}

int UpdateJob(CommandContext& ctx, ControllerApi& api, const std::string& id_text,
              const std::vector<KeyValue>& kvs) {
  auto ids = ParseJobIdList(id_text);
  if (!ids.ok()) return Fail(ctx, ids.status().message());
  pb::UpdateJobRequest proto;
  proto.set_action(pb::UpdateJobRequest::SET);
  proto.set_priority(-1);
  if (kvs.empty()) return Fail(ctx, "nothing to update (TimeLimit=, Comment=, Nice=, Priority=)");
  for (const auto& kv : kvs) {
    Status st = ApplyJobKey(kv, proto);
    if (!st.ok()) return Fail(ctx, st.message());
  }
  int rc = 0;
  for (uint64_t id : *ids) {
    pb::UpdateJobRequest req = proto;
    req.set_job_id(id);
    auto resp = api.UpdateJob(req);
    if (!resp.ok()) rc = Fail(ctx, "job " + std::to_string(id) + ": " + resp.status().message());
  }
  return rc;
}

int UpdateNode(CommandContext& ctx, ControllerApi& api, const std::string& hosts,
               const std::vector<KeyValue>& kvs) {
  pb::UpdateNodeRequest req;
  req.set_name(hosts);
  for (const auto& kv : kvs) {
    if (kv.key == "reason") {
      req.set_reason(kv.value);
    } else if (kv.key == "state") {
      std::string s = ToUpper(kv.value);
      if (s == "DRAIN") req.set_action(pb::UpdateNodeRequest::DRAIN);
      else if (s == "RESUME" || s == "UNDRAIN" || s == "IDLE")
        req.set_action(pb::UpdateNodeRequest::RESUME);
      else if (s == "DOWN") req.set_action(pb::UpdateNodeRequest::DOWN);
      else return Fail(ctx, "invalid node state \"" + kv.value + "\" (DRAIN, RESUME or DOWN)");
    } else {
      return Fail(ctx, "update of this node parameter is not supported: " + kv.key +
                           " (State, Reason)");
    }
  }
  if (req.action() == pb::UpdateNodeRequest::ACTION_UNSPECIFIED)
    return Fail(ctx, "State= is required (DRAIN, RESUME or DOWN)");
  if (req.action() != pb::UpdateNodeRequest::RESUME && req.reason().empty())
    return Fail(ctx, "you must specify a reason when draining or downing a node (Reason=...)");
  auto resp = api.UpdateNode(req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  return 0;
}

int Update(CommandContext& ctx, ControllerApi& api, const ControlArgs& a) {
  const auto& w = a.words;
  if (w.size() < 2) return Fail(ctx, "update what? (job or node)");
  std::string first = ToLower(w[1]);
  std::string target;
  size_t kv_from = 2;
  bool is_job;
  if (first == "job" || first == "node") {
    if (w.size() < 3) return Fail(ctx, "update " + first + " needs a " +
                                           (first == "job" ? "job id" : "node name"));
    is_job = first == "job";
    target = w[2];
    kv_from = 3;
  } else if (StartsWith(first, "jobid=") || StartsWith(first, "nodename=")) {
    is_job = StartsWith(first, "jobid=");
    target = w[1].substr(w[1].find('=') + 1);
  } else {
    return Fail(ctx, "update: expected job JOBID, JobId=JOBID, node HOSTLIST or NodeName=HOSTLIST");
  }
  auto kvs = ParseKeyValues(w, kv_from);
  if (!kvs.ok()) return Fail(ctx, kvs.status().message());
  return is_job ? UpdateJob(ctx, api, target, *kvs) : UpdateNode(ctx, api, target, *kvs);
}

int DrainOrResume(CommandContext& ctx, ControllerApi& api, const ControlArgs& a, bool drain) {
  if (a.words.size() < 2) return Fail(ctx, a.words[0] + " needs a node name or hostlist");
  auto kvs = ParseKeyValues(a.words, 2);
  if (!kvs.ok()) return Fail(ctx, kvs.status().message());
  kvs->push_back({"state", drain ? "DRAIN" : "RESUME"});
  return UpdateNode(ctx, api, a.words[1], *kvs);
}

int Ping(CommandContext& ctx, ControllerApi& api) {
  auto resp = api.Ping({});
  if (!resp.ok()) {
    *ctx.out << "tessera-ctld at " << api.Target() << " is DOWN (" << resp.status().message()
             << ")\n";
    return 1;
  }
  *ctx.out << "tessera-ctld at " << api.Target() << " is UP (version " << resp->version()
           << "; you are uid " << resp->caller_uid() << (resp->caller_is_admin() ? ", admin" : "")
           << ")\n";
  return 0;
}

int Dispatch(CommandContext& ctx, ControllerApi& api, const ControlArgs& a) {
  std::string cmd = ToLower(a.words[0]);
  if (cmd == "show") return Show(ctx, api, a);
  if (cmd == "hold") return JobAction(ctx, api, a, pb::UpdateJobRequest::HOLD);
  if (cmd == "release") return JobAction(ctx, api, a, pb::UpdateJobRequest::RELEASE);
  if (cmd == "requeue") return JobAction(ctx, api, a, pb::UpdateJobRequest::REQUEUE);
  if (cmd == "update") return Update(ctx, api, a);
  if (cmd == "drain") return DrainOrResume(ctx, api, a, true);
  if (cmd == "resume") return DrainOrResume(ctx, api, a, false);
  if (cmd == "ping") return Ping(ctx, api);
  if (cmd == "reconfigure") {
    auto resp = api.Reconfigure({});
    if (!resp.ok()) return Fail(ctx, resp.status().message());
    for (const auto& w : resp->warnings()) Warn(ctx, w);
    return 0;
  }
  return Fail(ctx, "invalid command \"" + a.words[0] + "\" (see tcontrol --help)");
}

bool KnownCommand(const std::string& cmd) {
  static const char* kCommands[] = {"show", "hold", "release", "requeue", "update",
                                    "drain", "resume", "ping", "reconfigure"};
  return std::any_of(std::begin(kCommands), std::end(kCommands),
                     [&](const char* c) { return cmd == c; });
}

}  // namespace

int RunTcontrol(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see tcontrol --help)");
  ControlArgs a;
  a.words = parsed->positionals;
  bool help = false, version = false;
  for (const auto& o : parsed->options) {
    if (o.id == kOneLiner) a.oneliner = true;
    if (o.id == kHelp) help = true;
    if (o.id == kVersion) version = true;
    if (o.id == kEvents) a.events = true;
  }
  if (help || (!a.words.empty() && ToLower(a.words[0]) == "help"))
    return (*ctx.out << kUsage, 0);
  if (version || (!a.words.empty() && ToLower(a.words[0]) == "version"))
    return (*ctx.out << VersionLine() << "\n", 0);
  if (a.words.empty()) return Fail(ctx, "no command given (see tcontrol --help)");
  if (!KnownCommand(ToLower(a.words[0])))
    return Fail(ctx, "invalid command \"" + a.words[0] + "\" (see tcontrol --help)");
  if (a.events && ToLower(a.words[0]) != "show")
    return Fail(ctx, "--events is only valid with show job");
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  return Dispatch(ctx, **api, a);
}

}  // namespace tessera::cli
