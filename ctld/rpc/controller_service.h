#pragma once
// tessera.v1.Controller: thin handlers (authenticate, authorize, convert, call the Controller on
// the core thread, convert back).
#include <condition_variable>
#include <chrono>
#include <deque>
#include <map>
#include <string>
#include <functional>
#include <list>
#include <memory>
#include <mutex>

#include "ctld/config_loader.h"
#include "ctld/controller.h"
#include "ctld/core.h"
#include "ctld/rpc/authz.h"
#include "ctld/rpc/rpc_stats.h"  // RpcStats, RpcTimer (sdiag, tessera_rpc_duration_seconds)
#include "tessera/v1/controller.grpc.pb.h"

namespace tessera::ctld::rpc {

// Fans committed job events out to WatchJobs streams. Thread-safe.
class WatchHub {
 public:
  struct Sub {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<JobEvent> events;
  };
  std::shared_ptr<Sub> Subscribe();
  void Unsubscribe(const std::shared_ptr<Sub>& s);
  void Publish(const JobEvent& e);

 private:
  std::mutex mu_;
  std::list<std::shared_ptr<Sub>> subs_;
};

// Re-reads and validates the configuration; used by Reconfigure and SIGHUP.
using ConfigLoader = std::function<Result<LoadedConfig>()>;

class ControllerService final : public v1::Controller::Service {
 public:
  ControllerService(Controller* ctl, Core* core, Store* store, const Authorizer* auth,
                    WatchHub* hub, ConfigLoader loader, const Clock* clock)
      : ctl_(ctl), core_(core), store_(store), auth_(auth), hub_(hub), loader_(std::move(loader)), clock_(clock) {}

  grpc::Status SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest*, v1::SubmitJobResponse*) override;
  grpc::Status SubmitJobs(grpc::ServerContext*, const v1::SubmitJobsRequest*, v1::SubmitJobsResponse*) override;
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest*, v1::JobInfo*) override;
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*, v1::ListJobsResponse*) override;
  grpc::Status WatchJobs(grpc::ServerContext*, const v1::WatchJobsRequest*, grpc::ServerWriter<v1::JobEvent>*) override;
  grpc::Status UpdateJob(grpc::ServerContext*, const v1::UpdateJobRequest*, v1::UpdateJobResponse*) override;
  grpc::Status CancelJob(grpc::ServerContext*, const v1::CancelJobRequest*, v1::CancelJobResponse*) override;
  grpc::Status ListNodes(grpc::ServerContext*, const v1::ListNodesRequest*, v1::ListNodesResponse*) override;
  grpc::Status UpdateNode(grpc::ServerContext*, const v1::UpdateNodeRequest*, v1::UpdateNodeResponse*) override;
  grpc::Status ListPartitions(grpc::ServerContext*, const v1::ListPartitionsRequest*, v1::ListPartitionsResponse*) override;
  grpc::Status Reconfigure(grpc::ServerContext*, const v1::ReconfigureRequest*, v1::ReconfigureResponse*) override;
  grpc::Status QueryAccounting(grpc::ServerContext*, const v1::QueryAccountingRequest*, v1::QueryAccountingResponse*) override;
  grpc::Status Ping(grpc::ServerContext*, const v1::PingRequest*, v1::PingResponse*) override;
  grpc::Status GetJobEvents(grpc::ServerContext*, const v1::GetJobEventsRequest*, v1::GetJobEventsResponse*) override;
  grpc::Status Diagnostics(grpc::ServerContext*, const v1::DiagnosticsRequest*, v1::DiagnosticsResponse*) override;
  grpc::Status CreateStep(grpc::ServerContext*, const v1::CreateStepRequest*, v1::CreateStepResponse*) override;
  grpc::Status CompleteStep(grpc::ServerContext*, const v1::CompleteStepRequest*, v1::CompleteStepResponse*) override;
  grpc::Status ConfigureMig(grpc::ServerContext*, const v1::ConfigureMigRequest*, v1::ConfigureMigResponse*) override;
  grpc::Status Backup(grpc::ServerContext*, const v1::BackupRequest*, v1::BackupResponse*) override;
  // acct helper (issue 16 §1), controller_service_assoc.cc: ShowAssoc anyone, ChangeAssoc admins.
  grpc::Status ShowAssoc(grpc::ServerContext*, const v1::AssocRequest*, v1::AssocResponse*) override;
  grpc::Status ChangeAssoc(grpc::ServerContext*, const v1::AssocRequest*, v1::AssocResponse*) override;
  grpc::Status ShowTopology(grpc::ServerContext*, const v1::ShowTopologyRequest*,
                            v1::ShowTopologyResponse*) override;  // issue 15
  // Fair share (issue 16 §3; fairshare_service.cc): tshare, tprio.
  grpc::Status GetShares(grpc::ServerContext*, const v1::GetSharesRequest*, v1::GetSharesResponse*) override;
  grpc::Status GetPriorities(grpc::ServerContext*, const v1::GetPrioritiesRequest*, v1::GetPrioritiesResponse*) override;
  // Reservations (issue 17 §1; reservation_service.cc): changes admins, listing anyone.
  grpc::Status CreateReservation(grpc::ServerContext*, const v1::ReservationRequest*, v1::ReservationResponse*) override;
  grpc::Status UpdateReservation(grpc::ServerContext*, const v1::ReservationRequest*, v1::ReservationResponse*) override;
  grpc::Status DeleteReservation(grpc::ServerContext*, const v1::ReservationRequest*, v1::ReservationResponse*) override;
  grpc::Status ListReservations(grpc::ServerContext*, const v1::ListReservationsRequest*, v1::ListReservationsResponse*) override;
  // Issue 19 (h19; config_service.cc): scontrol show config from the running controller. Anyone.
  grpc::Status ShowConfig(grpc::ServerContext*, const v1::ShowConfigRequest*, v1::ShowConfigResponse*) override;
  // Issue 20 §3: RPC histograms into `m` (null = none). Before serving.
  void SetMetrics(metrics::CtldMetrics* m) { rpc_stats_.SetMetrics(m); }

 private:
  // Authenticates (munge over gRPC, SO_PEERCRED over the local socket) and authorizes.
  Result<Caller> Check(grpc::ServerContext* ctx, const char* method, Role role);
  // Checks a spec on the handler thread (request-only fields, --priority); fills *spec.
  Status CheckSpec(const v1::JobSpec& pb, const Caller& caller, std::vector<std::string>* warnings,
                   JobSpec* spec);
  // Issue 20 §3 (h20a): sdiag's agent, store queue, cycle depth and backfill figures. Core thread.
  void FillDiagnosticsExtra(v1::DiagnosticsResponse* resp);

  Controller* ctl_;
  Core* core_;
  Store* store_;
  const Authorizer* auth_;
  WatchHub* hub_;
  ConfigLoader loader_;
  const Clock* clock_;
  RpcStats rpc_stats_;
};

}  // namespace tessera::ctld::rpc
