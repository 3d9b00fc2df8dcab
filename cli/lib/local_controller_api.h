#pragma once
// LocalControllerApi: the controller's API over its Unix socket (rpc/local_wire.h), for commands
// run on the controller's host. Same methods and messages as GrpcControllerApi; the kernel tells
// ctld who is calling, so no munge credential is made. One connection for the command's life.
#include <chrono>
#include <memory>
#include <string>

#include "cli/lib/controller_api.h"

namespace tessera::cli {

class LocalControllerApi final : public ControllerApi {
 public:
  // kUnavailable when nothing answers at `path` (the caller then uses gRPC).
  static Result<std::unique_ptr<LocalControllerApi>> Connect(const std::string& path,
                                                             std::chrono::seconds deadline);
  ~LocalControllerApi() override;
  std::string Target() const override { return path_; }
  Result<pb::SubmitJobResponse> SubmitJob(const pb::SubmitJobRequest& req) override;
  Result<pb::JobInfo> GetJob(const pb::GetJobRequest& req) override;
  Result<pb::ListJobsResponse> ListJobs(const pb::ListJobsRequest& req) override;
  Result<pb::UpdateJobResponse> UpdateJob(const pb::UpdateJobRequest& req) override;
  Result<pb::CancelJobResponse> CancelJob(const pb::CancelJobRequest& req) override;
  Result<pb::ListNodesResponse> ListNodes(const pb::ListNodesRequest& req) override;
  Result<pb::UpdateNodeResponse> UpdateNode(const pb::UpdateNodeRequest& req) override;
  Result<pb::ListPartitionsResponse> ListPartitions(const pb::ListPartitionsRequest& req) override;
  Result<pb::ReconfigureResponse> Reconfigure(const pb::ReconfigureRequest& req) override;
  Result<pb::QueryAccountingResponse> QueryAccounting(
      const pb::QueryAccountingRequest& req) override;
  Result<pb::PingResponse> Ping(const pb::PingRequest& req) override;
  Result<pb::GetJobEventsResponse> GetJobEvents(const pb::GetJobEventsRequest& req) override;
  Result<pb::DiagnosticsResponse> Diagnostics(const pb::DiagnosticsRequest& req) override;
  Result<pb::CreateStepResponse> CreateStep(const pb::CreateStepRequest& req) override;
  Result<pb::CompleteStepResponse> CompleteStep(const pb::CompleteStepRequest& req) override;
  Result<pb::ConfigureMigResponse> ConfigureMig(const pb::ConfigureMigRequest& req) override;

 private:
  LocalControllerApi(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  template <typename Resp>
  Result<Resp> Call(const char* method, const google::protobuf::Message& req);

  std::string path_;
  int fd_;
};

}  // namespace tessera::cli
