// tessera.v1.Controller reservations (issue 17 §1): scontrol create | update | delete | show
// reservation. Thin handlers over Controller (controller_reservations.cc); the protobuf <->
// model conversion lives here (its only user).
#include <algorithm>

#include "common/hostlist.h"
#include "ctld/log.h"
#include "ctld/rpc/controller_service.h"
#include "ctld/sched/reservation.h"
#include "rpc/grpc_util.h"

namespace tessera::ctld::rpc {
using tessera::rpc::ToGrpc;
namespace {

constexpr int kMaxArgs = 100;
constexpr size_t kMaxText = 65536;  // a value (a long node or user list)

Result<sched::ResvKeyValues> Args(const v1::ReservationRequest& pb) {
  if (pb.args_size() > kMaxArgs) return InvalidArgument("too many reservation options");
  sched::ResvKeyValues kv;
  for (const auto& a : pb.args()) {
    if (a.key().empty() || a.key().size() > 64 || a.value().size() > kMaxText)
      return InvalidArgument("invalid reservation option \"" + a.key().substr(0, 64) + "\"");
    for (unsigned char c : a.key() + a.value())
      if (c < 0x20 || c == 0x7f) return InvalidArgument("control character in reservation option " + a.key());
    kv.emplace_back(a.key(), a.value());
  }
  return kv;
}

void ToProto(const sched::ReservationSnap& r, NodeTable& nodes, int64_t now,
             v1::Reservation* out) {
  int64_t s = 0, e = 0;
  sched::ResvOccurrence(r, now, &s, &e);
  out->set_name(r.name);
  out->set_start_time(s);
  out->set_end_time(e);
  out->set_nodes(CompressHostlist(r.nodes));
  out->set_node_count(static_cast<uint32_t>(r.nodes.size()));
  uint32_t cpus = 0;
  for (const auto& n : r.nodes)
    if (const NodeRuntime* rt = nodes.Find(n); rt && rt->config) cpus += rt->config->cpus;
  out->set_cpu_count(cpus);
  for (const auto& u : r.users) out->add_users(u);
  for (const auto& a : r.accounts) out->add_accounts(a);
  out->set_flags(sched::ResvFlagsText(r.flags));
  out->set_partition(r.partition);
  out->set_active(s <= now && now < e);
}

}  // namespace

grpc::Status ControllerService::CreateReservation(grpc::ServerContext* ctx,
                                                  const v1::ReservationRequest* req,
                                                  v1::ReservationResponse* resp) {
  RpcTimer timer(&rpc_stats_, "CreateReservation");
  auto caller = Check(ctx, "CreateReservation", Role::kAdmin);
  if (!caller.ok()) return ToGrpc(caller.status());
  auto kv = Args(*req);
  if (!kv.ok()) return ToGrpc(kv.status());
  Status st = core_->Call([&]() -> Status {
    auto r = ctl_->CreateReservation(*kv);
    if (!r.ok()) return r.status();
    ToProto(*r, ctl_->nodes(), clock_->Now(), resp->mutable_reservation());
    resp->set_message("Reservation created: " + r->name);
    return Status::Ok();
  });
  Log("create reservation by uid " + std::to_string(caller->uid) + ": " +
      (st.ok() ? resp->reservation().name() : st.ToString()));
  return ToGrpc(st);
}

grpc::Status ControllerService::UpdateReservation(grpc::ServerContext* ctx,
                                                  const v1::ReservationRequest* req,
                                                  v1::ReservationResponse* resp) {
  RpcTimer timer(&rpc_stats_, "UpdateReservation");
  auto caller = Check(ctx, "UpdateReservation", Role::kAdmin);
  if (!caller.ok()) return ToGrpc(caller.status());
  auto kv = Args(*req);
  if (!kv.ok()) return ToGrpc(kv.status());
  Status st = core_->Call([&]() -> Status {
    auto r = ctl_->UpdateReservation(*kv);
    if (!r.ok()) return r.status();
    ToProto(*r, ctl_->nodes(), clock_->Now(), resp->mutable_reservation());
    resp->set_message("Reservation updated.");
    return Status::Ok();
  });
  Log("update reservation by uid " + std::to_string(caller->uid) + ": " +
      (st.ok() ? resp->reservation().name() : st.ToString()));
  return ToGrpc(st);
}

grpc::Status ControllerService::DeleteReservation(grpc::ServerContext* ctx,
                                                  const v1::ReservationRequest* req,
                                                  v1::ReservationResponse* resp) {
  RpcTimer timer(&rpc_stats_, "DeleteReservation");
  auto caller = Check(ctx, "DeleteReservation", Role::kAdmin);
  if (!caller.ok()) return ToGrpc(caller.status());
  if (req->name().empty() || req->name().size() > 256)
    return ToGrpc(InvalidArgument("a reservation name must be given"));
  Status st = core_->Call([&] { return ctl_->DeleteReservation(req->name()); });
  Log("delete reservation " + req->name() + " by uid " + std::to_string(caller->uid) + ": " +
      (st.ok() ? "done" : st.ToString()));
  if (st.ok()) resp->set_message("Reservation " + req->name() + " deleted");
  return ToGrpc(st);
}

grpc::Status ControllerService::ListReservations(grpc::ServerContext* ctx,
                                                 const v1::ListReservationsRequest* req,
                                                 v1::ListReservationsResponse* resp) {
  RpcTimer timer(&rpc_stats_, "ListReservations");
  auto caller = Check(ctx, "ListReservations", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  Status st = core_->Call([&]() -> Status {
    int64_t now = clock_->Now();
    for (const auto& r : ctl_->Reservations())
      if (req->name().empty() || r.name == req->name())
        ToProto(r, ctl_->nodes(), now, resp->add_reservations());
    if (!req->name().empty() && resp->reservations_size() == 0)
      return NotFound("Reservation " + req->name() + " not found");
    return Status::Ok();
  });
  return ToGrpc(st);
}

}  // namespace tessera::ctld::rpc
