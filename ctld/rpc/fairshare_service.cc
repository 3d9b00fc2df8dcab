// tessera.v1.Controller GetShares / GetPriorities (issue 16 §3): tshare and tprio. Anyone with a
// valid credential may read them (as sshare and sprio).
#include "ctld/rpc/controller_service.h"
#include "rpc/grpc_util.h"

namespace tessera::ctld::rpc {
using tessera::rpc::ToGrpc;

grpc::Status ControllerService::GetShares(grpc::ServerContext* ctx, const v1::GetSharesRequest*,
                                          v1::GetSharesResponse* resp) {
  RpcTimer timer(&rpc_stats_, "GetShares");
  auto caller = Check(ctx, "GetShares", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  core_->Call([&] {
    resp->set_fair_tree(!(ctl_->sched_config().priority_flags & sched::kPriorityFlagNoFairTree));
    for (const auto& r : ctl_->Shares()) {
      auto* s = resp->add_shares();
      s->set_account(r.account);
      s->set_user(r.user);
      s->set_parent(r.parent);
      s->set_depth(r.depth);
      s->set_raw_shares(r.raw_shares);
      s->set_norm_shares(r.norm_shares);
      s->set_raw_usage(r.raw_usage);
      s->set_norm_usage(r.norm_usage);
      s->set_effective_usage(r.effective_usage);
      s->set_level_fs(r.level_fs);
      s->set_fairshare(r.fairshare);
    }
    auto tres = [](const sched::QueueTres& t, v1::QueueTres* o) {  // issue 16 §2 (h16q)
      o->set_cpu(t.cpu), o->set_mem(t.mem), o->set_gpu(t.gpu);
    };
    for (const auto& q : ctl_->QueueShares()) {
      auto* o = resp->add_queues();
      o->set_account(q.account);
      o->set_parent(q.parent);
      o->set_depth(q.depth);
      tres(q.guarantee, o->mutable_guarantee());
      tres(q.limit, o->mutable_limit());
      o->set_weight(q.weight);
      o->set_reclaimable(q.reclaimable);
      tres(q.allocated, o->mutable_allocated());
      tres(q.pending, o->mutable_pending());
      tres(q.deserved, o->mutable_deserved());
    }
    return 0;
  });
  return grpc::Status::OK;
}

grpc::Status ControllerService::GetPriorities(grpc::ServerContext* ctx,
                                              const v1::GetPrioritiesRequest*,
                                              v1::GetPrioritiesResponse* resp) {
  RpcTimer timer(&rpc_stats_, "GetPriorities");
  auto caller = Check(ctx, "GetPriorities", Role::kAnyone);
  if (!caller.ok()) return ToGrpc(caller.status());
  core_->Call([&] {
    const sched::SchedConfig& c = ctl_->sched_config();
    auto* w = resp->mutable_weights();
    w->set_age(c.weight_age);
    w->set_fairshare(c.weight_fairshare);
    w->set_job_size(c.weight_job_size);
    w->set_partition(c.weight_partition);
    w->set_qos(c.weight_qos);
    w->set_time_limit(c.weight_time_limit);  // issue 17 §2
    for (const auto& r : ctl_->Priorities()) {
      auto* j = resp->add_jobs();
      j->set_job_id(r.job_id);
      j->set_partition(r.partition);
      j->set_user(r.user);
      j->set_account(r.account);
      j->set_qos(r.qos);
      j->set_priority(r.factors.total);
      j->set_age(r.factors.age);
      j->set_fairshare(r.factors.fairshare);
      j->set_job_size(r.factors.job_size);
      j->set_partition_factor(r.factors.partition);
      j->set_qos_factor(r.factors.qos);
      j->set_nice(r.factors.nice);
      j->set_time_limit_factor(r.factors.time_limit);
    }
    return 0;
  });
  return grpc::Status::OK;
}

}  // namespace tessera::ctld::rpc
