#include "ctld/rpc/authz.h"

#include <pwd.h>

#include <algorithm>
#include <ctime>

#include "ctld/log.h"
#include "rpc/grpc_util.h"

namespace tessera::ctld::rpc {
namespace {

void Resolve(const std::string& user, std::set<uint32_t>* out) {
  struct passwd pw, *res = nullptr;
  char buf[4096];
  if (getpwnam_r(user.c_str(), &pw, buf, sizeof buf, &res) == 0 && res) out->insert(pw.pw_uid);
}

}  // namespace

std::shared_ptr<const Authorizer::Roles> Authorizer::RolesFor(const ClusterConfig& cfg) const {
  std::lock_guard<std::mutex> l(mu_);
  int64_t now = time(nullptr);
  if (roles_ && roles_->config == &cfg && now - roles_->resolved_at < 300) return roles_;
  auto r = std::make_shared<Roles>();
  r->config = &cfg;
  r->resolved_at = now;
  r->nodes.insert(0);
  Resolve(cfg.cluster_user, &r->nodes);
  r->admins = r->nodes;
  for (const auto& u : cfg.admins) Resolve(u, &r->admins);
  for (const auto& u : cfg.operators) Resolve(u, &r->operators);
  roles_ = r;
  return r;
}

Result<Caller> Authorizer::Check(const grpc::ServerContextBase& ctx, const char* method, Role role,
                                 const ClusterConfig& cfg) const {
  auto id = tessera::rpc::Authenticate(*codec_, ctx);
  if (!id.ok()) {
    Log(std::string("auth: refused ") + method + " from " + ctx.peer() + ": " + id.status().message());
    return id.status();
  }
  auto caller = Authorize(id->uid, id->gid, ctx.peer(), method, role, cfg);
  if (caller.ok()) caller->origin = id->origin;
  return caller;
}

Result<Caller> Authorizer::Authorize(uint32_t uid, uint32_t gid, const std::string& peer,
                                     const char* method, Role role, const ClusterConfig& cfg) const {
  Caller c;
  c.uid = uid;
  c.gid = gid;
  auto roles = RolesFor(cfg);
  c.admin = roles->admins.count(c.uid) > 0;
  c.operator_ = roles->operators.count(c.uid) > 0;
  bool ok = true;
  if (role == Role::kAdmin) ok = c.admin;
  if (role == Role::kNode) ok = roles->nodes.count(c.uid) > 0;
  if (!ok) {
    Log(std::string("auth: refused ") + method + " for uid " + std::to_string(c.uid) + " from " + peer +
        ": requires " + (role == Role::kNode ? "the cluster user" : "an administrator"));
    return PermissionDenied(std::string(method) + " requires " +
                            (role == Role::kNode ? "the cluster user (" + cfg.cluster_user + ")" : "an administrator"));
  }
  return c;
}

}  // namespace tessera::ctld::rpc
