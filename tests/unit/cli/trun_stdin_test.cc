// Issue 19 (h19 s7): trun's stdin to the tasks (-i all, -i N, -i FILE) and the tasks' GPU binding
// (--gpus-per-task, --gpu-bind, SLURM_GPUS_PER_TASK, SLURM_GPU_BIND), against fake nodes.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "trun_fakes.h"

namespace tessera::cli {
namespace {

using namespace trun_fakes;
namespace v1 = tessera::v1;

// Issue 19 (h19 s7): srun's stdin goes to the tasks (-i all by default, -i N to one).
TEST_CASE("trun forwards its stdin to every task, or with -i N to task N only", "[trun][issue19]") {
  auto sent = [](FakeNode* n) {
    std::string data;
    bool eof = false;
    for (const auto& in : n->inputs) {
      CHECK(in.job_id() == 42);
      CHECK(in.step_id() == 3);
      data += in.data();
      eof = eof || in.eof();
    }
    return data + (eof ? "<EOF>" : "");
  };
  TrunRun t;
  t.stdin_data = "hi\n";
  for (auto* n : {t.nodes["it1"], t.nodes["it2"]}) n->wait_eof = true;
  t.nodes["it1"]->script = {Exit(0, 0), Exit(1, 0)};
  t.nodes["it2"]->script = {Exit(2, 0), Exit(3, 0)};
  CHECK(t.Run({"cat"}) == 0);
  INFO(t.cmd.err);
  CHECK(sent(t.nodes["it1"]) == "hi\n<EOF>");
  CHECK(sent(t.nodes["it2"]) == "hi\n<EOF>");
  const auto& in2 = t.nodes["it2"]->runs.back().task_input();
  CHECK(in2.size() == 2);
  CHECK(in2.at(2) == "-");  // a pipe fed by SendInput
  CHECK(in2.at(3) == "-");

  TrunRun one;  // -i 3: only it2 runs task 3
  one.stdin_data = "only three\n";
  one.nodes["it2"]->wait_eof = true;
  one.nodes["it1"]->script = {Exit(0, 0), Exit(1, 0)};
  one.nodes["it2"]->script = {Exit(2, 0), Exit(3, 0)};
  CHECK(one.Run({"-i", "3", "cat"}) == 0);
  CHECK(one.nodes["it1"]->inputs.empty());
  CHECK(one.nodes["it1"]->runs.back().task_input().empty());
  CHECK(sent(one.nodes["it2"]) == "only three\n<EOF>");
  CHECK(one.nodes["it2"]->runs.back().task_input().size() == 1);
  CHECK(one.nodes["it2"]->runs.back().task_input().at(3) == "-");

  for (std::vector<std::string> args : {std::vector<std::string>{"-i", "none", "cat"},
                                        std::vector<std::string>{"cat"}}) {
    TrunRun quiet;  // -i none, or stdin /dev/null (a batch script's): nothing forwarded
    if (args.size() == 3) quiet.stdin_data = "unread\n";
    quiet.Run(args);
    CHECK(quiet.nodes["it1"]->inputs.empty());
    CHECK(quiet.nodes["it1"]->runs.back().task_input().empty());
  }
  TrunRun bad;  // srun: a number that is no task of the step names a file, here missing
  bad.stdin_data = "x";
  CHECK(bad.Run({"--input=4", "cat"}) == 1);
  CHECK(bad.cmd.err.find("Could not open stdin file /home/alice/work/4: No such file") !=
        std::string::npos);
  CHECK(bad.nodes["it1"]->runs.empty());
  REQUIRE(bad.cmd.ctld.CompleteStep_calls.size() == 1);
  CHECK(bad.cmd.ctld.CompleteStep_calls[0].state() == v1::FAILED);
  CHECK(bad.Run({"-o", "9", "true"}) == 1);  // the same for -o/-e
  CHECK(bad.cmd.err.find("cannot open /home/alice/work/9 for task 0's output") !=
        std::string::npos);
}

// Issue 19 (h19 s7): -i FILE without %t %n %N %u is read by trun and broadcast, as srun does on
// its host; with them each task opens its own file on its node.
TEST_CASE("trun -i FILE reads the file itself and sends it to every task", "[trun][issue19]") {
  char tmpl[] = "/tmp/trun-in-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/in-42.txt") << "from the file\n";
  TrunRun t;
  t.stdin_data = "not this\n";
  for (auto* n : {t.nodes["it1"], t.nodes["it2"]}) n->wait_eof = true;
  t.nodes["it1"]->script = {Exit(0, 0), Exit(1, 0)};
  t.nodes["it2"]->script = {Exit(2, 0), Exit(3, 0)};
  CHECK(t.Run({"-i", dir + "/in-%j.txt", "cat"}) == 0);
  INFO(t.cmd.err);
  for (auto* n : {t.nodes["it1"], t.nodes["it2"]}) {
    std::string data;
    for (const auto& in : n->inputs) data += in.data() + (in.eof() ? "<EOF>" : "");
    CHECK(data == "from the file\n<EOF>");
    CHECK(n->runs.back().task_input().size() == 2);
  }
  CHECK(t.nodes["it2"]->runs.back().task_input().at(3) == "-");
  TrunRun per_node;  // %N: opened on each node
  per_node.Run({"-i", dir + "/in-%N.txt", "true"});
  CHECK(per_node.nodes["it2"]->runs.back().task_input().at(2) == dir + "/in-it2.txt");
  CHECK(per_node.nodes["it2"]->inputs.empty());
  TrunRun dash;  // "-" is all, as srun
  dash.stdin_data = "x\n";
  dash.nodes["it1"]->wait_eof = dash.nodes["it2"]->wait_eof = true;
  dash.Run({"-i", "-", "true"});
  CHECK(dash.nodes["it1"]->runs.back().task_input().at(0) == "-");
}

// Issue 19 (h19 s7): --gpus-per-task binds each task to its own GPUs (srun's implied
// --gpu-bind=per_task:N), --gpu-bind chooses; both reach noded as TESSERA_TRUN_GPU_BIND.
TEST_CASE("trun --gpus-per-task and --gpu-bind give noded the tasks' GPU binding",
          "[trun][issue19]") {
  auto bind_of = [](TrunRun& r) {
    const auto& env = r.nodes["it1"]->runs.back().env();
    auto it = env.find("TESSERA_TRUN_GPU_BIND");
    return it == env.end() ? std::string("<unset>") : it->second;
  };
  TrunRun a;
  a.Run({"--gpus-per-task=2", "true"});
  CHECK(bind_of(a) == "per_task:2");
  a.Run({"--gpus-per-task=1", "--gpu-bind=none", "true"});
  CHECK(bind_of(a) == "none");
  a.Run({"--gpu-bind=verbose,map_gpu:1,0", "true"});
  CHECK(bind_of(a) == "verbose,map_gpu:1,0");
  CHECK(a.cmd.ctld.CreateStep_calls.back().gpus_per_task() == 0);
  a.Run({"true"});
  CHECK(bind_of(a) == "<unset>");
  TrunRun inherited;  // sbatch --gpus-per-task=a100:2 put SLURM_GPUS_PER_TASK into the job
  inherited.cmd.env["SLURM_GPUS_PER_TASK"] = "a100:2";
  inherited.cmd.env["TESSERA_TRUN_GPU_BIND"] = "mask_gpu:1";  // never taken from the caller
  inherited.Run({"true"});
  CHECK(inherited.cmd.ctld.CreateStep_calls.back().gpus_per_task() == 2);
  CHECK(inherited.cmd.ctld.CreateStep_calls.back().gpu_type() == "a100");
  CHECK(bind_of(inherited) == "per_task:2");
  inherited.Run({"--gpus-per-node=1", "true"});  // the step's own request replaces the job's
  CHECK(inherited.cmd.ctld.CreateStep_calls.back().gpus_per_task() == 0);
  CHECK(inherited.cmd.ctld.CreateStep_calls.back().gpus_per_node() == 1);
  CHECK(bind_of(inherited) == "<unset>");
  inherited.cmd.env["SLURM_GPU_BIND"] = "single:2";  // sbatch --gpu-bind
  inherited.Run({"true"});
  CHECK(bind_of(inherited) == "single:2");
  TrunRun bad;
  CHECK(bad.Run({"--gpu-bind=per_task:0", "true"}) == 1);
  CHECK(bad.cmd.err.find("invalid --gpu-bind value \"per_task:0\"") != std::string::npos);
  bad.cmd.env["SLURM_GPU_BIND"] = "sometimes";
  CHECK(bad.Run({"true"}) == 1);
  CHECK(bad.cmd.err.find("from the environment: invalid --gpu-bind value \"sometimes\"") !=
        std::string::npos);
  CHECK(bad.cmd.ctld.CreateStep_calls.empty());
}

}  // namespace
}  // namespace tessera::cli
