// Issue 19 (h19): Controller.ShowConfig, scontrol show config from the running controller.
#include <pwd.h>

#include "ctld/config_dump.h"
#include "ctld/rpc/controller_service.h"
#include "rpc/grpc_util.h"

namespace tessera::ctld::rpc {
using tessera::rpc::ToGrpc;

grpc::Status ControllerService::ShowConfig(grpc::ServerContext* ctx, const v1::ShowConfigRequest*,
                                           v1::ShowConfigResponse* resp) {
  RpcTimer timer(&rpc_stats_, "ShowConfig");
  auto caller = Check(ctx, "ShowConfig", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  ConfigEntries entries;
  std::string user, path;
  Status st = core_->Call([&]() -> Status {
    user = ctl_->config().cluster_user;
    path = ctl_->config().path;
    entries = DumpConfig(ctl_->config(), ctl_->sched_config(), -1);
    return Status::Ok();
  });
  if (!st.ok()) return ToGrpc(st);
  // SlurmUser's uid: looked up here, off the core strand.
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwnam_r(user.c_str(), &pw, buf, sizeof buf, &found) == 0 && found)
    for (auto& [k, v] : entries)
      if (k == "SlurmUser") v = user + "(" + std::to_string(found->pw_uid) + ")";
  resp->set_config_file(path);
  for (const auto& [k, v] : entries) {
    auto* e = resp->add_entries();
    e->set_key(k);
    e->set_value(v);
  }
  return grpc::Status::OK;
}

}  // namespace tessera::ctld::rpc
