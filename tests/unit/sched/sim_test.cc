#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/engine.h"
#include "tests/unit/sched/sim_fixtures.h"
#include "sim/report.h"
#include "sim/trace.h"

using namespace tessera;
namespace fs = std::filesystem;

namespace {
std::string WriteTemp(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}
sched::ClusterSnapshot OneNode() { return sched::testing::SimOneNode(2); }
}  // namespace

TEST_CASE("sim replays a CSV trace with exact start times and backfill") {
  std::string path = WriteTemp("tessera_sim_ok.csv",
                               "submit,runtime,req_time,gpus,cpus,mem_mib,nodes,user,account,partition,qos\n"
                               "0,100,100,2,1,0,1,a,x,,\n"    // takes both GPUs until 100
                               "10,50,50,2,1,0,1,b,y,,\n"     // waits until 100
                               "20,30,30,0,2,0,1,c,x,,\n");   // CPU-only: starts at 20
  auto trace = sim::ReadCsv(path);
  REQUIRE(trace.ok());
  auto run = sim::Simulate(OneNode(), "p", sched::SchedConfig{}, *trace, "default");
  REQUIRE(run.error.empty());
  REQUIRE(run.jobs.size() == 3);
  CHECK(run.jobs[0].start == 0);
  CHECK(run.jobs[1].start == 100);
  CHECK(run.jobs[2].start == 20);
  CHECK(run.jobs[1].end == 150);
  auto m = sim::Compute(run);
  CHECK(m.makespan == 150);
  CHECK(m.wait_max == 90);
  CHECK(m.gpu_util == Approx((100.0 * 2 + 50.0 * 2) / (2 * 150.0)));
  auto again = sim::Simulate(OneNode(), "p", sched::SchedConfig{}, *trace, "default");
  for (size_t i = 0; i < 3; ++i) CHECK(again.jobs[i].start == run.jobs[i].start);
  fs::remove(path);
}

TEST_CASE("sim trace readers name the bad line") {
  std::string csv = WriteTemp("tessera_sim_bad.csv",
                              "submit,runtime,req_time,gpus,cpus,mem_mib,nodes,user,account,partition,qos\n"
                              "0,100,100,2,1,0,1,a,x,,\n"
                              "5,abc,100,2,1,0,1,a,x,,\n");
  auto r = sim::ReadCsv(csv);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("tessera_sim_bad.csv:3") != std::string::npos);
  CHECK(r.status().message().find("runtime") != std::string::npos);
  std::string swf = WriteTemp("tessera_sim_bad.swf", "; header\n1 0 0 10 4 -1 -1 4 -1 -1 1 1 1 1 1 1 -1 -1\n2 5 0 x\n");
  auto s = sim::ReadSwf(swf);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().message().find("tessera_sim_bad.swf:3") != std::string::npos);
  fs::remove(csv);
  fs::remove(swf);
}

TEST_CASE("sim --worst: the longest waits first, with the job's size and limit (issue 17)") {
  std::string path = WriteTemp("tessera_sim_worst.csv",
                               "submit,runtime,req_time,gpus,cpus,mem_mib,nodes,user,account,partition,qos\n"
                               "0,100,100,2,1,0,1,a,x,,\n"    // both GPUs until 100
                               "10,50,50,2,1,0,1,b,y,,\n"     // waits 90 (starts at 100)
                               "20,30,30,1,1,0,1,c,x,,\n");   // waits 130 (starts at 150)
  auto trace = sim::ReadCsv(path);
  REQUIRE(trace.ok());
  auto run = sim::Simulate(OneNode(), "p", sched::SchedConfig{}, *trace, "default");
  REQUIRE(run.error.empty());
  REQUIRE(run.jobs[2].start == 150);
  std::ostringstream out;
  sim::PrintWorstWaits(out, run, 2);
  CHECK(out.str() ==
        "\nlongest waits: default\n"
        "  trace_id     submit_s       wait_s      run_s    limit_s  gpus  cpus nodes account\n"
        "         3           20          130         30         30     1     1     1 x\n"
        "         2           10           90         50         50     2     1     1 y\n");
  std::ostringstream all;  // N larger than the run: every started job, once
  sim::PrintWorstWaits(all, run, 10);
  std::string text = all.str();
  CHECK(std::count(text.begin(), text.end(), '\n') == 3 + 3);  // blank, title, header, rows
  std::ostringstream jobs;  // --jobs-csv: every job, with the nodes it ran on
  sim::PrintJobsCsv(jobs, run, {"n1"}, true);
  CHECK(jobs.str() ==
        "config,trace_id,submit,start,end,wait,gpus,cpus,nodes\n"
        "default,1,0,0,100,0,2,1,n1\n"
        "default,2,10,100,150,90,2,1,n1\n"
        "default,3,20,150,180,130,1,1,n1\n");
  fs::remove(path);
}
