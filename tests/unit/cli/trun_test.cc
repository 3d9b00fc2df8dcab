// trun against a fake controller and fake nodes: options, the job id, output per rank with
// labels, the exit status, --kill-on-bad-exit, signal forwarding and CompleteStep.
#include <signal.h>

#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/lib/rank_output.h"
#include "cli/lib/trun.h"
#include "fake_controller.h"
#include "trun_fakes.h"

namespace tessera::cli {
namespace {

using testing::CommandRun;
using namespace trun_fakes;
namespace v1 = tessera::v1;

TEST_CASE("RankOutput writes whole lines per rank, with srun's labels", "[trun]") {
  std::ostringstream out, err;
  RankOutput o(out, err, true, 12);
  o.Write(3, 1, "hel");
  o.Write(10, 1, "other\nrank ten ");
  o.Write(3, 1, "lo\nwor");
  o.Write(3, 2, "oops\n");
  o.Flush(3);
  o.FlushAll();
  CHECK(out.str() == "10: other\n 3: hello\n 3: wor10: rank ten ");
  CHECK(err.str() == " 3: oops\n");
  std::ostringstream plain, perr;
  RankOutput p(plain, perr, false, 2);
  p.Write(0, 1, "a\nb");
  p.Flush(0);
  CHECK(plain.str() == "a\nb");
}

// A node that replays canned output, records what it was asked, and can block until cancelled.

TEST_CASE("trun creates a step, runs it on every node and labels the output", "[trun]") {
  TrunRun t;
  t.nodes["it1"]->script = {Data(0, "rank=0\n"), Data(1, "rank=1\n"), Exit(0, 0), Exit(1, 0)};
  t.nodes["it2"]->script = {Data(2, "rank=2\n"), Data(3, "warn\n", 2), Exit(2, 0), Exit(3, 0)};
  int rc = t.Run({"-l", "-N2", "--ntasks-per-node=2", "-c", "2", "bash", "-c", "echo hi"});
  INFO(t.cmd.err);
  CHECK(rc == 0);
  REQUIRE(t.cmd.ctld.CreateStep_calls.size() == 1);
  const auto& req = t.cmd.ctld.CreateStep_calls[0];
  CHECK(req.job_id() == 42);
  CHECK(req.nodes() == 2);
  CHECK(req.ntasks_per_node() == 2);
  CHECK(req.cpus_per_task() == 2);
  CHECK(req.ntasks() == 0);
  CHECK(req.name() == "bash");
  CHECK(t.cmd.out.find("0: rank=0\n") != std::string::npos);
  CHECK(t.cmd.out.find("2: rank=2\n") != std::string::npos);
  CHECK(t.cmd.err == "3: warn\n");
  REQUIRE(t.nodes["it2"]->runs.size() == 1);
  const auto& run = t.nodes["it2"]->runs[0];
  CHECK(run.job_id() == 42);
  CHECK(run.step_id() == 3);
  CHECK(std::vector<std::string>(run.argv().begin(), run.argv().end()) ==
        std::vector<std::string>{"bash", "-c", "echo hi"});
  CHECK(run.env().at("PATH") == "/usr/bin");
  CHECK(run.cwd() == "/home/alice/work");
  REQUIRE(t.cmd.ctld.CompleteStep_calls.size() == 1);
  CHECK(t.cmd.ctld.CompleteStep_calls[0].state() == v1::COMPLETED);
  CHECK(t.cmd.ctld.CompleteStep_calls[0].step_id() == 3);
}

TEST_CASE("trun exits with the worst task's status and reports FAILED", "[trun]") {
  TrunRun t;
  t.nodes["it1"]->script = {Exit(0, 0), Exit(1, 3)};
  t.nodes["it2"]->script = {Exit(2, 2), Exit(3, 0)};
  CHECK(t.Run({"true"}) == 3);
  REQUIRE(t.cmd.ctld.CompleteStep_calls.size() == 1);
  CHECK(t.cmd.ctld.CompleteStep_calls[0].state() == v1::FAILED);
  CHECK(t.cmd.ctld.CompleteStep_calls[0].exit_code() == 3);

  TrunRun s;
  s.nodes["it1"]->script = {Exit(0, 0), Exit(1, 0, 9)};
  s.nodes["it2"]->script = {Exit(2, 3), Exit(3, 0)};
  CHECK(s.Run({"true"}) == 137);
  CHECK(s.cmd.ctld.CompleteStep_calls[0].exit_signal() == 9);
}

TEST_CASE("trun --kill-on-bad-exit cancels the other nodes", "[trun]") {
  TrunRun t;
  t.nodes["it1"]->script = {Exit(0, 5)};
  t.nodes["it1"]->block_until_cancel = true;
  t.nodes["it2"]->block_until_cancel = true;
  CHECK(t.Run({"-K", "false"}) == 5);
  CHECK(t.nodes["it2"]->cancelled);
  CHECK(t.cmd.err.find("task 0 exited with status 5") != std::string::npos);
  CHECK(t.cmd.ctld.CompleteStep_calls[0].state() == v1::FAILED);
  TrunRun off;
  off.nodes["it1"]->script = {Exit(0, 5), Exit(1, 0)};
  off.nodes["it2"]->script = {Exit(2, 0), Exit(3, 0)};
  CHECK(off.Run({"--kill-on-bad-exit=0", "false"}) == 5);
  CHECK_FALSE(off.nodes["it2"]->cancelled);
}

TEST_CASE("trun fails the step when a node refuses or cannot be reached", "[trun]") {
  TrunRun t;
  t.nodes["it1"]->block_until_cancel = true;
  t.nodes["it2"]->result = Status(Code::kPermissionDenied, "node it2: uid 1001 may not run tasks");
  CHECK(t.Run({"true"}) == 1);
  CHECK(t.cmd.err.find("tcmd: error: node it2: uid 1001 may not run tasks") != std::string::npos);
  CHECK(t.nodes["it1"]->cancelled);
  CHECK(t.cmd.ctld.CompleteStep_calls[0].state() == v1::FAILED);
}

TEST_CASE("trun forwards signals and a second SIGINT within 1 s cancels", "[trun]") {
  TrunRun t;
  t.nodes["it1"]->block_until_cancel = true;
  t.nodes["it2"]->block_until_cancel = true;
  t.on_watch = [&] {
    t.sender = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      t.signal_handler(SIGUSR1);
      t.mono = 1000;
      t.signal_handler(SIGINT);
      t.mono = 1500;
      t.signal_handler(SIGINT);
    });
  };
  int rc = t.Run({"sleep", "100"});
  CHECK(rc == 1);
  CHECK(t.nodes["it1"]->cancelled);
  CHECK(t.nodes["it2"]->cancelled);
  REQUIRE(t.nodes["it2"]->signals.size() == 2);  // SIGUSR1 and the first SIGINT
  CHECK(t.nodes["it2"]->signals[0].signal() == SIGUSR1);
  CHECK(t.nodes["it2"]->signals[1].signal() == SIGINT);
  CHECK(t.nodes["it2"]->signals[1].step_id() == 3);
  CHECK(t.cmd.err.find("interrupt (one more within 1 sec to abort)") != std::string::npos);
  CHECK(t.cmd.ctld.CompleteStep_calls[0].state() == v1::CANCELLED);
}

TEST_CASE("trun needs a job and a command, and names bad options", "[trun]") {
  TrunRun t;
  t.cmd.env.erase("SLURM_JOB_ID");  // issue 19: outside a job trun asks for an allocation
  t.cmd.ctld.SubmitJob_result = Status(Code::kInvalidArgument, "Invalid partition name specified");
  CHECK(t.Run({"hostname"}) == 1);
  CHECK(t.cmd.err == "tcmd: error: cannot submit the allocation: Invalid partition name "
                     "specified\n");
  CHECK(t.cmd.ctld.SubmitJob_calls.size() == 1);
  CHECK(t.cmd.ctld.CreateStep_calls.empty());
  CHECK(t.Run({"--jobid=77", "-n", "3", "hostname"}) == 1);  // no task reported an exit: failed
  CHECK(t.cmd.ctld.CompleteStep_calls.back().state() == v1::FAILED);
  CHECK(t.cmd.ctld.CreateStep_calls.back().job_id() == 77);
  CHECK(t.cmd.ctld.CreateStep_calls.back().ntasks() == 3);
  TrunRun u;
  CHECK(u.Run({"-l"}) == 1);
  CHECK(u.cmd.err.find("no command given") != std::string::npos);
  CHECK(u.Run({"-n", "x", "true"}) == 1);
  CHECK(u.cmd.err.find("invalid --ntasks value \"x\"") != std::string::npos);
  CHECK(u.Run({"-K2", "true"}) == 1);
  CHECK(u.cmd.err.find("--kill-on-bad-exit") != std::string::npos);
  u.cmd.ctld.CreateStep_result = Status(Code::kPermissionDenied, "job 42 belongs to bob");
  CHECK(u.Run({"true"}) == 1);
  CHECK(u.cmd.err == "tcmd: error: cannot create a step in job 42: job 42 belongs to bob\n");
  CHECK(u.Run({"--help"}) == 0);
  CHECK(u.cmd.out.find("Usage: trun") != std::string::npos);
}

TEST_CASE("trun --gres=gpu / --gpus* ask the step's GPUs, busy GPUs are waited for", "[trun]") {
  TrunRun t;
  t.nodes["it1"]->script = {Exit(0, 0), Exit(1, 0)};
  t.nodes["it2"]->script = {Exit(2, 0), Exit(3, 0)};
  auto step = *t.cmd.ctld.CreateStep_result;
  t.cmd.ctld.CreateStep_result = Status(Code::kResourceExhausted, "Requested nodes are busy");
  int sleeps = 0;
  t.on_sleep = [&] {
    if (++sleeps == 2) t.cmd.ctld.CreateStep_result = step;  // another step ended
  };
  CHECK(t.Run({"--gres=gpu:a100:2", "true"}) == 0);
  REQUIRE(t.cmd.ctld.CreateStep_calls.size() == 3);
  const auto& req = t.cmd.ctld.CreateStep_calls[0];
  CHECK(req.gpus_per_node() == 2);
  CHECK(req.gpu_type() == "a100");
  CHECK(t.cmd.err == "trun: Job 42 step creation temporarily disabled, retrying (Requested nodes "
                     "are busy)\ntrun: Step created for StepId=42.3\n");
  for (auto [args, field] : std::vector<std::pair<std::string, int>>{
           {"--gres=gpu", 1}, {"--gpus=3", 2}, {"-G", 2}, {"--gpus-per-task=1", 3},
           {"--gpus-per-node=a100:1", 1}}) {
    TrunRun u;
    std::vector<std::string> argv = {args};
    if (args == "-G") argv.push_back("3");
    argv.push_back("true");
    u.Run(argv);
    INFO(args);
    REQUIRE(u.cmd.ctld.CreateStep_calls.size() == 1);
    const auto& r = u.cmd.ctld.CreateStep_calls[0];
    CHECK((field == 1 ? r.gpus_per_node() : field == 2 ? r.gpus() : r.gpus_per_task()) ==
          (field == 2 ? 3u : 1u));
  }
  TrunRun bad;
  CHECK(bad.Run({"--gres=mps:50", "true"}) == 1);
  CHECK(bad.cmd.err.find("invalid --gres value \"mps:50\": a step can ask only gpu") !=
        std::string::npos);
  CHECK(bad.Run({"--gpus=0", "true"}) == 1);
  CHECK(bad.cmd.err.find("invalid --gpus value \"0\"") != std::string::npos);
  CHECK(bad.Run({"--gpus=1", "--gres=gpu:1", "true"}) == 1);
  CHECK(bad.cmd.err.find("give one of --gres=gpu, --gpus-per-node, --gpus and --gpus-per-task") !=
        std::string::npos);
  CHECK(bad.cmd.ctld.CreateStep_calls.empty());
  TrunRun big;
  big.cmd.ctld.CreateStep_result =
      InvalidArgument("step asks 3 GPUs on node it1 but job 42 has 2 there");
  CHECK(big.Run({"--gpus-per-node=3", "true"}) == 1);
  CHECK(big.cmd.err.find("cannot create a step in job 42: step asks 3 GPUs on node it1 but job 42 "
                         "has 2 there") != std::string::npos);
}

}  // namespace
}  // namespace tessera::cli

// ---- issue 19 (h19a) ------------------------------------------------------------------------
namespace tessera::cli {
namespace {

using testing::CommandRun;
using namespace trun_fakes;
namespace v1 = tessera::v1;

TEST_CASE("trun outside a job obtains an allocation, runs the step in it and releases it",
          "[trun][issue19]") {
  TrunRun t;
  t.cmd.env.erase("SLURM_JOB_ID");
  t.cmd.ctld.SubmitJob_result.value().set_job_id(77);
  v1::JobInfo job;
  job.set_job_id(77);
  job.set_state(v1::RUNNING);
  job.set_nodelist("it[1-2]");
  job.set_num_tasks(4);
  job.mutable_spec()->set_name("hostname");
  for (int i = 1; i <= 2; ++i) {
    auto* a = job.add_alloc();
    a->set_node("it" + std::to_string(i));
    a->set_cpus(2);
    a->set_tasks(2);
  }
  t.cmd.ctld.GetJob_result = job;
  t.nodes["it1"]->script = {Exit(0, 0), Exit(1, 0)};
  t.nodes["it2"]->script = {Exit(2, 0), Exit(3, 0)};
  int rc = t.Run({"-N2", "-t", "5", "-p", "debug", "hostname"});
  INFO(t.cmd.err);
  CHECK(rc == 0);
  REQUIRE(t.cmd.ctld.SubmitJob_calls.size() == 1);
  const auto& spec = t.cmd.ctld.SubmitJob_calls[0].spec();
  CHECK(spec.name() == "hostname");
  CHECK(spec.nodes_min() == 2);
  CHECK(spec.time_limit_s() == 300);
  CHECK(spec.partition() == "debug");
  CHECK(spec.stdout_pattern() == "/dev/null");
  CHECK(spec.script().find("trap 'exit 0' USR2") != std::string::npos);
  REQUIRE(t.cmd.ctld.CreateStep_calls.size() == 1);
  CHECK(t.cmd.ctld.CreateStep_calls[0].job_id() == 77);
  const auto& env = t.nodes["it1"]->runs.at(0).env();
  CHECK(env.at("SLURM_JOB_ID") == "77");
  CHECK(env.at("SLURM_JOB_NODELIST") == "it[1-2]");
  CHECK(env.at("SLURM_JOB_CPUS_PER_NODE") == "2(x2)");
  REQUIRE(t.cmd.ctld.CancelJob_calls.size() == 1);  // released: SIGUSR2 to the holder shell
  CHECK(t.cmd.ctld.CancelJob_calls[0].signal() == SIGUSR2);
  CHECK(t.cmd.ctld.CancelJob_calls[0].batch_only());
  CHECK(t.cmd.ctld.CancelJob_calls[0].job_ids(0) == 77);
}

TEST_CASE("trun -o/-e write each task's output to its pattern's file", "[trun][issue19]") {
  char dir_tmpl[] = "/tmp/trun-io-XXXXXX";
  std::string dir = mkdtemp(dir_tmpl);
  TrunRun t;
  t.cmd.env["SLURM_JOB_NAME"] = "train";
  t.nodes["it1"]->script = {Data(0, "a0\n"), Data(1, "a1\n"), Data(1, "e1\n", 2), Exit(0, 0), Exit(1, 0)};
  t.nodes["it2"]->script = {Data(2, "a2\n"), Data(3, "a3\n"), Exit(2, 0), Exit(3, 0)};
  int rc = t.Run({"-o", dir + "/%x-%j.%s-%t-%N.out", "-e", dir + "/err-%J", "true"});
  INFO(t.cmd.err);
  CHECK(rc == 0);
  CHECK(t.cmd.out.empty());
  auto read = [](const std::string& p) {
    std::ifstream f(p);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  CHECK(read(dir + "/train-42.3-1-it1.out") == "a1\n");
  CHECK(read(dir + "/train-42.3-3-it2.out") == "a3\n");
  CHECK(read(dir + "/err-42.3") == "e1\n");
  TrunRun u;  // --output=N: only that task's output reaches trun; none: nothing
  u.nodes["it1"]->script = {Data(0, "zero\n"), Data(1, "one\n"), Exit(0, 0), Exit(1, 0)};
  u.nodes["it2"]->script = {Exit(2, 0), Exit(3, 0)};
  CHECK(u.Run({"--output=1", "true"}) == 0);
  CHECK(u.cmd.out == "one\n");
  CHECK(u.Run({"-i", dir + "/in-%t", "--export=NONE,X=1", "-D", "sub", "true"}) == 0);
  const auto& run = u.nodes["it2"]->runs.back();
  CHECK(run.task_input().at(3) == dir + "/in-3");
  CHECK(run.env().at("X") == "1");
  CHECK(run.env().count("PATH") == 0);
  CHECK(run.cwd() == "/home/alice/work/sub");
}

TEST_CASE("trun reads srun's input variables and refuses what it cannot do", "[trun][issue19]") {
  TrunRun t;
  t.cmd.env["SLURM_CPUS_PER_TASK"] = "2";  // the -c of the batch job
  t.cmd.env["SLURM_NTASKS_PER_NODE"] = "1";
  CHECK(t.Run({"true"}) == 1);  // the fake nodes report no exits: failed, but the step was made
  REQUIRE(t.cmd.ctld.CreateStep_calls.size() == 1);
  CHECK(t.cmd.ctld.CreateStep_calls[0].cpus_per_task() == 2);
  CHECK(t.cmd.ctld.CreateStep_calls[0].ntasks_per_node() == 1);
  CHECK(t.Run({"-c", "1", "true"}) == 1);  // the command line wins
  CHECK(t.cmd.ctld.CreateStep_calls.back().cpus_per_task() == 1);
  // --pty and --mpi=pmi2 are done since h19 s6 (test_compat_pty.py, test_compat_pmi2.py).
  // -i N is done since h19 s7 (trun forwards its stdin, below).
  for (std::string opt : {"--het-group=1", "--container-image=x", "--mpi=pmix",
                          "--wait=x", "--open-mode=keep", "--gpu-bind=auto"}) {
    TrunRun r;
    CHECK(r.Run({opt, "true"}) == 1);
    CHECK(r.cmd.ctld.CreateStep_calls.empty());
    CHECK(r.cmd.err.rfind("tcmd: error: ", 0) == 0);
  }
  TrunRun a;  // accepted, nothing to do inside a job
  v1::JobInfo job;
  job.set_job_id(42);
  job.add_alloc()->set_node("it1");
  job.add_alloc()->set_node("it2");
  a.cmd.ctld.GetJob_result = job;
  a.Run({"--exact", "--overlap", "--exclusive", "--mem=1G", "--mem-per-cpu=100", "--cpu-bind=cores",
         "--accel-bind=g", "-u", "-w", "it1", "-x", "it2", "true"});
  REQUIRE(a.cmd.ctld.CreateStep_calls.size() == 1);
  CHECK(a.cmd.ctld.CreateStep_calls[0].nodes() == 1);  // -w it1 -x it2: the first node
  CHECK(a.cmd.err.find("unrecognized") == std::string::npos);
}

}  // namespace
}  // namespace tessera::cli
