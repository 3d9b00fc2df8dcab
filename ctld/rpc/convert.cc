#include "ctld/rpc/convert.h"

#include <cctype>

#include "common/env_block.h"
#include "common/filename_pattern.h"
#include "common/hostlist.h"

namespace tessera::ctld::rpc {
namespace {

// The space-separated words of `s` (JobSpec.k8s_pod_uids as kept in the record).
std::vector<std::string> SplitWords(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(' ', i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

ResourceReq FromProto(const v1::Resources& r) {
  return {r.cpus(), r.mem_mib(), r.gpus(), r.gpu_model(), r.mps(), r.shards(), 0, r.share_model()};
}

void ToProto(const ResourceReq& r, v1::Resources* out) {
  out->set_cpus(r.cpus);
  out->set_mem_mib(r.mem_mib);
  out->set_gpus(r.gpus);
  out->set_gpu_model(r.gpu_model);
  if (r.mps) out->set_mps(r.mps);
  if (r.shards) out->set_shards(r.shards);
  if (!r.share_model.empty()) out->set_share_model(r.share_model);
}

void ToProto(const JobSpec& s, v1::JobSpec* p) {
  if (!s.name.empty()) p->set_name(s.name);
  if (!s.script.empty()) p->set_script(s.script);
  for (const auto& a : s.argv) p->add_argv(a);
  if (!s.workdir.empty()) p->set_workdir(s.workdir);
  if (!s.env_block.empty()) p->set_env_block(s.env_block);
  if (!s.stdout_pattern.empty()) p->set_stdout_pattern(s.stdout_pattern);
  if (!s.stderr_pattern.empty()) p->set_stderr_pattern(s.stderr_pattern);
  if (!s.partition.empty()) p->set_partition(s.partition);
  if (!s.qos.empty()) p->set_qos(s.qos);
  if (!s.account.empty()) p->set_account(s.account);
  for (const auto& g : s.task_groups) {
    auto* tg = p->add_task_groups();
    tg->set_name(g.name);
    tg->set_count(g.count);
    ToProto(g.per_task, tg->mutable_per_task());
    tg->set_tasks_per_node(g.tasks_per_node);
    ToProto(g.per_node, tg->mutable_per_node());
    for (const auto* r : {&g.per_task, &g.per_node})
      if (r->gpu_mem_mib) p->set_gpu_min_mem_mib(r->gpu_mem_mib);
  }
  p->set_gang_min(s.gang_min);
  p->set_nodes_min(s.nodes_min);
  p->set_nodes_max(s.nodes_max);
  p->set_time_limit_s(s.time_limit_s);
  p->set_hold(s.hold);
  p->set_requeue(s.requeue);
  if (!s.comment.empty()) p->set_comment(s.comment);
  p->set_exclusive(s.exclusive);
  if (!s.constraint.empty()) p->set_constraint(s.constraint);
  if (!s.nodelist.empty()) p->set_nodelist(s.nodelist);
  if (!s.exclude.empty()) p->set_exclude(s.exclude);
  p->set_nice(s.nice);
  p->set_begin_time(s.begin_time);
  if (!s.dependency.empty()) p->set_dependency(s.dependency);
  if (!s.array.empty()) p->set_array(s.array);
  p->set_switches(s.switches);
  p->set_switches_wait_s(s.switches_wait_s);
  p->set_segment(s.segment);
  for (const auto& uid : SplitWords(s.k8s_pod_uids)) p->add_k8s_pod_uids(uid);
  if (!s.reservation.empty()) p->set_reservation(s.reservation);
}

}  // namespace

v1::NodeState NodeStateOf(const std::string& s) {
  if (s == "IDLE") return v1::NODE_IDLE;
  if (s == "MIXED") return v1::NODE_MIXED;
  if (s == "ALLOCATED") return v1::NODE_ALLOCATED;
  if (s == "DOWN") return v1::NODE_DOWN;
  if (s == "DRAINED") return v1::NODE_DRAINED;
  if (s == "DRAINING") return v1::NODE_DRAINING;
  return v1::NODE_UNKNOWN;
}

void ToProto(const NodeAlloc& a, v1::NodeAllocation* p) {
  p->set_node(a.node);
  p->set_cpus(a.cpus);
  p->set_mem_mib(a.mem_mib);
  for (auto g : a.gpu_indices) p->add_gpu_indices(g);
  p->set_tasks(a.tasks);
  for (const auto& u : a.mig_uuids) p->add_mig_uuids(u);
  if (a.mps) p->set_mps_active_thread_percentage(a.mps_percent ? a.mps_percent : a.mps);
  if (a.shards) p->set_shards(a.shards);
  p->set_gpu_shared(a.mps > 0 || a.shards > 0);
}

JobSpec FromProto(const v1::JobSpec& p) {
  JobSpec s;
  s.name = p.name();
  s.script = p.script();
  s.argv.assign(p.argv().begin(), p.argv().end());
  s.workdir = p.workdir();
  std::string env;
  for (const auto& [k, v] : p.env()) EnvBlockSet(&env, k, v);
  env.append(p.env_block());  // its entries come later, so they win
  s.env_block = std::move(env);
  s.stdout_pattern = p.stdout_pattern();
  s.stderr_pattern = p.stderr_pattern();
  s.partition = p.partition();
  s.qos = p.qos();
  s.account = p.account();
  for (const auto& g : p.task_groups())
    s.task_groups.push_back({g.name(), g.count(), FromProto(g.per_task()), g.tasks_per_node(), FromProto(g.per_node())});
  for (auto& g : s.task_groups)  // --gpu-mem: per GPU unit of every GPU request (sched/gpu_mem.h)
    for (ResourceReq* r : {&g.per_task, &g.per_node})
      if (r->gpus) r->gpu_mem_mib = p.gpu_min_mem_mib();
  s.gang_min = p.gang_min();
  s.nodes_min = p.nodes_min();
  s.nodes_max = p.nodes_max();
  s.time_limit_s = p.time_limit_s();
  s.hold = p.hold();
  s.requeue = p.requeue();
  s.comment = p.comment();
  s.exclusive = p.exclusive();
  s.constraint = p.constraint();
  s.nodelist = p.nodelist();
  s.exclude = p.exclude();
  s.nice = p.nice();
  s.begin_time = p.begin_time();
  s.dependency = p.dependency();
  s.array = p.array();
  s.switches = p.switches();
  s.switches_wait_s = p.switches_wait_s();
  s.segment = p.segment();
  std::string uids;
  for (const auto& uid : p.k8s_pod_uids()) uids += (uids.empty() ? "" : " ") + uid;
  s.k8s_pod_uids = uids;
  s.reservation = p.reservation();  // checked at submit (sched::CheckSubmit)
  return s;
}

Status CheckRequestOnlyFields(const v1::JobSpec& p, std::vector<std::string>* warnings) {
  if (p.gpu_min_mem_mib() != 0) {  // by need (sched/gpu_mem.h): per GPU unit of a GPU count
    bool gpus = false;
    for (const auto& g : p.task_groups()) gpus = gpus || g.per_task().gpus() || g.per_node().gpus();
    if (!gpus)
      return InvalidArgument(
          "--gpu-mem needs a GPU count (--gpus, --gpus-per-node, --gpus-per-task or "
          "--gres=gpu:N): it is the memory each GPU or MIG instance must have");
  }
  for (const auto& uid : p.k8s_pod_uids()) {  // pod UIDs: RFC 4122 text, checked loosely
    bool ok = !uid.empty() && uid.size() <= 128;
    for (char c : uid) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_');
    if (!ok)
      return InvalidArgument("k8s_pod_uids: \"" + uid.substr(0, 128) +
                             "\" is not a pod UID (1-128 letters, digits, '-', '.', '_')");
  }
  auto warn = [&](bool set, const char* opt, const char* what) {
    if (set) warnings->push_back(std::string(opt) + " is accepted but not acted on yet: " + what);
  };
  warn(p.time_min_s() != 0, "--time-min", "the time limit is not shortened for backfill");
  warn(p.deadline() != 0, "--deadline", "the job is not cancelled at the deadline");
  warn(p.signal_number() != 0, "--signal", "no signal is sent before the time limit");
  warn(p.open_mode() == "append", "--open-mode=append", "output files are truncated");
  warn(!p.stdin_pattern().empty(), "--input", "the batch script reads /dev/null");
  warn(p.no_kill(), "--no-kill", "a job loses all its nodes when one fails");
  warn(p.mem_whole_node(), "--mem=0", "memory is allocated per the request, not the whole node");
  return Status::Ok();
}

void ToProto(const JobRecord& r, v1::JobInfo* out, bool with_paths) {
  out->set_job_id(r.job_id);
  ToProto(r.spec, out->mutable_spec());
  out->set_uid(r.uid);
  out->set_gid(r.gid);
  if (!r.user.empty()) out->set_user(r.user);
  out->set_state(static_cast<v1::JobState>(r.state));
  if (!r.reason.empty()) out->set_reason(r.reason);
  out->set_priority(static_cast<uint32_t>(r.priority > 0 ? r.priority : 0));
  out->set_submit_time(r.submit_time);
  out->set_start_time(r.start_time);
  out->set_end_time(r.end_time);
  out->set_exit_code(r.exit_code);
  out->set_exit_signal(r.exit_signal);
  for (const auto& a : r.alloc) ToProto(a, out->add_alloc());
  if (!r.alloc.empty()) out->set_nodelist(CompressHostlist(r.NodeNames()));
  out->set_requeue_count(r.requeue_count);
  if (!r.partition.empty()) out->set_partition(r.partition);
  out->set_time_limit_s(r.time_limit_s);
  if (with_paths) {
    FilenameVars vars{r.job_id, r.spec.name, r.user, 0, -1, r.alloc.empty() ? "" : r.alloc.front().node};
    out->set_stdout_path(ExpandFilenamePattern(r.spec.stdout_pattern, vars, r.spec.workdir));
    out->set_stderr_path(ExpandFilenamePattern(
        r.spec.stderr_pattern.empty() ? r.spec.stdout_pattern.str() : r.spec.stderr_pattern.str(), vars, r.spec.workdir));
  }
  if (!r.spec.account.empty()) out->set_account(r.spec.account);
  out->set_num_tasks(r.NumTasks());
  out->set_num_cpus(r.NumCpus());
  out->set_expected_start_time(r.expected_start);
  if (!r.sched_nodes.empty()) out->set_sched_nodes(r.sched_nodes);  // issue 19
  if (r.State() == JobState::kCancelled && r.message.str().rfind("cancelled by uid ", 0) == 0)
    out->set_cancelled_by_uid(r.message.str().substr(17));
  out->set_array_job_id(r.array_job_id);
  out->set_array_task_id(r.array_task_id);
  if (r.suspended_s) out->set_suspended_s(r.suspended_s);  // issue 16 §4: sacct Suspended
  if (r.suspend_time) out->set_suspend_time(r.suspend_time);
}

void ToProto(const GpuState& g, v1::GpuDevice* p) {
  p->set_index(g.index);
  p->set_uuid(g.uuid);
  p->set_model(g.model);
  p->set_memory_mib(g.memory_mib);
  p->set_simulated(g.simulated);
  p->set_healthy(g.healthy);
  p->set_health_reason(g.health_reason);
  p->set_mig_enabled(g.mig_enabled);
  for (const auto& m : g.mig) {
    auto* mi = p->add_mig_instances();
    mi->set_profile(m.profile);
    mi->set_placement_start(m.start);
    mi->set_placement_size(m.size);
    mi->set_uuid(m.uuid);
    mi->set_in_use_by_job(m.in_use_by_job);
    mi->set_gpu_instance_id(m.gpu_instance_id);
  }
  p->set_numa_node(g.numa_node);
  p->set_pci_bus_id(g.pci_bus_id);
  p->set_mps(g.mps);
  p->set_replicas(g.replicas);
  p->set_mps_count(g.mps_count);
  p->set_minor(g.minor);
  if (!g.healthy) {
    p->set_reason_time(g.reason_time);
    if (g.reason_uid >= 0) p->set_reason_uid(static_cast<uint32_t>(g.reason_uid));
  }
}

// GPU sharing in use per GPU (NodeRuntime::alloc_mps / alloc_shards).
static void SetGpuShareUse(const NodeRuntime& n, v1::NodeInfo* out) {
  for (auto& g : *out->mutable_gpus()) {
    auto m = n.alloc_mps.find(g.index());
    auto s = n.alloc_shards.find(g.index());
    if (m != n.alloc_mps.end()) g.set_mps_used(m->second);
    if (s != n.alloc_shards.end()) g.set_shards_used(s->second);
  }
}

void ToProto(const NodeRuntime& n, int64_t now, v1::NodeInfo* out) {
  out->set_name(n.config->name);
  out->set_address(n.config->addr);
  out->set_port(n.config->port);
  out->set_state(NodeStateOf(n.StateName()));
  out->set_reason(n.reason);
  for (const auto& f : n.config->features) out->add_features(f);
  for (const auto& p : n.config->partitions) out->add_partitions(p);
  out->set_cpus(n.config->cpus);
  out->set_real_memory_mib(n.config->real_memory_mib);
  out->set_alloc_cpus(n.alloc_cpus);
  out->set_alloc_memory_mib(n.alloc_mem);
  for (const auto& g : n.gpus) ToProto(g, out->add_gpus());
  SetGpuShareUse(n, out);
  for (const auto& h : n.hcas) {
    auto* p = out->add_hcas();
    p->set_name(h.name);
    p->set_port(h.port);
    p->set_state(h.state);
    p->set_rate(h.rate);
    p->set_link_layer(h.link_layer);
    p->set_numa_node(h.numa_node);
    p->set_pci_bus_id(h.pci_bus_id);
    p->set_netdev(h.netdev);
  }
  for (auto g : n.alloc_gpus) out->add_alloc_gpu_indices(g);
  out->set_last_heartbeat(n.last_heartbeat);
  for (auto j : n.jobs) out->add_running_jobs(j);
  out->set_boot_time(n.boot_time);
  out->set_version(n.version);
  out->set_weight(n.config->weight);  // issue 19: scontrol show node, sinfo %w
  out->set_reason_time(n.reason.empty() ? 0 : n.reason_time);
  if (!n.reason.empty() && n.reason_uid >= 0) out->set_reason_uid(static_cast<uint32_t>(n.reason_uid));
  out->set_os(n.os);
  out->set_arch(n.arch);
  out->set_cpu_load_x100(n.cpu_load_x100);
  out->set_free_mem_mib(n.free_mem_mib);
}

void ToProto(const JobEvent& e, v1::JobEvent* out) {
  out->set_seq(e.seq);
  out->set_job_id(e.job_id);
  out->set_time(e.time);
  out->set_type(e.type);
  out->set_detail(e.detail);
}

RegisterInfo::Finished FromProto(const v1::JobFinished& p) {
  return {p.job_id(),   static_cast<JobState>(p.state()), p.exit_code(), p.exit_signal(),
          p.end_time(), p.message(), p.run(),
          p.has_batch_usage() ? p.batch_usage().SerializeAsString() : std::string()};
}

GpuState FromProto(const v1::GpuDevice& g) {
  GpuState s;
  s.index = g.index();
  s.uuid = g.uuid();
  s.model = g.model();
  s.memory_mib = g.memory_mib();
  s.healthy = g.healthy();
  s.simulated = g.simulated();
  s.health_reason = g.health_reason();
  s.mig_enabled = g.mig_enabled();
  for (const auto& m : g.mig_instances())
    s.mig.push_back({m.profile(), m.placement_start(), m.placement_size(), m.uuid(), m.in_use_by_job(), m.gpu_instance_id()});
  s.numa_node = g.numa_node();
  s.pci_bus_id = g.pci_bus_id();
  s.mps = g.mps();
  s.replicas = g.replicas();
  s.mps_count = g.mps_count();
  s.minor = g.minor();
  return s;
}

RegisterInfo FromProto(const v1::Register& p) {
  RegisterInfo r;
  r.node = p.node_name();
  r.cpus = p.cpus();
  r.mem_mib = p.real_memory_mib();
  for (const auto& g : p.gpus()) r.gpus.push_back(FromProto(g));
  for (const auto& h : p.hcas())
    r.hcas.push_back({h.name(), h.port(), h.state(), h.rate(), h.link_layer(), h.pci_bus_id(), h.numa_node(),
                      h.netdev()});
  r.running.assign(p.running_jobs().begin(), p.running_jobs().end());
  for (const auto& jr : p.running_runs()) r.runs[jr.job_id()] = jr.run();
  r.boot_id = p.boot_id();
  for (const auto& f : p.finished()) r.finished.push_back(FromProto(f));
  r.boot_time = p.boot_time();
  r.version = p.version();
  r.os = p.os();  // issue 19
  r.arch = p.arch();
  return r;
}

// The job's SLURM_* variables only the controller knows (issue 19), added to the launch's
// environment block: SLURM_JOB_QOS (Slurm's default QOS is "normal"), SLURM_JOB_START_TIME and,
// with a time limit, SLURM_JOB_END_TIME (epoch seconds).
void AddLaunchEnv(const JobRecord& r, v1::LaunchJob* out) {
  const std::string& qos = r.spec.qos.str();
  EnvBlockSet(out->mutable_env_block(), "SLURM_JOB_QOS", qos.empty() ? "normal" : qos);
  if (r.start_time > 0) {
    EnvBlockSet(out->mutable_env_block(), "SLURM_JOB_START_TIME", std::to_string(r.start_time));
    if (r.time_limit_s > 0)
      EnvBlockSet(out->mutable_env_block(), "SLURM_JOB_END_TIME",
                  std::to_string(r.start_time + r.time_limit_s));
  }
}

void ToLaunch(const JobRecord& r, const JobPayload& payload, int64_t kill_wait_s, v1::LaunchJob* out) {
  out->set_job_id(r.job_id);
  out->set_run(r.run);
  out->set_restart_count(r.requeue_count);  // issue 16 §4
  out->set_name(r.spec.name);
  out->set_uid(r.uid);
  out->set_gid(r.gid);
  out->set_user(r.user);
  out->set_script(payload.script);
  for (const auto& a : r.spec.argv) out->add_argv(a);
  out->set_workdir(r.spec.workdir);
  out->set_env_block(payload.env_block);
  out->set_stdout_path(r.spec.stdout_pattern);
  out->set_stderr_path(r.spec.stderr_pattern);
  out->set_time_limit_s(r.time_limit_s);
  for (const auto& a : r.alloc) ToProto(a, out->add_alloc());
  out->set_nodelist(CompressHostlist(r.NodeNames()));
  out->set_partition(r.partition);
  out->set_num_tasks(r.NumTasks());
  out->set_kill_wait_s(static_cast<int32_t>(kill_wait_s));
  out->set_account(r.spec.account);
  out->set_submit_dir(r.spec.workdir);
  out->set_submit_host(r.submit_host);
  out->set_submit_time(r.submit_time);
  AddLaunchEnv(r, out);  // issue 19: SLURM_JOB_QOS, SLURM_JOB_START_TIME, SLURM_JOB_END_TIME
}

void ToProto(const TopologyRecord& r, v1::TopologyRecord* out) {
  out->set_kind(r.kind);
  out->set_name(r.name);
  out->set_level(r.level);
  out->set_link_speed(r.link_speed);
  out->set_nodes(r.nodes);
  out->set_switches(r.switches);
  out->set_block_index(r.block_index);
  out->set_block_size(r.block_size);
}

}  // namespace tessera::ctld::rpc
