// tessera-noded against a fake controller: the NodeAgent stream (register, launch, started,
// finished, heartbeat), reconnect with re-registration and resend of unacked JobFinished, ack
// handling, the gRPC health port and a clean SIGTERM. Needs root (for a private munged).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "tessera/v1/agent.grpc.pb.h"
#include "tests/unit/noded/test_util.h"

namespace v1 = tessera::v1;
using tessera::noded::testing::ReadAll;
using tessera::noded::testing::ScratchDir;
using tessera::noded::testing::WaitFor;
using tessera::noded::testing::WriteAll;

namespace {

std::string BinDir() {
  if (const char* b = std::getenv("TESSERA_BUILD_DIR")) return std::string(b) + "/bin";
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (self.parent_path().parent_path() / "bin").string();
}

pid_t Spawn(const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// Session 1: launch job 7, collect its events, drop the stream without acking.
// Later sessions: ack every JobFinished listed in Register, then just listen.
class FakeCtld final : public v1::NodeAgent::Service {
 public:
  grpc::Status Connect(grpc::ServerContext* ctx,
                       grpc::ServerReaderWriter<v1::ControllerMessage, v1::NodeMessage>* s) override {
    v1::NodeMessage m;
    if (!s->Read(&m) || !m.has_register_())
      return grpc::Status(grpc::INVALID_ARGUMENT, "register first");
    int session = Record(m, true);
    v1::ControllerMessage reply;
    reply.mutable_registered()->set_heartbeat_interval_s(1);
    s->Write(reply);
    if (session == 1) {
      v1::ControllerMessage launch;
      auto* l = launch.mutable_launch();
      l->set_job_id(7);
      l->set_name("hello");
      l->set_uid(0);
      l->set_gid(0);
      l->set_user("root");
      l->set_script("#!/bin/sh\necho hello-from-job7\n");
      l->set_workdir(workdir);
      l->set_time_limit_s(-1);
      l->set_kill_wait_s(1);
      s->Write(launch);
      s->Write(launch);  // a duplicate launch must be ignored
      while (s->Read(&m)) {
        Record(m, false);
        if (m.has_finished() && m.finished().job_id() == 7)
          return grpc::Status(grpc::UNAVAILABLE, "controller restarting");
      }
      return grpc::Status::OK;
    }
    for (const auto& f : m.register_().finished()) {
      v1::ControllerMessage ack;
      ack.mutable_finished_ack()->set_job_id(f.job_id());
      s->Write(ack);
    }
    while (!ctx->IsCancelled() && s->Read(&m)) Record(m, false);
    return grpc::Status::OK;
  }

  int Record(const v1::NodeMessage& m, bool is_register) {
    std::lock_guard<std::mutex> lock(mu);
    if (is_register) registers.push_back(m.register_());
    else messages.push_back(m);
    return static_cast<int>(registers.size());
  }
  template <typename F>
  bool Check(F f) {
    std::lock_guard<std::mutex> lock(mu);
    return f();
  }

  std::string workdir;
  std::mutex mu;
  std::vector<v1::Register> registers;
  std::vector<v1::NodeMessage> messages;
};

// grpc.health.v1.Health/Check with an empty request; SERVING is the reply bytes 08 01.
bool HealthServing(int port) {
  auto ch = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(ch);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  grpc::ByteBuffer req(nullptr, 0), resp;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status st;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &req, &resp,
                 [&](grpc::Status s) {
                   std::lock_guard<std::mutex> lock(mu);
                   st = s;
                   done = true;
                   cv.notify_all();
                 });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  if (!st.ok()) return false;
  std::vector<grpc::Slice> slices;
  (void)resp.Dump(&slices);
  std::string bytes;
  for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return bytes == std::string("\x08\x01", 2);
}

}  // namespace

TEST_CASE("noded registers, launches, reports, reconnects and resends until acked") {
  if (geteuid() != 0) {
    WARN("SKIPPED: needs root to run a private munged");
    return;
  }
  ScratchDir dir;
  std::string d = dir.path();
  WriteAll(d + "/munge.key", std::string(1024, 'k'));
  chmod((d + "/munge.key").c_str(), 0600);
  pid_t munged = Spawn({"/usr/sbin/munged", "-F", "-f", "--key-file=" + d + "/munge.key",
                        "--socket=" + d + "/munge.sock", "--pid-file=" + d + "/munged.pid",
                        "--log-file=" + d + "/munged.log", "--seed-file=" + d + "/munged.seed"},
                       d + "/munged.out");
  REQUIRE(WaitFor([&] { return std::filesystem::exists(d + "/munge.sock"); }, 10));

  FakeCtld ctld;
  ctld.workdir = d;
  int ctld_port = 0;
  grpc::ServerBuilder b;
  b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &ctld_port);
  b.RegisterService(&ctld);
  auto server = b.BuildAndStart();
  REQUIRE(server);
  int node_port = FreePort();
  WriteAll(d + "/tessera.conf",
           "ClusterName=agenttest\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=" +
               std::to_string(ctld_port) + "\nSlurmdSpoolDir=" + d + "/spool/%n\nAuthInfo=socket=" +
               d + "/munge.sock\nNodeName=n1 CPUs=1 RealMemory=1 Port=" +
               std::to_string(node_port) + "\nPartitionName=p Nodes=n1 Default=YES\n");
  WriteAll(d + "/gres.conf", "NodeName=n1 Name=gpu Type=t4 Count=2 MemoryMiB=16000 Simulated=yes\n");
  pid_t noded = Spawn({BinDir() + "/tessera-noded", "-N", "n1", "-f", d + "/tessera.conf"},
                      d + "/noded.log");

  // Session 1: register, launch (once, despite the duplicate), started, finished; stream drops.
  if (!WaitFor([&] { return ctld.Check([&] { return ctld.registers.size() >= 2; }); }, 30))
    FAIL("no second registration; noded log:\n" + ReadAll(d + "/noded.log"));
  ctld.Check([&] {
    const auto& r = ctld.registers[0];
    CHECK(r.node_name() == "n1");
    CHECK(r.cpus() >= 1);
    CHECK(r.real_memory_mib() > 0);
    CHECK(r.version() == "0.1.0");
    CHECK(r.boot_time() > 0);
    REQUIRE(r.gpus_size() == 2);
    CHECK(r.gpus(1).index() == 1);
    CHECK(r.gpus(1).model() == "t4");
    CHECK(r.gpus(1).simulated());
    CHECK(r.running_jobs_size() == 0);
    int started = 0, finished = 0;
    for (const auto& m : ctld.messages) {
      started += m.has_started() && m.started().job_id() == 7;
      finished += m.has_finished() && m.finished().job_id() == 7;
    }
    CHECK(started == 1);
    CHECK(finished >= 1);
    // Session 2's Register carries the unacked JobFinished.
    const auto& r2 = ctld.registers[1];
    REQUIRE(r2.finished_size() == 1);
    CHECK(r2.finished(0).job_id() == 7);
    CHECK(r2.finished(0).state() == v1::COMPLETED);
    return true;
  });
  CHECK(ReadAll(d + "/slurm-7.out") == "hello-from-job7\n");
  // The ack removes the job's spool directory; heartbeats flow.
  CHECK(WaitFor([&] { return !std::filesystem::exists(d + "/spool/n1/job.7"); }, 10));
  CHECK(WaitFor([&] {
    return ctld.Check([&] {
      for (const auto& m : ctld.messages)
        if (m.has_heartbeat()) return true;
      return false;
    });
  }, 5));
  CHECK(HealthServing(node_port));

  kill(noded, SIGTERM);
  int status = 0;
  CHECK(WaitFor([&] { return waitpid(noded, &status, WNOHANG) == noded; }, 10));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  server->Shutdown(std::chrono::system_clock::now());
  kill(munged, SIGTERM);
  waitpid(munged, nullptr, 0);
}

TEST_CASE("noded refuses a node the config does not define") {
  ScratchDir dir;
  WriteAll(dir.path() + "/tessera.conf", "NodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n");
  std::string log = dir.path() + "/noded.log";
  pid_t pid = Spawn({BinDir() + "/tessera-noded", "-N", "ghost", "-f", dir.path() + "/tessera.conf"},
                    log);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(ReadAll(log).find("node 'ghost' is not defined in") != std::string::npos);
}
