#include "cli/lib/step_agent_api.h"

#include <algorithm>
#include <chrono>

#include "rpc/grpc_util.h"

namespace tessera::cli {

namespace v1 = tessera::v1;

GrpcStepAgentApi::GrpcStepAgentApi(const ClusterConfig& cfg,
                                   std::shared_ptr<rpc::CredentialCodec> codec,
                                   const std::string& node, const std::string& address,
                                   uint16_t port)
    : target_(node + " (" + address + ":" + std::to_string(port) + ")"),
      codec_(std::move(codec)),
      stub_(v1::StepAgent::NewStub(rpc::MakeChannel(cfg, address, port))) {}

Status GrpcStepAgentApi::Explain(const Status& s) const {
  if (s.code() == Code::kUnavailable)
    return Unavailable("cannot reach tessera-noded on node " + target_ + ": " + s.message());
  return Status(s.code(), "node " + target_ + ": " + s.message());
}

// A server stream of TaskOutput, cancellable by Cancel().
template <typename Call>
Status GrpcStepAgentApi::Stream(const Call& call, const OnOutput& on_output) {
  grpc::ClientContext ctx;
  Status cred = rpc::AttachCredential(*codec_, &ctx);
  if (!cred.ok()) return Status(cred.code(), "munge credential: " + cred.message());
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return Status(Code::kCancelled, "cancelled");
    active_ = &ctx;
  }
  auto reader = call(&ctx);
  v1::TaskOutput m;
  while (reader->Read(&m)) on_output(m);
  grpc::Status st = reader->Finish();
  bool cancelled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    active_ = nullptr;
    cancelled = cancelled_;
  }
  if (st.ok()) return Status::Ok();
  if (cancelled) return Status(Code::kCancelled, "cancelled");
  return Explain(rpc::FromGrpc(st));
}

Status GrpcStepAgentApi::RunTasks(const v1::RunTasksRequest& req, const OnOutput& on_output) {
  return Stream([&](grpc::ClientContext* ctx) { return stub_->RunTasks(ctx, req); }, on_output);
}

Status GrpcStepAgentApi::AttachTasks(uint64_t job, uint32_t step, const OnOutput& on_output) {
  v1::AttachTasksRequest req;
  req.set_job_id(job);
  req.set_step_id(step);
  return Stream([&](grpc::ClientContext* ctx) { return stub_->AttachTasks(ctx, req); }, on_output);
}

void GrpcStepAgentApi::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  if (active_) active_->TryCancel();
  for (auto* c : inputs_) c->TryCancel();
}

namespace {
// A SendInput call; unregisters itself from the api's cancel list when it ends.
class GrpcInputStream final : public StepInputStream {
 public:
  GrpcInputStream(std::function<void(grpc::ClientContext*)> done,
                  std::function<Status(const Status&)> explain)
      : done_(std::move(done)), explain_(std::move(explain)) {}
  ~GrpcInputStream() override { (void)Close(); }
  grpc::ClientContext ctx;
  v1::SendInputResponse resp;
  std::unique_ptr<grpc::ClientWriter<v1::StepInput>> writer;
  bool Write(const v1::StepInput& in) override { return !closed_ && writer->Write(in); }
  Status Close() override {
    if (closed_) return Status::Ok();
    closed_ = true;
    writer->WritesDone();
    grpc::Status st = writer->Finish();
    done_(&ctx);
    return st.ok() ? Status::Ok() : explain_(rpc::FromGrpc(st));
  }

 private:
  bool closed_ = false;
  std::function<void(grpc::ClientContext*)> done_;
  std::function<Status(const Status&)> explain_;
};
}  // namespace

Result<std::unique_ptr<StepInputStream>> GrpcStepAgentApi::OpenInput() {
  auto s = std::make_unique<GrpcInputStream>(
      [this](grpc::ClientContext* c) {
        std::lock_guard<std::mutex> lock(mu_);
        inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), c), inputs_.end());
      },
      [this](const Status& st) { return Explain(st); });
  Status cred = rpc::AttachCredential(*codec_, &s->ctx);
  if (!cred.ok()) return Status(cred.code(), "munge credential: " + cred.message());
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return Status(Code::kCancelled, "cancelled");
    inputs_.push_back(&s->ctx);
  }
  s->writer = stub_->SendInput(&s->ctx, &s->resp);
  return std::unique_ptr<StepInputStream>(std::move(s));
}

Status GrpcStepAgentApi::SignalTasks(const v1::SignalTasksRequest& req) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  Status cred = rpc::AttachCredential(*codec_, &ctx);
  if (!cred.ok()) return Status(cred.code(), "munge credential: " + cred.message());
  v1::SignalTasksResponse resp;
  grpc::Status st = stub_->SignalTasks(&ctx, req, &resp);
  return st.ok() ? Status::Ok() : Explain(rpc::FromGrpc(st));
}

Result<v1::StepUsage> GrpcStepAgentApi::GetStepUsage(uint64_t job, uint32_t step) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  Status cred = rpc::AttachCredential(*codec_, &ctx);
  if (!cred.ok()) return Status(cred.code(), "munge credential: " + cred.message());
  v1::GetStepUsageRequest req;
  req.set_job_id(job);
  req.set_step_id(step);
  v1::GetStepUsageResponse resp;
  grpc::Status st = stub_->GetStepUsage(&ctx, req, &resp);
  if (!st.ok()) return Explain(rpc::FromGrpc(st));
  return resp.usage();
}

}  // namespace tessera::cli
