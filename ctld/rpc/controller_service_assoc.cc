// ShowAssoc / ChangeAssoc (acct helper, issue 16 §1): thin handlers over Controller's
// association store; the protobuf <-> AssocRequest conversion lives here (its only user).
#include "ctld/log.h"
#include "ctld/rpc/controller_service.h"
#include "rpc/grpc_util.h"

namespace tessera::ctld::rpc {
using tessera::rpc::ToGrpc;
namespace {

constexpr int kMaxItems = 1000;       // names or key=value pairs per request
constexpr size_t kMaxText = 4096;     // one name, key or value

Result<accounts::AssocRequest> FromProto(const v1::AssocRequest& pb) {
  accounts::AssocRequest r;
  r.verb = pb.verb();
  r.entity = pb.entity();
  if (pb.names_size() > kMaxItems || pb.where_size() > kMaxItems || pb.set_size() > kMaxItems)
    return InvalidArgument("too many names or options (at most " + std::to_string(kMaxItems) + ")");
  auto text_ok = [](const std::string& s) {
    if (s.size() > kMaxText) return false;
    for (unsigned char c : s)
      if (c < 0x20 || c == 0x7f) return false;
    return true;
  };
  for (const auto& n : pb.names()) {
    if (!text_ok(n) || n.empty())
      return InvalidArgument("invalid name \"" + n.substr(0, 64) + "\"");
    r.names.push_back(n);
  }
  for (const auto* list : {&pb.where(), &pb.set()}) {
    auto& out = list == &pb.where() ? r.where : r.set;
    for (const auto& kv : *list) {
      if (!text_ok(kv.key()) || !text_ok(kv.value()) || kv.key().empty())
        return InvalidArgument("invalid option \"" + kv.key().substr(0, 64) + "\"");
      out.emplace_back(kv.key(), kv.value());
    }
  }
  return r;
}

}  // namespace

grpc::Status ControllerService::ShowAssoc(grpc::ServerContext* ctx, const v1::AssocRequest* req,
                                          v1::AssocResponse* resp) {
  RpcTimer timer(&rpc_stats_, "ShowAssoc");
  auto caller = Check(ctx, "ShowAssoc", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  auto r = FromProto(*req);
  if (!r.ok()) return ToGrpc(r.status());
  auto rows = core_->Call([&] { return ctl_->ShowAssoc(*r); });
  if (!rows.ok()) return ToGrpc(rows.status());
  for (const auto& row : *rows) {
    auto* out = resp->add_rows();
    for (const auto& [k, v] : row) {
      auto* f = out->add_fields();
      f->set_key(k);
      f->set_value(v);
    }
  }
  return grpc::Status::OK;
}

grpc::Status ControllerService::ChangeAssoc(grpc::ServerContext* ctx, const v1::AssocRequest* req,
                                            v1::AssocResponse* resp) {
  RpcTimer timer(&rpc_stats_, "ChangeAssoc");
  auto caller = Check(ctx, "ChangeAssoc", Role::kAdmin);
  if (!caller.ok()) return ToGrpc(caller.status());
  auto r = FromProto(*req);
  if (!r.ok()) return ToGrpc(r.status());
  auto c = core_->Call([&] { return ctl_->ChangeAssoc(*r, req->dry_run()); });
  if (!req->dry_run())
    Log("tacctmgr " + req->verb() + " " + req->entity() + " by uid " + std::to_string(caller->uid) +
        ": " + (c.ok() ? std::to_string(c->rows) + " rows written" : c.status().ToString()));
  if (!c.ok()) return ToGrpc(c.status());
  resp->set_message(c->message);
  resp->set_changed_rows(static_cast<uint32_t>(c->rows));
  return grpc::Status::OK;
}

}  // namespace tessera::ctld::rpc
