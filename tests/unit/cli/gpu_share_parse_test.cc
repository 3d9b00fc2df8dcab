// --gres=mps:N and --gres=shard:N (issue 14 §3): command line, #SBATCH and SBATCH_GRES.
#include <catch2/catch.hpp>

#include "cli/lib/batch_options.h"
#include "cli/lib/batch_request.h"

using namespace tessera;
using namespace tessera::cli;

namespace {
Result<tessera::v1::JobSpec> ShareSpec(const std::string& script,
                                       const std::vector<std::string>& args,
                                       const std::map<std::string, std::string>& env = {}) {
  auto cl = ParseBatchCommandLine(args, 1000);
  if (!cl.ok()) return cl.status();
  auto opts = ResolveBatchOptions(cl->options, script, env, 1000);
  if (!opts.ok()) return opts.status();
  ScriptSource src{script, "job.sh", {}};
  return BuildJobSpec(*opts, src, env, "/home/alice");
}
}  // namespace

TEST_CASE("gres values mps:N and shard:N parse into per-node shares") {
  auto m = ParseGresShares("mps:50");
  REQUIRE(m.ok());
  CHECK(m->mps == 50);
  CHECK(m->shards == 0);
  auto s = ParseGresShares("gres/shard:2");
  REQUIRE(s.ok());
  CHECK(s->shards == 2);
  auto g = ParseGres("mps:50");
  REQUIRE(g.ok());
  CHECK_FALSE(g->has_value());  // no whole GPUs
  CHECK(ParseGresShares("gpu:2")->mps == 0);
  CHECK(ParseGresShares("mps:0").status().message() == "bad mps count \"0\": expected 1..1024");
  CHECK(ParseGresShares("mps:a100:1:50").status().message() ==
        "expected mps[:type]:count, not \"mps:a100:1:50\"");
  CHECK(ParseGresShares("mps:50,shard:1").status().message() ==
        "mps and shard cannot be combined in one job");
  CHECK(ParseGres("license:2").status().message() ==
        "only gpu, mps and shard GRES are supported, not \"license:2\"");
}

TEST_CASE("tbatch --gres=mps:50 and #SBATCH --gres=shard:3 reach the job's resources") {
  auto a = ShareSpec("#!/bin/sh\n", {"--gres=mps:50"});
  REQUIRE(a.ok());
  CHECK(a->task_groups(0).per_node().mps() == 50);
  CHECK(a->task_groups(0).per_node().gpus() == 0);
  auto b = ShareSpec("#!/bin/sh\n#SBATCH --gres=shard:3\n", {});
  REQUIRE(b.ok());
  CHECK(b->task_groups(0).per_node().shards() == 3);
  CHECK(b->task_groups(0).per_node().mps() == 0);
  // The command line's --gres replaces the script's.
  auto c = ShareSpec("#!/bin/sh\n#SBATCH --gres=shard:3\n", {"--gres=mps:25"});
  REQUIRE(c.ok());
  CHECK(c->task_groups(0).per_node().mps() == 25);
  CHECK(c->task_groups(0).per_node().shards() == 0);
  auto e = ShareSpec("#!/bin/sh\n", {}, {{"SBATCH_GRES", "mps:10"}});
  REQUIRE(e.ok());
  CHECK(e->task_groups(0).per_node().mps() == 10);
  auto bad = ShareSpec("#!/bin/sh\n", {"--gres=shard:x"});
  CHECK_FALSE(bad.ok());
}

TEST_CASE("typed shares: mps:a100:50 and shard:h100:2 name the GPU type that shares") {
  auto m = ParseGresShares("mps:a100:50");
  REQUIRE(m.ok());
  CHECK(m->mps == 50);
  CHECK(m->model == "a100");
  auto s = ParseGresShares("gres/shard:h100:2");
  REQUIRE(s.ok());
  CHECK(s->shards == 2);
  CHECK(s->model == "h100");
  CHECK(ParseGresShares("mps:50")->model.empty());
  auto g = ParseGres("mps:a100:50");
  REQUIRE(g.ok());
  CHECK_FALSE(g->has_value());  // no whole GPUs
  CHECK(ParseGresShares("mps::50").status().message() == "empty GPU type in \"mps::50\"");
  CHECK(ParseGresShares("mps:a100:50,mps:h100:10").status().message() ==
        "shares of two GPU types (a100, h100) in one job: a job shares one GPU per node");
  auto spec = ShareSpec("#!/bin/sh\n#SBATCH --gres=mps:a100:50\n", {});
  REQUIRE(spec.ok());
  CHECK(spec->task_groups(0).per_node().mps() == 50);
  CHECK(spec->task_groups(0).per_node().share_model() == "a100");
  CHECK(spec->task_groups(0).per_node().gpus() == 0);
  CHECK(spec->task_groups(0).per_node().gpu_model().empty());
}

#include "cli/lib/gpu_view.h"
#include "cli/lib/share_view.h"
#include "cli/lib/show_format.h"

TEST_CASE("tcontrol show node and tinfo --gpus show MPS and shard totals and use") {
  tessera::v1::NodeInfo n;
  n.set_name("n1");
  n.set_cpus(8);
  for (uint32_t i = 0; i < 2; ++i) {
    auto* g = n.add_gpus();
    g->set_index(i);
    g->set_model("a100");
    g->set_healthy(true);
    g->set_mps(true);
    g->set_replicas(4);
  }
  n.mutable_gpus(0)->set_mps_used(50);
  n.mutable_gpus(1)->set_shards_used(3);
  CHECK(ShareGres(n) == "mps:200,shard:8");
  CHECK(ShareGresUsed(n) == "mps:50(IDX:0),shard:3(IDX:1)");
  std::string show = FormatNodeDetail(n);
  CHECK(show.find("   Gres=gpu:a100:2,mps:200,shard:8\n") != std::string::npos);
  CHECK(show.find("   GresUsed=gpu:a100:0,mps:50(IDX:0),shard:3(IDX:1)\n") != std::string::npos);
  std::string pool = FormatGpuPool({n}, {});
  CHECK(pool.find("[ss]  0:mps[50/100] 1:shard[3/4]") != std::string::npos);
  CHECK(pool.find("2 shared (mps/shard)") != std::string::npos);
  n.mutable_gpus(0)->set_mps_used(0);
  n.mutable_gpus(1)->set_shards_used(0);
  CHECK(ShareGresUsed(n) == "mps:0,shard:0");
  CHECK(FormatGpuPool({n}, {}).find("[..]") != std::string::npos);
}

#include "cli/lib/hca_view.h"

TEST_CASE("tcontrol show node lists HCAs with NUMA node, RoCE interface and the GPUs near them") {
  tessera::v1::NodeInfo n;
  n.set_name("n1");
  for (int i = 0; i < 2; ++i) {
    auto* g = n.add_gpus();
    g->set_index(static_cast<uint32_t>(i));
    g->set_model("a100");
    g->set_healthy(true);
    g->set_numa_node(i);
    auto* h = n.add_hcas();
    h->set_name("mlx5_" + std::to_string(i));
    h->set_port(1);
    h->set_state("ACTIVE");
    h->set_link_layer(i ? "Ethernet" : "InfiniBand");
    h->set_numa_node(i);
  }
  n.mutable_hcas(1)->set_netdev("eth2");
  CHECK(FormatHcas(n) ==
        "mlx5_0:1(InfiniBand,ACTIVE,numa=0,gpus=0) mlx5_1:1(Ethernet,ACTIVE,numa=1,netdev=eth2,gpus=1)");
  CHECK(FormatNodeDetail(n).find("   HCAs=mlx5_0:1(InfiniBand,ACTIVE,numa=0,gpus=0) ") !=
        std::string::npos);
}
