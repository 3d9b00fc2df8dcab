#include "cli/lib/local_controller_api.h"

#include <unistd.h>

#include "rpc/local_wire.h"

namespace tessera::cli {

Result<std::unique_ptr<LocalControllerApi>> LocalControllerApi::Connect(
    const std::string& path, std::chrono::seconds deadline) {
  auto fd = rpc::local::Connect(path, static_cast<int>(deadline.count() * 1000));
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<LocalControllerApi>(new LocalControllerApi(path, *fd));
}

LocalControllerApi::~LocalControllerApi() { close(fd_); }

template <typename Resp>
Result<Resp> LocalControllerApi::Call(const char* method, const google::protobuf::Message& req) {
  std::string bytes;
  req.SerializeToString(&bytes);
  auto body = rpc::local::Call(fd_, method, bytes);
  if (!body.ok()) {
    Code c = body.status().code();
    if (c == Code::kUnavailable || c == Code::kDataLoss || c == Code::kDeadlineExceeded)
      return Status(c, "tessera-ctld at " + path_ + ": " + body.status().message());
    return body.status();
  }
  Resp resp;
  if (!resp.ParseFromString(*body))
    return Status(Code::kDataLoss, std::string("malformed ") + method + " answer from " + path_);
  return resp;
}

#define TESSERA_LOCAL_RPC(Name, Req, Resp)                              \
  Result<pb::Resp> LocalControllerApi::Name(const pb::Req& req) {       \
    return Call<pb::Resp>(#Name, req);                                  \
  }

TESSERA_LOCAL_RPC(SubmitJob, SubmitJobRequest, SubmitJobResponse)
TESSERA_LOCAL_RPC(GetJob, GetJobRequest, JobInfo)
TESSERA_LOCAL_RPC(ListJobs, ListJobsRequest, ListJobsResponse)
TESSERA_LOCAL_RPC(UpdateJob, UpdateJobRequest, UpdateJobResponse)
TESSERA_LOCAL_RPC(CancelJob, CancelJobRequest, CancelJobResponse)
TESSERA_LOCAL_RPC(ListNodes, ListNodesRequest, ListNodesResponse)
TESSERA_LOCAL_RPC(UpdateNode, UpdateNodeRequest, UpdateNodeResponse)
TESSERA_LOCAL_RPC(ListPartitions, ListPartitionsRequest, ListPartitionsResponse)
TESSERA_LOCAL_RPC(Reconfigure, ReconfigureRequest, ReconfigureResponse)
TESSERA_LOCAL_RPC(QueryAccounting, QueryAccountingRequest, QueryAccountingResponse)
TESSERA_LOCAL_RPC(Ping, PingRequest, PingResponse)
TESSERA_LOCAL_RPC(GetJobEvents, GetJobEventsRequest, GetJobEventsResponse)
TESSERA_LOCAL_RPC(Diagnostics, DiagnosticsRequest, DiagnosticsResponse)
TESSERA_LOCAL_RPC(CreateStep, CreateStepRequest, CreateStepResponse)
TESSERA_LOCAL_RPC(CompleteStep, CompleteStepRequest, CompleteStepResponse)
TESSERA_LOCAL_RPC(ConfigureMig, ConfigureMigRequest, ConfigureMigResponse)

#undef TESSERA_LOCAL_RPC

}  // namespace tessera::cli
