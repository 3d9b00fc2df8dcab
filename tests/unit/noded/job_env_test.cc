#include <catch2/catch.hpp>

#include "noded/job_env.h"

using tessera::noded::BuildJobEnv;
using tessera::noded::CompressTasksPerNode;
using tessera::noded::NodeFacts;
using tessera::noded::UserInfo;

namespace {

tessera::v1::LaunchJob TwoNodeJob() {
  tessera::v1::LaunchJob l;
  l.set_job_id(42);
  l.set_name("train");
  l.set_uid(1234);
  l.set_gid(2345);
  l.set_user("alice");
  l.set_workdir("/home/alice/w");
  l.set_nodelist("gpu[1-2]");
  l.set_partition("batch");
  l.set_account("team-a");
  l.set_num_tasks(5);
  l.set_submit_dir("/home/alice/sub");
  l.set_submit_host("login1");
  auto* a = l.add_alloc();
  a->set_node("gpu1");
  a->set_cpus(8);
  a->set_mem_mib(4096);
  a->set_tasks(3);
  a->add_gpu_indices(2);
  a->add_gpu_indices(0);
  auto* b = l.add_alloc();
  b->set_node("gpu2");
  b->set_cpus(4);
  b->set_tasks(2);
  b->add_gpu_indices(1);
  (*l.mutable_env())["FOO"] = "bar";
  (*l.mutable_env())["SLURM_JOB_ID"] = "stale";
  return l;
}

NodeFacts Gpu1() { return NodeFacts{"gpu1", "mycluster", {"GPU-a", "GPU-b", "GPU-c"}}; }
UserInfo Alice() { return UserInfo{"alice", "/home/alice", "/bin/bash"}; }

}  // namespace

TEST_CASE("tasks per node uses Slurm's compressed syntax") {
  CHECK(CompressTasksPerNode({2, 2, 2, 1}) == "2(x3),1");
  CHECK(CompressTasksPerNode({4}) == "4");
  CHECK(CompressTasksPerNode({1, 2, 2, 1, 1}) == "1,2(x2),1(x2)");
  CHECK(CompressTasksPerNode({}) == "");
}

TEST_CASE("job env carries every Slurm variable and its TESSERA twin") {
  auto env = BuildJobEnv(TwoNodeJob(), Gpu1(), Alice());
  const std::map<std::string, std::string> expected = {
      {"JOB_ID", "42"},           {"JOBID", "42"},
      {"JOB_NAME", "train"},      {"JOB_NODELIST", "gpu[1-2]"},
      {"NODELIST", "gpu[1-2]"},   {"NNODES", "2"},
      {"JOB_NUM_NODES", "2"},     {"NTASKS", "5"},
      {"NPROCS", "5"},            {"CPUS_ON_NODE", "8"},
      {"SUBMIT_DIR", "/home/alice/sub"}, {"SUBMIT_HOST", "login1"},
      {"JOB_PARTITION", "batch"}, {"JOB_ACCOUNT", "team-a"},
      {"JOB_UID", "1234"},        {"JOB_USER", "alice"},
      {"JOB_GID", "2345"},        {"NODEID", "0"},
      {"TASKS_PER_NODE", "3,2"},  {"CLUSTER_NAME", "mycluster"},
      {"MEM_PER_NODE", "4096"},   {"GPUS_ON_NODE", "2"},
  };
  for (const auto& [suffix, value] : expected) {
    INFO(suffix);
    CHECK(env["SLURM_" + suffix] == value);
    CHECK(env["TESSERA_" + suffix] == value);
  }
  CHECK(env["SLURMD_NODENAME"] == "gpu1");
  CHECK(env["TESSERA_NODENAME"] == "gpu1");
  CHECK(env["ENVIRONMENT"] == "BATCH");
  CHECK(env["FOO"] == "bar");  // the user's environment is kept
}

TEST_CASE("CUDA_VISIBLE_DEVICES lists this node's allocated GPU UUIDs in allocation order") {
  auto env = BuildJobEnv(TwoNodeJob(), Gpu1(), Alice());
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "GPU-c,GPU-a");

  NodeFacts gpu2{"gpu2", "c", {"GPU-x", "GPU-y"}};
  CHECK(BuildJobEnv(TwoNodeJob(), gpu2, Alice())["CUDA_VISIBLE_DEVICES"] == "GPU-y");
}

TEST_CASE("no GPU allocated here: no CUDA_VISIBLE_DEVICES") {
  auto l = TwoNodeJob();
  l.mutable_alloc(0)->clear_gpu_indices();
  auto env = BuildJobEnv(l, Gpu1(), Alice());
  CHECK(env.count("CUDA_VISIBLE_DEVICES") == 0);
  CHECK(env.count("SLURM_GPUS_ON_NODE") == 0);
}

TEST_CASE("a GPU index the node does not have is reported and skipped") {
  auto l = TwoNodeJob();
  l.mutable_alloc(0)->add_gpu_indices(7);
  std::string error;
  auto env = BuildJobEnv(l, Gpu1(), Alice(), &error);
  CHECK(error.find("GPU index 7") != std::string::npos);
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "GPU-c,GPU-a");
}

TEST_CASE("missing login variables come from passwd and present ones are kept") {
  auto l = TwoNodeJob();
  auto env = BuildJobEnv(l, Gpu1(), Alice());
  CHECK(env["HOME"] == "/home/alice");
  CHECK(env["USER"] == "alice");
  CHECK(env["LOGNAME"] == "alice");
  CHECK(env["SHELL"] == "/bin/bash");
  CHECK(env["PATH"] == tessera::noded::kDefaultPath);
  (*l.mutable_env())["PATH"] = "/opt/bin";
  (*l.mutable_env())["HOME"] = "/scratch/alice";
  env = BuildJobEnv(l, Gpu1(), Alice());
  CHECK(env["PATH"] == "/opt/bin");
  CHECK(env["HOME"] == "/scratch/alice");
}

TEST_CASE("Slurm variables override stale values exported by the user") {
  auto env = BuildJobEnv(TwoNodeJob(), Gpu1(), Alice());
  CHECK(env["SLURM_JOB_ID"] == "42");
}

TEST_CASE("an environment block replaces the env map; its later entries win") {
  auto l = TwoNodeJob();
  l.set_env_block(std::string("FOO=one\0PATH=/opt/bin\0FOO=two\0", 30));
  auto env = BuildJobEnv(l, Gpu1(), Alice());
  CHECK(env["FOO"] == "two");
  CHECK(env["PATH"] == "/opt/bin");
  CHECK(env["SLURM_JOB_ID"] == "42");
  CHECK(env["HOME"] == "/home/alice");
}

TEST_CASE("single-node job without alloc entries or nodelist still gets sane values") {
  tessera::v1::LaunchJob l;
  l.set_job_id(7);
  l.set_workdir("/w");
  auto env = BuildJobEnv(l, NodeFacts{"n1", "c", {}}, Alice());
  CHECK(env["SLURM_JOB_NODELIST"] == "n1");
  CHECK(env["SLURM_NNODES"] == "1");
  CHECK(env["SLURM_NTASKS"] == "1");
  CHECK(env["SLURM_TASKS_PER_NODE"] == "1");
  CHECK(env["SLURM_SUBMIT_DIR"] == "/w");
  CHECK(env["SLURM_JOB_USER"] == "alice");
}

TEST_CASE("ntasks defaults to the sum of allocated tasks") {
  auto l = TwoNodeJob();
  l.clear_num_tasks();
  CHECK(BuildJobEnv(l, Gpu1(), Alice())["SLURM_NTASKS"] == "5");
}

TEST_CASE("a requeued job's run carries SLURM_RESTART_COUNT (issue 16 §4)") {
  auto l = TwoNodeJob();
  CHECK(BuildJobEnv(l, Gpu1(), Alice()).count("SLURM_RESTART_COUNT") == 0);  // first run
  l.set_restart_count(1);
  auto env = BuildJobEnv(l, Gpu1(), Alice());
  CHECK(env["SLURM_RESTART_COUNT"] == "1");
  CHECK(env["TESSERA_RESTART_COUNT"] == "1");
}
