#include "cli/lib/show_format.h"

#include "cli/lib/hca_view.h"
#include "cli/lib/share_view.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "cli/lib/gpu_units.h"
#include "cli/lib/info_format.h"
#include "cli/lib/job_view.h"
#include "cli/lib/slurm_compat.h"
#include "cli/lib/text_util.h"
#include "common/control_chars.h"
#include "common/duration.h"
#include "common/filename_pattern.h"

namespace tessera::cli {
namespace {

// Every free-text value is escaped (common/control_chars.h): a name or comment stored by an
// older version, or a node's reason, never writes control characters to the terminal.
std::string E(const std::string& s) { return EscapeControlChars(s); }
std::string OrNull(const std::string& s) { return s.empty() ? "(null)" : E(s); }

// As scontrol: white space in the reason becomes '_', so "Reason=" stays one word.
std::string ReasonWord(const std::string& reason) {
  if (reason.empty()) return "None";
  std::string r = E(reason);
  for (char& c : r)
    if (c == ' ') c = '_';
  return r;
}
std::string Time(int64_t t) { return FormatTimestamp(t, /*unknown_word=*/true); }

std::string OutputPath(const pb::JobInfo& job, bool err) {
  const auto& spec = job.spec();
  if (err && !job.stderr_path().empty()) return job.stderr_path();
  if (!job.stdout_path().empty() && (!err || spec.stderr_pattern().empty()))
    return job.stdout_path();
  FilenameVars v;
  v.job_id = job.job_id();
  v.job_name = spec.name();
  v.user = job.user();
  v.node = job.alloc_size() ? job.alloc(0).node() : "";
  std::string pattern = err && !spec.stderr_pattern().empty() ? spec.stderr_pattern()
                                                              : spec.stdout_pattern();
  return ExpandFilenamePattern(pattern, v, spec.workdir());
}

std::string MemoryLine(const pb::JobInfo& job) {
  uint64_t per_node = 0, per_cpu = 0;
  for (const auto& g : job.spec().task_groups()) {
    per_node = std::max<uint64_t>(per_node, g.per_node().mem_mib());
    uint32_t cpus = g.per_task().cpus() ? g.per_task().cpus() : 1;
    if (g.per_task().mem_mib())
      per_cpu = std::max<uint64_t>(per_cpu, g.per_task().mem_mib() / cpus);
  }
  if (per_cpu) return "MinMemoryCPU=" + FormatMemMiB(per_cpu);
  return "MinMemoryNode=" + (per_node ? FormatMemMiB(per_node) : std::string("0"));
}

uint32_t CpusPerTask(const pb::JobInfo& job) {
  const auto& groups = job.spec().task_groups();
  if (groups.empty() || groups[0].per_task().cpus() == 0) return 1;
  return groups[0].per_task().cpus();
}

}  // namespace

std::string LimitForShow(int64_t seconds) {
  if (seconds < 0) return "UNLIMITED";
  if (seconds == 0) return "Partition_Limit";
  return SacctSecs(seconds);
}

// scontrol show job in Slurm 22.05's layout (src/api/job_info.c, slurm_sprint_job_info): every
// key it prints, in its order. Values Tessera does not have are Slurm's "not set" values.
std::string FormatJobDetail(const pb::JobInfo& job, const IdNames& names, int64_t now) {
  const auto& spec = job.spec();
  JobState state = StateOf(job);
  std::string user = job.user().empty() ? UserLabel(names, job.uid()) : job.user();
  std::string o = "JobId=" + std::to_string(job.job_id()) + " ";
  if (job.array_job_id()) {
    std::string tasks = job.array_task_str();
    std::string throttle;
    if (size_t pct = tasks.find('%'); pct != std::string::npos) {
      throttle = tasks.substr(pct + 1);
      tasks.resize(pct);
    }
    o += "ArrayJobId=" + std::to_string(job.array_job_id()) + " ArrayTaskId=" +
         (tasks.empty() ? std::to_string(job.array_task_id()) : tasks) + " ";
    if (!throttle.empty()) o += "ArrayTaskThrottle=" + throttle + " ";
  }
  o += "JobName=" + E(spec.name()) + "\n";
  o += "   UserId=" + E(user) + "(" + std::to_string(job.uid()) + ") GroupId=" +
       GroupLabel(names, job.gid()) + "(" + std::to_string(job.gid()) + ") MCS_label=N/A\n";
  o += "   Priority=" + std::to_string(job.priority()) + " Nice=" + std::to_string(spec.nice()) +
       " Account=" + OrNull(AccountOf(job)) + " QOS=" + OrNull(spec.qos()) + "\n";
  o += std::string("   JobState=") + JobStateName(state) +
       " Reason=" + ReasonWord(SlurmReason(job)) +
       " Dependency=" + OrNull(spec.dependency()) + "\n";
  o += std::string("   Requeue=") + (spec.requeue() ? "1" : "0") +
       " Restarts=" + std::to_string(job.requeue_count()) + " BatchFlag=1 Reboot=0 ExitCode=" +
       std::to_string(job.exit_code()) + ":" + std::to_string(job.exit_signal()) + "\n";
  o += "   RunTime=" + SacctSecs(ElapsedSeconds(job, now)) +
       " TimeLimit=" + LimitForShow(TimeLimitOf(job)) + " TimeMin=" +
       (spec.time_min_s() > 0 ? SacctSecs(spec.time_min_s()) : std::string("N/A")) + "\n";
  int64_t eligible = std::max(job.submit_time(), spec.begin_time());
  o += "   SubmitTime=" + Time(job.submit_time()) + " EligibleTime=" + Time(eligible) + "\n";
  // AccrueTime: when the job began to accrue age priority (not while held).
  bool held = job.reason() == "JobHeldUser" || job.reason() == "JobHeldAdmin";
  o += "   AccrueTime=" + Time(held && job.start_time() == 0 ? 0 : eligible) + "\n";
  o += "   StartTime=" + Time(job.start_time()) + " EndTime=" + Time(EndTimeOf(job)) +
       " Deadline=" + (spec.deadline() > 0 ? Time(spec.deadline()) : std::string("N/A")) + "\n";
  o += "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=" + Time(job.start_time()) +
       " Scheduler=Main\n";
  o += "   Partition=" + OrNull(PartitionOf(job)) + " AllocNode:Sid=(null):0\n";
  o += "   ReqNodeList=" + OrNull(spec.nodelist()) + " ExcNodeList=" + OrNull(spec.exclude()) +
       "\n";
  o += "   NodeList=" + OrNull(job.nodelist());
  if (!job.sched_nodes().empty()) o += " SchedNodeList=" + E(job.sched_nodes());
  o += "\n";
  if (job.alloc_size() > 0) o += "   BatchHost=" + job.alloc(0).node() + "\n";
  uint32_t tasks_per_node = 0;
  for (const auto& g : spec.task_groups()) tasks_per_node = std::max(tasks_per_node, g.tasks_per_node());
  o += "   NumNodes=" + std::to_string(NodeCount(job)) + " NumCPUs=" +
       std::to_string(CpuCount(job)) + " NumTasks=" + std::to_string(TaskCount(job)) +
       " CPUs/Task=" + std::to_string(CpusPerTask(job)) + " ReqB:S:C:T=0:0:*:*\n";
  o += "   TRES=" + TresOf(job) + "\n";
  o += "   Socks/Node=* NtasksPerN:B:S:C=" + std::to_string(tasks_per_node) +
       ":0:*:* CoreSpec=*\n";
  o += "   MinCPUsNode=" + std::to_string(CpusPerTask(job) * std::max<uint32_t>(1, tasks_per_node)) +
       " " + MemoryLine(job) + " MinTmpDiskNode=0\n";
  o += "   Features=" + OrNull(spec.constraint()) + " DelayBoot=00:00:00\n";
  if (!spec.reservation().empty()) o += "   Reservation=" + E(spec.reservation()) + "\n";
  o += std::string("   OverSubscribe=") + (spec.exclusive() ? "NO" : "OK") +
       " Contiguous=0 Licenses=(null) Network=(null)\n";
  o += "   Command=" + E(CommandOf(job)) + "\n";
  o += "   WorkDir=" + E(spec.workdir()) + "\n";
  if (!spec.comment().empty()) o += "   Comment=" + E(spec.comment()) + " \n";
  o += "   StdErr=" + E(OutputPath(job, true)) + "\n";
  o += "   StdIn=/dev/null\n";
  o += "   StdOut=" + E(OutputPath(job, false)) + "\n";
  o += "   Power=\n";
  if (!GresOf(job).empty()) o += "   TresPerNode=" + GresOf(job) + "\n";
  return o + "\n";
}

// scontrol show node in Slurm 22.05's layout (src/api/node_info.c, slurm_sprint_node_table),
// trailing blanks included. A node configured with CPUs only has Sockets=CPUs,
// CoresPerSocket=1, ThreadsPerCore=1, as slurmctld makes it. Tessera's own keys (GPUs=,
// MigLayout[i]=, HCAs=, Topology=, LastHeartbeat=) follow Slurm's, before Reason=.
std::string FormatNodeDetail(const pb::NodeInfo& n) {
  std::string features = n.features().empty()
                             ? "(null)"
                             : Join({n.features().begin(), n.features().end()}, ",");
  std::vector<GpuUnitCount> units = GpuUnitsOfNode(n);
  std::string gres = GpuUnitsText(units, false);
  std::string o = "NodeName=" + n.name() + " ";
  if (!n.arch().empty()) o += "Arch=" + E(n.arch()) + " ";
  o += "CoresPerSocket=1 \n";
  o += "   CPUAlloc=" + std::to_string(n.alloc_cpus()) + " CPUEfctv=" + std::to_string(n.cpus()) +
       " CPUTot=" + std::to_string(n.cpus()) + " CPULoad=";
  if (n.cpu_load_x100() < 0 || (n.cpu_load_x100() == 0 && n.free_mem_mib() == 0)) {
    o += "N/A";
  } else {
    char load[32];
    std::snprintf(load, sizeof load, "%.2f", n.cpu_load_x100() / 100.0);
    o += load;
  }
  o += "\n";
  o += "   AvailableFeatures=" + features + "\n";
  o += "   ActiveFeatures=" + features + "\n";
  if (std::string sh = ShareGres(n); !sh.empty()) gres += (gres.empty() ? "" : ",") + sh;
  o += "   Gres=" + OrNull(gres) + "\n";
  {
    std::string used = units.empty() ? "" : GpuUnitsText(units, true);
    if (std::string sh = ShareGresUsed(n); !sh.empty()) used += (used.empty() ? "" : ",") + sh;
    if (!used.empty()) o += "   GresUsed=" + used + "\n";
  }
  o += "   NodeAddr=" + (n.address().empty() ? n.name() : n.address()) + " NodeHostName=" +
       n.name() + " ";
  if (n.port() != 0 && n.port() != 6818) o += "Port=" + std::to_string(n.port()) + " ";
  o += "Version=" + OrNull(n.version()) + "\n";
  if (!n.os().empty()) o += "   OS=" + E(n.os()) + " \n";
  o += "   RealMemory=" + std::to_string(n.real_memory_mib()) +
       " AllocMem=" + std::to_string(n.alloc_memory_mib()) + " FreeMem=" +
       (n.free_mem_mib() ? std::to_string(n.free_mem_mib()) : std::string("N/A")) +
       " Sockets=" + std::to_string(n.cpus()) + " Boards=1\n";
  o += "   State=" + NodeStateLong(n) + " ThreadsPerCore=1 TmpDisk=0 Weight=" +
       std::to_string(n.weight() ? n.weight() : 1) + " Owner=N/A MCS_label=N/A\n";
  o += "   Partitions=" + OrNull(Join({n.partitions().begin(), n.partitions().end()}, ",")) + " \n";
  o += "   BootTime=" + (n.boot_time() > 0 ? FormatTimestamp(n.boot_time()) : std::string("None")) +
       " SlurmdStartTime=None\n";
  o += "   LastBusyTime=Unknown\n";
  std::string cfg = "cpu=" + std::to_string(n.cpus()) + ",mem=" + FormatMemMiB(n.real_memory_mib()) +
                    ",billing=" + std::to_string(n.cpus());
  int gpu_units = 0;
  for (const auto& u : units) gpu_units += u.total;
  if (gpu_units) cfg += ",gres/gpu=" + std::to_string(gpu_units);
  o += "   CfgTRES=" + cfg + "\n";
  std::string alloc;
  if (n.alloc_cpus()) alloc = "cpu=" + std::to_string(n.alloc_cpus());
  if (n.alloc_memory_mib()) alloc += ",mem=" + FormatMemMiB(n.alloc_memory_mib());
  int gpus_used = 0;  // whole GPUs and MIG instances held by jobs
  for (const auto& u : units) gpus_used += u.used;
  if (gpus_used) alloc += ",gres/gpu=" + std::to_string(gpus_used);
  if (!alloc.empty() && alloc[0] == ',') alloc.erase(0, 1);  // nothing before it
  o += "   AllocTRES=" + alloc + "\n";
  o += "   CapWatts=n/a\n";
  o += "   CurrentWatts=n/s AveWatts=n/s\n";
  o += "   ExtSensorsJoules=n/s ExtSensorsWatts=n/s ExtSensorsTemp=n/s\n";
  if (n.last_heartbeat() > 0) o += "   LastHeartbeat=" + FormatTimestamp(n.last_heartbeat()) + "\n";
  if (n.gpus_size()) {
    std::vector<std::string> gpus;
    for (const auto& g : n.gpus())
      gpus.push_back(std::to_string(g.index()) + ":" + g.model() +
                     (g.healthy() ? "" : "(DRAIN:" + E(g.health_reason()) + ")"));
    o += "   GPUs=" + Join(gpus, ",") + "\n";
    for (const auto& g : n.gpus())
      if (g.mig_enabled())
        o += "   MigLayout[" + std::to_string(g.index()) + "]=" + MigLayoutText(g) + "\n";
  }
  if (std::string hcas = FormatHcas(n); !hcas.empty()) o += "   HCAs=" + E(hcas) + "\n";
  // Slurm's Topology=<topology>:<unit> line; topology.conf's topology is named "default".
  if (!n.topology_unit().empty()) o += "   Topology=default:" + E(n.topology_unit()) + "\n";
  if (!n.reason().empty()) o += "   Reason=" + E(n.reason()) + "\n";
  return o + "\n";
}

// scontrol show partition in Slurm 22.05's layout (src/api/partition_info.c). Tessera has no
// per-partition AllowGroups/QoS/OverSubscribe/... settings: those keys print Slurm's defaults.
std::string FormatPartitionDetail(const pb::PartitionInfo& p) {
  auto limit = [](int64_t s) { return s <= 0 ? std::string("UNLIMITED") : SacctSecs(s); };
  std::string o = "PartitionName=" + p.name() + "\n";
  o += "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n";
  o += std::string("   AllocNodes=ALL Default=") + (p.is_default() ? "YES" : "NO") + " QoS=N/A\n";
  o += "   DefaultTime=" + (p.default_time_s() <= 0 ? std::string("NONE") : limit(p.default_time_s())) +
       " DisableRootJobs=NO ExclusiveUser=NO GraceTime=" + std::to_string(p.grace_time_s()) +
       " Hidden=NO\n";
  o += "   MaxNodes=" + (p.max_nodes() ? std::to_string(p.max_nodes()) : std::string("UNLIMITED")) +
       " MaxTime=" + limit(p.max_time_s()) + " MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n";
  o += "   Nodes=" + OrNull(p.nodes()) + "\n";
  o += "   PriorityJobFactor=1 PriorityTier=" + std::to_string(p.priority_tier()) +
       " RootOnly=NO ReqResv=NO OverSubscribe=NO\n";
  o += "   OverTimeLimit=NONE PreemptMode=" +
       (p.preempt_mode().empty() ? std::string("OFF") : p.preempt_mode()) + "\n";
  o += std::string("   State=") + (p.up() ? "UP" : "DOWN") +
       " TotalCPUs=" + std::to_string(p.total_cpus()) +
       " TotalNodes=" + std::to_string(p.total_nodes()) + " SelectTypeParameters=NONE\n";
  o += "   JobDefaults=(null)\n";
  o += "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n";
  std::string tres = "cpu=" + std::to_string(p.total_cpus());
  if (p.total_mem_mib()) tres += ",mem=" + FormatMemMiB(p.total_mem_mib());
  tres += ",node=" + std::to_string(p.total_nodes()) + ",billing=" + std::to_string(p.total_cpus());
  o += "   TRES=" + tres + "\n";
  return o + "\n";
}

std::string FormatJobEvents(uint64_t job_id, const std::vector<pb::JobEvent>& events) {
  std::string o = "JobId=" + std::to_string(job_id) + " Events=" +
                  std::to_string(events.size()) + "\n";
  for (const auto& e : events)
    o += "   Seq=" + std::to_string(e.seq()) + " Time=" + FormatTimestamp(e.time()) +
         " Type=" + e.type() + " Detail=" + (e.detail().empty() ? "{}" : e.detail()) + "\n";
  return o + "\n";
}

}  // namespace tessera::cli
