// Issue 19 (h19a), "inside jobs": scontrol show hostnames/hostlist/hostlistsorted, srun's
// -o/-e/-i values, and the SLURM_* variables sbatch derives from its options.
#include <catch2/catch.hpp>

#include "cli/lib/batch_env.h"
#include "cli/lib/batch_request.h"
#include "cli/lib/hostlist_cmd.h"
#include "cli/lib/trun_io.h"
#include "cli/lib/trun_nodes.h"
#include "common/env_block.h"
#include "fake_controller.h"

namespace tessera::cli {
namespace {

using testing::CommandRun;

TEST_CASE("tcontrol show hostnames expands a list, by default $SLURM_JOB_NODELIST", "[issue19]") {
  CommandRun c;
  CHECK(c.Run(RunTcontrol, {"show", "hostnames", "n[01-03],gpu7"}) == 0);
  CHECK(c.out == "n01\nn02\nn03\ngpu7\n");
  c.env["SLURM_JOB_NODELIST"] = "it[1-2]";
  CHECK(c.Run(RunTcontrol, {"show", "hostnames"}) == 0);
  CHECK(c.out == "it1\nit2\n");
  CHECK(c.connects == 0);  // answered without the controller
  c.env.clear();
  CHECK(c.Run(RunTcontrol, {"show", "hostnames"}) == 1);
  CHECK(c.err.find("SLURM_JOB_NODELIST is not set") != std::string::npos);
  CHECK(c.Run(RunTcontrol, {"show", "hostnames", "n[3-1]"}) == 1);
  CHECK(c.err.find("invalid host list") != std::string::npos);
}

TEST_CASE("tcontrol show hostname (singular, as scripts write it) is hostnames", "[issue19]") {
  CommandRun c;
  c.env["SLURM_NODELIST"] = "it[1-2]";
  c.env["SLURM_JOB_NODELIST"] = "it[1-2]";
  CHECK(c.Run(RunTcontrol, {"show", "hostname", "it[1-2]"}) == 0);
  CHECK(c.out == "it1\nit2\n");
  CHECK(c.Run(RunTcontrol, {"show", "hostn"}) == 0);
  CHECK(c.out == "it1\nit2\n");
}

TEST_CASE("tcontrol show hostlist keeps order and duplicates; hostlistsorted sorts", "[issue19]") {
  CommandRun c;
  CHECK(c.Run(RunTcontrol, {"show", "hostlist", "tux2,tux1,tux2"}) == 0);
  CHECK(c.out == "tux[2,1-2]\n");
  CHECK(c.Run(RunTcontrol, {"show", "hostlistsorted", "tux2,tux1,tux2"}) == 0);
  CHECK(c.out == "tux[1-2,2]\n");
  c.files["/tmp/hosts"] = "b2\nb1 a10\n\na9\n";
  CHECK(c.Run(RunTcontrol, {"show", "hostlistsorted", "/tmp/hosts"}) == 0);
  CHECK(c.out == "a[9-10],b[1-2]\n");
  c.stdin_text = "x3,x1";
  CHECK(c.Run(RunTcontrol, {"show", "hostlist", "-"}) == 0);
  CHECK(c.out == "x[3,1]\n");
  CHECK(c.Run(RunTcontrol, {"show", "hostlist"}) == 1);
  CHECK(SortHostnames({"n10", "n9", "m", "n09"}) == std::vector<std::string>{"m", "n9", "n09", "n10"});
}

TEST_CASE("srun -o/-e/-i values: all, none, a task id or a pattern", "[issue19]") {
  CHECK(ParseIoSpec("--output", "all")->kind == IoSpec::kAll);
  CHECK(ParseIoSpec("--output", "none")->kind == IoSpec::kNone);
  CHECK(ParseIoSpec("--input", "-")->kind == IoSpec::kAll);  // srun's synonym
  auto t = ParseIoSpec("--output", "3");
  CHECK((t->kind == IoSpec::kTask && t->task == 3));
  auto f = ParseIoSpec("--output", "log-%t.txt");
  CHECK((f->kind == IoSpec::kFile && f->pattern == "log-%t.txt"));
  CHECK(!ParseIoSpec("--error", "").ok());
}

TEST_CASE("sbatch puts its options' SLURM_* variables into the job's environment", "[issue19]") {
  BatchOptions o;
  o.ntasks_per_node = 2;
  o.cpus_per_task = 4;
  o.mem_per_cpu_mib = 1000;
  o.gpus_per_node = GpuRequest{"a100", 2};
  o.dependency = "afterok:5";
  o.export_spec = "NONE";
  o.open_mode = "append";
  tessera::v1::JobSpec spec;
  SetBatchOptionEnv(o, &spec);
  auto env = EnvBlockToMap(spec.env_block());
  CHECK(env.at("SLURM_NTASKS_PER_NODE") == "2");
  CHECK(env.at("SLURM_CPUS_PER_TASK") == "4");
  CHECK(env.at("SLURM_MEM_PER_CPU") == "1000");
  CHECK(env.at("SLURM_GPUS_PER_NODE") == "a100:2");
  CHECK(env.at("SLURM_JOB_DEPENDENCY") == "afterok:5");
  CHECK(env.at("SLURM_EXPORT_ENV") == "NONE");
  CHECK(env.at("SLURM_OPEN_MODE") == "a");
  CHECK(env.count("SLURM_GPUS") == 0);  // only what was asked
  tessera::v1::JobSpec none;
  SetBatchOptionEnv(BatchOptions{}, &none);
  CHECK(none.env_block().empty());
}

// Issue 19 (h19 s7): sbatch --gpu-bind reaches the job's srun steps as SLURM_GPU_BIND.
TEST_CASE("sbatch --gpu-bind is checked and becomes SLURM_GPU_BIND", "[issue19]") {
  auto cl = ParseBatchCommandLine({"--gpu-bind=map_gpu:1,0", "--gpus-per-task=1"}, 1000);
  REQUIRE(cl.ok());
  auto opts = ResolveBatchOptions(cl->options, "#!/bin/sh\n#SBATCH --gpu-bind=none\ntrue\n", {},
                                  1000);
  REQUIRE(opts.ok());
  CHECK(opts->gpu_bind == "map_gpu:1,0");  // the command line over the script
  CHECK(opts->warnings.empty());
  tessera::v1::JobSpec spec;
  SetBatchOptionEnv(*opts, &spec);
  CHECK(EnvBlockToMap(spec.env_block()).at("SLURM_GPU_BIND") == "map_gpu:1,0");
  auto env = ResolveBatchOptions(BatchOptions{}, "#!/bin/sh\ntrue\n",
                                 {{"SBATCH_GPU_BIND", "per_task:2"}}, 1000);
  REQUIRE(env.ok());
  CHECK(env->gpu_bind == "per_task:2");
  auto bad = ParseBatchCommandLine({"--gpu-bind=nearest"}, 1000);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("invalid --gpu-bind value \"nearest\"") != std::string::npos);
}

TEST_CASE("srun -w/-x choose any nodes of the job, in the job's order", "[issue19]") {
  tessera::v1::JobInfo job;
  job.set_job_id(9);
  for (const char* n : {"n1", "n2", "n3"}) job.add_alloc()->set_node(n);
  using V = std::vector<std::string>;
  CHECK(*StepNodes(job, "n1", "", 0) == V{"n1"});
  CHECK(*StepNodes(job, "n[1-2]", "", 0) == V{"n1", "n2"});
  CHECK(*StepNodes(job, "n2,n1", "", 0) == V{"n1", "n2"});  // the job's order, as Slurm
  CHECK(*StepNodes(job, "n1", "", 2) == V{"n1", "n2"});     // -N2 -w n1: n1 and the next
  CHECK(*StepNodes(job, "", "n3", 0) == V{"n1", "n2"});
  CHECK(*StepNodes(job, "", "n[2-3]", 1) == V{"n1"});
  // Issue 19 (h19): a step may skip the job's first nodes.
  CHECK(*StepNodes(job, "n2", "", 0) == V{"n2"});
  CHECK(*StepNodes(job, "n3,n2", "", 0) == V{"n2", "n3"});
  CHECK(*StepNodes(job, "", "n1", 0) == V{"n2", "n3"});
  CHECK(*StepNodes(job, "", "n1", 1) == V{"n2"});
  auto outside = StepNodes(job, "n7", "", 0);
  REQUIRE(!outside.ok());
  CHECK(outside.status().message() ==
        "Requested node configuration is not available: node n7 is not part of job 9 (n[1-3])");
  CHECK(!StepNodes(job, "n1", "n1", 0).ok());
  CHECK(!StepNodes(job, "", "n[1-3]", 0).ok());
  CHECK(!StepNodes(job, "n[1-2]", "", 1).ok());
}

}  // namespace
}  // namespace tessera::cli
