// Golden outputs of tqueue, tinfo, tcontrol show and tacct from hand-made protos.
#include <catch2/catch.hpp>

#include "cli/lib/acct_format.h"
#include "cli/lib/info_custom.h"
#include "cli/lib/info_format.h"
#include "cli/lib/queue_format.h"
#include "cli/lib/show_format.h"
#include "fake_controller.h"

namespace tessera::cli {
namespace {

using testing::kNow;

pb::JobInfo RunningJob() {
  pb::JobInfo j;
  j.set_job_id(42);
  j.set_uid(1001);
  j.set_gid(1001);
  j.set_user("alice");
  j.set_state(pb::RUNNING);
  j.set_reason("None");
  j.set_priority(1000);
  j.set_submit_time(kNow - 4000);
  j.set_start_time(kNow - 3725);
  j.set_partition("gpu");
  j.set_time_limit_s(7200);
  j.set_nodelist("n[1-2]");
  j.set_account("research");
  j.set_num_tasks(2);
  j.set_num_cpus(8);
  j.set_stdout_path("/home/alice/slurm-42.out");
  for (const char* n : {"n1", "n2"}) {
    auto* a = j.add_alloc();
    a->set_node(n);
    a->set_cpus(4);
    a->set_mem_mib(8192);
    a->add_gpu_indices(0);
  }
  auto* spec = j.mutable_spec();
  spec->set_name("train");
  spec->set_workdir("/home/alice");
  spec->add_argv("/home/alice/train.sh");
  spec->set_qos("normal");
  spec->set_requeue(true);
  auto* g = spec->add_task_groups();
  g->set_name("main");
  g->set_count(2);
  g->set_tasks_per_node(1);
  g->mutable_per_task()->set_cpus(4);
  g->mutable_per_node()->set_mem_mib(8192);
  g->mutable_per_node()->set_gpus(1);
  g->mutable_per_node()->set_gpu_model("a100");
  return j;
}

pb::JobInfo PendingJob() {
  pb::JobInfo j;
  j.set_job_id(43);
  j.set_uid(1002);
  j.set_gid(100);
  j.set_state(pb::PENDING);
  j.set_reason("Resources");
  j.set_priority(500);
  j.set_submit_time(kNow - 60);
  j.set_partition("gpu");
  j.set_time_limit_s(-1);
  auto* spec = j.mutable_spec();
  spec->set_name("averyverylongname");
  spec->set_nodes_min(4);
  auto* g = spec->add_task_groups();
  g->set_count(4);
  g->mutable_per_task()->set_cpus(2);
  return j;
}

TEST_CASE("tqueue default format (squeue's exactly)") {
  FakeIdNames names;
  names.AddUser(1002, "bob");
  std::vector<pb::JobInfo> jobs = {RunningJob(), PendingJob()};
  SortQueue(jobs);
  auto fmt = ParseQueueFormat(kDefaultQueueFormat);
  REQUIRE(fmt.ok());
  CHECK(FormatQueue(jobs, *fmt, true, names, kNow) ==
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
        "                43       gpu averyver      bob PD       0:00      4 (Resources)\n"
        "                42       gpu    train    alice  R    1:02:05      2 n[1-2]\n");
  CHECK(FormatQueue(jobs, *fmt, false, names, kNow).find("JOBID") == std::string::npos);
}

TEST_CASE("tqueue -o formats, widths and literals") {
  FakeIdNames names;
  std::vector<pb::JobInfo> jobs = {RunningJob(), PendingJob()};
  auto fmt = ParseQueueFormat("id=%i|%-5j|%10T|%.4C|%l|%b|%a|%%|%P");
  REQUIRE_FALSE(fmt.ok());  // '-' is not part of squeue's syntax
  fmt = ParseQueueFormat("id=%i|%5j|%10T|%.4C|%l|%b|%a|%%|%u");
  REQUIRE(fmt.ok());
  CHECK(FormatQueue(jobs, *fmt, true, names, kNow) ==
        "id=JOBID|NAME |STATE     |CPUS|TIME_LIMIT|TRES_PER_NODE|ACCOUNT|%|USER\n"
        "id=42|train|RUNNING   |   8|2:00:00|gres/gpu:a100:1|research|%|alice\n"
        "id=43|avery|PENDING   |   8|UNLIMITED|N/A|(null)|%|1002\n");
  auto more = ParseQueueFormat("%A %r %N %D %Q %Z %o %S %V %e %q %M");
  REQUIRE(more.ok());
  testing::UseUtc();
  CHECK(FormatQueue({RunningJob()}, *more, false, names, kNow) ==
        "42 None n[1-2] 2 1000 /home/alice /home/alice/train.sh 2023-11-14T21:11:15 "
        "2023-11-14T21:06:40 2023-11-14T23:11:15 normal 1:02:05\n");
  auto bad = ParseQueueFormat("%i %w");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "invalid format specification \"%w\" in \"%i %w\"");
}

TEST_CASE("tqueue --json") {
  FakeIdNames names;
  std::string json = FormatQueueJson({RunningJob()}, names, kNow);
  CHECK(json.rfind("{\"jobs\":[{\"job_id\":42,", 0) == 0);
  CHECK(json.find("\"job_state\":\"RUNNING\"") != std::string::npos);
  CHECK(json.find("\"nodes\":\"n[1-2]\"") != std::string::npos);
  CHECK(FormatQueueJson({}, names, kNow) == "{\"jobs\":[]}\n");
}

std::vector<pb::PartitionInfo> Partitions() {
  std::vector<pb::PartitionInfo> v(2);
  v[0].set_name("debug");
  v[0].set_is_default(true);
  v[0].set_up(true);
  v[0].set_max_time_s(-1);
  v[0].set_nodes("n[1-4]");
  v[0].set_total_nodes(4);
  v[0].set_total_cpus(32);
  v[0].set_priority_tier(1);
  v[1].set_name("gpu");
  v[1].set_up(true);
  v[1].set_max_time_s(86400);
  v[1].set_nodes("g[1-2]");
  return v;
}

std::vector<pb::NodeInfo> Nodes() {
  std::vector<pb::NodeInfo> v;
  auto add = [&](const char* name, pb::NodeState s, const char* part, const char* reason) {
    pb::NodeInfo n;
    n.set_name(name);
    n.set_state(s);
    n.add_partitions(part);
    n.set_reason(reason);
    v.push_back(n);
  };
  add("n2", pb::NODE_IDLE, "debug", "");
  add("n1", pb::NODE_IDLE, "debug", "");
  add("n3", pb::NODE_ALLOCATED, "debug", "");
  add("n4", pb::NODE_DRAINED, "debug", "disk errors");
  add("g1", pb::NODE_MIXED, "gpu", "");
  add("g2", pb::NODE_DOWN, "gpu", "Not responding");
  return v;
}

TEST_CASE("tinfo default view (sinfo's exactly)") {
  CHECK(FormatInfo(Partitions(), Nodes(), {}) ==
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
        "debug*       up   infinite      1  alloc n3\n"
        "debug*       up   infinite      2   idle n[1-2]\n"
        "debug*       up   infinite      1  drain n4\n"
        "gpu          up 1-00:00:00      1    mix g1\n"
        "gpu          up 1-00:00:00      1   down g2\n");
  InfoOptions only_gpu;
  only_gpu.partitions = {"gpu"};
  only_gpu.header = false;
  CHECK(FormatInfo(Partitions(), Nodes(), only_gpu) ==
        "gpu          up 1-00:00:00      1    mix g1\n"
        "gpu          up 1-00:00:00      1   down g2\n");
}

TEST_CASE("tinfo -N and -R") {
  InfoOptions n;
  n.node_oriented = true;
  CHECK(FormatInfo(Partitions(), Nodes(), n) ==
        "NODELIST   NODES PARTITION STATE \n"
        "g1             1 gpu       mix   \n"
        "g2             1 gpu       down  \n"
        "n1             1 debug*    idle  \n"
        "n2             1 debug*    idle  \n"
        "n3             1 debug*    alloc \n"
        "n4             1 debug*    drain \n");
  InfoOptions r;
  r.list_reasons = true;
  CHECK(FormatInfo(Partitions(), Nodes(), r) ==
        "REASON               USER      TIMESTAMP           NODELIST\n"
        "disk errors          Unknown   Unknown             n4\n"
        "Not responding       Unknown   Unknown             g2\n");
}

TEST_CASE("tcontrol show job (scontrol layout)") {
  testing::UseUtc();
  FakeIdNames names;
  names.AddGroup(1001, "alice");
  CHECK(FormatJobDetail(RunningJob(), names, kNow) ==
        "JobId=42 JobName=train\n"  // Slurm 22.05's keys and order (issue 19)
        "   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A\n"
        "   Priority=1000 Nice=0 Account=research QOS=normal\n"
        "   JobState=RUNNING Reason=None Dependency=(null)\n"
        "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
        "   RunTime=01:02:05 TimeLimit=02:00:00 TimeMin=N/A\n"
        "   SubmitTime=2023-11-14T21:06:40 EligibleTime=2023-11-14T21:06:40\n"
        "   AccrueTime=2023-11-14T21:06:40\n"
        "   StartTime=2023-11-14T21:11:15 EndTime=2023-11-14T23:11:15 Deadline=N/A\n"
        "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2023-11-14T21:11:15 Scheduler=Main\n"
        "   Partition=gpu AllocNode:Sid=(null):0\n"
        "   ReqNodeList=(null) ExcNodeList=(null)\n"
        "   NodeList=n[1-2]\n"
        "   BatchHost=n1\n"
        "   NumNodes=2 NumCPUs=8 NumTasks=2 CPUs/Task=4 ReqB:S:C:T=0:0:*:*\n"
        "   TRES=cpu=8,mem=16G,node=2,billing=8,gres/gpu=2\n"
        "   Socks/Node=* NtasksPerN:B:S:C=1:0:*:* CoreSpec=*\n"
        "   MinCPUsNode=4 MinMemoryNode=8G MinTmpDiskNode=0\n"
        "   Features=(null) DelayBoot=00:00:00\n"
        "   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n"
        "   Command=/home/alice/train.sh\n"
        "   WorkDir=/home/alice\n"
        "   StdErr=/home/alice/slurm-42.out\n"
        "   StdIn=/dev/null\n"
        "   StdOut=/home/alice/slurm-42.out\n"
        "   Power=\n"
        "   TresPerNode=gres/gpu:a100:1\n"
        "\n");
  std::string pending = FormatJobDetail(PendingJob(), names, kNow);
  CHECK(pending.find("   UserId=1002(1002) GroupId=100(100) MCS_label=N/A\n") != std::string::npos);
  CHECK(pending.find("   JobState=PENDING Reason=Resources") != std::string::npos);
  CHECK(pending.find("StartTime=Unknown EndTime=Unknown") != std::string::npos);
  CHECK(pending.find("TimeLimit=UNLIMITED") != std::string::npos);
  CHECK(pending.find("   NodeList=(null)\n") != std::string::npos);
  CHECK(pending.find("   StdOut=slurm-43.out\n") != std::string::npos);
}

TEST_CASE("tcontrol show node and partition") {
  testing::UseUtc();
  pb::NodeInfo n;
  n.set_name("g1");
  n.set_address("10.0.0.7");
  n.set_port(6818);
  n.set_state(pb::NODE_DRAINING);
  n.set_reason("xid 79");
  n.add_features("a100");
  n.add_features("ib");
  n.add_partitions("gpu");
  n.set_cpus(64);
  n.set_real_memory_mib(512000);
  n.set_alloc_cpus(16);
  n.set_alloc_memory_mib(65536);
  n.set_version("0.1.0");
  n.set_boot_time(kNow - 86400);
  n.set_last_heartbeat(kNow - 5);
  for (uint32_t i = 0; i < 2; ++i) {
    auto* g = n.add_gpus();
    g->set_index(i);
    g->set_model("a100");
    g->set_healthy(i == 0);
    if (i == 1) g->set_health_reason("xid 79");
  }
  n.add_alloc_gpu_indices(0);
  CHECK(FormatNodeDetail(n) ==
        "NodeName=g1 CoresPerSocket=1 \n"  // Slurm 22.05's keys and order (issue 19)
        "   CPUAlloc=16 CPUEfctv=64 CPUTot=64 CPULoad=N/A\n"
        "   AvailableFeatures=a100,ib\n"
        "   ActiveFeatures=a100,ib\n"
        "   Gres=gpu:a100:2\n"
        "   GresUsed=gpu:a100:1\n"
        "   NodeAddr=10.0.0.7 NodeHostName=g1 Version=0.1.0\n"
        "   RealMemory=512000 AllocMem=65536 FreeMem=N/A Sockets=64 Boards=1\n"
        "   State=MIXED+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
        "   Partitions=gpu \n"
        "   BootTime=2023-11-13T22:13:20 SlurmdStartTime=None\n"
        "   LastBusyTime=Unknown\n"
        "   CfgTRES=cpu=64,mem=500G,billing=64,gres/gpu=2\n"
        "   AllocTRES=cpu=16,mem=64G,gres/gpu=1\n"
        "   CapWatts=n/a\n"
        "   CurrentWatts=n/s AveWatts=n/s\n"
        "   ExtSensorsJoules=n/s ExtSensorsWatts=n/s ExtSensorsTemp=n/s\n"
        "   LastHeartbeat=2023-11-14T22:13:15\n"
        "   GPUs=0:a100,1:a100(DRAIN:xid 79)\n"
        "   Reason=xid 79\n"
        "\n");
  CHECK(FormatPartitionDetail(Partitions()[0]) ==
        "PartitionName=debug\n"  // Slurm 22.05's keys and order (issue 19)
        "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
        "   AllocNodes=ALL Default=YES QoS=N/A\n"
        "   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
        "   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n"
        "   Nodes=n[1-4]\n"
        "   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
        "   OverTimeLimit=NONE PreemptMode=OFF\n"
        "   State=UP TotalCPUs=32 TotalNodes=4 SelectTypeParameters=NONE\n"
        "   JobDefaults=(null)\n"
        "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
        "   TRES=cpu=32,node=4,billing=32\n"
        "\n");
}

pb::JobInfo FinishedJob() {
  pb::JobInfo j = RunningJob();
  j.set_state(pb::COMPLETED);
  j.set_end_time(kNow - 100);
  return j;
}

pb::JobInfo FailedJob() {
  pb::JobInfo j = PendingJob();
  j.set_job_id(44);
  j.set_state(pb::FAILED);
  j.set_start_time(kNow - 50);
  j.set_end_time(kNow - 20);
  j.set_exit_code(1);
  j.set_num_cpus(8);
  j.set_nodelist("n4");
  return j;
}

TEST_CASE("tacct default view (sacct's exactly)") {
  FakeIdNames names;
  auto cols = ParseAcctFields(kDefaultAcctFields);
  REQUIRE(cols.ok());
  CHECK(FormatAcct({FinishedJob(), FailedJob()}, *cols, AcctLayout::kColumns, true, names, kNow) ==
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
        "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
        "42                train        gpu   research          8  COMPLETED      0:0 \n"
        "44           averyvery+        gpu                     8     FAILED      1:0 \n");
}

TEST_CASE("tacct -P, -p and -o with widths") {
  testing::UseUtc();
  FakeIdNames names;
  auto cols = ParseAcctFields(kDefaultAcctFields);
  CHECK(FormatAcct({FinishedJob()}, *cols, AcctLayout::kParsable2, true, names, kNow) ==
        "JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode\n"
        "42|train|gpu|research|8|COMPLETED|0:0\n");
  CHECK(FormatAcct({FinishedJob()}, *cols, AcctLayout::kParsable, false, names, kNow) ==
        "42|train|gpu|research|8|COMPLETED|0:0|\n");
  auto custom = ParseAcctFields("jobid%5,elapsed,START,nodelist%8,user,uid,timelimit,alloctres");
  REQUIRE(custom.ok());
  CHECK(FormatAcct({FinishedJob()}, *custom, AcctLayout::kParsable2, true, names, kNow) ==
        "JobID|Elapsed|Start|NodeList|User|UID|Timelimit|AllocTRES\n"
        "42|01:00:25|2023-11-14T21:11:15|n[1-2]|alice|1001|02:00:00|"
        "cpu=8,mem=16G,node=2,billing=8,gres/gpu=2\n");
  CHECK(FormatAcct({FinishedJob()}, *custom, AcctLayout::kColumns, false, names, kNow)
            .rfind("42      01:00:25 2023-11-14T21:11:15   n[1-2]     alice   1001   02:00:00 "
                   "cpu=8,mem+ \n",
                   0) == 0);
  auto bad = ParseAcctFields("JobID,Bogus");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().rfind("invalid field \"Bogus\" in --format", 0) == 0);
}

TEST_CASE("tinfo -o groups like sinfo and -l uses sinfo's long format") {
  auto nodes = Nodes();
  for (auto& n : nodes) {
    n.set_cpus(8);
    n.set_real_memory_mib(4096);
  }
  nodes[2].set_alloc_cpus(8);  // n3 allocated
  auto fmt = ParseInfoFormat("%.9P %.6D %C %t %N");
  REQUIRE(fmt.ok());
  CHECK(FormatInfoCustom(Partitions(), nodes, *fmt, false, true) ==
        "PARTITION  NODES CPUS(A/I/O/T) STATE NODELIST\n"
        "   debug*      2 0/16/0/16 idle n[1-2]\n"
        "   debug*      1 8/0/0/8 alloc n3\n"
        "   debug*      1 0/0/8/8 drain n4\n"
        "      gpu      1 0/8/0/8 mix g1\n"
        "      gpu      1 0/0/8/8 down g2\n");
  auto by_part = ParseInfoFormat("%R %D %c %m");
  REQUIRE(by_part.ok());
  CHECK(FormatInfoCustom(Partitions(), nodes, *by_part, false, false) == "debug 4 8 4096\ngpu 2 8 4096\n");
  auto long_fmt = ParseInfoFormat(kLongInfoFormat);
  REQUIRE(long_fmt.ok());
  std::string l = FormatInfoCustom(Partitions(), nodes, *long_fmt, false, true);
  CHECK(l.rfind("PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST\n", 0) == 0);
  CHECK(l.find("debug*       up   infinite 1-infinite   no       NO        all      2        idle n[1-2]\n") != std::string::npos);
  auto bad = ParseInfoFormat("%P %y");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("invalid format code \"%y\"") != std::string::npos);
}

}  // namespace
}  // namespace tessera::cli
