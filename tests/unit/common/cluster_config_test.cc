// The typed cluster configuration (cluster_config.h): tessera.conf keys, NodeName/PartitionName
// lines, DEFAULT lines, Port ranges, gres.conf, warnings and errors with file:line.
#include "common/cluster_config.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "common/duration.h"
#include "temp_dir.h"

namespace tessera {
namespace {

Result<ClusterConfig> Build(const std::string& text, const std::string& gres = "") {
  auto lines = ParseConfigText(text, "tessera.conf");
  if (!lines.ok()) return lines.status();
  std::vector<ConfigLine> gl;
  if (!gres.empty()) {
    auto g = ParseConfigText(gres, "gres.conf");
    if (!g.ok()) return g.status();
    gl = *g;
  }
  return BuildClusterConfig(*lines, gl);
}

ClusterConfig MustBuild(const std::string& text, const std::string& gres = "") {
  auto r = Build(text, gres);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

std::string BuildError(const std::string& text, const std::string& gres = "") {
  auto r = Build(text, gres);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kInvalidArgument);
  return r.status().message();
}

bool HasWarning(const ClusterConfig& c, const std::string& fragment) {
  return std::any_of(c.warnings.begin(), c.warnings.end(),
                     [&](const std::string& w) { return w.find(fragment) != std::string::npos; });
}

const char* kMinimal = "NodeName=n1\nPartitionName=p Nodes=n1\n";

TEST_CASE("cluster config: defaults", "[cluster_config]") {
  ClusterConfig c = MustBuild(kMinimal);
  CHECK(c.cluster_name == "tessera");
  CHECK(c.ctld_host == "localhost");
  CHECK(c.ctld_addr == "localhost");
  CHECK(c.ctld_port == 6817);
  CHECK(c.state_dir == "/var/lib/tessera");
  CHECK(c.node_timeout_s == 60);
  CHECK(c.HeartbeatInterval() == 20);
  CHECK(c.kill_wait_s == 30);
  CHECK(c.min_job_age_s == 300);
  CHECK(c.cluster_user == "root");
  CHECK_FALSE(c.TlsEnabled());
  CHECK(c.warnings.empty());
  REQUIRE(c.nodes.size() == 1);
  CHECK(c.nodes[0].addr == "n1");
  CHECK(c.nodes[0].port == 6818);
  CHECK(c.nodes[0].cpus == 1);
  CHECK(c.nodes[0].partitions == std::vector<std::string>{"p"});
  CHECK(c.DefaultPartition()->name == "p");  // the first partition when none says Default=YES
}

TEST_CASE("cluster config: scalar keys", "[cluster_config]") {
  ClusterConfig c = MustBuild(
      "ClusterName=gpu-farm\n"
      "SlurmctldHost=head01(10.1.2.3)\n"
      "SlurmctldPort=7817\n"
      "StateSaveLocation=/srv/tessera/state\n"
      "SlurmdSpoolDir=/var/spool/tessera/%n/spool\n"
      "TesseraLogDir=/var/log/tessera\n"
      "AuthInfo=cred_expire=60,socket=/run/munge/alt.socket\n"
      "SlurmdTimeout=90\nHeartbeatInterval=7\nKillWait=10\nMinJobAge=60\nSchedulerInterval=2\n"
      "SlurmUser=tessera\n"
      "TesseraAdmins=alice,bob\nTesseraOperators=carol\n" +
      std::string(kMinimal));
  CHECK(c.cluster_name == "gpu-farm");
  CHECK(c.ctld_host == "head01");
  CHECK(c.ctld_addr == "10.1.2.3");
  CHECK(c.ctld_port == 7817);
  CHECK(c.state_dir == "/srv/tessera/state");
  CHECK(c.SpoolDirFor("n7") == "/var/spool/tessera/n7/spool");
  CHECK(c.log_dir == "/var/log/tessera");
  CHECK(c.munge_socket == "/run/munge/alt.socket");
  CHECK(c.node_timeout_s == 90);
  CHECK(c.HeartbeatInterval() == 7);
  CHECK(c.kill_wait_s == 10);
  CHECK(c.min_job_age_s == 60);
  CHECK(c.sched_interval_s == 2);
  CHECK(c.cluster_user == "tessera");
  CHECK(c.admins == std::vector<std::string>{"alice", "bob"});
  CHECK(c.operators == std::vector<std::string>{"carol"});
  CHECK(c.warnings.empty());
}

TEST_CASE("cluster config: ControlAddr, ControlMachine and TesseraUser", "[cluster_config]") {
  ClusterConfig c = MustBuild("ControlMachine=head\nControlAddr=192.0.2.1\nTesseraUser=svc\n" +
                              std::string(kMinimal));
  CHECK(c.ctld_host == "head");
  CHECK(c.ctld_addr == "192.0.2.1");
  CHECK(c.cluster_user == "svc");
  ClusterConfig plain = MustBuild("SlurmctldHost=ctl\n" + std::string(kMinimal));
  CHECK(plain.ctld_addr == "ctl");
}

TEST_CASE("cluster config: TLS files go together", "[cluster_config]") {
  ClusterConfig c = MustBuild("TlsCertFile=/c.pem\nTlsKeyFile=/k.pem\nTlsCaFile=/ca.pem\n" +
                              std::string(kMinimal));
  CHECK(c.TlsEnabled());
  CHECK(c.tls_key == "/k.pem");
  CHECK_THAT(BuildError("TlsCertFile=/c.pem\n" + std::string(kMinimal)),
             Catch::Contains("TlsCertFile, TlsKeyFile and TlsCaFile must be set together"));
}

TEST_CASE("cluster config: bad scalar values name file:line and key", "[cluster_config]") {
  CHECK(BuildError("ClusterName=x\nSlurmdTimeout=soon\n" + std::string(kMinimal)) ==
        "tessera.conf:2: invalid value \"soon\" for SlurmdTimeout: expected seconds");
  CHECK_THAT(BuildError("SlurmctldPort=70000\n" + std::string(kMinimal)),
             Catch::StartsWith("tessera.conf:1: invalid value \"70000\" for SlurmctldPort"));
  CHECK_THAT(BuildError("SlurmctldHost=head(10.0.0.1\n" + std::string(kMinimal)),
             Catch::Contains("expected host or host(addr)"));
}

TEST_CASE("cluster config: NodeName lines with hostlists and keys", "[cluster_config]") {
  ClusterConfig c = MustBuild(
      "NodeName=gpu[01-02] CPUs=64 RealMemory=512000 Features=h100,ib Gres=gpu:h100:8 Weight=5 "
      "State=DRAIN Reason=\"burn in\"\n"
      "NodeName=cpu[1-3],login NodeAddr=10.0.0.9 Port=7001-7004 Procs=16\n"
      "PartitionName=gpu Nodes=gpu[01-02]\n");
  REQUIRE(c.nodes.size() == 6);
  const NodeConfig* g = c.FindNode("gpu02");
  REQUIRE(g);
  CHECK(g->cpus == 64);
  CHECK(g->real_memory_mib == 512000);
  CHECK(g->features == std::vector<std::string>{"h100", "ib"});
  CHECK(g->gres_gpus == std::map<std::string, uint32_t>{{"h100", 8}});
  CHECK(g->weight == 5);
  CHECK(g->initial_state == "DRAIN");
  CHECK(g->reason == "burn in");
  CHECK(g->addr == "gpu02");
  CHECK(g->where == "tessera.conf:1");
  const NodeConfig* login = c.FindNode("login");
  REQUIRE(login);
  CHECK(login->cpus == 16);
  CHECK(login->addr == "10.0.0.9");
  CHECK(login->partitions.empty());
  CHECK(c.FindNode("cpu4") == nullptr);
}

TEST_CASE("cluster config: NodeAddr hostlist maps one address per node", "[cluster_config]") {
  ClusterConfig c = MustBuild("NodeName=n[1-3] NodeAddr=10.0.0.[11-13]\n"
                              "PartitionName=p Nodes=n[1-3]\n");
  CHECK(c.FindNode("n1")->addr == "10.0.0.11");
  CHECK(c.FindNode("n3")->addr == "10.0.0.13");
  CHECK_THAT(BuildError("NodeName=n[1-3] NodeAddr=a[1-2]\nPartitionName=p Nodes=n1\n"),
             Catch::StartsWith("tessera.conf:1: NodeAddr"));
}

TEST_CASE("cluster config: Gres forms", "[cluster_config]") {
  ClusterConfig c = MustBuild("NodeName=a Gres=gpu:2\nNodeName=b Gres=gpu:a100:2,gpu:v100:1\n"
                              "NodeName=c Gres=gpu\nPartitionName=p Nodes=a,b,c\n");
  CHECK(c.FindNode("a")->gres_gpus == std::map<std::string, uint32_t>{{"", 2}});
  CHECK(c.FindNode("b")->gres_gpus == std::map<std::string, uint32_t>{{"a100", 2}, {"v100", 1}});
  CHECK(c.FindNode("c")->gres_gpus == std::map<std::string, uint32_t>{{"", 1}});
  CHECK_THAT(BuildError("NodeName=a Gres=license:2\nPartitionName=p Nodes=a\n"),
             Catch::Contains("only gpu GRES are supported"));
  CHECK_THAT(BuildError("NodeName=a Gres=gpu:x:y:2\nPartitionName=p Nodes=a\n"),
             Catch::Contains("expected gpu[:type]:count"));
}

TEST_CASE("cluster config: DEFAULT lines apply to later lines only", "[cluster_config]") {
  ClusterConfig c = MustBuild(
      "NodeName=early\n"
      "NodeName=DEFAULT CPUs=32 RealMemory=1000 Port=7000\n"
      "NodeName=n[1-2]\n"
      "NodeName=n3 CPUs=8\n"
      "PartitionName=DEFAULT MaxTime=1-0 State=UP\n"
      "PartitionName=a Nodes=n[1-2] Default=YES\n"
      "PartitionName=b Nodes=n3,early MaxTime=30\n");
  CHECK(c.FindNode("early")->cpus == 1);
  CHECK(c.FindNode("early")->port == 6818);
  CHECK(c.FindNode("n1")->cpus == 32);
  CHECK(c.FindNode("n1")->real_memory_mib == 1000);
  CHECK(c.FindNode("n2")->port == 7000);
  CHECK(c.FindNode("n3")->cpus == 8);
  CHECK(c.FindNode("n3")->real_memory_mib == 1000);
  CHECK(c.FindPartition("a")->max_time_s == 86400);
  CHECK(c.FindPartition("b")->max_time_s == 1800);
  CHECK(c.FindPartition("DEFAULT") == nullptr);
  CHECK(c.DefaultPartition()->name == "a");
  CHECK_FALSE(c.FindPartition("b")->is_default);  // Default= is not inherited
}

TEST_CASE("cluster config: Port ranges map to the node list", "[cluster_config]") {
  ClusterConfig c = MustBuild("NodeName=n[1-4] NodeAddr=127.0.0.1 Port=17001-17004\n"
                              "PartitionName=p Nodes=n[1-4]\n");
  CHECK(c.FindNode("n1")->port == 17001);
  CHECK(c.FindNode("n4")->port == 17004);
  CHECK(c.FindNode("n4")->addr == "127.0.0.1");
  ClusterConfig same = MustBuild("NodeName=n[1-2] Port=9000\nPartitionName=p Nodes=n[1-2]\n");
  CHECK(same.FindNode("n2")->port == 9000);
  CHECK(BuildError("NodeName=n[1-4] Port=17001-17003\nPartitionName=p Nodes=n1\n") ==
        "tessera.conf:1: Port range 17001-17003 has 3 ports for 4 nodes");
  CHECK(BuildError("NodeName=n1 Port=9-1\nPartitionName=p Nodes=n1\n") ==
        "tessera.conf:1: invalid Port \"9-1\"");
  CHECK(BuildError("NodeName=n1 Port=0\nPartitionName=p Nodes=n1\n") ==
        "tessera.conf:1: invalid Port \"0\"");
  CHECK(BuildError("NodeName=DEFAULT Port=1-2\nNodeName=n1\nPartitionName=p Nodes=n1\n") ==
        "tessera.conf:1: invalid Port \"1-2\"");
}

TEST_CASE("cluster config: partition keys", "[cluster_config]") {
  ClusterConfig c = MustBuild(
      "NodeName=n[1-4]\n"
      "PartitionName=batch Nodes=ALL Default=YES MaxTime=UNLIMITED DefaultTime=1:00:00 "
      "MaxNodes=2 PriorityTier=3\n"
      "PartitionName=maint Nodes=n4 State=DRAIN MaxNodes=UNLIMITED\n");
  const PartitionConfig* b = c.FindPartition("batch");
  REQUIRE(b);
  CHECK(b->nodes == std::vector<std::string>{"n1", "n2", "n3", "n4"});
  CHECK(b->nodes_expr == "ALL");
  CHECK(b->is_default);
  CHECK(b->up);
  CHECK(b->max_time_s == kUnlimited);
  CHECK(b->default_time_s == 3600);
  CHECK(b->max_nodes == 2);
  CHECK(b->priority_tier == 3);
  const PartitionConfig* m = c.FindPartition("maint");
  CHECK_FALSE(m->up);
  CHECK(m->max_nodes == 0);
  CHECK(c.FindNode("n4")->partitions == std::vector<std::string>{"batch", "maint"});
  CHECK(c.FindNode("n1")->partitions == std::vector<std::string>{"batch"});
}

TEST_CASE("cluster config: partition errors", "[cluster_config]") {
  CHECK(BuildError("NodeName=n[1-2]\n\nPartitionName=p Nodes=n[1-3]\n") ==
        "tessera.conf:3: partition p names unknown node n3");
  CHECK(BuildError("NodeName=n1\nPartitionName=p Nodes=n1\nPartitionName=p Nodes=n1\n") ==
        "tessera.conf:3: partition p defined twice");
  CHECK(BuildError("NodeName=n1\nPartitionName=p\n") ==
        "tessera.conf:2: partition p has no Nodes=");
  CHECK_THAT(BuildError("NodeName=n1\nPartitionName=p Nodes=n1 MaxTime=forever\n"),
             Catch::StartsWith("tessera.conf:2: invalid value \"forever\" for MaxTime"));
  CHECK_THAT(BuildError("NodeName=n1\nPartitionName=p Nodes=n1 Default=maybe\n"),
             Catch::Contains("expected YES or NO"));
  CHECK_THAT(BuildError("NodeName=n1\nPartitionName=p Nodes=n1 State=SLEEPY\n"),
             Catch::Contains("expected UP, DOWN, DRAIN or INACTIVE"));
  CHECK_THAT(BuildError("NodeName=n1\nPartitionName=p Nodes=n[1-\n"),
             Catch::StartsWith("tessera.conf:2: unbalanced '['"));
  CHECK_THAT(BuildError("NodeName=n[1-2]\nPartitionName=a Nodes=n1 Default=YES\n"
                        "PartitionName=b Nodes=n2 Default=YES\n"),
             Catch::Contains("more than one partition has Default=YES"));
}

TEST_CASE("cluster config: node errors", "[cluster_config]") {
  CHECK_THAT(BuildError("ClusterName=x\n"), Catch::Contains("no NodeName lines"));
  CHECK(BuildError("NodeName=n1\nNodeName=n[0-1]\nPartitionName=p Nodes=n1\n") ==
        "tessera.conf:2: node n1 defined twice");
  CHECK(BuildError("NodeName=n1 CPUs=lots\nPartitionName=p Nodes=n1\n") ==
        "tessera.conf:1: invalid value \"lots\" for CPUs: expected a CPU count");
  CHECK_THAT(BuildError("NodeName=n1 CPUs=0\nPartitionName=p Nodes=n1\n"),
             Catch::Contains("expected a CPU count"));
  CHECK_THAT(BuildError("NodeName=n1 State=BROKEN\nPartitionName=p Nodes=n1\n"),
             Catch::Contains("expected UNKNOWN, IDLE, DRAIN, DOWN or FUTURE"));
  CHECK(BuildError("NodeName=n[3-1]\n") == "tessera.conf:1: descending range \"3-1\" in hostlist "
                                          "\"n[3-1]\"");
}

TEST_CASE("cluster config: Slurm keys not implemented warn with key and line", "[cluster_config]") {
  ClusterConfig c = MustBuild("ClusterName=x\nSelectType=select/cons_tres\nFrobnicate=1\n"
                              "NodeName=n1 Sockets=2 CoreSpecCount=1 Colour=red\n"
                              "PartitionName=p Nodes=n1 OverSubscribe=NO\n");
  CHECK(HasWarning(c, "tessera.conf:2: SelectType is a Slurm key Tessera does not implement"));
  CHECK(HasWarning(c, "tessera.conf:3: unknown key Frobnicate"));
  CHECK(HasWarning(c, "tessera.conf:4: Sockets is not used by Tessera"));
  CHECK(HasWarning(c, "tessera.conf:4: CoreSpecCount is not used by Tessera"));
  CHECK(HasWarning(c, "tessera.conf:4: unknown node key Colour"));
  CHECK(HasWarning(c, "tessera.conf:5: partition key OverSubscribe is not implemented"));
  CHECK(c.warnings.size() == 6);
}

TEST_CASE("cluster config: gres.conf GPU declarations", "[cluster_config]") {
  ClusterConfig c = MustBuild(
      "NodeName=n[1-4] Gres=gpu:a100:2\nPartitionName=p Nodes=n[1-4]\n",
      "AutoDetect=off\n"
      "NodeName=n[3-4] Name=gpu Type=a100 Count=2 Simulated=yes MemoryMiB=40960\n"
      "NodeName=n1 Name=gpu Type=a100 File=/dev/nvidia[0-1] Count=2\n");
  REQUIRE(c.gpus.count("n3"));
  REQUIRE(c.gpus.at("n4").size() == 1);
  const GpuDecl& d = c.gpus.at("n4")[0];
  CHECK(d.model == "a100");
  CHECK(d.count == 2);
  CHECK(d.memory_mib == 40960);
  CHECK(d.simulated);
  CHECK(d.where == "gres.conf:2");
  CHECK_FALSE(c.gpus.at("n1")[0].simulated);
  CHECK(c.gpus.count("n2") == 0);
  CHECK(c.warnings.empty());
}

TEST_CASE("cluster config: gres.conf errors", "[cluster_config]") {
  const std::string conf = "NodeName=n[1-2]\nPartitionName=p Nodes=n[1-2]\n";
  CHECK(BuildError(conf, "NodeName=n9 Name=gpu Count=1\n") == "gres.conf:1: unknown node n9");
  CHECK(BuildError(conf, "NodeName=n1 Name=nic Count=1\n") ==
        "gres.conf:1: only Name=gpu, Name=mps and Name=shard are supported in gres.conf");
  CHECK(BuildError(conf, "Name=gpu Count=1\n") == "gres.conf:1: gres.conf line needs NodeName=");
  CHECK(BuildError(conf, "NodeName=n1 Name=gpu\n") == "gres.conf:1: gres.conf line needs Count=");
  CHECK_THAT(BuildError(conf, "NodeName=n1 Name=gpu Count=65\n"),
             Catch::Contains("expected 1..64"));
  CHECK_THAT(BuildError(conf, "NodeName=n1 Name=gpu Count=1 Simulated=perhaps\n"),
             Catch::Contains("expected YES or NO"));
  ClusterConfig w = MustBuild(conf, "NodeName=n1 Name=gpu Count=1 Flags=nvidia_gpu_env\n");
  CHECK(HasWarning(w, "gres.conf:1: unknown gres.conf key Flags"));
}

TEST_CASE("cluster config: LoadClusterConfig reads files, Include and gres.conf",
          "[cluster_config]") {
  testing::TempDir dir;
  dir.Write("nodes.conf", "NodeName=n[1-2] CPUs=4\n");
  dir.Write("gres.conf", "NodeName=n2 Name=gpu Type=t4 Count=1 Simulated=yes\n");
  std::string path = dir.Write(
      "tessera.conf",
      "clustername=disk\nInclude nodes.conf\nPartitionName=p Nodes=n[1-2]\nMpiDefault=pmix\n");
  auto r = LoadClusterConfig(path);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(r->path == path);
  CHECK(r->cluster_name == "disk");
  CHECK(r->FindNode("n2")->cpus == 4);
  CHECK(r->FindNode("n1")->where == dir.path() + "/nodes.conf:1");
  REQUIRE(r->gpus.count("n2"));
  CHECK(r->gpus.at("n2")[0].model == "t4");
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0] ==
        path + ":4: MpiDefault is a Slurm key Tessera does not implement; ignored");

  // An error in gres.conf names gres.conf.
  dir.Write("gres.conf", "NodeName=n2 Name=gpu Count=x\n");
  auto bad = LoadClusterConfig(path);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::StartsWith(dir.path() + "/gres.conf:1:"));

  auto missing = LoadClusterConfig(dir.path() + "/none.conf");
  CHECK(missing.status().code() == Code::kNotFound);
}

TEST_CASE("cluster config: DefaultConfigPath honours TESSERA_CONF", "[cluster_config]") {
  const char* old = std::getenv("TESSERA_CONF");
  std::string saved = old ? old : "";
  setenv("TESSERA_CONF", "/tmp/x.conf", 1);
  CHECK(DefaultConfigPath() == "/tmp/x.conf");
  unsetenv("TESSERA_CONF");
  CHECK(DefaultConfigPath() == "/etc/tessera/tessera.conf");
  if (old) setenv("TESSERA_CONF", saved.c_str(), 1);
}

}  // namespace
}  // namespace tessera
