// Issue 20 (h20a): what tinfo and sdiag read. ctld's node-state summary gives sinfo's default
// view byte for byte as the node records do, and is rebuilt only when a node's state changes;
// sdiag's cycle depth and backfill figures move with cycles, and a reset zeroes them.
#include <catch2/catch.hpp>

#include "cli/lib/info_format.h"
#include "common/hostlist.h"
#include "core_driven_controller.h"
#include "ctld/rpc/convert.h"

using namespace tessera;
using namespace tessera::ctld;
using tessera::ctld::testing::CoreDrivenController;

namespace {

constexpr char kCluster[] =
    "NodeName=n[1-12] NodeAddr=127.0.0.1 Port=20001-20012 CPUs=2 RealMemory=1000\n"
    "PartitionName=p Nodes=n[1-12] Default=YES State=UP MaxTime=60\n"
    "PartitionName=q Nodes=n[9-12] State=UP\n";

JobSpec Tasks(uint32_t cpus) {
  JobSpec spec;
  spec.task_groups.push_back({"main", 1, {cpus, 0, 0, ""}, 0, {}});
  return spec;
}

// The partitions as ListPartitions gives them (the fields sinfo's default view reads).
std::vector<v1::PartitionInfo> Parts(Controller& ctl) {
  std::vector<v1::PartitionInfo> parts;
  for (const auto& p : ctl.config().partitions) {
    v1::PartitionInfo pi;
    pi.set_name(p.name);
    pi.set_is_default(&p == ctl.config().DefaultPartition());
    pi.set_up(p.up);
    pi.set_max_time_s(p.max_time_s);
    pi.set_nodes(CompressHostlist(p.nodes));
    parts.push_back(pi);
  }
  return parts;
}

// sinfo's default view from the node records, as the CLI made it before the summary.
std::string FromRecords(Controller& ctl) {
  std::vector<v1::NodeInfo> nodes;
  for (const auto& name : ctl.nodes().order()) {
    nodes.emplace_back();
    rpc::ToProto(*ctl.nodes().Find(name), 0, &nodes.back());
  }
  return cli::FormatInfo(Parts(ctl), nodes, {});
}

std::string FromSummary(Controller& ctl, uint64_t* generation) {
  std::vector<v1::ListNodesResponse::StateGroup> groups;
  for (const auto& g : ctl.StateSummary(generation)) {
    groups.emplace_back();
    groups.back().set_partition(g.partition);
    groups.back().set_state(rpc::NodeStateOf(g.state));
    groups.back().set_count(g.count);
    groups.back().set_nodes(g.nodes);
  }
  return cli::FormatInfoSummary(Parts(ctl), groups, {});
}

}  // namespace

TEST_CASE("tinfo: ctld's node-state summary prints what the node records print, cached per state") {
  CoreDrivenController c(kCluster);
  for (int i = 1; i <= 10; ++i) c.Register("n" + std::to_string(i));  // n11, n12 never register
  uint64_t whole = c.Submit(Tasks(2));
  uint64_t half = c.Submit(Tasks(1));
  c.RunUntil([&] {
    return c.ctl->jobs().Find(whole)->State() == JobState::kRunning &&
           c.ctl->jobs().Find(half)->State() == JobState::kRunning;
  });
  REQUIRE(c.ctl->UpdateNode("n10", "DRAIN", "maint", 0).ok());
  c.RunUntil([&] { return c.ctl->nodes().Find("n10")->drain; });

  uint64_t gen = 0;
  std::string summary = FromSummary(*c.ctl, &gen);
  CHECK(summary == FromRecords(*c.ctl));
  CHECK(summary.find(" 1:00:00 ") != std::string::npos);
  const auto& groups = c.ctl->StateSummary(&gen);
  REQUIRE(groups.size() == 8);  // p: mix, alloc, idle, drain, unk; q: idle, drain, unk
  CHECK(groups[0].state == "MIXED");
  CHECK(groups[1].state == "ALLOCATED");
  CHECK(groups[2].partition == "p");
  CHECK(groups[2].state == "IDLE");
  CHECK(groups[2].count == 7);
  CHECK(groups[4].state == "UNKNOWN");
  CHECK(groups[4].nodes == "n[11-12]");
  CHECK(groups[6].partition == "q");
  CHECK(groups[6].state == "DRAINED");
  CHECK(groups[6].nodes == "n10");

  // Unchanged states: the cached rows, same generation.
  uint64_t again = 0;
  CHECK(&c.ctl->StateSummary(&again) == &groups);
  CHECK(again == gen);
  // A state change: new rows, next generation, still identical to the records' view.
  REQUIRE(c.ctl->UpdateNode("n3", "DRAIN", "disk", 0).ok());
  c.RunUntil([&] { return c.ctl->nodes().Find("n3")->drain; });
  uint64_t next = 0;
  std::string changed = FromSummary(*c.ctl, &next);
  CHECK(next == gen + 1);
  CHECK(changed != summary);
  CHECK(changed == FromRecords(*c.ctl));
}

TEST_CASE("sdiag: main-cycle depth and backfill figures move with cycles; a reset zeroes them") {
  CoreDrivenController c(
      "NodeName=n1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000\n"
      "PartitionName=p Nodes=n1 Default=YES State=UP\n");
  c.Register("n1");
  uint64_t a = c.Submit(Tasks(2));
  c.RunUntil([&] { return c.ctl->jobs().Find(a)->State() == JobState::kRunning; });
  uint64_t b = c.Submit(Tasks(2));  // pends behind a: allocate examines it, backfill reserves it
  c.RunUntil([&] { return c.ctl->jobs().Find(b)->reason == "Resources"; });
  const CtldStats& s = c.ctl->stats();
  CHECK(s.cycles >= 2);
  CHECK(s.depth_total >= 2);          // a, then b
  CHECK(s.last_queue_length == 1);    // b
  CHECK(s.bf_cycles >= 1);
  CHECK(s.bf_last_when > 0);
  CHECK(s.bf_last_depth == 1);
  CHECK(s.bf_last_depth_try == 1);
  CHECK(s.bf_last_queue == 1);
  CHECK(s.bf_last_us >= 0);
  CHECK(s.jobs_submitted == 2);
  CHECK(s.jobs_started == 1);

  int64_t before = s.start_time;
  c.ctl->ResetStats();
  CHECK(c.ctl->stats().cycles == 0);
  CHECK(c.ctl->stats().jobs_submitted == 0);
  CHECK(c.ctl->stats().bf_cycles == 0);
  CHECK(c.ctl->stats().depth_total == 0);
  CHECK(c.ctl->stats().start_time >= before);
  // Counting starts again.
  c.Submit(Tasks(1));
  c.RunUntil([&] { return c.ctl->stats().cycles >= 1; });
  CHECK(c.ctl->stats().jobs_submitted == 1);
  CHECK(c.ctl->stats().bf_cycles >= 1);
}
