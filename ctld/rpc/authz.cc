#include "ctld/rpc/authz.h"

#include <pwd.h>

#include <algorithm>

#include "ctld/log.h"
#include "rpc/grpc_util.h"

namespace tessera::ctld::rpc {
namespace {

bool UidIs(uint32_t uid, const std::string& user) {
  struct passwd pw, *res = nullptr;
  char buf[4096];
  if (getpwnam_r(user.c_str(), &pw, buf, sizeof buf, &res) != 0 || !res) return false;
  return pw.pw_uid == uid;
}

bool InList(uint32_t uid, const std::vector<std::string>& users) {
  return std::any_of(users.begin(), users.end(), [&](const std::string& u) { return UidIs(uid, u); });
}

}  // namespace

Result<Caller> Authorizer::Check(const grpc::ServerContext& ctx, const char* method, Role role,
                                 const ClusterConfig& cfg) const {
  auto id = tessera::rpc::Authenticate(*codec_, ctx);
  if (!id.ok()) {
    Log(std::string("auth: refused ") + method + " from " + ctx.peer() + ": " + id.status().message());
    return id.status();
  }
  Caller c;
  c.uid = id->uid;
  c.gid = id->gid;
  c.admin = c.uid == 0 || UidIs(c.uid, cfg.cluster_user) || InList(c.uid, cfg.admins);
  c.operator_ = InList(c.uid, cfg.operators);
  bool ok = true;
  if (role == Role::kAdmin) ok = c.admin;
  if (role == Role::kNode) ok = c.uid == 0 || UidIs(c.uid, cfg.cluster_user);
  if (!ok) {
    Log(std::string("auth: refused ") + method + " for uid " + std::to_string(c.uid) + " from " + ctx.peer() +
        ": requires " + (role == Role::kNode ? "the cluster user" : "an administrator"));
    return PermissionDenied(std::string(method) + " requires " +
                            (role == Role::kNode ? "the cluster user (" + cfg.cluster_user + ")" : "an administrator"));
  }
  return c;
}

}  // namespace tessera::ctld::rpc
