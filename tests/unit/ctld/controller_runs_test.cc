// The controller's rules for node reports and registrations (hardening issue, part 4):
//  - a report of run k of a job never ends run k+1 (it is recorded as an event);
//  - a second registration of a node whose stream is alive and responding is refused; after the
//    stream ends (or the node stops responding) a new one is accepted;
//  - a registration with another boot id means the host rebooted: its jobs are lost;
//  - a node that stops responding is DOWN "Not responding", set by the controller's own uid at
//    that time (sinfo -R USER/TIMESTAMP), durable until the node is back (issue 21).
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

#include "ctld/config_loader.h"
#include "ctld/controller.h"
#include "ctld/rpc/accounting_live.h"
#include "ctld/rpc/node_identity.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

class FakeLink final : public NodeLink {
 public:
  void Launch(const JobRecord& job, const JobPayload&, int64_t) override {
    std::lock_guard<std::mutex> l(mu);
    launches.push_back({job.job_id, job.run});
  }
  void Signal(uint64_t job_id, int signal, uint64_t run) override {
    std::lock_guard<std::mutex> l(mu);
    signals.push_back({job_id, signal, run});
  }
  void AckFinished(uint64_t job_id, uint64_t run) override {
    std::lock_guard<std::mutex> l(mu);
    acks.push_back({job_id, run});
  }
  void GrantStep(const Grant&) override {}
  void ConfigureMig(uint64_t, uint32_t, const std::vector<MigPlacementReq>&,
                    const std::vector<std::string>&) override {}
  void Disconnect() override { disconnected = true; }
  void Probe() override { ++probes; }
  size_t NumLaunches() {
    std::lock_guard<std::mutex> l(mu);
    return launches.size();
  }
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> launches;  // job, run
  std::vector<std::tuple<uint64_t, int, uint64_t>> signals;
  std::vector<std::pair<uint64_t, uint64_t>> acks;
  std::atomic<bool> disconnected{false};
  std::atomic<int> probes{0};
};

template <typename F>
void WaitFor(F pred, const char* what) {
  for (int i = 0; i < 1000 && !pred(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  INFO(what);
  REQUIRE(pred());
}

struct CtldFixture {
  TempDir dir;
  FakeClock clock;
  Core core;
  std::unique_ptr<Store> store;
  std::unique_ptr<Controller> ctl;

  // `state`: the directory of an earlier fixture's config and database (a controller restart).
  explicit CtldFixture(const std::string& state = "") {
    std::string root = state.empty() ? dir.path : state;
    std::string conf = root + "/tessera.conf";
    std::ofstream(conf) << "ClusterName=t\nSlurmctldHost=localhost\nStateSaveLocation=" << root
                        << "/state\nSlurmdTimeout=30\nMinJobAge=600\n"
                        << "NodeName=n1 NodeAddr=127.0.0.1 Port=7001 CPUs=2 RealMemory=1024\n"
                        << "NodeName=n2 NodeAddr=127.0.0.1 Port=7002 CPUs=2 RealMemory=1024\n"
                        << "PartitionName=p Nodes=n1,n2 Default=YES MaxTime=60 State=UP\n";
    auto loaded = LoadConfig(conf);
    REQUIRE(loaded.ok());
    auto s = Store::Open(root + "/t.db");
    REQUIRE(s.ok());
    store = std::move(*s);
    auto rec = store->Load();
    REQUIRE(rec.ok());
    ctl = std::make_unique<Controller>(loaded->cluster, loaded->sched, store.get(), &clock, &core);
    core.Start();
    REQUIRE(core.Call([&] { return ctl->Start(*rec); }).ok());
  }
  ~CtldFixture() { core.Stop(); }

  Result<RegisterReply> Register(const std::string& node, std::shared_ptr<FakeLink> link,
                                 const std::string& boot_id = "boot-1",
                                 std::vector<uint64_t> running = {},
                                 std::map<uint64_t, uint64_t> runs = {}) {
    RegisterInfo info;
    info.node = node;
    info.cpus = 2;
    info.mem_mib = 1024;
    info.boot_id = boot_id;
    info.running = std::move(running);
    info.runs = std::move(runs);
    return core.Call([&] { return ctl->OnRegister(info, link); });
  }

  uint64_t Submit(bool requeue) {
    JobSpec spec;
    spec.name = "r";
    spec.script = "#!/bin/sh\nsleep 100\n";
    spec.workdir = "/tmp";
    spec.requeue = requeue;
    spec.task_groups.push_back({"main", 1, {1, 0, 0, ""}, 0, {}});
    std::promise<Result<uint64_t>> p;
    core.Call([&] {
      Caller root;
      root.admin = true;
      auto draft = ctl->PrepareSubmit(std::move(spec), root, 0, "h");
      REQUIRE(draft.ok());
      ctl->Submit(std::move(*draft), [&p](Result<uint64_t> r) { p.set_value(r); });
      return 0;
    });
    auto id = p.get_future().get();
    REQUIRE(id.ok());
    return *id;
  }

  JobRecord Job(uint64_t id) {
    return core.Call([&] {
      const JobRecord* j = ctl->jobs().Find(id);
      return j ? *j : JobRecord{};
    });
  }
  bool HasEvent(uint64_t id, const std::string& type) {
    auto ev = store->EventsForJob(id);
    if (!ev.ok()) return false;
    for (const auto& e : *ev)
      if (e.type == type) return true;
    return false;
  }
};

}  // namespace

TEST_CASE("a report of an earlier run never ends the job's later run on the same node") {
  CtldFixture f;
  auto n1 = std::make_shared<FakeLink>();
  REQUIRE(f.Register("n1", n1).ok());
  uint64_t id = f.Submit(true);
  WaitFor([&] { return n1->NumLaunches() == 1; }, "run 1 launched on n1");
  CHECK(n1->launches[0] == std::make_pair(id, uint64_t{1}));

  // n1 is declared dead (as after SlurmdTimeout): the job is requeued; the node comes back and
  // the job starts there again as run 2 while the node still has run 1.
  REQUIRE(f.core.Call([&] { return f.ctl->UpdateNode("n1", "DOWN", "hung"); }).ok());
  CHECK(f.Job(id).State() == JobState::kPending);
  REQUIRE(f.core.Call([&] { return f.ctl->UpdateNode("n1", "RESUME", ""); }).ok());
  WaitFor([&] { return n1->NumLaunches() == 2; }, "run 2 launched on n1");
  CHECK(n1->launches[1] == std::make_pair(id, uint64_t{2}));

  // Run 1's CANCELLED report: recorded and acknowledged (for run 1), not applied to run 2.
  RegisterInfo::Finished stale{id, JobState::kCancelled, 0, 15, 0, "", 1};
  f.core.Call([&] {
    f.ctl->OnJobFinished("n1", stale);
    return 0;
  });
  WaitFor(
      [&] {
        std::lock_guard<std::mutex> l(n1->mu);
        return !n1->acks.empty();
      },
      "stale report acked");
  CHECK(n1->acks[0] == std::make_pair(id, uint64_t{1}));
  CHECK(f.Job(id).State() == JobState::kRunning);
  CHECK(f.Job(id).run == 2);
  CHECK(f.HasEvent(id, event::kStaleReport));

  // The heartbeat still shows run 1 (it takes a while to die): only run 1 is cancelled.
  f.core.Call([&] {
    f.ctl->OnHeartbeat("n1", {id}, {{id, 1}});
    return 0;
  });
  {
    std::lock_guard<std::mutex> l(n1->mu);
    REQUIRE(!n1->signals.empty());
    CHECK(n1->signals.back() == std::make_tuple(id, 0, uint64_t{1}));
  }

  // Run 2's own report ends it.
  RegisterInfo::Finished done{id, JobState::kCompleted, 0, 0, 0, "", 2};
  f.core.Call([&] {
    f.ctl->OnJobFinished("n1", done);
    return 0;
  });
  CHECK(f.Job(id).State() == JobState::kCompleted);
}

TEST_CASE("a report of an earlier run from another node is recorded, not applied") {
  CtldFixture f;
  auto n1 = std::make_shared<FakeLink>();
  REQUIRE(f.Register("n1", n1).ok());
  uint64_t id = f.Submit(true);
  WaitFor([&] { return n1->NumLaunches() == 1; }, "run 1 launched on n1");
  auto n2 = std::make_shared<FakeLink>();
  REQUIRE(f.Register("n2", n2).ok());
  REQUIRE(f.core.Call([&] { return f.ctl->UpdateNode("n1", "DOWN", "hung"); }).ok());
  WaitFor([&] { return n2->NumLaunches() == 1; }, "run 2 launched on n2");
  CHECK(n2->launches[0].second == 2);
  RegisterInfo::Finished stale{id, JobState::kCancelled, 0, 15, 0, "", 1};
  f.core.Call([&] {
    f.ctl->OnJobFinished("n1", stale);
    return 0;
  });
  WaitFor([&] { return f.HasEvent(id, event::kStaleReport); }, "stale report recorded");
  CHECK(f.Job(id).State() == JobState::kRunning);
}

TEST_CASE("a second registration of a connected, responding node is refused") {
  CtldFixture f;
  auto real = std::make_shared<FakeLink>();
  REQUIRE(f.Register("n1", real).ok());
  uint64_t id = f.Submit(false);
  WaitFor([&] { return real->NumLaunches() == 1; }, "job launched on n1");

  auto impostor = std::make_shared<FakeLink>();
  auto r = f.Register("n1", impostor, "boot-1");
  REQUIRE(!r.ok());
  CHECK(r.status().code() == Code::kAlreadyExists);
  CHECK(r.status().message().find("already registered") != std::string::npos);
  CHECK(real->probes == 1);  // a dead connection would end here and let the node back in
  // The real node keeps its job and its stream; nothing reached the impostor.
  CHECK(f.Job(id).State() == JobState::kRunning);
  CHECK(!real->disconnected);
  CHECK(impostor->NumLaunches() == 0);
  f.core.Call([&] {
    f.ctl->OnHeartbeat("n1", {id}, {{id, 1}});
    return 0;
  });
  CHECK(f.core.Call([&] { return f.ctl->nodes().Find("n1")->link.get(); }) == real.get());

  // Once the real stream has ended, a new registration (the node's noded restarted) is accepted.
  f.core.Call([&] {
    f.ctl->OnDisconnect("n1", real.get());
    return 0;
  });
  auto again = std::make_shared<FakeLink>();
  REQUIRE(f.Register("n1", again, "boot-1", {id}, {{id, 1}}).ok());
  CHECK(f.Job(id).State() == JobState::kRunning);
}

TEST_CASE("a node silent past SlurmdTimeout may be replaced by a new registration") {
  CtldFixture f;
  auto hung = std::make_shared<FakeLink>();
  REQUIRE(f.Register("n1", hung).ok());
  f.clock.Advance(31);
  auto fresh = std::make_shared<FakeLink>();
  REQUIRE(f.Register("n1", fresh).ok());
  CHECK(hung->disconnected);
}

TEST_CASE("a registration with another boot id loses the jobs the node ran") {
  CtldFixture f;
  auto n1 = std::make_shared<FakeLink>();
  REQUIRE(f.Register("n1", n1, "boot-1").ok());
  uint64_t id = f.Submit(false);
  WaitFor([&] { return n1->NumLaunches() == 1; }, "job launched on n1");
  f.core.Call([&] {
    f.ctl->OnDisconnect("n1", n1.get());
    return 0;
  });
  // Even if the new noded claims the job (a stale spool), the host rebooted: the job is gone.
  auto after = f.Register("n1", std::make_shared<FakeLink>(), "boot-2", {id}, {{id, 1}});
  REQUIRE(after.ok());
  CHECK(after->kill_jobs == std::vector<uint64_t>{id});
  CHECK(f.Job(id).State() == JobState::kNodeFail);
}

TEST_CASE("the credential's origin must be the node's NodeAddr when that can be checked") {
  ClusterConfig cfg;
  NodeConfig a;
  a.name = "a";
  a.addr = "10.1.2.3";
  NodeConfig lo;
  lo.name = "lo";
  lo.addr = "127.0.0.1";
  cfg.nodes = {a, lo};
  CHECK(rpc::CheckNodeOrigin(cfg, "a", "10.1.2.3").ok());
  Status bad = rpc::CheckNodeOrigin(cfg, "a", "10.9.9.9");
  CHECK(bad.code() == Code::kPermissionDenied);
  CHECK(bad.message().find("10.9.9.9") != std::string::npos);
  CHECK(rpc::CheckNodeOrigin(cfg, "a", "").ok());          // no origin in the credential
  CHECK(rpc::CheckNodeOrigin(cfg, "lo", "10.9.9.9").ok()); // loopback: every node on one host
}

TEST_CASE("accounting's live pass includes jobs that ended but are not archived yet") {
  JobRecord done;
  done.job_id = 7;
  done.uid = 1000;
  done.state = static_cast<int>(JobState::kCompleted);
  done.submit_time = 100;
  done.start_time = 110;
  done.end_time = 120;
  AccountingFilter f;
  f.start_after = 115;
  CHECK(rpc::LiveJobMatches(done, f));
  f.start_after = 121;
  CHECK(!rpc::LiveJobMatches(done, f));
  f.start_after = 0;
  f.uids = {1001};
  CHECK(!rpc::LiveJobMatches(done, f));
  JobRecord running = done;
  running.state = static_cast<int>(JobState::kRunning);
  running.end_time = 0;
  AccountingFilter any;
  any.start_after = 500;
  CHECK(rpc::LiveJobMatches(running, any));
}

TEST_CASE("Not responding carries the controller's uid and time, across a restart, until the node is back") {
  TempDir state;  // kept over the restarts below
  int64_t down_at = 0;
  auto node = [](CtldFixture& f, const char* name) {
    return f.core.Call([&] { return *f.ctl->nodes().Find(name); });
  };
  {
    CtldFixture f(state.path);
    REQUIRE(f.Register("n1", std::make_shared<FakeLink>()).ok());
    f.clock.Advance(31);  // past SlurmdTimeout=30: the next tick declares n1 DOWN
    WaitFor([&] { return node(f, "n1").base == NodeBase::kDown; }, "n1 DOWN after SlurmdTimeout");
    NodeRuntime n1 = node(f, "n1");
    CHECK(n1.reason == "Not responding");
    CHECK(n1.reason_uid == static_cast<int64_t>(geteuid()));
    CHECK(n1.reason_time == f.clock.Now());
    down_at = n1.reason_time;
  }  // the store writes what it was given before it closes
  {
    CtldFixture f(state.path);
    NodeRuntime n1 = node(f, "n1");
    CHECK(n1.base == NodeBase::kDown);
    CHECK(n1.reason == "Not responding");
    CHECK(n1.reason_uid == static_cast<int64_t>(geteuid()));
    CHECK(n1.reason_time == down_at);
    // Back: UP, the reason gone.
    REQUIRE(f.Register("n1", std::make_shared<FakeLink>()).ok());
    CHECK(node(f, "n1").base == NodeBase::kUp);
    CHECK(node(f, "n1").reason.empty());
  }
  CtldFixture f(state.path);  // and so after the next restart: not DOWN, no reason
  CHECK(node(f, "n1").base != NodeBase::kDown);
  CHECK(node(f, "n1").reason.empty());
}

// A restarted controller knows the job runs on n1 before n1 has registered again. A requeue (or
// cancel) acknowledged then must not start the job elsewhere while n1 may still run it: n1's
// registration kills that run, and only its reported end requeues (or ends) the job.
TEST_CASE("a requeue or cancel before the job's node registers again waits for that node") {
  for (bool cancel : {false, true}) {
    INFO((cancel ? "cancel" : "requeue"));
    TempDir state;
    uint64_t id = 0;
    {
      CtldFixture f(state.path);
      auto n1 = std::make_shared<FakeLink>();
      REQUIRE(f.Register("n1", n1).ok());
      id = f.Submit(true);
      WaitFor([&] { return n1->NumLaunches() == 1; }, "run 1 launched on n1");
    }  // the controller stops (as killed): n1 keeps running run 1
    CtldFixture f(state.path);
    auto n2 = std::make_shared<FakeLink>();
    REQUIRE(f.Register("n2", n2).ok());  // n2 is back first, n1 not yet
    Caller root;
    root.admin = true;
    Status st = f.core.Call([&] { return cancel ? f.ctl->Cancel(id, root, 0) : f.ctl->Requeue(id, root); });
    REQUIRE(st.ok());
    f.core.Call([&] { f.ctl->RequestSchedule(); return 0; });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a cycle could start it on n2
    CHECK(n2->NumLaunches() == 0);
    CHECK(f.Job(id).State() == JobState::kRunning);
    CHECK(f.Job(id).alloc.front().node == "n1");
    // n1 registers with run 1: it is told to kill it; its end requeues (or cancels) the job.
    auto n1 = std::make_shared<FakeLink>();
    auto reply = f.Register("n1", n1, "boot-1", {id}, {{id, 1}});
    REQUIRE(reply.ok());
    CHECK(reply->kill_jobs == std::vector<uint64_t>{id});
    RegisterInfo::Finished end{id, JobState::kCancelled, 0, 15, 0, "", 1};
    f.core.Call([&] { f.ctl->OnJobFinished("n1", end); return 0; });
    if (cancel) {
      WaitFor([&] { return f.Job(id).State() == JobState::kCancelled; }, "job cancelled");
    } else {
      WaitFor([&] { return n1->NumLaunches() + n2->NumLaunches() == 1; }, "run 2 launched");
      CHECK(f.Job(id).run == 2);
    }
  }
}
