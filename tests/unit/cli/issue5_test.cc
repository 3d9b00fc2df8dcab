// Issue #5 features: the full sbatch option set, --wait, --export-file, --uid; squeue -O, -S,
// --start, -r, -i, array ids; sacct fields and --json; scancel array elements, --batch, -i;
// and one bad input per command with its exact error message.
#include <catch2/catch.hpp>

#include "cli/lib/acct_format.h"
#include "common/env_block.h"
#include "cli/lib/batch_request.h"
#include "cli/lib/queue_format.h"
#include "fake_controller.h"

namespace tessera::cli {
namespace {

using testing::CommandRun;
using testing::kNow;
using testing::UseUtc;

pb::JobSpec Submitted(CommandRun& r) { return r.ctld.SubmitJob_calls.at(0).spec(); }

TEST_CASE("tbatch: the newer sbatch options reach the JobSpec") {
  CommandRun r;
  r.files["job.sh"] =
      "#!/bin/bash\n"
      "#SBATCH --array=0-15%4 --time-min=30 --deadline=now+2hours\n"
      "#SBATCH --signal=B:USR1@90 --open-mode=append --reservation=maint\n"
      "#SBATCH --switches=2@10:00 -i in.txt --no-kill\n"
      "#SBATCH -N2 --gpus-per-node=a100:4 --cpus-per-gpu=8 --mem-per-gpu=40G\n"
      "#TESSERA --gpu-mem=80G\n"
      "srun hostname\n";
  REQUIRE(r.Run(RunTbatch, {"--priority=5", "job.sh"}) == 0);
  pb::JobSpec s = Submitted(r);
  CHECK(s.array() == "0-15%4");
  CHECK(s.time_min_s() == 1800);
  CHECK(s.deadline() == kNow + 7200);
  CHECK(s.signal_number() == 10);
  CHECK(s.signal_time_s() == 90);
  CHECK(s.signal_batch_only());
  CHECK(s.open_mode() == "append");
  CHECK(s.reservation() == "maint");
  CHECK(s.switches() == 2);
  CHECK(s.switches_wait_s() == 600);
  CHECK(s.stdin_pattern() == "in.txt");
  CHECK(s.no_kill());
  CHECK(s.priority() == 5);
  CHECK(s.gpu_min_mem_mib() == 80 * 1024);
  CHECK(s.cpus_per_gpu() == 8);
  CHECK(s.mem_per_gpu_mib() == 40 * 1024);
  const auto& g = s.task_groups(0);
  CHECK(g.per_node().gpus() == 4);
  CHECK(g.per_node().cpus() == 32);
  CHECK(g.per_node().mem_mib() == 160 * 1024);
}

TEST_CASE("tbatch: gpus-per-task, ntasks-per-gpu and task groups") {
  CommandRun r;
  REQUIRE(r.Run(RunTbatch, {"--wrap=x", "-n4", "--gpus-per-task=1", "--cpus-per-gpu=6"}) == 0);
  auto g = Submitted(r).task_groups(0);
  CHECK(g.count() == 4);
  CHECK(g.per_task().gpus() == 1);
  CHECK(g.per_task().cpus() == 6);

  CommandRun t;
  t.files["tg.sh"] =
      "#!/bin/sh\n#TESSERA --task-group=launcher:1:cpus=2\n"
      "#TESSERA --task-group=worker:8:cpus=4,gpus=1,gpu-model=h100,mem=16G\n#SBATCH -N2\nrun\n";
  REQUIRE(t.Run(RunTbatch, {"tg.sh"}) == 0);
  auto s = Submitted(t);
  REQUIRE(s.task_groups_size() == 2);
  CHECK(s.task_groups(0).name() == "launcher");
  CHECK(s.task_groups(1).count() == 8);
  CHECK(s.task_groups(1).per_task().gpus() == 1);
  CHECK(s.task_groups(1).per_task().gpu_model() == "h100");
  CHECK(s.task_groups(1).per_task().mem_mib() == 16 * 1024);
}

TEST_CASE("tbatch: accepted-but-ignored options warn once each") {
  CommandRun r;
  r.files["m.sh"] =
      "#!/bin/sh\n#SBATCH --mail-type=begin\n#SBATCH --mail-type=end\n#SBATCH --hint=nomultithread\n"
      "#SBATCH --wckey=x\nrun\n";
  REQUIRE(r.Run(RunTbatch, {"m.sh"}) == 0);
  CHECK(r.err ==
        "tcmd: warning: --mail-type is accepted but ignored: Tessera does not send mail\n"
        "tcmd: warning: --hint is accepted but ignored: Tessera does not implement it\n"
        "tcmd: warning: --wckey is accepted but ignored: Tessera has no wckey\n");
}

TEST_CASE("tbatch --export-file, --uid and --wait") {
  CommandRun r;
  r.files["/home/alice/work/vars"] = std::string("A=1\nB=two words\0C=3", 19);
  int rc = r.Run(RunTbatch, {"--export=NONE", "--export-file=vars", "--wrap=x"});
  INFO(r.err);
  REQUIRE(rc == 0);
  auto env = EnvBlockToMap(Submitted(r).env_block());
  CHECK(env.at("A") == "1");
  CHECK(env.at("B") == "two words");
  CHECK(env.at("C") == "3");

  CommandRun u;
  CHECK(u.Run(RunTbatch, {"--uid=bob", "--wrap=x"}) == 1);
  CHECK(u.err == "tcmd: error: --uid is only permitted for root\n");
  CHECK(u.ctld.SubmitJob_calls.empty());
  CommandRun root;
  root.uid = 0;
  REQUIRE(root.Run(RunTbatch, {"--uid=bob", "--wrap=x"}) == 0);
  CHECK(Submitted(root).uid() == 1002);

  CommandRun w;
  pb::SubmitJobResponse resp;
  resp.set_job_id(77);
  w.ctld.SubmitJob_result = resp;
  pb::JobInfo done;
  done.set_job_id(77);
  done.set_state(pb::FAILED);
  done.set_exit_code(3);
  w.ctld.GetJob_result = done;
  CHECK(w.Run(RunTbatch, {"--wait", "--parsable", "--wrap=false"}) == 3);
  CHECK(w.out == "77\n");
  CHECK(w.ctld.GetJob_calls.at(0).job_id() == 77);
}

TEST_CASE("tbatch: bad values name the option and the line; nothing is submitted") {
  struct Case {
    std::vector<std::string> args;
    std::string script, error;
  };
  const std::vector<Case> cases = {
      {{"--array=5-1", "--wrap=x"}, "",
       "invalid --array value \"5-1\" (descending range \"5-1\") (see tbatch --help)"},
      {{"--signal=FOO@10", "--wrap=x"}, "", "invalid --signal value \"FOO@10\" (invalid signal \"FOO\") (see tbatch --help)"},
      {{"--open-mode=overwrite", "--wrap=x"}, "",
       "invalid --open-mode value \"overwrite\" (expected append or truncate) (see tbatch --help)"},
      {{"--mem-per-gpu=4G", "--wrap=x"}, "",
       "--mem-per-gpu needs a GPU request (--gpus, --gpus-per-node, --gpus-per-task or --gres=gpu)"},
      {{"--bogus", "--wrap=x"}, "", "unrecognized option '--bogus' (see tbatch --help)"},
      {{"s.sh"}, "#!/bin/sh\n#SBATCH --gpu-mem=80G\nx\n",
       "script line 2: --gpu-mem is a Tessera option: use a #TESSERA line, not #SBATCH"},
      {{"s.sh"}, "#!/bin/sh\n#TESSERA --task-group=w:0\nx\n",
       "script line 2: invalid --task-group value \"w:0\" (bad task count in \"w:0\")"},
      {{"-n2", "s.sh"}, "#!/bin/sh\n#TESSERA --task-group=w:2\nx\n",
       "--ntasks cannot be combined with --task-group (give per-task resources in each group)"},
      {{"s.sh"}, "#!/bin/sh\n#SBATCH --wait\nx\n", "script line 2: --wait is only valid on the command line"},
      {{"--switches=0", "--wrap=x"}, "", "invalid --switches value \"0\" (expected COUNT[@MAX-TIME]) (see tbatch --help)"},
  };
  for (const auto& c : cases) {
    CommandRun r;
    if (!c.script.empty()) r.files["s.sh"] = c.script;
    INFO(c.error);
    CHECK(r.Run(RunTbatch, c.args) == 1);
    CHECK(r.err == "tcmd: error: " + c.error + "\n");
    CHECK(r.ctld.SubmitJob_calls.empty());
  }
}

pb::JobInfo ArrayJob(uint64_t id, uint32_t task, const std::string& rest, pb::JobState st) {
  pb::JobInfo j;
  j.set_job_id(id);
  j.set_array_job_id(1230);
  j.set_array_task_id(task);
  j.set_array_task_str(rest);
  j.set_state(st);
  j.set_user("alice");
  j.set_uid(1001);
  j.set_partition("debug");
  j.set_reason(st == pb::PENDING ? "Priority" : "None");
  j.set_priority(10);
  j.set_submit_time(kNow - 100);
  j.mutable_spec()->set_name("arr");
  j.mutable_spec()->add_task_groups()->set_count(1);
  if (st == pb::RUNNING) {
    j.set_start_time(kNow - 50);
    j.set_nodelist("n1");
  }
  return j;
}

TEST_CASE("tqueue: arrays, -r, -O, -S and --start (golden)") {
  UseUtc();
  CommandRun r;
  pb::ListJobsResponse resp;
  *resp.add_jobs() = ArrayJob(1230, 0, "", pb::RUNNING);
  *resp.add_jobs() = ArrayJob(1230, 0, "1-3%2", pb::PENDING);
  r.ctld.ListJobs_result = resp;
  REQUIRE(r.Run(RunTqueue, {}) == 0);
  CHECK(r.out ==
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
        "      1230_[1-3%2]     debug      arr    alice PD       0:00      1 (Priority)\n"
        "            1230_0     debug      arr    alice  R       0:50      1 n1\n");
  REQUIRE(r.Run(RunTqueue, {"-r", "-h", "-o", "%i,%T,%F,%K"}) == 0);
  CHECK(r.out == "1230_1,PENDING,1230,1\n1230_2,PENDING,1230,2\n1230_3,PENDING,1230,3\n"
                 "1230_0,RUNNING,1230,0\n");
  REQUIRE(r.Run(RunTqueue, {"-h", "-r", "-S", "-i", "-o", "%i"}) == 0);
  CHECK(r.out == "1230_3\n1230_2\n1230_1\n1230_0\n");  // "-S -i": job id, descending
  REQUIRE(r.Run(RunTqueue, {"-O", "JobID:12,State:.9,NumTasks:6,UserName"}) == 0);
  CHECK(r.out ==
        "JOBID           STATETASKS USER                \n"  // no separator, as squeue -O
        "1230          PENDING1     alice               \n"  // JobID is the number (issue 19)
        "1230          RUNNING1     alice               \n");

  CommandRun s;
  pb::ListJobsResponse pending;
  pb::JobInfo p = ArrayJob(55, 0, "", pb::PENDING);
  p.set_array_job_id(0);
  p.set_expected_start_time(kNow + 600);
  *pending.add_jobs() = p;
  p.set_job_id(56);
  p.set_expected_start_time(0);
  *pending.add_jobs() = p;
  s.ctld.ListJobs_result = pending;
  REQUIRE(s.Run(RunTqueue, {"--start"}) == 0);
  CHECK(s.ctld.ListJobs_calls.at(0).states(0) == pb::PENDING);
  CHECK(s.out ==
        "             JOBID PARTITION     NAME     USER ST          START_TIME  NODES "
        "SCHEDNODES           NODELIST(REASON)\n"  // squeue's --start: SCHEDNODES, sorted by S
        "                56     debug      arr    alice PD                 N/A      1 "
        "(null)               (Priority)\n"
        "                55     debug      arr    alice PD 2023-11-14T22:23:20      1 "
        "(null)               (Priority)\n");
}

TEST_CASE("tqueue -i repeats until interrupted; bad input is named") {
  CommandRun r;
  r.sleeps_allowed = 2;
  REQUIRE(r.Run(RunTqueue, {"-i", "5", "-h"}) == 0);
  CHECK(r.ctld.ListJobs_calls.size() == 3);
  CHECK(r.slept == std::vector<int64_t>{5, 5, 5});

  CommandRun b;
  CHECK(b.Run(RunTqueue, {"-O", "JobID,Bogus"}) == 1);
  CHECK(b.err.rfind("tcmd: error: invalid field \"Bogus\" in --Format; valid fields: JobID", 0) == 0);
  CHECK(b.Run(RunTqueue, {"-S", "+Z9"}) == 1);
  CHECK(b.err.find("invalid sort key \"Z9\" in --sort") != std::string::npos);
  CHECK(b.Run(RunTqueue, {"-i", "0"}) == 1);
  CHECK(b.err == "tcmd: error: invalid --iterate value \"0\" (seconds, 1-86400)\n");
  CHECK(b.ctld.ListJobs_calls.empty());
}

TEST_CASE("tacct: more sacct fields, arrays, -A and --json") {
  UseUtc();
  CommandRun r;
  pb::QueryAccountingResponse resp;
  pb::JobInfo j = ArrayJob(1231, 4, "", pb::COMPLETED);
  j.set_account("physics");
  j.set_end_time(kNow - 10);
  j.set_start_time(kNow - 70);
  *resp.add_jobs() = j;
  pb::JobInfo other = j;
  other.set_job_id(1300);
  other.set_array_job_id(0);
  other.set_account("chem");
  *resp.add_jobs() = other;
  r.ctld.QueryAccounting_result = resp;
  REQUIRE(r.Run(RunTacct, {"-P", "-n", "-A", "physics", "-o",
                           "JobID,JobIDRaw,State,MaxRSS,NNodes,ElapsedRaw,Reason"}) == 0);
  CHECK(r.out == "1230_4|1231|COMPLETED||1|60|None\n"
                 "1230_4.batch|1231.batch|COMPLETED||1|60|None\n");  // issue 19: .batch
  REQUIRE(r.Run(RunTacct, {"--json", "-j", "1300"}) == 0);
  CHECK(r.out.find("\"job_id\":1300") != std::string::npos);
  CHECK(r.Run(RunTacct, {"-o", "JobID,Nope"}) == 1);
  CHECK(r.err.rfind("tcmd: error: invalid field \"Nope\" in --format; valid fields: Account", 0) == 0);
}

TEST_CASE("tcancel: array elements, --batch, -i") {
  CommandRun r;
  pb::ListJobsResponse jobs;
  *jobs.add_jobs() = ArrayJob(1235, 7, "", pb::RUNNING);
  r.ctld.ListJobs_result = jobs;
  REQUIRE(r.Run(RunTcancel, {"1230_7", "99", "--signal=USR1", "--batch"}) == 0);
  const auto& req = r.ctld.CancelJob_calls.at(0);
  CHECK(std::vector<uint64_t>(req.job_ids().begin(), req.job_ids().end()) ==
        std::vector<uint64_t>{99, 1235});
  CHECK(req.batch_only());
  CHECK(req.signal() == 10);

  CommandRun m;
  m.ctld.ListJobs_result = jobs;
  CHECK(m.Run(RunTcancel, {"1230_8"}) == 1);
  CHECK(m.err == "tcmd: error: Kill job error on job id 1230_8: Invalid job id specified\n");
  CHECK(m.ctld.CancelJob_calls.empty());

  CommandRun i;
  i.stdin_text = "y\nn\n";
  REQUIRE(i.Run(RunTcancel, {"-i", "5,6"}) == 0);
  CHECK(i.out == "Cancel job_id=5 name= partition= [y/n]? Cancel job_id=6 name= partition= [y/n]? ");
  REQUIRE(i.ctld.CancelJob_calls.size() == 1);
  CHECK(i.ctld.CancelJob_calls[0].job_ids_size() == 1);
  CHECK(i.ctld.CancelJob_calls[0].job_ids(0) == 5);

  CommandRun b;
  CHECK(b.Run(RunTcancel, {"--batch", "5"}) == 1);
  CHECK(b.err == "tcmd: error: --batch needs --signal (see tcancel --help)\n");
  CHECK(b.Run(RunTcancel, {"12_x"}) == 1);
  CHECK(b.err == "tcmd: error: Invalid job id 12_x\n");
}

}  // namespace
}  // namespace tessera::cli

namespace tessera::cli {
namespace {

pb::NodeInfo GpuNode(const std::string& name, pb::NodeState st, int gpus) {
  pb::NodeInfo n;
  n.set_name(name);
  n.set_state(st);
  for (int i = 0; i < gpus; ++i) {
    auto* g = n.add_gpus();
    g->set_index(i);
    g->set_healthy(true);
  }
  return n;
}

TEST_CASE("tinfo --gpus: the pool at a glance (golden)") {
  CommandRun r;
  pb::ListNodesResponse nodes;
  auto a = GpuNode("gpu2", pb::NODE_MIXED, 4);
  a.mutable_gpus(3)->set_healthy(false);
  a.mutable_gpus(3)->set_health_reason("Xid 79");
  *nodes.add_nodes() = a;
  *nodes.add_nodes() = GpuNode("gpu10", pb::NODE_DRAINED, 2);
  auto m = GpuNode("gpu1", pb::NODE_MIXED, 2);
  m.mutable_gpus(1)->set_mig_enabled(true);
  auto* i1 = m.mutable_gpus(1)->add_mig_instances();
  i1->set_profile("3g.40gb");
  i1->set_in_use_by_job(57);
  m.mutable_gpus(1)->add_mig_instances()->set_profile("4g.40gb");
  *nodes.add_nodes() = m;
  *nodes.add_nodes() = GpuNode("cpu1", pb::NODE_IDLE, 0);
  r.ctld.ListNodes_result = nodes;
  pb::ListJobsResponse jobs;
  pb::JobInfo j;
  j.set_job_id(42);
  auto* al = j.add_alloc();
  al->set_node("gpu2");
  al->add_gpu_indices(0);
  al->add_gpu_indices(1);
  *jobs.add_jobs() = j;
  j.set_job_id(43);
  j.mutable_alloc(0)->clear_gpu_indices();
  j.mutable_alloc(0)->add_gpu_indices(2);
  *jobs.add_jobs() = j;
  r.ctld.ListJobs_result = jobs;
  REQUIRE(r.Run(RunTinfo, {"--gpus"}) == 0);
  CHECK(r.out ==
        "Legend: . free  # allocated  X unhealthy  - not schedulable (drained/down node)  "
        "m MIG, idle  M MIG, in use\n"
        "NODE  STATE GPUS\n"
        "cpu1  idle  []  no GPUs reported\n"
        "gpu1  mix   [.M]  1:mig[3g.40gb@0:57,4g.40gb@0:-]\n"
        "gpu2  mix   [###X]  0-1:42 2:43 3:X(Xid 79)\n"
        "gpu10 drain [--]\n"
        "8 GPUs on 3 nodes: 4 allocated, 1 free, 1 unhealthy, 2 not schedulable; MIG: 1 GPUs, "
        "1 of 2 instances in use (free/total: 3g.40gb 0/1 4g.40gb 1/1); 1 nodes report no "
        "GPUs\n");
  CHECK(r.ctld.ListJobs_calls.at(0).states_size() == 3);

  CommandRun b;
  CHECK(b.Run(RunTinfo, {"-t", "sleepy"}) == 1);
  CHECK(b.err == "tcmd: error: invalid node state specified: sleepy\n");
  b.ctld.ListNodes_result = nodes;
  REQUIRE(b.Run(RunTinfo, {"--json", "-t", "drain"}) == 0);
  CHECK(b.out.find("\"name\":\"gpu10\"") != std::string::npos);
  CHECK(b.out.find("\"name\":\"gpu2\"") == std::string::npos);
}

TEST_CASE("tcontrol: suspend/resume, update Partition/NumNodes, show config, qos, sdiag") {
  CommandRun r;
  REQUIRE(r.Run(RunTcontrol, {"suspend", "12"}) == 0);
  REQUIRE(r.Run(RunTcontrol, {"resume", "12,13"}) == 0);
  REQUIRE(r.ctld.UpdateJob_calls.size() == 3);
  CHECK(r.ctld.UpdateJob_calls[0].action() == pb::UpdateJobRequest::SUSPEND);
  CHECK(r.ctld.UpdateJob_calls[2].action() == pb::UpdateJobRequest::RESUME);
  CHECK(r.ctld.UpdateJob_calls[2].job_id() == 13);
  REQUIRE(r.Run(RunTcontrol, {"resume", "n[1-2]"}) == 0);  // nodes
  CHECK(r.ctld.UpdateNode_calls.at(0).action() == pb::UpdateNodeRequest::RESUME);
  REQUIRE(r.Run(RunTcontrol, {"update", "JobId=12", "Partition=gpu", "NumNodes=3"}) == 0);
  CHECK(r.ctld.UpdateJob_calls.back().partition() == "gpu");
  CHECK(r.ctld.UpdateJob_calls.back().num_nodes() == 3);
  CHECK(r.Run(RunTcontrol, {"update", "job", "12", "NumNodes=0"}) == 1);
  CHECK(r.err == "tcmd: error: invalid NumNodes value \"0\"\n");

  CommandRun c;
  c.env["TESSERA_CONF"] = "/etc/t.conf";
  c.files["/etc/t.conf"] = "ClusterName=a\nSlurmctldPort=6817\nClusterName=b\n"
                           "NodeName=n1 CPUs=2\nNodeName=n2 CPUs=2\nPartitionName=p Nodes=n1\n";
  // Issue 19 (h19): show config asks the running controller; one without the call -> the
  // local file, saying so.
  c.ctld.ShowConfig_result = Status(Code::kUnimplemented, "no");
  REQUIRE(c.Run(RunTcontrol, {"show", "config"}) == 0);
  CHECK(c.connects == 1);
  CHECK(c.out ==
        "Configuration data from /etc/t.conf (read locally: the controller does not serve its "
        "configuration)\n"
        "ClusterName             = b\n"
        "SlurmctldPort           = 6817\n"
        "NodeName lines          = 2\n"
        "PartitionName lines     = 1\n");
  REQUIRE(c.Run(RunTcontrol, {"qos"}) == 0);
  CHECK(c.out == "No QoS configured (QOSName= lines in /etc/t.conf)\n");
  c.files["/etc/t.conf"] += "QOSName=gpu Priority=100 MaxJobsPerUser=2\n";
  REQUIRE(c.Run(RunTcontrol, {"show", "qos"}) == 0);
  CHECK(c.out == "QOS=gpu Priority=100 MaxJobsPerUser=2\n");

  CommandRun d;
  d.ctld.Diagnostics_result = Status(Code::kUnimplemented, "method Diagnostics not implemented");
  CHECK(d.Run(RunTcontrol, {"sdiag"}) == 1);
  CHECK(d.err == "tcmd: error: sdiag: method Diagnostics not implemented\n");
  UseUtc();
  pb::DiagnosticsResponse diag;
  diag.set_server_time(kNow);
  diag.set_start_time(kNow - 3600);
  diag.set_jobs_submitted(5);
  auto* rs = diag.add_rpc_stats();
  rs->set_name("SubmitJob");
  rs->set_count(5);
  rs->set_total_time_us(500);
  d.ctld.Diagnostics_result = diag;
  diag.set_schedule_cycles(4);
  diag.set_schedule_cycle_mean_us(250);
  diag.set_schedule_cycle_depth_mean(7);
  diag.set_server_thread_count(2);
  diag.set_agent_queue_size(3);
  diag.mutable_backfill()->set_cycles(2);
  diag.mutable_backfill()->set_backfilled_jobs_since_start(9);
  diag.mutable_backfill()->set_last_depth_try(6);
  diag.mutable_backfill()->set_last_cycle_when(kNow - 5);
  d.ctld.Diagnostics_result = diag;
  REQUIRE(d.Run(RunTcontrol, {"sdiag"}) == 0);
  CHECK_FALSE(d.ctld.Diagnostics_calls.back().reset());
  // Issue 20 §3: Slurm's sdiag layout and labels.
  CHECK(d.out.find("sdiag output at Tue Nov 14 22:13:20 2023 (1700000000)\n"
                   "Data since      Tue Nov 14 21:13:20 2023 (1699996400)\n") != std::string::npos);
  CHECK(d.out.find("Server thread count:  2\nAgent queue size:     3\n") != std::string::npos);
  CHECK(d.out.find("Jobs submitted: 5\n") != std::string::npos);
  CHECK(d.out.find("\tTotal cycles: 4\n\tMean cycle:   250\n\tMean depth cycle:  7\n"
                   "\tCycles per minute: 0\n") != std::string::npos);
  CHECK(d.out.find("\nBackfilling stats\n"
                   "\tTotal backfilled jobs (since last slurm start): 9\n") != std::string::npos);
  CHECK(d.out.find("\tLast cycle when: Tue Nov 14 22:13:15 2023 (1699999995)\n") != std::string::npos);
  CHECK(d.out.find("\tLast depth cycle (try sched): 6\n") != std::string::npos);
  CHECK(d.out.find("\tSubmitJob count:5 ave_time:100 total_time:500\n") != std::string::npos);
  // sdiag --reset (-r): asks the controller to reset, prints Slurm's line.
  REQUIRE(d.Run(RunTcontrol, {"sdiag", "-r"}) == 0);
  CHECK(d.ctld.Diagnostics_calls.back().reset());
  CHECK(d.out == "Reset scheduling statistics\n");
  CHECK(d.Run(RunTcontrol, {"ping", "--reset"}) == 1);
  CHECK(d.err.find("--reset is only valid with sdiag") != std::string::npos);
}

}  // namespace
}  // namespace tessera::cli
