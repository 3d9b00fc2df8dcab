#pragma once
// Authentication (munge) and the per-method authorization table (DESIGN §9).
//
//   method               who may call
//   SubmitJob, GetJob, ListJobs, WatchJobs, ListNodes, ListPartitions, QueryAccounting,
//   Ping, GetJobEvents   anyone with a valid credential
//   UpdateJob, CancelJob owner of the job, operators, admins (checked per job)
//   CreateStep, CompleteStep  owner of the job, operators, admins (noded runs the tasks only
//                        for the job's user or root)
//   UpdateJob SUSPEND/RESUME  admins
//   Diagnostics, ShowTopology, ShowConfig   anyone with a valid credential
//   ShowAssoc            anyone with a valid credential (tacctmgr show)
//   ListReservations     anyone with a valid credential; Create/Update/DeleteReservation admins
//   UpdateNode, Reconfigure, ConfigureMig, Backup, ChangeAssoc   admins (root, the cluster user,
//                        TesseraAdmins)
//   NodeAgent.Connect    the cluster user (TesseraUser/SlurmUser) or root
//
// Every refusal is logged with method, peer and reason.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "common/cluster_config.h"
#include "ctld/jobs/job_manager.h"
#include "rpc/munge_codec.h"

namespace tessera::ctld::rpc {

enum class Role { kAnyone, kOwner, kAdmin, kNode };

class Authorizer {
 public:
  explicit Authorizer(const tessera::rpc::CredentialCodec* codec) : codec_(codec) {}
  // Decodes the credential and checks `role`. `cfg` is the current configuration.
  Result<Caller> Check(const grpc::ServerContextBase& ctx, const char* method, Role role,
                       const ClusterConfig& cfg) const;
  // Checks `role` for an identity the kernel vouches for (a local-socket caller); `peer` is for
  // the log.
  Result<Caller> Authorize(uint32_t uid, uint32_t gid, const std::string& peer, const char* method,
                           Role role, const ClusterConfig& cfg) const;

 private:
  struct Roles {
    const ClusterConfig* config = nullptr;
    int64_t resolved_at = 0;
    std::set<uint32_t> admins;     // root, the cluster user, TesseraAdmins
    std::set<uint32_t> nodes;      // root, the cluster user
    std::set<uint32_t> operators;
  };
  // uids of the configured roles, re-resolved when the config changes or every 5 minutes.
  std::shared_ptr<const Roles> RolesFor(const ClusterConfig& cfg) const;

  const tessera::rpc::CredentialCodec* codec_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Roles> roles_;
};

}  // namespace tessera::ctld::rpc
