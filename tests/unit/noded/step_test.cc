// trun's node side: the per-task environment, the grant check and store, TaskSet with real
// processes, and the StepAgent service over a real in-process gRPC server with a fake codec.
#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <map>
#include <thread>

#include "noded/step_grants.h"
#include "noded/step_service.h"
#include "noded/task_env.h"
#include "noded/task_set.h"
#include "task_set_fixture.h"
#include "rpc/grpc_util.h"
#include "test_util.h"

namespace tessera::noded {
namespace {

namespace v1 = tessera::v1;
using testing::ShellPlan;

v1::StepGrant Grant(uint64_t job, uint32_t step, uint32_t uid, std::vector<uint32_t> ranks) {
  v1::StepGrant g;
  g.set_job_id(job);
  g.set_step_id(step);
  g.set_uid(uid);
  g.set_gid(::getgid());
  g.set_user("root");
  for (uint32_t r : ranks) g.add_ranks(r);
  g.set_node_index(1);
  g.set_ntasks(4);
  g.set_nodelist("it[1-2]");
  g.set_cpus_per_task(2);
  g.set_master_addr("10.0.0.1");
  g.set_master_port(29512);
  return g;
}

TEST_CASE("BuildTaskEnv sets the per-task Slurm, Tessera and PyTorch variables", "[step]") {
  v1::RunTasksRequest req;
  (*req.mutable_env())["PATH"] = "/usr/bin";
  (*req.mutable_env())["SLURM_PROCID"] = "99";       // trun's own (batch) value: overridden
  (*req.mutable_env())["SLURMD_NODENAME"] = "it1";   // the batch node's: overridden
  auto env = BuildTaskEnv(req, Grant(42, 3, 1000, {2, 3}), 1, "it2");
  CHECK(env["PATH"] == "/usr/bin");
  CHECK(env["SLURM_PROCID"] == "3");
  CHECK(env["TESSERA_PROCID"] == "3");
  CHECK(env["SLURM_LOCALID"] == "1");
  CHECK(env["SLURM_NODEID"] == "1");
  CHECK(env["SLURM_NTASKS"] == "4");
  CHECK(env["SLURM_NPROCS"] == "4");
  CHECK(env["SLURM_STEP_ID"] == "3");
  CHECK(env["SLURM_STEPID"] == "3");
  CHECK(env["SLURM_STEP_NODELIST"] == "it[1-2]");
  CHECK(env["SLURM_STEP_NUM_NODES"] == "2");
  CHECK(env["SLURM_STEP_NUM_TASKS"] == "4");
  CHECK(env["SLURM_CPUS_PER_TASK"] == "2");
  CHECK(env["TESSERA_CPUS_PER_TASK"] == "2");
  CHECK(env["SLURM_JOB_ID"] == "42");
  CHECK(env["SLURMD_NODENAME"] == "it2");
  CHECK(env["TESSERA_NODENAME"] == "it2");
  CHECK(env["MASTER_ADDR"] == "10.0.0.1");
  CHECK(env["MASTER_PORT"] == "29512");
  CHECK(env["RANK"] == "3");
  CHECK(env["LOCAL_RANK"] == "1");
  CHECK(env["WORLD_SIZE"] == "4");
  CHECK(env["LOCAL_WORLD_SIZE"] == "2");
  auto first = BuildTaskEnv(req, Grant(42, 3, 1000, {2, 3}), 0, "it2");
  CHECK(first["SLURM_PROCID"] == "2");
  CHECK(first["SLURM_LOCALID"] == "0");
}

TEST_CASE("BuildTaskEnv keeps a MASTER_ADDR/MASTER_PORT the caller exported (as srun)", "[step]") {
  v1::RunTasksRequest req;
  (*req.mutable_env())["MASTER_ADDR"] = "it1";  // export MASTER_ADDR=$(scontrol show hostnames ...)
  (*req.mutable_env())["MASTER_PORT"] = "6000";
  auto env = BuildTaskEnv(req, Grant(42, 3, 1000, {2, 3}), 1, "it2");
  CHECK(env["MASTER_ADDR"] == "it1");
  CHECK(env["MASTER_PORT"] == "6000");
}

TEST_CASE("CheckStepAccess allows the step's user and root only", "[step]") {
  auto g = Grant(42, 0, 1000, {0});
  CHECK(CheckStepAccess(&g, 42, 0, 1000, "n1").ok());
  CHECK(CheckStepAccess(&g, 42, 0, 0, "n1").ok());
  Status other = CheckStepAccess(&g, 42, 0, 1001, "n1");
  CHECK(other.code() == Code::kPermissionDenied);
  CHECK(other.message().find("uid 1001 may not run tasks of step 42.0 on node n1") !=
        std::string::npos);
  CHECK(other.message().find("belongs to uid 1000") != std::string::npos);
  Status none = CheckStepAccess(nullptr, 42, 1, 1000, "n1");
  CHECK(none.code() == Code::kPermissionDenied);
  CHECK(none.message().find("step 42.1 is not granted on node n1") != std::string::npos);
  auto empty = Grant(42, 2, 1000, {});
  CHECK(CheckStepAccess(&empty, 42, 2, 1000, "n1").code() == Code::kPermissionDenied);
}

TEST_CASE("StepGrants waits, claims once and forgets a job", "[step]") {
  StepGrants grants;
  CHECK_FALSE(grants.Wait(1, 0, std::chrono::milliseconds(0)));
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    grants.Add(Grant(1, 0, 1000, {0}));
  });
  auto g = grants.Wait(1, 0, std::chrono::milliseconds(3000));
  late.join();
  REQUIRE(g);
  CHECK(g->uid() == 1000);
  CHECK(grants.Claim(1, 0));
  CHECK_FALSE(grants.Claim(1, 0));
  grants.Add(Grant(1, 0, 2000, {0}));  // a resend cannot change a started step
  CHECK(grants.Wait(1, 0, std::chrono::milliseconds(0))->uid() == 1000);
  grants.Add(Grant(1, 1, 1000, {0}));
  grants.Add(Grant(2, 0, 1000, {0}));
  grants.DropJob(1);
  CHECK_FALSE(grants.Wait(1, 1, std::chrono::milliseconds(0)));
  CHECK(grants.Wait(2, 0, std::chrono::milliseconds(0)));
  CHECK(grants.size() == 1);
}

struct Collected {
  std::map<uint32_t, std::string> out, err;
  std::map<uint32_t, v1::TaskOutput::Exit> exits;
  std::vector<std::string> order;  // "d<rank>" / "x<rank>"
  bool Add(const v1::TaskOutput& m) {
    if (m.has_data()) {
      (m.data().stream() == 2 ? err : out)[m.data().rank()] += m.data().data();
      order.push_back("d" + std::to_string(m.data().rank()));
    } else if (m.has_exit()) {  // (a usage message ends the stream too: not an exit)
      exits[m.exit().rank()] = m.exit();
      order.push_back("x" + std::to_string(m.exit().rank()));
    }
    return true;
  }
};

TEST_CASE("TaskSet runs one process per rank and reports output and exits", "[step]") {
  TaskSet set(ShellPlan("sh", "echo out$R; echo err$R >&2; pwd; exit $((R + 3))", {4, 5}), nullptr);
  REQUIRE(set.Start().ok());
  Collected c;
  set.Run([&](const v1::TaskOutput& m) { return c.Add(m); }, nullptr);
  CHECK(c.out[4] == "out4\n/tmp\n");
  CHECK(c.err[5] == "err5\n");
  CHECK(c.exits[4].exit_code() == 7);
  CHECK(c.exits[5].exit_code() == 8);
  CHECK(c.exits[5].exit_signal() == 0);
  // A task's output precedes its exit.
  for (uint32_t r : {4u, 5u}) {
    auto x = std::find(c.order.begin(), c.order.end(), "x" + std::to_string(r));
    auto d = std::find(c.order.rbegin(), c.order.rend(), "d" + std::to_string(r));
    CHECK(x != c.order.end());
    CHECK(std::distance(c.order.begin(), x) > std::distance(d, c.order.rend()) - 1);
  }
}

// Records AddPid; the tasks stay where they are.
class RecordingCgroup final : public CgroupManager {
 public:
  std::vector<pid_t> added;
  CgroupMode mode() const override { return CgroupMode::kV1; }
  Status Create(const CgroupSpec&) override { return Status::Ok(); }
  std::vector<std::string> ProcsFiles(const std::string&) const override { return {}; }
  Status AddPid(const std::string& name, pid_t pid) override {
    if (name == "tessera/n1/job_7") added.push_back(pid);
    return Status::Ok();
  }
  Result<std::vector<pid_t>> Procs(const std::string&) override { return std::vector<pid_t>{}; }
  Status KillAll(const std::string&) override { return Status::Ok(); }
  Result<bool> OomKilled(const std::string&) override { return false; }
  Status Remove(const std::string&) override { return Status::Ok(); }
};

TEST_CASE("TaskSet moves every task into the job's cgroup before it runs", "[step]") {
  RecordingCgroup cg;
  TaskPlan p = ShellPlan("sh", "echo $$", {0, 1});
  p.cgroup = &cg;
  p.cgroup_name = "tessera/n1/job_7";
  TaskSet set(p, nullptr);
  REQUIRE(set.Start().ok());
  Collected c;
  set.Run([&](const v1::TaskOutput& m) { return c.Add(m); }, nullptr);
  REQUIRE(cg.added.size() == 2);
  CHECK(c.out[0] == std::to_string(cg.added[0]) + "\n");
  CHECK(c.out[1] == std::to_string(cg.added[1]) + "\n");
  CHECK(c.exits.size() == 2);
}

// Two steps starting at once on one node (issue 18: `tbatch -n10 --wrap 'trun ...'` jobs stayed
// RUNNING under load). Each task waits on a gate pipe until noded has moved it into the job's
// cgroup; a child forked by one thread inherits the other thread's open pipes. If both pipes are
// made before either fork, each child holds the other's gate open while it waits on its own:
// neither ever runs. This test forces that interleaving with a fork hook (both pipes made, then
// both forks) and a cgroup whose AddPid waits until both tasks were forked.
std::mutex g_fork_mu;
std::condition_variable g_fork_cv;
int g_fork_armed = 0;  // forks still to hold at the barrier
int g_fork_waiting = 0;

void HoldForkUntilBoth() {
  std::unique_lock<std::mutex> lock(g_fork_mu);
  if (g_fork_armed == 0) return;
  --g_fork_armed;
  ++g_fork_waiting;
  g_fork_cv.notify_all();
  g_fork_cv.wait_for(lock, std::chrono::seconds(5), [] { return g_fork_waiting >= 2; });
}

class BarrierCgroup final : public CgroupManager {
 public:
  std::mutex mu;
  std::condition_variable cv;
  int added = 0;
  CgroupMode mode() const override { return CgroupMode::kV1; }
  Status Create(const CgroupSpec&) override { return Status::Ok(); }
  std::vector<std::string> ProcsFiles(const std::string&) const override { return {}; }
  Status AddPid(const std::string&, pid_t) override {
    std::unique_lock<std::mutex> lock(mu);
    ++added;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(5), [&] { return added >= 2; });
    return Status::Ok();
  }
  Result<std::vector<pid_t>> Procs(const std::string&) override { return std::vector<pid_t>{}; }
  Status KillAll(const std::string&) override { return Status::Ok(); }
  Result<bool> OomKilled(const std::string&) override { return false; }
  Status Remove(const std::string&) override { return Status::Ok(); }
};

TEST_CASE("TaskSets of two steps starting at once both run (no gate pipe held by the other's task)",
          "[step]") {
  static bool registered = [] { return ::pthread_atfork(HoldForkUntilBoth, nullptr, nullptr) == 0; }();
  REQUIRE(registered);
  BarrierCgroup cg;
  TaskPlan p = ShellPlan("sh", "echo ran$R", {0});
  p.cgroup = &cg;
  p.cgroup_name = "tessera/n1/job_7";
  TaskPlan q = p;
  q.tasks[0].rank = 1;
  q.tasks[0].env = {"PATH=/usr/bin:/bin", "R=1"};
  {
    std::lock_guard<std::mutex> lock(g_fork_mu);
    g_fork_armed = 2;
    g_fork_waiting = 0;
  }
  TaskSet a(p, nullptr), b(q, nullptr);
  Collected ca, cb;
  bool started_a = false, started_b = false;  // (Catch2's assertions are for the main thread)
  auto run = [](TaskSet& set, Collected& c, bool* started) {
    *started = set.Start().ok();
    if (!*started) return;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    set.Run([&](const v1::TaskOutput& m) { return c.Add(m); },
            [&] { return std::chrono::steady_clock::now() > deadline; });  // a deadlock: killed
  };
  std::thread ta([&] { run(a, ca, &started_a); });
  std::thread tb([&] { run(b, cb, &started_b); });
  ta.join();
  tb.join();
  {
    std::lock_guard<std::mutex> lock(g_fork_mu);
    g_fork_armed = 0;
  }
  REQUIRE(started_a);
  REQUIRE(started_b);
  CHECK(g_fork_waiting == 2);  // the interleaving did happen
  CHECK(ca.out[0] == "ran0\n");
  CHECK(cb.out[1] == "ran1\n");
  CHECK(ca.exits[0].exit_signal() == 0);
  CHECK(cb.exits[1].exit_signal() == 0);
}

TEST_CASE("TaskSet reports a missing program as exit 127 with a message", "[step]") {
  TaskPlan p = ShellPlan("sh", "", {0});
  p.argv = {"/nonexistent/prog-xyz"};
  TaskSet set(p, nullptr);
  REQUIRE(set.Start().ok());
  Collected c;
  set.Run([&](const v1::TaskOutput& m) { return c.Add(m); }, nullptr);
  CHECK(c.exits[0].exit_code() == 127);
  CHECK(c.err[0].find("execve(): /nonexistent/prog-xyz: No such file or directory") !=
        std::string::npos);
}

TEST_CASE("TaskSet signals and cancels its tasks", "[step]") {
  TaskSet set(ShellPlan("sh", "trap 'echo got-usr1; exit 5' USR1; while :; do sleep 0.05; done", {0}),
              nullptr);
  REQUIRE(set.Start().ok());
  Collected c;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    set.Signal(SIGUSR1);
  });
  set.Run([&](const v1::TaskOutput& m) { return c.Add(m); }, nullptr);
  t.join();
  CHECK(c.out[0] == "got-usr1\n");
  CHECK(c.exits[0].exit_code() == 5);

  TaskSet stubborn(ShellPlan("sh", "trap '' TERM; while :; do sleep 0.05; done", {0, 1}), nullptr);
  REQUIRE(stubborn.Start().ok());
  Collected k;
  auto start = std::chrono::steady_clock::now();
  std::atomic<bool> cancel{false};
  std::thread t2([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  stubborn.Run([&](const v1::TaskOutput& m) { return k.Add(m); }, [&] { return cancel.load(); });
  t2.join();
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(k.exits.size() == 2);
  CHECK(k.exits[0].exit_signal() == SIGKILL);  // TERM ignored: killed after kill_wait (500 ms)
  CHECK(took < std::chrono::seconds(5));
}

// Identity from the credential text: "uid:<n>".
class UidCodec final : public rpc::CredentialCodec {
 public:
  explicit UidCodec(uint32_t uid) : uid_(uid) {}
  Result<std::string> Encode(const std::string&) const override {
    return "uid:" + std::to_string(uid_);
  }
  Result<rpc::Identity> Decode(const std::string& cred) const override {
    if (cred.rfind("uid:", 0) != 0) return Unauthenticated("bad credential");
    rpc::Identity id;
    id.uid = static_cast<uint32_t>(std::stoul(cred.substr(4)));
    return id;
  }

 private:
  uint32_t uid_;
};

struct ServiceFixture {
  StepGrants grants;
  UidCodec server_codec{0};
  StepService service{{"n1", "/nonexistent-spool", 1, std::chrono::milliseconds(300)}, grants,
                      server_codec, nullptr};
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<v1::StepAgent::Stub> stub;
  ServiceFixture() {
    grpc::ServerBuilder b;
    int port = 0;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    b.RegisterService(&service);
    server = b.BuildAndStart();
    stub = v1::StepAgent::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                      grpc::InsecureChannelCredentials()));
  }
  ~ServiceFixture() { server->Shutdown(); }
  grpc::Status Run(uint32_t caller_uid, const v1::RunTasksRequest& req, Collected* c) {
    grpc::ClientContext ctx;
    UidCodec codec(caller_uid);
    REQUIRE(rpc::AttachCredential(codec, &ctx).ok());
    auto reader = stub->RunTasks(&ctx, req);
    v1::TaskOutput m;
    while (reader->Read(&m)) c->Add(m);
    return reader->Finish();
  }
};

v1::RunTasksRequest Request(uint64_t job, uint32_t step, const std::string& script) {
  v1::RunTasksRequest r;
  r.set_job_id(job);
  r.set_step_id(step);
  r.add_argv("sh");
  r.add_argv("-c");
  r.add_argv(script);
  (*r.mutable_env())["PATH"] = "/usr/bin:/bin";
  r.set_cwd("/tmp");
  return r;
}

TEST_CASE("StepService runs granted tasks for the step's user and refuses others", "[step]") {
  ServiceFixture f;
  uint32_t me = ::getuid();
  f.grants.Add(Grant(7, 0, 4242, {2, 3}));  // someone else's step
  f.grants.Add(Grant(7, 1, me, {2, 3}));    // ours: its tasks really run (as us)
  Collected c;
  auto st = f.Run(
      me, Request(7, 1, "echo $SLURM_PROCID/$SLURM_LOCALID/$SLURMD_NODENAME; exit $SLURM_LOCALID"),
      &c);
  REQUIRE(st.ok());
  CHECK(c.out[2] == "2/0/n1\n");
  CHECK(c.out[3] == "3/1/n1\n");
  CHECK(c.exits[2].exit_code() == 0);
  CHECK(c.exits[3].exit_code() == 1);

  Collected again;
  st = f.Run(me, Request(7, 1, "true"), &again);
  CHECK(st.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(st.error_message().find("already started") != std::string::npos);

  Collected denied;
  st = f.Run(4243, Request(7, 0, "true"), &denied);
  CHECK(st.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(st.error_message().find("uid 4243 may not run tasks of step 7.0") != std::string::npos);
  CHECK(denied.exits.empty());

  Collected unknown;
  st = f.Run(me, Request(8, 0, "true"), &unknown);
  CHECK(st.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(st.error_message().find("not granted on node n1") != std::string::npos);

  grpc::ClientContext ctx;  // no credential at all
  v1::SignalTasksRequest sreq;
  sreq.set_job_id(7);
  sreq.set_step_id(1);
  sreq.set_signal(SIGUSR1);
  v1::SignalTasksResponse sresp;
  CHECK(f.stub->SignalTasks(&ctx, sreq, &sresp).error_code() ==
        grpc::StatusCode::UNAUTHENTICATED);
}

TEST_CASE("StepService forwards signals and StopJob ends a running step", "[step]") {
  ServiceFixture f;
  uint32_t me = ::getuid();
  f.grants.Add(Grant(9, 0, me, {0}));
  Collected c;
  grpc::Status st;
  std::thread runner([&] {
    st = f.Run(me, Request(9, 0, "trap 'echo usr2' USR2; trap 'exit 9' TERM; "
                               "while :; do sleep 0.05; done"), &c);
  });
  REQUIRE(testing::WaitFor([&] { return f.service.RunningSteps() == 1; }, 5));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // traps installed
  grpc::ClientContext ctx;
  UidCodec codec(me);
  REQUIRE(rpc::AttachCredential(codec, &ctx).ok());
  v1::SignalTasksRequest sreq;
  sreq.set_job_id(9);
  sreq.set_step_id(0);
  sreq.set_signal(SIGUSR2);
  v1::SignalTasksResponse sresp;
  CHECK(f.stub->SignalTasks(&ctx, sreq, &sresp).ok());
  REQUIRE(testing::WaitFor([&] { return f.service.RunningSteps() == 1; }, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  f.service.StopJob(9);
  runner.join();
  CHECK(st.ok());
  CHECK(c.out[0] == "usr2\n");
  CHECK(c.exits[0].exit_code() == 9);
  CHECK(f.grants.size() == 0);
}

}  // namespace
}  // namespace tessera::noded
