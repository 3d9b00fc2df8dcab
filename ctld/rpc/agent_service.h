#pragma once
// tessera.v1.NodeAgent: one long-lived bidirectional stream per noded, served with gRPC's
// callback API, so a stream holds no thread (10,000 nodes do not mean 20,000 threads).
// The caller's munge credential and the node's origin are checked on a small pool (they may
// block); registration runs on the core; then each node message is posted to the core as it
// arrives. An AgentLink (the controller's NodeLink) queues outgoing messages; they are written
// in order, one write in flight, so the core thread never blocks on a slow node.
#include <memory>

#include "ctld/controller.h"
#include "ctld/core.h"
#include "ctld/rpc/authz.h"
#include "tessera/v1/agent.grpc.pb.h"

namespace tessera::ctld::rpc {

class AgentService final : public v1::NodeAgent::CallbackService {
 public:
  AgentService(Controller* ctl, Core* core, const Authorizer* auth);
  ~AgentService() override;
  grpc::ServerBidiReactor<v1::NodeMessage, v1::ControllerMessage>* Connect(
      grpc::CallbackServerContext* ctx) override;

  class Pool;

 private:
  Controller* ctl_;
  Core* core_;
  const Authorizer* auth_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace tessera::ctld::rpc
