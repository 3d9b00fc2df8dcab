// MIG display (issue 14 §1): tcontrol show node counts instances by profile and shows each
// MIG GPU's layout with UUIDs and holders; tinfo --gpus counts MIG GPUs held by jobs as
// allocated, also when only the job list (NodeAllocation.mig_uuids) says who holds them.
#include <catch2/catch.hpp>

#include "cli/lib/batch_options.h"
#include "cli/lib/batch_request.h"
#include "cli/lib/gpu_units.h"
#include "cli/lib/gpu_view.h"
#include "cli/lib/info_custom.h"
#include "cli/lib/job_view.h"
#include "cli/lib/show_format.h"

namespace tessera::cli {
namespace {

namespace pb = ::tessera::v1;

// GPU 0 whole (h100, held by job 5), GPU 1 in MIG mode: 3g.40gb@0 held by job 7, 1g.10gb@4 free.
pb::NodeInfo MigNode(bool report_holder) {
  pb::NodeInfo n;
  n.set_name("g1");
  n.set_state(pb::NODE_MIXED);
  for (uint32_t i = 0; i < 2; ++i) {
    auto* g = n.add_gpus();
    g->set_index(i);
    g->set_model("h100");
    g->set_healthy(true);
  }
  n.add_alloc_gpu_indices(0);
  auto* g = n.mutable_gpus(1);
  g->set_mig_enabled(true);
  auto* a = g->add_mig_instances();
  a->set_profile("3g.40gb");
  a->set_placement_start(0);
  a->set_uuid("MIG-aaaa");
  if (report_holder) a->set_in_use_by_job(7);
  auto* b = g->add_mig_instances();
  b->set_profile("1g.10gb");
  b->set_placement_start(4);
  b->set_uuid("MIG-bbbb");
  return n;
}

Result<pb::JobSpec> Spec(const std::string& script, const std::vector<std::string>& args) {
  auto cl = ParseBatchCommandLine(args, 1700000000);
  if (!cl.ok()) return cl.status();
  auto opts = ResolveBatchOptions(cl->options, script, {}, 1700000000);
  if (!opts.ok()) return opts.status();
  ScriptSource src{script, "job.sh", {}};
  return BuildJobSpec(*opts, src, {}, "/home/alice");
}

}  // namespace

TEST_CASE("MIG request syntax: a profile wherever Slurm takes a GPU type") {
  auto gres = Spec("#!/bin/sh\n#SBATCH --gres=gpu:3g.40gb:1\n", {});
  REQUIRE(gres.ok());
  CHECK(gres->task_groups(0).per_node().gpu_model() == "3g.40gb");
  CHECK(gres->task_groups(0).per_node().gpus() == 1);
  auto total = Spec("#!/bin/sh\n", {"--gpus=1g.10gb:2"});
  REQUIRE(total.ok());
  CHECK(total->task_groups(0).per_task().gpu_model() == "1g.10gb");
  CHECK(total->task_groups(0).per_task().gpus() == 2);
  auto per_node = Spec("#!/bin/sh\n", {"-N2", "--gpus-per-node=3g.40gb:1"});
  REQUIRE(per_node.ok());
  CHECK(per_node->task_groups(0).per_node().gpu_model() == "3g.40gb");
  auto per_task = Spec("#!/bin/sh\n", {"-n4", "--gpus-per-task=1g.10gb:1"});
  REQUIRE(per_task.ok());
  CHECK(per_task->task_groups(0).per_task().gpu_model() == "1g.10gb");
  CHECK(per_task->task_groups(0).per_task().gpus() == 1);
}

TEST_CASE("show node: Gres by type and profile, GresUsed, one MigLayout line per MIG GPU") {
  std::string d = FormatNodeDetail(MigNode(true));
  CHECK(d.find("   Gres=gpu:1g.10gb:1,gpu:3g.40gb:1,gpu:h100:1\n") != std::string::npos);
  CHECK(d.find("   GresUsed=gpu:1g.10gb:0,gpu:3g.40gb:1,gpu:h100:1\n") != std::string::npos);
  CHECK(d.find("   MigLayout[1]=3g.40gb@0(MIG-aaaa,job 7),1g.10gb@4(MIG-bbbb,free)\n") !=
        std::string::npos);
  CHECK(d.find("gres/gpu=3\n") != std::string::npos);  // CfgTRES: 1 whole + 2 instances
  CHECK(d.find("AllocTRES=gres/gpu=2\n") != std::string::npos);
}

TEST_CASE("tinfo --gpus: a MIG GPU held through a job's mig_uuids counts as allocated") {
  pb::JobInfo j5, j7;
  j5.set_job_id(5);
  auto* a5 = j5.add_alloc();
  a5->set_node("g1");
  a5->add_gpu_indices(0);
  j7.set_job_id(7);
  auto* a7 = j7.add_alloc();
  a7->set_node("g1");
  a7->add_mig_uuids("MIG-aaaa");
  std::string out = FormatGpuPool({MigNode(false)}, {j5, j7});
  CHECK(out.find("g1   mix   [#M]  0:5 1:mig[3g.40gb@0:7(MIG-aaaa),1g.10gb@4:-(MIG-bbbb)]\n") !=
        std::string::npos);
  CHECK(out.find("2 GPUs on 1 nodes: 2 allocated, 0 free") != std::string::npos);
  CHECK(out.find("1 of 2 instances in use (free/total: 1g.10gb 1/1 3g.40gb 0/1)") !=
        std::string::npos);
}

TEST_CASE("a job on MIG instances shows them in GresAlloc and counts them in its TRES") {
  pb::JobInfo j;
  j.set_job_id(7);
  auto* g = j.mutable_spec()->add_task_groups();
  g->set_count(1);
  g->mutable_per_task()->set_gpus(2);
  g->mutable_per_task()->set_gpu_model("1g.10gb");
  auto* a = j.add_alloc();
  a->set_node("g1");
  a->add_mig_uuids("MIG-a");
  a->add_mig_uuids("MIG-b");
  CHECK(GpuAllocText(j) == "g1:gpu:1g.10gb:2(MIG-a,MIG-b)");
  CHECK(TresOf(j).find(",gres/gpu=2") != std::string::npos);
}

}  // namespace tessera::cli
