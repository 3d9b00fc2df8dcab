#include "cli/lib/step_agent_api.h"

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

Status GrpcStepAgentApi::RunTasks(const v1::RunTasksRequest& req, const OnOutput& on_output) {
  grpc::ClientContext ctx;
  Status cred = rpc::AttachCredential(*codec_, &ctx);
  if (!cred.ok()) return Status(cred.code(), "munge credential: " + cred.message());
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return Status(Code::kCancelled, "cancelled");
    active_ = &ctx;
  }
  auto reader = stub_->RunTasks(&ctx, req);
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

void GrpcStepAgentApi::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  if (active_) active_->TryCancel();
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

}  // namespace tessera::cli
