#include "common/config_keys.h"

#include <cctype>

namespace tessera {
namespace {

constexpr const char* kConf = "tessera.conf";
constexpr const char* kGres = "gres.conf";
constexpr const char* kTopo = "topology.conf";
constexpr const char* kAll = "ctld, noded, commands";
constexpr const char* kIgnored = "ignored";
constexpr const char* kIgnoredWhy = "a Slurm key Tessera accepts and does not act on (warning with file:line)";

// The order is the admin guide's. Global tessera.conf keys first: the ones the commands read
// (controller address, auth, TLS), then the daemons', the scheduler's, then per-line keys.
const std::vector<ConfigKey> kKeys = {
    // --- what every program reads, the commands included (client_config.h) ---
    {kConf, "", "SlurmctldHost|ControlMachine", kAll, "ctl1(10.0.0.1)",
     "controller host name, optionally `host(address)`"},
    {kConf, "", "ControlAddr", kAll, "10.0.0.1", "address to reach the controller at (default the host name)"},
    {kConf, "", "SlurmctldPort", kAll, "6817", "controller gRPC port (default 6817)"},
    {kConf, "", "ControllerSocket", "ctld, commands", "/run/tessera/ctld.sock",
     "Unix socket on the controller's host for local commands (default /run/tessera/ctld-<port>.sock; `none` = off)"},
    {kConf, "", "ControllerWirePort", "ctld, commands", "6819",
     "ctld's plaintext TCP port for commands on other hosts (munge per request; 0 = off, the default; not with TLS)"},
    {kConf, "", "AuthInfo", kAll, "socket=/run/munge/munge.socket.2", "`socket=PATH` of munged (default munge's)"},
    {kConf, "", "TlsCertFile", "ctld, noded, commands", "/etc/tessera/tls/host.crt",
     "this host's certificate (the three Tls keys together or none)"},
    {kConf, "", "TlsKeyFile", "ctld, noded, commands", "/etc/tessera/tls/host.key", "this host's private key"},
    {kConf, "", "TlsCaFile", kAll, "/etc/tessera/tls/ca.crt", "CA that signs every Tessera certificate"},
    // --- the daemons ---
    {kConf, "", "ClusterName", "ctld, noded", "site", "cluster name (default tessera)"},
    {kConf, "", "StateSaveLocation", "ctld", "/var/lib/tessera", "ctld's state database directory"},
    {kConf, "", "SlurmdSpoolDir", "noded", "/var/spool/tessera/%n", "node spool directory (`%n` = node name)"},
    {kConf, "", "TesseraLogDir", "none", "/var/log/tessera",
     "accepted; not used (the daemons log to stderr, the journal under systemd)"},
    {kConf, "", "SlurmdTimeout", "ctld", "60", "seconds without a heartbeat before a node is DOWN (default 60)"},
    {kConf, "", "HeartbeatInterval", "ctld, noded", "20", "node heartbeat seconds (default SlurmdTimeout/3)"},
    {kConf, "", "KillWait", "ctld, noded", "30", "seconds between SIGTERM and SIGKILL (default 30)"},
    {kConf, "", "MinJobAge", "ctld", "300", "seconds a finished job stays in tqueue (default 300)"},
    {kConf, "", "SchedulerInterval", "ctld", "5", "seconds between scheduling cycles (default 5)"},
    {kConf, "", "MaxArraySize", "ctld", "1001", "array indices must be below it (1..4000001, default 1001)"},
    {kConf, "", "EnforcePartLimits", "ctld", "NO", "NO (wait), ANY or ALL (refuse at submit); YES = ANY"},
    {kConf, "", "SlurmUser|TesseraUser", "ctld", "root", "the cluster's service user (default root)"},
    {kConf, "", "TesseraAdmins", "ctld", "alice,bob", "users with administrator rights"},
    {kConf, "", "TesseraOperators", "ctld", "carol", "users with operator rights"},
    {kConf, "", "TopologyPlugin", "ctld", "topology/tree", "topology/tree, topology/block or topology/flat (default)"},
    {kConf, "", "TopologyFile", "ctld", "topology.conf", "topology file (default topology.conf beside tessera.conf)"},
    // Issue 20 §3 (common/metrics_config.h).
    {kConf, "", "MetricsPort", "ctld", "9101", "port of ctld's Prometheus endpoint (0 = none, the default)"},
    {kConf, "", "MetricsAddress", "ctld, noded", "0.0.0.0", "address the Prometheus endpoints listen on (default 0.0.0.0)"},
    {kConf, "", "CgroupMountpoint", "noded", "/sys/fs/cgroup", "cgroup hierarchy (default /sys/fs/cgroup; `none` = no isolation)"},
    {kConf, "", "CgroupPidsMax", "noded", "16384", "pids limit per job (default 16384; 0 = none)"},
    {kConf, "", "GpuIgnoredXids", "noded", "13,31,43", "GPU XID errors that do not fail a GPU"},
    {kConf, "", "RdmaSysfsRoot", "noded", "/sys", "where RDMA devices are discovered (default /sys)"},
    {kConf, "", "NvidiaProcRoot", "noded", "/proc", "where the NVIDIA driver's capabilities are read for MIG (default /proc)"},
    // --- the scheduler (ctld/sched/sched_config.h) ---
    {kConf, "", "SchedulerActions", "scheduler", "enqueue,allocate,backfill", "the actions of a cycle, in order"},
    {kConf, "", "SchedulerPlugins", "scheduler", "priority,predicates,lifecycle", "the scoring/filter plugins"},
    {kConf, "", "SchedulerParameters", "scheduler", "bf_window=60,default_time=1:00:00",
     "bf_reservation_depth, bf_max_job_reservations, bf_oldest, bf_oldest_wait (s), bf_window (minutes), bf_max_times, "
     "sched_score_window, mig_reconfig_seconds, mig_plan_depth, binpack_weight, spread_weight, "
     "endtime_weight, size_weight, scarce_weight, preempt_depth, default_time"},
    {kConf, "", "AccountingStorageEnforce", "scheduler", "associations,limits,qos", "what submit refuses"},
    {kConf, "", "PriorityWeightAge", "scheduler", "1000", "multifactor priority weight"},
    {kConf, "", "PriorityWeightFairshare", "scheduler", "1000", "multifactor priority weight"},
    {kConf, "", "PriorityWeightJobSize", "scheduler", "1000", "multifactor priority weight"},
    {kConf, "", "PriorityWeightPartition", "scheduler", "1000", "multifactor priority weight"},
    {kConf, "", "PriorityWeightQOS", "scheduler", "1000", "multifactor priority weight"},
    {kConf, "", "PriorityWeightTimeLimit", "scheduler", "1000", "priority weight of short time limits"},
    {kConf, "", "PriorityMaxAge", "scheduler", "7-0", "age at which the age factor is full"},
    {kConf, "", "PriorityFavorSmall", "scheduler", "yes", "small jobs get the larger job-size factor"},
    {kConf, "", "PriorityTimeLimitMax", "scheduler", "7-0", "time limit at which the time-limit factor is 0 (at least 2 min)"},
    {kConf, "", "PriorityDecayHalfLife", "scheduler", "7-0", "fair-share usage half-life"},
    {kConf, "", "PriorityUsageResetPeriod", "scheduler", "NONE", "NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY"},
    {kConf, "", "PriorityFlags", "scheduler", "MAX_TRES", "NO_FAIR_TREE, MAX_TRES, MAX_TRES_GRES"},
    {kConf, "", "PriorityCalcPeriod", "scheduler", "5", "accepted (usage is charged every cycle)"},
    {kConf, "", "PreemptType", "scheduler", "preempt/qos", "preempt/none, preempt/qos or preempt/partition_prio"},
    {kConf, "", "PreemptMode", "scheduler", "REQUEUE", "OFF, CANCEL, REQUEUE or SUSPEND (default for QoS and partitions)"},
    {kConf, "", "PreemptExemptTime", "scheduler", "10:00", "run time before a job can be preempted"},
    // --- NodeName lines ---
    {kConf, "NodeName", "NodeName", "ctld, noded", "n[1-4]", "node names (hostlist); `DEFAULT` sets defaults"},
    {kConf, "NodeName", "NodeAddr", "ctld, noded", "10.0.0.[11-14]", "address per node (default the name)"},
    {kConf, "NodeName", "NodeHostname", "ctld", "n1", "accepted (not used)"},
    {kConf, "NodeName", "Port", "ctld, noded", "6818", "noded's port, or a range with one port per node (default 6818)"},
    {kConf, "NodeName", "CPUs|Procs", "ctld", "8", "CPUs (cores) offered"},
    {kConf, "NodeName", "RealMemory", "ctld", "64000", "memory offered, MiB"},
    {kConf, "NodeName", "Feature|Features", "ctld", "ib,avx512", "features for --constraint"},
    {kConf, "NodeName", "Gres", "ctld", "gpu:a100:4", "GPUs: gpu[:type]:count, comma-separated"},
    {kConf, "NodeName", "Weight", "ctld", "1", "lower weights are allocated first"},
    {kConf, "NodeName", "State", "ctld", "IDLE", "initial state: UNKNOWN, IDLE, DRAIN, DOWN, FUTURE"},
    {kConf, "NodeName", "Reason", "ctld", "maintenance", "reason of an initial DRAIN/DOWN"},
    {kConf, "NodeName", "MetricsPort", "noded", "9102", "port (or a range, one per node) of noded's Prometheus endpoint (none by default)"},
    {kConf, "NodeName", "MigStrategy", "ctld", "dynamic", "dynamic lets the scheduler re-lay MIG GPUs; static (default)"},
    {kConf, "NodeName", "Sockets|CoresPerSocket|ThreadsPerCore|Boards|TmpDisk|SocketsPerBoard|CoreSpecCount|MemSpecLimit",
     kIgnored, "2", "accepted with a warning (CPUs= counts cores)"},
    // --- PartitionName lines ---
    {kConf, "PartitionName", "PartitionName", "ctld", "batch", "partition name; `DEFAULT` sets defaults"},
    {kConf, "PartitionName", "Nodes", "ctld", "n[1-4]", "its nodes (hostlist or ALL)"},
    {kConf, "PartitionName", "Default", "ctld", "YES", "the partition of jobs without -p"},
    {kConf, "PartitionName", "MaxTime", "ctld", "1-0", "longest time limit"},
    {kConf, "PartitionName", "DefaultTime", "ctld", "1:00:00", "time limit of jobs without -t (default MaxTime)"},
    {kConf, "PartitionName", "MaxNodes", "ctld", "4", "most nodes per job (UNLIMITED)"},
    {kConf, "PartitionName", "State", "ctld", "UP", "UP, DOWN, DRAIN or INACTIVE"},
    {kConf, "PartitionName", "PriorityTier", "ctld", "1", "higher tiers are scheduled first"},
    {kConf, "PartitionName", "MigStrategy", "ctld", "static", "as NodeName's, for every node of the partition"},
    {kConf, "PartitionName", "TopologyMode", "ctld", "preferred", "required or preferred (default)"},
    {kConf, "PartitionName", "GpuFailurePolicy", "ctld", "requeue", "requeue (default), fail or ignore a job whose GPU fails"},
    {kConf, "PartitionName", "PreemptMode", "scheduler", "REQUEUE", "partition preemption mode"},
    {kConf, "PartitionName", "GraceTime", "scheduler", "60", "seconds between preemption's SIGTERM and the kill"},
    {kConf, "PartitionName", "TRESBillingWeights", "scheduler", "CPU=1.0,Mem=0.25G,GRES/gpu=2.0", "fair-share billing"},
    // --- QOSName lines ---
    {kConf, "QOSName", "QOSName", "scheduler", "normal", "QoS name"},
    {kConf, "QOSName", "Default", "scheduler", "yes", "the QoS of jobs without --qos (else the one named normal)"},
    {kConf, "QOSName", "Priority", "scheduler", "100", "QoS priority"},
    {kConf, "QOSName", "MaxWall|MaxWallDurationPerJob", "scheduler", "1-0", "longest time limit"},
    {kConf, "QOSName", "MaxJobsPerUser|MaxJobsPU", "scheduler", "10", "running jobs per user"},
    {kConf, "QOSName", "MaxSubmitJobsPerUser|MaxSubmitJobsPU", "scheduler", "100", "pending+running jobs per user"},
    {kConf, "QOSName", "GrpJobs", "scheduler", "50", "running jobs in the QoS"},
    {kConf, "QOSName", "GrpTRES", "scheduler", "cpu=64,gres/gpu=8", "resources of the QoS's running jobs"},
    {kConf, "QOSName", "MaxTRESPerUser|MaxTRESPU", "scheduler", "cpu=16", "resources per user"},
    {kConf, "QOSName", "TopologyMode", "scheduler", "required", "required or preferred"},
    {kConf, "QOSName", "Preempt", "scheduler", "low", "QoS this one may preempt"},
    {kConf, "QOSName", "PreemptMode", "scheduler", "REQUEUE", "how its jobs are preempted"},
    {kConf, "QOSName", "GraceTime", "scheduler", "60", "seconds between SIGTERM and the kill"},
    {kConf, "QOSName", "PreemptExemptTime", "scheduler", "10:00", "run time before its jobs can be preempted"},
    // --- AccountName and UserName lines (issue 16) ---
    {kConf, "AccountName", "AccountName", "scheduler", "physics", "account name"},
    {kConf, "AccountName", "Parent|ParentName", "scheduler", "science", "parent account (default root)"},
    {kConf, "AccountName", "Fairshare|Share|Shares", "scheduler", "10", "raw shares"},
    {kConf, "AccountName", "Description|Descr", "scheduler", "Physics", "description"},
    {kConf, "AccountName", "Organization|Org", "scheduler", "science", "organization"},
    {kConf, "AccountName", "DefaultQOS|DefQOS", "scheduler", "normal", "QoS of its jobs without --qos"},
    {kConf, "AccountName", "QOS|QOSLevel", "scheduler", "normal", "QoS its jobs may use"},
    {kConf, "AccountName", "GrpTRES", "scheduler", "cpu=64", "resources of its running jobs"},
    {kConf, "AccountName", "GrpJobs", "scheduler", "20", "its running jobs"},
    {kConf, "AccountName", "GrpSubmitJobs|GrpSubmit", "scheduler", "100", "its pending+running jobs"},
    {kConf, "AccountName", "MaxJobs", "scheduler", "5", "running jobs per user"},
    {kConf, "AccountName", "MaxSubmitJobs|MaxSubmit", "scheduler", "50", "pending+running jobs per user"},
    {kConf, "AccountName", "MaxTRES|MaxTRESPerJob|MaxTRESPJ", "scheduler", "cpu=16", "resources per job"},
    {kConf, "AccountName", "MaxWall|MaxWallDurationPerJob", "scheduler", "1-0", "longest time limit"},
    {kConf, "AccountName", "Guarantee", "scheduler", "cpu=8", "queue guarantee"},
    {kConf, "AccountName", "Limit", "scheduler", "cpu=32", "queue limit"},
    {kConf, "AccountName", "Weight", "scheduler", "1", "queue weight"},
    {kConf, "AccountName", "Reclaimable", "scheduler", "yes", "whether lent capacity is taken back"},
    {kConf, "UserName", "UserName", "scheduler", "alice", "user name"},
    {kConf, "UserName", "Accounts|Account", "scheduler", "physics", "the user's accounts"},
    {kConf, "UserName", "DefaultAccount", "scheduler", "physics", "account of jobs without -A"},
    {kConf, "UserName", "DefaultQOS|DefQOS", "scheduler", "normal", "QoS of the user's jobs without --qos"},
    {kConf, "UserName", "Fairshare|Share|Shares", "scheduler", "1", "raw shares within the account"},
    // --- gres.conf ---
    {kGres, "Name", "Name", "ctld, noded", "gpu", "gpu, mps or shard"},
    {kGres, "Name", "NodeName", "ctld, noded", "n[1-2]", "nodes the line describes"},
    {kGres, "Name", "Type", "ctld, noded", "a100", "GPU model (MIG tables are chosen by it)"},
    {kGres, "Name", "Count", "ctld, noded", "4", "GPUs (1..64), or the mps/shard count"},
    {kGres, "Name", "MemoryMiB", "ctld, noded", "40960", "GPU memory (simulated GPUs, --gpu-mem)"},
    {kGres, "Name", "Simulated", "ctld, noded", "yes", "noded simulates these GPUs"},
    {kGres, "Name", "File", "ctld, noded", "/dev/nvidia[0-3]", "device files"},
    {kGres, "Name", "Mps", "ctld, noded", "yes", "each GPU offers 100 gres/mps"},
    {kGres, "Name", "Replicas", "ctld, noded", "4", "time-slice shards per GPU (0..64)"},
    {kGres, "Name", "MigEnabled", "noded", "yes", "the GPUs are in MIG mode"},
    {kGres, "Name", "MigLayout", "noded", "3g.20gb,2g.10gb@4",
     "initial MIG instances, PROFILE[@START] (needs MigEnabled=yes; checked against the model's table)"},
    {kGres, "Name", "NumaNode", "noded", "0", "NUMA node of the GPUs"},
    {kGres, "Name", "Cores|Links", "none", "0-7", "accepted (not used)"},
    {kGres, "", "AutoDetect", "noded", "nvml", "nvml: discover real GPUs"},
    // --- topology.conf (issue 15) ---
    {kTopo, "SwitchName", "SwitchName", "ctld", "s1", "switch (topology/tree)"},
    {kTopo, "SwitchName", "Nodes", "ctld", "n[1-2]", "nodes of a leaf switch"},
    {kTopo, "SwitchName", "Switches", "ctld", "s[1-2]", "child switches"},
    {kTopo, "SwitchName", "LinkSpeed", "ctld", "100", "accepted (not used)"},
    {kTopo, "BlockName", "BlockName", "ctld", "b1", "block (topology/block)"},
    {kTopo, "BlockName", "Nodes", "ctld", "n[1-4]", "nodes of the block"},
    {kTopo, "", "BlockSizes", "ctld", "4,16", "the block sizes jobs are placed in"},
};

// Slurm keys accepted with a warning: one entry each, after the table above.
const char* const kIgnoredSlurm[] = {
    "AuthType", "AuthAltTypes", "CryptoType", "CredType", "MpiDefault", "ProctrackType",
    "ReturnToService", "SlurmctldPidFile", "SlurmdPidFile", "SwitchType", "TaskPlugin",
    "SchedulerType", "SelectType", "SelectTypeParameters", "AccountingStorageType",
    "JobAcctGatherType", "JobAcctGatherFrequency", "JobCompType", "SlurmctldDebug",
    "SlurmdDebug", "SlurmctldLogFile", "SlurmdLogFile", "InactiveLimit", "WaitTime",
    "GresTypes", "LaunchType", "MailProg", "MaxJobCount", "FirstJobId", "PriorityType",
    "SlurmctldTimeout", "MessageTimeout", "TmpFS", "Epilog", "Prolog", "TaskProlog",
    "TaskEpilog", "CgroupPlugin", "BackupController", "HealthCheckProgram",
    "HealthCheckInterval", "TopologyParam", "AccountingStorageHost", "AccountingStoragePort",
    "JobCompLoc", "SlurmdUsers", "DefMemPerCPU", "MaxMemPerCPU", "SlurmSchedLogFile",
    "SlurmdUser", "SrunPortRange", "PropagateResourceLimitsExcept", "UsePAM", "KillOnBadExit",
    "TreeWidth", "RebootProgram", "ResumeProgram", "SuspendProgram", "PluginDir",
};

std::vector<ConfigKey> WithIgnored() {
  std::vector<ConfigKey> all = kKeys;
  for (const char* k : kIgnoredSlurm) all.push_back({kConf, "", k, kIgnored, "x", kIgnoredWhy});
  return all;
}

bool SameKey(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

bool HasName(std::string_view names, std::string_view key) {
  size_t start = 0;
  while (start <= names.size()) {
    size_t bar = names.find('|', start);
    if (bar == std::string_view::npos) bar = names.size();
    if (SameKey(names.substr(start, bar - start), key)) return true;
    start = bar + 1;
  }
  return false;
}

}  // namespace

const std::vector<ConfigKey>& ConfigKeys() {
  static const std::vector<ConfigKey> all = WithIgnored();
  return all;
}

const ConfigKey* FindConfigKey(std::string_view file, std::string_view line, std::string_view key) {
  for (const auto& k : ConfigKeys())
    if (file == k.file && SameKey(line, k.line) && HasName(k.names, key)) return &k;
  return nullptr;
}

std::string ConfigKeysMarkdown() {
  std::string out =
      "| file | line | key | read by | example | meaning |\n"
      "|---|---|---|---|---|---|\n";
  auto cell = [](std::string s) {
    std::string r;
    for (char c : s) {
      if (c == '|') r += "\\|";
      else r += c;
    }
    return r;
  };
  for (const auto& k : ConfigKeys()) {
    std::string names = k.names;
    std::string shown;
    for (size_t i = 0; i < names.size(); ++i) shown += names[i] == '|' ? std::string(", ") : std::string(1, names[i]);
    out += "| " + std::string(k.file) + " | " + (*k.line ? std::string(k.line) : "global") + " | `" +
           shown + "` | " + k.readers + " | `" + cell(k.example) + "` | " + cell(k.meaning) + " |\n";
  }
  return out;
}

}  // namespace tessera
