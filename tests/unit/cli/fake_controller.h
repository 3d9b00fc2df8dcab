#pragma once
// A ControllerApi that records requests and answers with canned responses, plus helpers to run
// a command with an in-memory context.
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/lib/command.h"
#include "cli/lib/controller_api.h"
#include "cli/lib/id_names.h"

namespace tessera::cli::testing {

class FakeController final : public ControllerApi {
 public:
  std::string Target() const override { return "ctld.test:6817"; }
#define FAKE_RPC(Name, Req, Resp)                                  \
  std::vector<pb::Req> Name##_calls;                               \
  Result<pb::Resp> Name##_result = pb::Resp();                     \
  Result<pb::Resp> Name(const pb::Req& req) override {             \
    Name##_calls.push_back(req);                                   \
    return Name##_result;                                          \
  }
  FAKE_RPC(SubmitJob, SubmitJobRequest, SubmitJobResponse)
  FAKE_RPC(GetJob, GetJobRequest, JobInfo)
  FAKE_RPC(ListJobs, ListJobsRequest, ListJobsResponse)
  FAKE_RPC(UpdateJob, UpdateJobRequest, UpdateJobResponse)
  FAKE_RPC(CancelJob, CancelJobRequest, CancelJobResponse)
  FAKE_RPC(ListNodes, ListNodesRequest, ListNodesResponse)
  FAKE_RPC(UpdateNode, UpdateNodeRequest, UpdateNodeResponse)
  FAKE_RPC(ListPartitions, ListPartitionsRequest, ListPartitionsResponse)
  FAKE_RPC(Reconfigure, ReconfigureRequest, ReconfigureResponse)
  FAKE_RPC(QueryAccounting, QueryAccountingRequest, QueryAccountingResponse)
  FAKE_RPC(Ping, PingRequest, PingResponse)
  FAKE_RPC(GetJobEvents, GetJobEventsRequest, GetJobEventsResponse)
  FAKE_RPC(Diagnostics, DiagnosticsRequest, DiagnosticsResponse)
  FAKE_RPC(CreateStep, CreateStepRequest, CreateStepResponse)
  FAKE_RPC(CompleteStep, CompleteStepRequest, CompleteStepResponse)
  FAKE_RPC(GetShares, GetSharesRequest, GetSharesResponse)              // issue 16 §3
  FAKE_RPC(GetPriorities, GetPrioritiesRequest, GetPrioritiesResponse)  // issue 16 §3
  FAKE_RPC(CreateReservation, ReservationRequest, ReservationResponse)  // issue 17 §1
  FAKE_RPC(UpdateReservation, ReservationRequest, ReservationResponse)
  FAKE_RPC(DeleteReservation, ReservationRequest, ReservationResponse)
  FAKE_RPC(ListReservations, ListReservationsRequest, ListReservationsResponse)
  FAKE_RPC(ShowConfig, ShowConfigRequest, ShowConfigResponse)
#undef FAKE_RPC
};

// Formatting uses local time; tests pin it to UTC.
inline void UseUtc() {
  setenv("TZ", "UTC", 1);
  tzset();
}

inline constexpr int64_t kNow = 1'700'000'000;  // 2023-11-14T22:13:20Z

// Runs `run` with `args`, a fake controller (owned by the caller), and in-memory streams.
struct CommandRun {
  FakeController ctld;
  FakeIdNames names;
  std::map<std::string, std::string> files;  // path -> contents for read_file
  std::map<std::string, std::string> env;
  std::string stdin_text;
  std::string out, err;
  int connects = 0;
  uint32_t uid = 1001;
  std::string prog = "tcmd";        // issue 19: "squeue", "scancel", ... for Slurm's behaviour
  int sleeps_allowed = 0;           // ctx.sleep returns false after this many sleeps
  std::vector<int64_t> slept;       // the seconds of every ctx.sleep call

  CommandRun() {
    names.AddUser(1001, "alice");
    names.AddUser(1002, "bob");
    names.AddUser(0, "root");
    names.AddGroup(1001, "alice");
    names.AddGroup(100, "users");
  }

  int Run(const std::function<int(CommandContext&)>& run, std::vector<std::string> args) {
    std::istringstream in(stdin_text);
    std::ostringstream o, e;
    CommandContext ctx;
    ctx.prog = prog;
    ctx.args = std::move(args);
    ctx.env = env;
    ctx.in = &in;
    ctx.out = &o;
    ctx.err = &e;
    ctx.cwd = "/home/alice/work";
    ctx.uid = uid;
    ctx.now = kNow;
    ctx.names = &names;
    ctx.read_file = [this](const std::string& p) -> Result<std::string> {
      auto it = files.find(p);
      if (it == files.end()) return NotFound("unable to open file " + p);
      return it->second;
    };
    ctx.sleep = [this](int64_t s) {
      slept.push_back(s);
      return static_cast<int>(slept.size()) <= sleeps_allowed;
    };
    ctx.clock = [this] {
      int64_t t = kNow;
      for (int64_t s : slept) t += s;
      return t;
    };
    ctx.connect = [this]() -> Result<std::unique_ptr<ControllerApi>> {
      ++connects;
      return std::unique_ptr<ControllerApi>(new Forwarder(ctld));
    };
    int rc = run(ctx);
    out = o.str();
    err = e.str();
    return rc;
  }

 private:
  // Hands calls to the long-lived fake so tests can inspect it after the command returns.
  class Forwarder final : public ControllerApi {
   public:
    explicit Forwarder(FakeController& f) : f_(f) {}
    std::string Target() const override { return f_.Target(); }
#define FWD(Name, Req, Resp) \
  Result<pb::Resp> Name(const pb::Req& r) override { return f_.Name(r); }
    FWD(SubmitJob, SubmitJobRequest, SubmitJobResponse)
    FWD(GetJob, GetJobRequest, JobInfo)
    FWD(ListJobs, ListJobsRequest, ListJobsResponse)
    FWD(UpdateJob, UpdateJobRequest, UpdateJobResponse)
    FWD(CancelJob, CancelJobRequest, CancelJobResponse)
    FWD(ListNodes, ListNodesRequest, ListNodesResponse)
    FWD(UpdateNode, UpdateNodeRequest, UpdateNodeResponse)
    FWD(ListPartitions, ListPartitionsRequest, ListPartitionsResponse)
    FWD(Reconfigure, ReconfigureRequest, ReconfigureResponse)
    FWD(QueryAccounting, QueryAccountingRequest, QueryAccountingResponse)
    FWD(Ping, PingRequest, PingResponse)
    FWD(GetJobEvents, GetJobEventsRequest, GetJobEventsResponse)
    FWD(Diagnostics, DiagnosticsRequest, DiagnosticsResponse)
    FWD(CreateStep, CreateStepRequest, CreateStepResponse)
    FWD(CompleteStep, CompleteStepRequest, CompleteStepResponse)
    FWD(GetShares, GetSharesRequest, GetSharesResponse)              // issue 16 §3
    FWD(GetPriorities, GetPrioritiesRequest, GetPrioritiesResponse)  // issue 16 §3
    FWD(CreateReservation, ReservationRequest, ReservationResponse)  // issue 17 §1
    FWD(UpdateReservation, ReservationRequest, ReservationResponse)
    FWD(DeleteReservation, ReservationRequest, ReservationResponse)
    FWD(ListReservations, ListReservationsRequest, ListReservationsResponse)
    FWD(ShowConfig, ShowConfigRequest, ShowConfigResponse)
#undef FWD
   private:
    FakeController& f_;
  };
};

}  // namespace tessera::cli::testing
