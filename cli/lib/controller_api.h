#pragma once
// The controller's API as the commands use it: one method per RPC, Result<> in, no gRPC types
// in the signatures (nor in what this header includes, so a command that only talks to the
// local socket links without gRPC). Implementations: GrpcControllerApi
// (grpc_controller_api.h), LocalControllerApi (local_controller_api.h); tests use a fake.
#include <chrono>
#include <memory>
#include <string>

#include "common/cluster_config.h"
#include "common/status.h"
#include "rpc/controller_methods.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::cli {

namespace pb = ::tessera::v1;

class ControllerApi {
 public:
  virtual ~ControllerApi() = default;
  // "host:port" of the controller, for messages.
  virtual std::string Target() const = 0;
  virtual Result<pb::SubmitJobResponse> SubmitJob(const pb::SubmitJobRequest& req) = 0;
  virtual Result<pb::JobInfo> GetJob(const pb::GetJobRequest& req) = 0;
  virtual Result<pb::ListJobsResponse> ListJobs(const pb::ListJobsRequest& req) = 0;
  virtual Result<pb::UpdateJobResponse> UpdateJob(const pb::UpdateJobRequest& req) = 0;
  virtual Result<pb::CancelJobResponse> CancelJob(const pb::CancelJobRequest& req) = 0;
  virtual Result<pb::ListNodesResponse> ListNodes(const pb::ListNodesRequest& req) = 0;
  virtual Result<pb::UpdateNodeResponse> UpdateNode(const pb::UpdateNodeRequest& req) = 0;
  virtual Result<pb::ListPartitionsResponse> ListPartitions(
      const pb::ListPartitionsRequest& req) = 0;
  virtual Result<pb::ReconfigureResponse> Reconfigure(const pb::ReconfigureRequest& req) = 0;
  virtual Result<pb::QueryAccountingResponse> QueryAccounting(
      const pb::QueryAccountingRequest& req) = 0;
  virtual Result<pb::PingResponse> Ping(const pb::PingRequest& req) = 0;
  virtual Result<pb::GetJobEventsResponse> GetJobEvents(const pb::GetJobEventsRequest& req) = 0;
  virtual Result<pb::DiagnosticsResponse> Diagnostics(const pb::DiagnosticsRequest& req) = 0;
  // Bulk submission (issue #6); the commands do not use it. Default: kUnimplemented.
  virtual Result<pb::SubmitJobsResponse> SubmitJobs(const pb::SubmitJobsRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "SubmitJobs is not implemented by " + Target());
  }
  // trun (issue #4). Not pure so older fakes still compile: the default is kUnimplemented.
  virtual Result<pb::CreateStepResponse> CreateStep(const pb::CreateStepRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "CreateStep is not implemented by " + Target());
  }
  virtual Result<pb::CompleteStepResponse> CompleteStep(const pb::CompleteStepRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "CompleteStep is not implemented by " + Target());
  }
  virtual Result<pb::ConfigureMigResponse> ConfigureMig(const pb::ConfigureMigRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "ConfigureMig is not implemented by " + Target());
  }
  virtual Result<pb::BackupResponse> Backup(const pb::BackupRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "Backup is not implemented by " + Target());
  }
  // Associations (tacctmgr, issue 16 §1). Default: kUnimplemented.
  virtual Result<pb::AssocResponse> ShowAssoc(const pb::AssocRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "ShowAssoc is not implemented by " + Target());
  }
  virtual Result<pb::AssocResponse> ChangeAssoc(const pb::AssocRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "ChangeAssoc is not implemented by " + Target());
  }
  // tcontrol show topology (issue 15).
  virtual Result<pb::ShowTopologyResponse> ShowTopology(const pb::ShowTopologyRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "ShowTopology is not implemented by " + Target());
  }
  // tshare / tprio (issue 16 §3).
  virtual Result<pb::GetSharesResponse> GetShares(const pb::GetSharesRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "GetShares is not implemented by " + Target());
  }
  virtual Result<pb::GetPrioritiesResponse> GetPriorities(const pb::GetPrioritiesRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "GetPriorities is not implemented by " + Target());
  }
  // Reservations (issue 17 §1). Default: kUnimplemented.
  virtual Result<pb::ReservationResponse> CreateReservation(const pb::ReservationRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "CreateReservation is not implemented by " + Target());
  }
  virtual Result<pb::ReservationResponse> UpdateReservation(const pb::ReservationRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "UpdateReservation is not implemented by " + Target());
  }
  virtual Result<pb::ReservationResponse> DeleteReservation(const pb::ReservationRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "DeleteReservation is not implemented by " + Target());
  }
  virtual Result<pb::ListReservationsResponse> ListReservations(
      const pb::ListReservationsRequest& req) {
    (void)req;
    return Status(Code::kUnimplemented, "ListReservations is not implemented by " + Target());
  }
  virtual Result<pb::ShowConfigResponse> ShowConfig(const pb::ShowConfigRequest& req) {  // issue 19
    (void)req;
    return Status(Code::kUnimplemented, "ShowConfig is not implemented by " + Target());
  }
};

}  // namespace tessera::cli
