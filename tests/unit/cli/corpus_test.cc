// Every script in tests/corpus goes through tbatch's parsing and JobSpec translation without
// error, and the only warnings are those of documented accepted-but-ignored options.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/lib/batch_request.h"
#include "cli/lib/batch_script.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool IsIgnoredWarning(const std::string& w) {
  for (const auto& [name, short_name, arg] : IgnoredOptions())
    if (w.rfind("--" + name + " is accepted but ignored", 0) == 0) return true;
  return false;
}

Result<tessera::v1::JobSpec> Translate(const std::string& file, std::vector<std::string>* warnings) {
  fs::path p = fs::path(TESSERA_CORPUS_DIR) / file;
  std::string text = ReadAll(p);
  TESSERA_RETURN_IF_ERROR(CheckBatchScript(text));
  auto opts = ResolveBatchOptions(BatchOptions{}, text, {}, 1'700'000'000);
  if (!opts.ok()) return opts.status();
  if (warnings) *warnings = opts->warnings;
  ScriptSource src{text, p.string(), {}};
  return BuildJobSpec(*opts, src, {{"PATH", "/usr/bin"}}, "/home/u");
}

TEST_CASE("every corpus script parses and translates", "[corpus]") {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(TESSERA_CORPUS_DIR)) {
    std::string name = entry.path().filename().string();
    if (name == "README.md") continue;
    ++files;
    INFO(name);
    std::vector<std::string> warnings;
    auto spec = Translate(name, &warnings);
    REQUIRE(spec.ok());
    CHECK(spec->task_groups_size() >= 1);
    for (const auto& w : warnings) {
      INFO(w);
      CHECK(IsIgnoredWarning(w));
    }
  }
  CHECK(files >= 60);
}

TEST_CASE("corpus scripts produce the JobSpec their directives ask for", "[corpus]") {
  SECTION("GPU signal/requeue script (NERSC style)") {
    std::vector<std::string> w;
    auto s = Translate("ct_nvae_signal_interrupt.sh", &w);
    REQUIRE(s.ok());
    CHECK(s->account() == "m3562_g");
    CHECK(s->qos() == "preempt");
    CHECK(s->constraint() == "gpu");
    CHECK(s->name() == "sig_interrupt");
    CHECK(s->time_limit_s() == 36000);
    CHECK(s->nodes_min() == 1);
    CHECK(s->task_groups(0).count() == 4);  // --ntasks-per-gpu=1 x 4 GPUs
    CHECK(s->task_groups(0).per_node().gpus() == 4);
    CHECK(s->task_groups(0).per_task().cpus() == 32);
    CHECK(s->signal_number() == 10);
    CHECK(s->signal_time_s() == 60);
    CHECK(s->open_mode() == "append");
    CHECK(s->requeue());
    CHECK(s->stdout_pattern() == "%j.out");
    CHECK(s->stderr_pattern() == "%j.err");
    REQUIRE(w.size() == 1);
    CHECK(w[0].rfind("--licenses", 0) == 0);
  }
  SECTION("job array with a concurrency limit and D-H:M time") {
    auto s = Translate("course-behaviour-hpc_array_example.sh", nullptr);
    REQUIRE(s.ok());
    CHECK(s->array() == "0-9%4");
    CHECK(s->time_limit_s() == 60);
    CHECK(s->task_groups(0).per_node().mem_mib() == 1024);
    CHECK(s->partition() == "fast");
    CHECK(s->stdout_pattern() == "slurm_array_%A-%a.out");
  }
  SECTION("--mem=0 is the whole node; gres with a type") {
    auto s = Translate("cscfi_run-gpu4-dist-mahti.sh", nullptr);
    REQUIRE(s.ok());
    CHECK(s->mem_whole_node());
    CHECK(s->task_groups(0).per_node().gpus() == 4);
    CHECK(s->task_groups(0).per_node().gpu_model() == "a100");
    CHECK(s->task_groups(0).per_task().cpus() == 40);
    CHECK(s->time_limit_s() == 15 * 60);
  }
  SECTION("several options on one directive line; commented-out ###SBATCH ignored") {
    auto s = Translate("dmff_peg_slater_isa_fit.sh", nullptr);
    REQUIRE(s.ok());
    CHECK(s->nodes_min() == 1);
    CHECK(s->task_groups(0).count() == 1);
    CHECK(s->time_limit_s() == 24 * 3600);
    CHECK(s->stdout_pattern() == "out");
    CHECK(s->partition() == "rtx3090");
    auto z = Translate("mai-object-recognition_launcher-main.sh", nullptr);
    REQUIRE(z.ok());
    CHECK(z->time_limit_s() == 0);  // ###SBATCH --time is a comment
    CHECK(z->task_groups(0).per_node().gpus() == 1);
    CHECK(z->workdir() == "/home/u/.");
    auto g = Translate("grad-w_irm_run.sh", nullptr);
    REQUIRE(g.ok());
    CHECK(g->partition().empty());  // #####SBATCH -p new
    CHECK(g->nodelist() == "ttnusa6");
  }
  SECTION("--tasks is getopt's prefix of --tasks-per-node; lower-case memory units") {
    auto s = Translate("transformer_job.sh", nullptr);
    REQUIRE(s.ok());
    CHECK(s->task_groups(0).tasks_per_node() == 80);
    auto e = Translate("eel6763_lab0_job-hw.sh", nullptr);
    REQUIRE(e.ok());
    CHECK(e->task_groups(0).per_task().mem_mib() == 1000);
    CHECK(e->qos() == "eel6763");
  }
  SECTION("quoted constraint expression, -G with a type") {
    auto s = Translate("ubinet_submit_job.sh", nullptr);
    REQUIRE(s.ok());
    CHECK(s->constraint() == "tesla_v100|quadro_rtx_8000|geforce_rtx_3090|a100|a5000|a6000");
    CHECK(s->task_groups(0).per_task().gpus() == 1);
    CHECK(s->signal_time_s() == 120);
    auto h = Translate("hanscripter_finetune.sh", nullptr);
    REQUIRE(h.ok());
    CHECK(h->task_groups(0).per_task().gpu_model() == "a100");
  }
}

}  // namespace
}  // namespace tessera::cli
