// tbatch: option precedence, Slurm -> task-group translation, --export, and the command itself.
#include <catch2/catch.hpp>

#include "cli/lib/batch_request.h"
#include "common/env_block.h"
#include "fake_controller.h"

namespace tessera::cli {
namespace {

using testing::CommandRun;
using testing::kNow;
using testing::UseUtc;

// Resolves options for `script` with `args` on the command line and `env`, then builds the spec.
Result<pb::JobSpec> Spec(const std::string& script, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env = {}) {
  auto cl = ParseBatchCommandLine(args, kNow);
  if (!cl.ok()) return cl.status();
  auto opts = ResolveBatchOptions(cl->options, script, env, kNow);
  if (!opts.ok()) return opts.status();
  ScriptSource src{script, "job.sh", {}};
  return BuildJobSpec(*opts, src, env, "/home/alice");
}

const char kScript[] =
    "#!/bin/bash\n"
    "#SBATCH --partition=batch\n"
    "#SBATCH --time=10 -J first\n"
    "#SBATCH -J second\n"
    "srun hostname\n"
    "#SBATCH --partition=never\n";

TEST_CASE("Later directives win; a command line stops the directives") {
  auto s = Spec(kScript, {});
  REQUIRE(s.ok());
  CHECK(s->partition() == "batch");
  CHECK(s->name() == "second");
  CHECK(s->time_limit_s() == 600);
}

TEST_CASE("Precedence: directives < SBATCH_* environment < command line") {
  std::map<std::string, std::string> env = {{"SBATCH_PARTITION", "envpart"},
                                            {"SBATCH_TIMELIMIT", "1:00:00"},
                                            {"SBATCH_JOB_NAME", "envname"}};
  auto s = Spec(kScript, {"-J", "cmdname"}, env);
  REQUIRE(s.ok());
  CHECK(s->partition() == "envpart");
  CHECK(s->time_limit_s() == 3600);
  CHECK(s->name() == "cmdname");
  auto t = Spec(kScript, {"--partition=cmd", "-t", "5"}, env);
  REQUIRE(t.ok());
  CHECK(t->partition() == "cmd");
  CHECK(t->time_limit_s() == 300);
}

TEST_CASE("A bad directive names its line; a bad environment variable names itself") {
  auto s = Spec("#!/bin/sh\n#SBATCH -N 1\n\n#SBATCH --time=60:\nhostname\n", {});
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().message() == "script line 4: invalid --time value \"60:\"");
  auto u = Spec("#!/bin/sh\n#SBATCH --frobnicate\n", {});
  CHECK(u.status().message() == "script line 2: unrecognized option '--frobnicate'");
  auto w = Spec("#!/bin/sh\n#SBATCH --wrap=ls\n", {});
  CHECK(w.status().message() == "script line 2: --wrap is only valid on the command line");
  auto e = Spec("#!/bin/sh\n", {}, {{"SBATCH_TIMELIMIT", "x"}});
  CHECK(e.status().message() ==
        "environment variable SBATCH_TIMELIMIT: invalid --time value \"x\"");
  auto c = ParseBatchCommandLine({"--nodes=0"}, kNow);
  CHECK(c.status().message() == "invalid --nodes value \"0\" (expected a positive integer)");
}

TEST_CASE("Translation: nodes x ntasks-per-node, cpus, memory per node") {
  auto s = Spec("#!/bin/sh\n", {"-N", "2", "--ntasks-per-node=4", "-c", "8", "--mem=64G"});
  REQUIRE(s.ok());
  REQUIRE(s->task_groups_size() == 1);
  const auto& g = s->task_groups(0);
  CHECK(g.name() == "main");
  CHECK(g.count() == 8);
  CHECK(g.tasks_per_node() == 4);
  CHECK(g.per_task().cpus() == 8);
  CHECK(g.per_task().mem_mib() == 0);
  CHECK(g.per_node().mem_mib() == 65536);
  CHECK(s->nodes_min() == 2);
  CHECK(s->nodes_max() == 2);
}

TEST_CASE("Translation: defaults and -n, --mem-per-cpu, node ranges") {
  auto d = Spec("#!/bin/sh\n", {});
  REQUIRE(d.ok());
  CHECK(d->task_groups(0).count() == 1);
  CHECK(d->task_groups(0).per_task().cpus() == 1);
  CHECK(d->nodes_min() == 0);
  CHECK(d->requeue());
  CHECK(d->workdir() == "/home/alice");
  CHECK(d->argv(0) == "/home/alice/job.sh");
  auto n = Spec("#!/bin/sh\n", {"-N3"});
  CHECK(n->task_groups(0).count() == 3);
  auto s = Spec("#!/bin/sh\n", {"-n", "16", "-c", "2", "--mem-per-cpu=1G", "-N", "2-4"});
  REQUIRE(s.ok());
  CHECK(s->task_groups(0).count() == 16);
  CHECK(s->task_groups(0).per_task().mem_mib() == 2048);
  CHECK(s->task_groups(0).per_node().mem_mib() == 0);
  CHECK(s->nodes_min() == 2);
  CHECK(s->nodes_max() == 4);
}

TEST_CASE("Translation: a higher source's --mem clears a lower source's --mem-per-cpu") {
  auto s = Spec("#!/bin/sh\n#SBATCH --mem-per-cpu=2G\n", {"--mem=8G"});
  REQUIRE(s.ok());
  CHECK(s->task_groups(0).per_task().mem_mib() == 0);
  CHECK(s->task_groups(0).per_node().mem_mib() == 8192);
}

TEST_CASE("Translation: GPUs per node, by GRES, and in total") {
  auto g = Spec("#!/bin/sh\n#SBATCH --gres=gpu:a100:4\n", {"-N", "2"});
  REQUIRE(g.ok());
  CHECK(g->task_groups(0).per_node().gpus() == 4);
  CHECK(g->task_groups(0).per_node().gpu_model() == "a100");
  auto p = Spec("#!/bin/sh\n", {"--gpus-per-node=8"});
  CHECK(p->task_groups(0).per_node().gpus() == 8);
  CHECK(p->task_groups(0).per_node().gpu_model() == "");
  auto t = Spec("#!/bin/sh\n", {"-n", "4", "-G", "h100:8"});
  REQUIRE(t.ok());
  CHECK(t->task_groups(0).per_task().gpus() == 2);
  CHECK(t->task_groups(0).per_task().gpu_model() == "h100");
  auto bad = Spec("#!/bin/sh\n", {"-n", "3", "--gpus=8"});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("cannot be divided evenly among 3 tasks") !=
        std::string::npos);
  CHECK_FALSE(Spec("#!/bin/sh\n", {"--gres=license:2"}).ok());
  CHECK(Spec("#!/bin/sh\n", {"--gres=gpu"})->task_groups(0).per_node().gpus() == 1);
}

TEST_CASE("Translation: the remaining scalar options") {
  auto s = Spec("#!/bin/sh\n",
                {"-A", "acct", "-q", "high", "-o", "out-%j.log", "-e", "err.log", "-D", "sub",
                 "-C", "ib&a100", "-w", "n[1-2]", "-x", "n3", "--exclusive", "-H",
                 "--no-requeue", "--comment=hi there", "--nice=5", "--begin=now+60",
                 "-d", "afterok:12"});
  REQUIRE(s.ok());
  CHECK(s->account() == "acct");
  CHECK(s->qos() == "high");
  CHECK(s->stdout_pattern() == "out-%j.log");
  CHECK(s->stderr_pattern() == "err.log");
  CHECK(s->workdir() == "/home/alice/sub");
  CHECK(s->constraint() == "ib&a100");
  CHECK(s->nodelist() == "n[1-2]");
  CHECK(s->exclude() == "n3");
  CHECK(s->exclusive());
  CHECK(s->hold());
  CHECK_FALSE(s->requeue());
  CHECK(s->comment() == "hi there");
  CHECK(s->nice() == 5);
  CHECK(s->begin_time() == kNow + 60);
  CHECK(s->dependency() == "afterok:12");
}

TEST_CASE("Export of the environment: ALL, NONE and lists") {
  std::map<std::string, std::string> env = {{"HOME", "/h"}, {"PATH", "/bin"}, {"SLURM_X", "1"}};
  CHECK(*BuildExportEnv(std::nullopt, env) == env);
  CHECK(*BuildExportEnv(std::string("ALL"), env) == env);
  CHECK(*BuildExportEnv(std::string("NONE"), env) ==
        std::map<std::string, std::string>{{"SLURM_X", "1"}});
  CHECK(*BuildExportEnv(std::string("PATH,FOO=bar=baz,MISSING"), env) ==
        std::map<std::string, std::string>{{"PATH", "/bin"}, {"FOO", "bar=baz"}, {"SLURM_X", "1"}});
  auto all_plus = *BuildExportEnv(std::string("ALL,PATH=/x"), env);
  CHECK(all_plus.at("PATH") == "/x");
  CHECK(all_plus.at("HOME") == "/h");
  auto via_env = Spec("#!/bin/sh\n", {}, {{"SBATCH_EXPORT", "NONE"}, {"HOME", "/h"}});
  REQUIRE(via_env.ok());
  CHECK(via_env->env().empty());
}

TEST_CASE("tbatch submits the script and prints the job id") {
  CommandRun r;
  r.files["job.sh"] = "#!/bin/sh\n#SBATCH -J named\nhostname\n";
  r.env = {{"PATH", "/bin"}};
  r.ctld.SubmitJob_result = [] {
    pb::SubmitJobResponse resp;
    resp.set_job_id(42);
    return resp;
  }();
  REQUIRE(r.Run(RunTbatch, {"-p", "gpu", "job.sh", "arg1", "--arg2"}) == 0);
  CHECK(r.out == "Submitted batch job 42\n");
  REQUIRE(r.ctld.SubmitJob_calls.size() == 1);
  const auto& spec = r.ctld.SubmitJob_calls[0].spec();
  CHECK(spec.name() == "named");
  CHECK(spec.partition() == "gpu");
  CHECK(spec.script() == r.files["job.sh"]);
  CHECK(std::vector<std::string>(spec.argv().begin(), spec.argv().end()) ==
        std::vector<std::string>{"/home/alice/work/job.sh", "arg1", "--arg2"});
  CHECK(EnvBlockToMap(spec.env_block()).at("PATH") == "/bin");
  CHECK(spec.workdir() == "/home/alice/work");
  CHECK_FALSE(r.ctld.SubmitJob_calls[0].test_only());
}

TEST_CASE("tbatch reads stdin, --wrap, --parsable and --test-only") {
  CommandRun r;
  r.stdin_text = "#!/bin/sh\n#SBATCH -t 5\necho hi\n";
  r.ctld.SubmitJob_result = [] {
    pb::SubmitJobResponse resp;
    resp.set_job_id(7);
    resp.add_warnings("QOS normal used");
    return resp;
  }();
  REQUIRE(r.Run(RunTbatch, {"--parsable"}) == 0);
  CHECK(r.out == "7\n");
  CHECK(r.err == "tcmd: warning: QOS normal used\n");
  CHECK(r.ctld.SubmitJob_calls[0].spec().name() == "tbatch");
  CHECK(r.ctld.SubmitJob_calls[0].spec().time_limit_s() == 300);

  CommandRun w;
  REQUIRE(w.Run(RunTbatch, {"--wrap", "sleep 10", "--test-only"}) == 0);
  const auto& req = w.ctld.SubmitJob_calls.at(0);
  CHECK(req.test_only());
  CHECK(req.spec().name() == "wrap");
  CHECK(req.spec().script().find("\nsleep 10\n") != std::string::npos);
  CHECK(w.out.empty());
  CHECK(w.err == "tcmd: Job 0 to start at an unknown time using 1 processors on nodes "
                 "(not known yet) in partition (default)\n");

  CommandRun t;  // the controller's expectation, printed as sbatch --test-only does
  pb::SubmitJobResponse resp;
  resp.set_expected_start_time(kNow + 3600);
  resp.set_expected_nodes("n[1-2]");
  resp.set_expected_partition("gpu");
  resp.set_expected_cpus(8);
  t.ctld.SubmitJob_result = resp;
  UseUtc();
  REQUIRE(t.Run(RunTbatch, {"--wrap", "true", "--test-only", "-N2"}) == 0);
  CHECK(t.err == "tcmd: Job 0 to start at 2023-11-14T23:13:20 using 8 processors on nodes "
                 "n[1-2] in partition gpu\n");
}

TEST_CASE("tbatch errors submit nothing") {
  CommandRun r;
  r.files["bad.sh"] = "#!/bin/sh\n#SBATCH -N 1\n#SBATCH\t--time=60:\nhostname\n";
  CHECK(r.Run(RunTbatch, {"bad.sh"}) == 1);
  CHECK(r.err == "tcmd: error: script line 3: invalid --time value \"60:\"\n");
  CHECK(r.Run(RunTbatch, {"--bogus", "bad.sh"}) == 1);
  CHECK(r.err.find("unrecognized option '--bogus'") != std::string::npos);
  CHECK(r.Run(RunTbatch, {"missing.sh"}) == 1);
  CHECK(r.err == "tcmd: error: unable to open file missing.sh\n");
  CHECK(r.Run(RunTbatch, {"--wrap=ls", "bad.sh"}) == 1);
  r.stdin_text = "echo no shebang\n";
  CHECK(r.Run(RunTbatch, {}) == 1);
  CHECK(r.ctld.SubmitJob_calls.empty());
  CHECK(r.connects == 0);
}

TEST_CASE("tbatch warns once per ignored mail option and reports server errors") {
  CommandRun r;
  r.files["m.sh"] = "#!/bin/sh\n#SBATCH --mail-type=END\n#SBATCH --mail-user=a@b\n";
  r.ctld.SubmitJob_result = InvalidArgument("invalid partition \"nope\"");
  CHECK(r.Run(RunTbatch, {"-p", "nope", "m.sh"}) == 1);
  CHECK(r.err ==
        "tcmd: warning: --mail-type is accepted but ignored: Tessera does not send mail\n"
        "tcmd: warning: --mail-user is accepted but ignored: Tessera does not send mail\n"
        "tcmd: error: Batch job submission failed: invalid partition \"nope\"\n");
}

TEST_CASE("tbatch --help and --version need no controller") {
  CommandRun r;
  CHECK(r.Run(RunTbatch, {"--help"}) == 0);
  CHECK(r.out.find("--ntasks-per-node") != std::string::npos);
  CHECK(r.Run(RunTbatch, {"-V"}) == 0);
  CHECK(r.out.rfind("tessera ", 0) == 0);
  CHECK(r.connects == 0);
}

}  // namespace
}  // namespace tessera::cli
