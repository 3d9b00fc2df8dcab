// tcontrol: show and change jobs, nodes and partitions (scontrol).
#include <algorithm>
#include <map>

#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/help_text.h"
#include "cli/lib/resv_view.h"
#include "cli/lib/sdiag_view.h"
#include "cli/lib/show_format.h"
#include "cli/lib/slurm_compat.h"
#include "cli/lib/hostlist_cmd.h"
#include "cli/lib/topology_view.h"
#include "cli/lib/text_util.h"
#include "common/config_file.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {

constexpr char kUsage[] = R"(Usage: tcontrol [OPTIONS] COMMAND [ARGUMENTS]
Show and change jobs, nodes and partitions, as scontrol does.

Commands:
  show job [JOBID] [--events]   one job (or all jobs); --events prints its event log
  show node [NODENAME]          one node (or all nodes)
  show partition [NAME]         one partition (or all partitions)
  show topology [NAME] [node=HOSTLIST]
                                the network topology (switches or blocks), as scontrol
  show hostnames [LIST]         one host name per line (LIST: default $SLURM_JOB_NODELIST)
  show hostlist LIST            LIST as a ranged expression; hostlistsorted: sorted
  show config                   every parameter of the running controller (the local file when
                                it cannot be reached: $TESSERA_CONF or
                                /etc/tessera/tessera.conf)
  show qos | qos                the QoS defined by QOSName= lines of the local tessera.conf
  show reservation [NAME]       advance reservations (as scontrol show reservation)
  create reservation KEY=VALUE...
                                a reservation (administrators): ReservationName=NAME
                                StartTime=now|now+1hour|YYYY-MM-DDTHH:MM[:SS] Duration=TIME or
                                EndTime=TIME, Nodes=HOSTLIST|ALL or NodeCnt=N [PartitionName=P],
                                Users=a,b and/or Accounts=x,y, Flags=MAINT,IGNORE_JOBS,FLEX,
                                DAILY,WEEKLY,HOURLY,OVERLAP; refused, changing nothing, when
                                invalid or its nodes are busy (docs/admin-guide.md)
  update reservation ReservationName=NAME KEY=VALUE...
                                change one; Users=-NAME / Accounts=-NAME / Flags=-FLAG remove,
                                Users=+NAME adds; also "update ReservationName=NAME ..."
  delete reservation NAME       remove one (refused while jobs run in it)
  suspend JOBID[,JOBID...]      stop running jobs (administrators)
  resume JOBID[,JOBID...]       continue suspended jobs (a node name instead of job ids
                                resumes nodes, see below)
  hold JOBID[,JOBID...]         keep pending jobs from starting
  release JOBID[,JOBID...]      undo hold
  requeue JOBID[,JOBID...]      put jobs back in the queue
  update job JOBID KEY=VALUE... change a job: TimeLimit=TIME (only admins raise it),
                                Comment=TEXT, Nice=N, Priority=N (admins), Partition=NAME and
                                NumNodes=N (pending jobs); also "update JobId=JOBID ..."
  update node HOSTLIST State=DRAIN|RESUME|DOWN [Reason=TEXT]
  update node NODE Gpu=N MigLayout=PROFILE[@START],...|none
                                set a MIG-mode GPU's layout (admins); refused, changing
                                nothing, if a slice in use would go or NVIDIA's placement
                                rules are broken
                                drain, resume or down nodes (a reason is required for DRAIN and
                                DOWN); also "update NodeName=HOSTLIST ..."
  update node HOSTLIST Gpu=N State=DRAIN|RESUME [Reason=TEXT]
                                drain or resume one GPU of the nodes (admins; durable; a
                                reason is required for DRAIN); tinfo -R lists drained GPUs
  drain HOSTLIST Reason=TEXT    the same as update node HOSTLIST State=DRAIN Reason=TEXT
  resume HOSTLIST               the same as update node HOSTLIST State=RESUME
  reconfigure                   make the controller re-read its configuration files
  backup FILE                   online backup of the controller's state database to FILE
                                (a new file on the controller's host; administrators); jobs
                                keep flowing meanwhile. Restore: docs/admin-guide.md
  ping                          check that the controller answers
  sdiag [--reset]               scheduler and RPC statistics (as sdiag); --reset (-r):
                                zero them (administrators)
  version                       show the version
Options:
  -o, --oneliner                print each record of "show" on one line
  -d, --details                 accepted for compatibility (show always prints all details)
  -r, --reset                   with sdiag: zero the statistics (sdiag -r); -a, --all: the
                                report (the default)
  -h, --help                    show this help
  -V, --version                 show the version
Keys are case-insensitive. Environment: TESSERA_CONF names the configuration file.
)";

enum Opt { kOneLiner = 1, kHelp, kVersion, kEvents, kDetails, kReset, kAll };

const std::vector<OptionSpec> kSpecs = {
    {"oneliner", 'o', ArgKind::kNone, kOneLiner},
    {"help", 'h', ArgKind::kNone, kHelp},
    {"version", 'V', ArgKind::kNone, kVersion},
    {"events", 0, ArgKind::kNone, kEvents},
    {"details", 'd', ArgKind::kNone, kDetails},
    {"reset", 'r', ArgKind::kNone, kReset},  // sdiag -r (issue 20 §3)
    {"all", 'a', ArgKind::kNone, kAll},      // sdiag -a: the report (the default)
};

struct ControlArgs {
  std::vector<std::string> words;
  bool oneliner = false, events = false;
  bool reset = false;  // sdiag --reset (issue 20 §3)
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

// Job ids, array elements ("1234_7") and whole arrays, as the controller's job ids (issue 19).
Result<std::vector<uint64_t>> JobIds(ControllerApi& api, const std::vector<std::string>& words,
                                     size_t from) {
  std::vector<JobRef> refs;
  for (size_t i = from; i < words.size(); ++i) {
    auto part = ParseJobRefList(words[i]);
    if (!part.ok()) return part.status();
    refs.insert(refs.end(), part->begin(), part->end());
  }
  if (refs.empty()) return InvalidArgument("a job id is required");
  return ResolveJobRefs(api, refs);
}

// show job ID[,ID...] with array ids (issue 19): one record per element or pending remainder,
// as scontrol; none known: scontrol's "slurm_load_jobs error: Invalid job id specified".
int ShowJobRefs(CommandContext& ctx, ControllerApi& api, const ControlArgs& a,
                const std::vector<JobRef>& refs) {
  if (refs.size() == 1 && !refs[0].task) {  // one job: GetJob, unless it is part of an array
    pb::GetJobRequest req;
    req.set_job_id(refs[0].id);
    auto job = api.GetJob(req);
    if (!job.ok() && job.status().code() == Code::kNotFound && IsSlurmName(ctx.prog)) {
      *ctx.err << "slurm_load_jobs error: Invalid job id specified\n";
      return 1;
    }
    if (!job.ok()) return Fail(ctx, "job " + refs[0].text + ": " + job.status().message());
    if (job->array_job_id() == 0) {
      *ctx.out << OneLine(FormatJobDetail(*job, *ctx.names, ctx.now), a.oneliner);
      return 0;
    }
  }
  auto jobs = ListJobRefs(api, refs);
  if (!jobs.ok()) return Fail(ctx, jobs.status().message());
  if (jobs->empty()) {
    if (!IsSlurmName(ctx.prog)) return Fail(ctx, "Invalid job id specified");
    *ctx.err << "slurm_load_jobs error: Invalid job id specified\n";
    return 1;
  }
  for (const auto& j : *jobs)
    *ctx.out << OneLine(FormatJobDetail(j, *ctx.names, ctx.now), a.oneliner);
  return 0;
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
  if (!a.events) {
    auto refs = ParseJobRefList(id_text);
    if (!refs.ok()) return Fail(ctx, refs.status().message());
    return ShowJobRefs(ctx, api, a, *refs);
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

// show topology [NAME] [node=HOSTLIST] (issue 15; cli/lib/topology_view.h).
int ShowTopology(CommandContext& ctx, ControllerApi& api, const ControlArgs& a) {
  auto req = ParseShowTopologyArgs({a.words.begin() + 2, a.words.end()});
  if (!req.ok()) return Fail(ctx, req.status().message());
  auto resp = api.ShowTopology(*req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  *ctx.out << FormatTopology(*resp);
  return 0;
}

int ShowLocalConfig(CommandContext& ctx, const std::string& why);

bool IsShowConfig(const ControlArgs& a) {
  if (a.words.size() < 2 || ToLower(a.words[0]) != "show") return false;
  std::string what = ToLower(a.words[1]);
  return what == "config" || what == "conf";
}

// Issue 19 (h19): show config from the running controller (every parameter it uses), as
// scontrol prints it: a dated header, "%-23s = %s" lines, then the controller's state. A
// controller without the call (older) -> the local file, saying so.
int ShowConfig(CommandContext& ctx, ControllerApi& api) {
  auto resp = api.ShowConfig(pb::ShowConfigRequest());
  if (!resp.ok() && resp.status().code() == Code::kUnimplemented)
    return ShowLocalConfig(ctx, "the controller does not serve its configuration");
  if (!resp.ok() && resp.status().code() == Code::kUnavailable)
    return ShowLocalConfig(ctx, "the controller cannot be reached: " + resp.status().message());
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  *ctx.out << "Configuration data as of " << FormatTimestamp(ctx.now, true) << "\n";
  std::string host;
  for (const auto& e : resp->entries()) {
    *ctx.out << PadField(e.key(), 23, false, false) << " = " << e.value() << "\n";
    if (e.key() == "SlurmctldHost[0]") host = e.value().substr(0, e.value().find('('));
  }
  *ctx.out << "\nSlurmctld(primary) at " << host << " is UP\n";
  return 0;
}

int Show(CommandContext& ctx, ControllerApi& api, const ControlArgs& a) {
  if (a.words.size() < 2) return Fail(ctx, "show what? (job, node, partition, topology, config or qos)");
  std::string what = ToLower(a.words[1]);
  if (what.size() > 1 && what.back() == 's') what.pop_back();  // jobs, nodes, partitions
  if (what == "topology") return ShowTopology(ctx, api, a);
  if (IsShowConfig(a)) return ShowConfig(ctx, api);
  if (std::string w = ToLower(a.words[1]);
      IsReservationWord(w) || StartsWith(w, "reservationname=")) {  // issue 17 §1
    std::string name = a.words.size() > 2 ? a.words[2] : "";
    if (StartsWith(w, "reservationname=")) name = a.words[1].substr(a.words[1].find('=') + 1);
    if (StartsWith(ToLower(name), "reservationname=")) name = name.substr(name.find('=') + 1);
    return ShowReservations(ctx, api, name, a.oneliner);
  }
  if (a.words.size() > 3) return Fail(ctx, "too many arguments for show " + what);
  if (what == "job") return ShowJobs(ctx, api, a);
  if (what == "node") return ShowNodes(ctx, api, a);
  if (what == "partition") return ShowPartitions(ctx, api, a);
  return Fail(ctx, "invalid entity \"" + a.words[1] + "\" for show (job, node, partition, topology, config or qos)");
}

int JobAction(CommandContext& ctx, ControllerApi& api, const ControlArgs& a,
              pb::UpdateJobRequest::Action action) {
  auto ids = JobIds(api, a.words, 1);
  if (!ids.ok()) return Fail(ctx, ids.status().message());
  int rc = 0;
  bool hold_or_release =
      action == pb::UpdateJobRequest::HOLD || action == pb::UpdateJobRequest::RELEASE;
  if (hold_or_release && ids->size() > 1) {  // one call, one durable commit for all of them
    pb::UpdateJobRequest req;
    req.set_action(action);
    req.set_priority(-1);
    for (uint64_t id : *ids) req.add_job_ids(id);
    auto resp = api.UpdateJob(req);
    if (!resp.ok()) return Fail(ctx, resp.status().message());
    for (const auto& e : resp->errors()) rc = Fail(ctx, "job " + e);
    return rc;
  }
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
  } else if (kv.key == "partition") {
    if (kv.value.empty()) return InvalidArgument("empty Partition");
    req.set_partition(kv.value);
  } else if (kv.key == "numnodes") {
    auto n = ParseUint(kv.value, "NumNodes");
    if (!n.ok() || *n == 0 || *n > 100000)
      return InvalidArgument("invalid NumNodes value \"" + kv.value + "\"");
    req.set_num_nodes(static_cast<uint32_t>(*n));
  } else {
    return InvalidArgument("update of this parameter is not supported: " + kv.key + "=" +
                           kv.value + " (TimeLimit, Comment, Nice, Priority, Partition, NumNodes)");
  }
  return Status::Ok();
}

int UpdateJob(CommandContext& ctx, ControllerApi& api, const std::string& id_text,
              const std::vector<KeyValue>& kvs) {
  auto ids = JobIds(api, {id_text}, 0);
  if (!ids.ok()) return Fail(ctx, ids.status().message());
  pb::UpdateJobRequest proto;
  proto.set_action(pb::UpdateJobRequest::SET);
  proto.set_priority(-1);
  if (kvs.empty())
    return Fail(ctx, "nothing to update (TimeLimit=, Comment=, Nice=, Priority=, Partition=, "
                     "NumNodes=)");
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

// update node NODE Gpu=N MigLayout=3g.40gb,2g.20gb@4,...  (admins): replaces the GPU's layout.
int UpdateMig(CommandContext& ctx, ControllerApi& api, const std::string& node,
              const std::vector<KeyValue>& kvs) {
  pb::ConfigureMigRequest req;
  req.set_node(node);
  req.set_destroy_all(true);
  bool have_gpu = false, have_layout = false;
  for (const auto& kv : kvs) {
    if (kv.key == "gpu") {
      auto n = ParseUint(kv.value, "GPU index");
      if (!n.ok() || *n > 63) return Fail(ctx, "invalid Gpu=" + kv.value + " (a GPU index)");
      req.set_gpu_index(static_cast<uint32_t>(*n));
      have_gpu = true;
    } else if (kv.key == "miglayout") {
      for (const auto& p : Split(kv.value, ','))
        if (!p.empty() && ToLower(p) != "none") req.add_create(p);
      have_layout = true;
    } else {
      return Fail(ctx, "with Gpu= only MigLayout= can be updated, not " + kv.key);
    }
  }
  if (!have_gpu || !have_layout) return Fail(ctx, "MIG layouts need both Gpu=N and MigLayout=PROFILE,... (or none)");
  auto resp = api.ConfigureMig(req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  std::string layout;
  for (const auto& m : resp->gpu().mig_instances())
    layout += (layout.empty() ? "" : ",") + m.profile() + "@" + std::to_string(m.placement_start());
  *ctx.out << node << " GPU " << req.gpu_index() << " MIG layout: " << (layout.empty() ? "(none)" : layout) << "\n";
  return 0;
}

int UpdateNode(CommandContext& ctx, ControllerApi& api, const std::string& hosts,
               const std::vector<KeyValue>& kvs) {
  bool has_state = false;
  for (const auto& kv : kvs) has_state = has_state || kv.key == "state";
  for (const auto& kv : kvs)  // Gpu= with State= drains/resumes that GPU (issue 14)
    if (kv.key == "miglayout" || (kv.key == "gpu" && !has_state))
      return UpdateMig(ctx, api, hosts, kvs);
  pb::UpdateNodeRequest req;
  req.set_name(hosts);
  for (const auto& kv : kvs) {
    if (kv.key == "gpu") {
      auto n = ParseUint(kv.value, "GPU index");
      if (!n.ok() || *n > 63) return Fail(ctx, "invalid Gpu=" + kv.value + " (a GPU index)");
      req.set_gpu_index(static_cast<uint32_t>(*n));
    } else if (kv.key == "reason") {
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
  if (req.has_gpu_index() && req.action() == pb::UpdateNodeRequest::DOWN)
    return Fail(ctx, "a GPU can be set DRAIN or RESUME, not DOWN");
  if (req.action() != pb::UpdateNodeRequest::RESUME && req.reason().empty())
    return Fail(ctx, std::string("you must specify a reason when draining or downing a ") +
                         (req.has_gpu_index() ? "GPU" : "node") + " (Reason=...)");
  auto resp = api.UpdateNode(req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  return 0;
}

int Update(CommandContext& ctx, ControllerApi& api, const ControlArgs& a) {
  const auto& w = a.words;
  if (w.size() < 2) return Fail(ctx, "update what? (job, node or reservation)");
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

// sdiag [--reset]: the report (sdiag_view.h), or (admins) zero the statistics.
int Sdiag(CommandContext& ctx, ControllerApi& api, bool reset) {
  pb::DiagnosticsRequest req;
  req.set_reset(reset);
  auto d = api.Diagnostics(req);
  if (!d.ok()) return Fail(ctx, "sdiag: " + d.status().message());
  if (reset) return (*ctx.out << "Reset scheduling statistics\n", 0);
  *ctx.out << FormatSdiag(*d, *ctx.names);
  return 0;
}

// "resume 12,13" resumes jobs; "resume n[1-2]" resumes nodes (Tessera's shorthand).
bool AllJobIds(const std::vector<std::string>& words) {
  if (words.size() < 2) return false;
  for (size_t i = 1; i < words.size(); ++i)
    if (!ParseJobRefList(words[i]).ok()) return false;
  return true;
}

// backup FILE (admins): the controller writes FILE on its own host; a relative FILE is taken
// relative to this command's directory (the same path when run on the controller's host).
int Backup(CommandContext& ctx, ControllerApi& api, const ControlArgs& a) {
  if (a.words.size() != 2 || a.words[1].empty()) return Fail(ctx, "usage: tcontrol backup FILE");
  std::string path = a.words[1];
  if (path[0] != '/') path = ctx.cwd + "/" + path;
  pb::BackupRequest req;
  req.set_path(path);
  auto resp = api.Backup(req);
  if (!resp.ok()) return Fail(ctx, "backup: " + resp.status().message());
  *ctx.out << "backup written to " << resp->path() << " (" << resp->bytes() << " bytes)\n";
  return 0;
}

int Dispatch(CommandContext& ctx, ControllerApi& api, const ControlArgs& a) {
  std::string cmd = ToLower(a.words[0]);
  if (cmd == "suspend") return JobAction(ctx, api, a, pb::UpdateJobRequest::SUSPEND);
  if (cmd == "resume" && AllJobIds(a.words))
    return JobAction(ctx, api, a, pb::UpdateJobRequest::RESUME);
  if (cmd == "sdiag") return Sdiag(ctx, api, a.reset);
  if (cmd == "show") return Show(ctx, api, a);
  if (cmd == "hold") return JobAction(ctx, api, a, pb::UpdateJobRequest::HOLD);
  if (cmd == "release") return JobAction(ctx, api, a, pb::UpdateJobRequest::RELEASE);
  if (cmd == "requeue") return JobAction(ctx, api, a, pb::UpdateJobRequest::REQUEUE);
  if (int rc = ReservationCommand(ctx, api, a.words); rc >= 0) return rc;  // issue 17 §1
  if (cmd == "create" || cmd == "delete")
    return Fail(ctx, cmd + ": only reservations can be " + cmd + "d (" + cmd + " reservation ...)");
  if (cmd == "update") return Update(ctx, api, a);
  if (cmd == "drain") return DrainOrResume(ctx, api, a, true);
  if (cmd == "resume") return DrainOrResume(ctx, api, a, false);
  if (cmd == "ping") return Ping(ctx, api);
  if (cmd == "backup") return Backup(ctx, api, a);
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
                                    "drain", "resume", "ping", "reconfigure", "suspend",
                                    "sdiag", "qos", "backup", "create", "delete"};
  return std::any_of(std::begin(kCommands), std::end(kCommands),
                     [&](const char* c) { return cmd == c; });
}

// show config without the controller: the local file's settings, later lines winning, as
// "Key = Value" lines, after a line saying why.
int ShowLocalConfig(CommandContext& ctx, const std::string& why) {
  auto it = ctx.env.find("TESSERA_CONF");
  std::string path = it != ctx.env.end() && !it->second.empty() ? it->second
                                                                : "/etc/tessera/tessera.conf";
  auto text = ctx.read_file(path);
  if (!text.ok()) return Fail(ctx, "cannot read " + path + ": " + text.status().message());
  auto lines = ParseConfigText(*text, path);
  if (!lines.ok()) return Fail(ctx, lines.status().message());
  std::map<std::string, std::pair<std::string, std::string>> settings;  // lower -> raw, value
  std::map<std::string, int> records;                                    // NodeName -> count
  for (const auto& l : *lines) {
    if (l.pairs.empty()) continue;
    const auto& first = l.pairs[0];
    if (first.key == "nodename" || first.key == "partitionname" || first.key == "name") {
      ++records[first.raw_key];
      continue;
    }
    for (const auto& p : l.pairs) settings[p.key] = {p.raw_key, p.value};
  }
  *ctx.out << "Configuration data from " << path << " (read locally: " << why << ")\n";
  for (const auto& [k, rv] : settings)
    *ctx.out << PadField(rv.first, 23, false, false) << " = " << rv.second << "\n";
  for (const auto& [k, n] : records)
    *ctx.out << PadField(k + " lines", 23, false, false) << " = " << n << "\n";
  return 0;
}

// Commands answered without the controller; -1 = not one of them.
int LocalCommand(CommandContext& ctx, const ControlArgs& a) {
  std::string cmd = ToLower(a.words[0]);
  std::string what = a.words.size() > 1 ? ToLower(a.words[1]) : "";
  if (int rc = RunHostlistCommand(ctx, a.words); rc >= 0) return rc;  // issue 19
  if (cmd == "qos" || (cmd == "show" && what == "qos")) {
    auto it = ctx.env.find("TESSERA_CONF");
    std::string path = it != ctx.env.end() && !it->second.empty() ? it->second : "/etc/tessera/tessera.conf";
    auto text = ctx.read_file(path);
    if (!text.ok()) return Fail(ctx, "cannot read " + path + ": " + text.status().message());
    auto lines = ParseConfigText(*text, path);
    if (!lines.ok()) return Fail(ctx, lines.status().message());
    int n = 0;
    for (const auto& l : *lines) {
      if (l.Head() != "qosname") continue;
      std::string out = "QOS=" + l.pairs[0].value;
      for (size_t i = 1; i < l.pairs.size(); ++i) out += " " + l.pairs[i].raw_key + "=" + l.pairs[i].value;
      *ctx.out << out << "\n";
      ++n;
    }
    if (n == 0) *ctx.out << "No QoS configured (QOSName= lines in " << path << ")\n";
    return 0;
  }
  return -1;
}

}  // namespace

int RunTcontrol(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see tcontrol --help)");
  ControlArgs a;
  a.words = parsed->positionals;
  // Issue 20 §3: run as `sdiag` (the Slurm name, a link to tcontrol) it is `tcontrol sdiag`.
  if (ctx.prog == "sdiag") {
    if (!a.words.empty()) return Fail(ctx, "unexpected argument \"" + a.words[0] + "\"");
    a.words = {"sdiag"};
  }
  bool help = false, version = false;
  for (const auto& o : parsed->options) {
    if (o.id == kOneLiner) a.oneliner = true;
    if (o.id == kHelp) help = true;
    if (o.id == kVersion) version = true;
    if (o.id == kEvents) a.events = true;
    if (o.id == kReset) a.reset = true;
  }
  if (help || (!a.words.empty() && ToLower(a.words[0]) == "help"))
    return (*ctx.out << HelpText(ctx, kUsage), 0);
  if (version || (!a.words.empty() && ToLower(a.words[0]) == "version"))
    return (*ctx.out << VersionLine() << "\n", 0);
  if (a.words.empty()) return Fail(ctx, "no command given (see tcontrol --help)");
  if (!KnownCommand(ToLower(a.words[0])))
    return Fail(ctx, "invalid command \"" + a.words[0] + "\" (see tcontrol --help)");
  if (a.events && ToLower(a.words[0]) != "show")
    return Fail(ctx, "--events is only valid with show job");
  if (a.reset && ToLower(a.words[0]) != "sdiag")
    return Fail(ctx, "--reset is only valid with sdiag");
  if (int rc = LocalCommand(ctx, a); rc >= 0) return rc;
  auto api = ctx.connect();
  if (!api.ok() && IsShowConfig(a))
    return ShowLocalConfig(ctx, "the controller cannot be reached: " + api.status().message());
  if (!api.ok()) return Fail(ctx, api.status().message());
  return Dispatch(ctx, **api, a);
}

}  // namespace tessera::cli
