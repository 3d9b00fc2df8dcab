#pragma once
// The controller's unary RPCs (tessera.v1.Controller minus the WatchJobs stream) as one list of
// X(Name, Request, Response) entries, message types relative to tessera::v1. Every transport
// expands it, so they cannot drift apart: the gRPC and local-socket clients
// (cli/lib/controller_api.h, cli/lib/local_controller_api.h) and the local-socket server
// (ctld/rpc/local_server.cc). A new unary RPC is added here and in controller.proto.
#define TESSERA_CONTROLLER_UNARY_RPCS(X)                        \
  X(SubmitJob, SubmitJobRequest, SubmitJobResponse)             \
  X(SubmitJobs, SubmitJobsRequest, SubmitJobsResponse)          \
  X(GetJob, GetJobRequest, JobInfo)                             \
  X(ListJobs, ListJobsRequest, ListJobsResponse)                \
  X(UpdateJob, UpdateJobRequest, UpdateJobResponse)             \
  X(CancelJob, CancelJobRequest, CancelJobResponse)             \
  X(ListNodes, ListNodesRequest, ListNodesResponse)             \
  X(UpdateNode, UpdateNodeRequest, UpdateNodeResponse)          \
  X(ListPartitions, ListPartitionsRequest, ListPartitionsResponse) \
  X(Reconfigure, ReconfigureRequest, ReconfigureResponse)       \
  X(QueryAccounting, QueryAccountingRequest, QueryAccountingResponse) \
  X(Ping, PingRequest, PingResponse)                            \
  X(GetJobEvents, GetJobEventsRequest, GetJobEventsResponse)    \
  X(Diagnostics, DiagnosticsRequest, DiagnosticsResponse)       \
  X(CreateStep, CreateStepRequest, CreateStepResponse)          \
  X(CompleteStep, CompleteStepRequest, CompleteStepResponse)    \
  X(ConfigureMig, ConfigureMigRequest, ConfigureMigResponse)    \
  X(Backup, BackupRequest, BackupResponse)                      \
  X(ShowAssoc, AssocRequest, AssocResponse)                     \
  X(ChangeAssoc, AssocRequest, AssocResponse)                   \
  X(ShowTopology, ShowTopologyRequest, ShowTopologyResponse)    \
  X(GetShares, GetSharesRequest, GetSharesResponse)             \
  X(GetPriorities, GetPrioritiesRequest, GetPrioritiesResponse) \
  X(CreateReservation, ReservationRequest, ReservationResponse)  \
  X(UpdateReservation, ReservationRequest, ReservationResponse)  \
  X(DeleteReservation, ReservationRequest, ReservationResponse)  \
  X(ListReservations, ListReservationsRequest, ListReservationsResponse) \
  X(ShowConfig, ShowConfigRequest, ShowConfigResponse)

// Declares `Result<pb::Resp> Name(const pb::Req&) override;` in a ControllerApi implementation.
#define TESSERA_CONTROLLER_API_OVERRIDE(Name, Req, Resp) \
  Result<pb::Resp> Name(const pb::Req& req) override;
