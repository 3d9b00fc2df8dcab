// Issue 19 (h19 s6): sacct/sstat disk fields (MaxDiskRead/Write, AveDiskRead/Write, their Node
// and Task) and the TRESUsageIn*/Out* strings from the gathered step usage; energy stays empty.
#include <catch2/catch.hpp>

#include "cli/lib/acct_format.h"
#include "rpc/step_usage.h"

namespace tessera::cli {
namespace {

namespace pb = tessera::v1;

pb::StepUsage Part(const std::string& node, uint32_t rank, uint64_t read, uint64_t write,
                   bool measured = true) {
  pb::StepUsage u;
  u.set_ntasks(1);
  u.set_max_rss_kib(1024);
  u.set_max_rss_node(node);
  u.set_max_rss_task(rank);
  u.set_sum_rss_kib(1024);
  u.set_max_vmsize_kib(4096);
  u.set_max_vmsize_node(node);
  u.set_max_vmsize_task(rank);
  u.set_sum_vmsize_kib(4096);
  u.set_min_cpu_ms(1000);
  u.set_min_cpu_node(node);
  u.set_min_cpu_task(rank);
  u.set_user_cpu_ms(1000);
  if (!measured) return u;
  u.set_disk_measured(true);
  u.set_max_disk_read_bytes(read);
  u.set_max_disk_read_node(node);
  u.set_max_disk_read_task(rank);
  u.set_sum_disk_read_bytes(read);
  u.set_max_disk_write_bytes(write);
  u.set_max_disk_write_node(node);
  u.set_max_disk_write_task(rank);
  u.set_sum_disk_write_bytes(write);
  return u;
}

std::string V(const std::string& f, const pb::StepUsage& u) {
  auto v = UsageValue(f, u, "n1");
  return v ? *v : "<none>";
}

TEST_CASE("disk fields: the largest task's with its node and task, averages, sacct's units") {
  pb::StepUsage u = Part("n1", 0, 4096, 5000);
  rpc::AddStepUsage(Part("n2", 1, 3 * 1024 * 1024, 1000), &u);
  CHECK(V("MaxDiskRead", u) == "3M");
  CHECK(V("MaxDiskReadNode", u) == "n2");
  CHECK(V("MaxDiskReadTask", u) == "1");
  CHECK(V("AveDiskRead", u) == "1538K");  // (4096 + 3 MiB) / 2 = 1574912 = 1538K exactly
  CHECK(V("MaxDiskWrite", u) == "5000");
  CHECK(V("MaxDiskWriteNode", u) == "n1");
  CHECK(V("MaxDiskWriteTask", u) == "0");
  CHECK(V("AveDiskWrite", u) == "3000");
  CHECK(V("TRESUsageInMax", u) == "fs/disk=3145728,mem=1M,pages=0,vmem=4M");
  CHECK(V("TRESUsageInMaxNode", u) == "fs/disk=n2,mem=n1,pages=n1,vmem=n1");
  CHECK(V("TRESUsageInTot", u) == "cpu=00:00:02,fs/disk=3149824,mem=2M,pages=0,vmem=8M");
  CHECK(V("TRESUsageOutMax", u) == "fs/disk=5000");
  CHECK(V("TRESUsageOutTot", u) == "fs/disk=6000");
  CHECK(V("TRESUsageOutMaxTask", u) == "fs/disk=0");
  CHECK(V("ConsumedEnergy", u) == "<none>");  // no energy plugin: Value() prints it empty
}

TEST_CASE("disk fields are empty where no node could measure them") {
  pb::StepUsage u = Part("n1", 0, 0, 0, /*measured=*/false);
  CHECK(V("MaxDiskRead", u).empty());
  CHECK(V("AveDiskWrite", u).empty());
  CHECK(V("TRESUsageOutMax", u).empty());
  CHECK(V("TRESUsageInMax", u) == "mem=1M,pages=0,vmem=4M");
  // A measured part added later: its figures, not a zero from the unmeasured one.
  rpc::AddStepUsage(Part("n2", 1, 2048, 0), &u);
  CHECK(V("MaxDiskRead", u) == "2K");
  CHECK(V("MaxDiskReadNode", u) == "n2");
  pb::StepUsage none;
  CHECK(V("MaxDiskRead", none).empty());
}

}  // namespace
}  // namespace tessera::cli
