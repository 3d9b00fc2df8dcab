#include "cli/lib/show_format.h"

#include "cli/lib/hca_view.h"
#include "cli/lib/share_view.h"

#include <algorithm>
#include <map>

#include "cli/lib/gpu_units.h"
#include "cli/lib/info_format.h"
#include "cli/lib/job_view.h"
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

std::string FormatJobDetail(const pb::JobInfo& job, const IdNames& names, int64_t now) {
  const auto& spec = job.spec();
  std::string user = job.user().empty() ? UserLabel(names, job.uid()) : job.user();
  std::string o = "JobId=" + std::to_string(job.job_id()) + " JobName=" + E(spec.name()) + "\n";
  o += "   UserId=" + E(user) + "(" + std::to_string(job.uid()) + ") GroupId=" +
       GroupLabel(names, job.gid()) + "(" + std::to_string(job.gid()) + ")\n";
  o += "   Priority=" + std::to_string(job.priority()) + " Nice=" + std::to_string(spec.nice()) +
       " Account=" + OrNull(AccountOf(job)) + " QOS=" + OrNull(spec.qos()) + "\n";
  o += std::string("   JobState=") + JobStateName(StateOf(job)) +
       " Reason=" + ReasonWord(job.reason()) +
       " Dependency=" + OrNull(spec.dependency()) + "\n";
  o += std::string("   Requeue=") + (spec.requeue() ? "1" : "0") +
       " Restarts=" + std::to_string(job.requeue_count()) + " BatchFlag=1 ExitCode=" +
       std::to_string(job.exit_code()) + ":" + std::to_string(job.exit_signal()) + "\n";
  o += "   RunTime=" + SacctSecs(ElapsedSeconds(job, now)) +
       " TimeLimit=" + LimitForShow(TimeLimitOf(job)) + " TimeMin=N/A\n";
  o += "   SubmitTime=" + Time(job.submit_time()) +
       " EligibleTime=" + Time(std::max(job.submit_time(), spec.begin_time())) + "\n";
  o += "   StartTime=" + Time(job.start_time()) + " EndTime=" + Time(EndTimeOf(job)) +
       " Deadline=N/A\n";
  o += "   Partition=" + OrNull(PartitionOf(job)) + "\n";
  o += "   ReqNodeList=" + OrNull(spec.nodelist()) + " ExcNodeList=" + OrNull(spec.exclude()) +
       "\n";
  o += "   NodeList=" + OrNull(job.nodelist()) + "\n";
  if (job.alloc_size() > 0) o += "   BatchHost=" + job.alloc(0).node() + "\n";
  o += "   NumNodes=" + std::to_string(NodeCount(job)) + " NumCPUs=" +
       std::to_string(CpuCount(job)) + " NumTasks=" + std::to_string(TaskCount(job)) +
       " CPUs/Task=" + std::to_string(CpusPerTask(job)) + "\n";
  o += "   TRES=" + TresOf(job) + "\n";
  o += "   " + MemoryLine(job) + " Features=" + OrNull(spec.constraint()) +
       " OverSubscribe=" + (spec.exclusive() ? "NO" : "OK") + "\n";
  if (!GresOf(job).empty()) o += "   TresPerNode=" + GresOf(job) + "\n";
  o += "   Command=" + E(CommandOf(job)) + "\n";
  o += "   WorkDir=" + E(spec.workdir()) + "\n";
  if (!spec.comment().empty()) o += "   Comment=" + E(spec.comment()) + "\n";
  o += "   StdErr=" + E(OutputPath(job, true)) + "\n";
  o += "   StdIn=/dev/null\n";
  o += "   StdOut=" + E(OutputPath(job, false)) + "\n";
  return o + "\n";
}

std::string FormatNodeDetail(const pb::NodeInfo& n) {
  std::string features = n.features().empty()
                             ? "(null)"
                             : Join({n.features().begin(), n.features().end()}, ",");
  std::vector<GpuUnitCount> units = GpuUnitsOfNode(n);
  std::string gres = GpuUnitsText(units, false);
  std::string o = "NodeName=" + n.name() + "\n";
  o += "   CPUAlloc=" + std::to_string(n.alloc_cpus()) + " CPUTot=" + std::to_string(n.cpus()) +
       "\n";
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
       n.name() + " Port=" + std::to_string(n.port()) + " Version=" + OrNull(n.version()) + "\n";
  o += "   RealMemory=" + std::to_string(n.real_memory_mib()) +
       " AllocMem=" + std::to_string(n.alloc_memory_mib()) + "\n";
  o += "   State=" + NodeStateLong(n) + "\n";
  o += "   Partitions=" + OrNull(Join({n.partitions().begin(), n.partitions().end()}, ",")) + "\n";
  o += "   BootTime=" + FormatTimestamp(n.boot_time()) +
       " LastHeartbeat=" + FormatTimestamp(n.last_heartbeat()) + "\n";
  std::string cfg = "cpu=" + std::to_string(n.cpus()) + ",mem=" + FormatMemMiB(n.real_memory_mib());
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

std::string FormatPartitionDetail(const pb::PartitionInfo& p) {
  auto limit = [](int64_t s) { return s < 0 ? std::string("UNLIMITED")
                                            : s == 0 ? std::string("NONE") : SacctSecs(s); };
  std::string o = "PartitionName=" + p.name() + "\n";
  o += "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n";
  o += std::string("   Default=") + (p.is_default() ? "YES" : "NO") + "\n";
  o += "   DefaultTime=" + limit(p.default_time_s()) + " MaxNodes=" +
       (p.max_nodes() ? std::to_string(p.max_nodes()) : "UNLIMITED") +
       " MaxTime=" + limit(p.max_time_s() == 0 ? -1 : p.max_time_s()) + "\n";
  o += "   Nodes=" + OrNull(p.nodes()) + "\n";
  o += "   PriorityTier=" + std::to_string(p.priority_tier()) + "\n";
  o += std::string("   State=") + (p.up() ? "UP" : "DOWN") +
       " TotalCPUs=" + std::to_string(p.total_cpus()) +
       " TotalNodes=" + std::to_string(p.total_nodes()) + "\n";
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
