#pragma once
// tessera.v1.NodeAgent: one long-lived bidirectional stream per noded. The handler thread reads
// node messages and posts them to the core; an AgentLink (the controller's NodeLink) queues
// outgoing messages for a writer thread, so the core thread never blocks on a slow node.
#include "ctld/controller.h"
#include "ctld/core.h"
#include "ctld/rpc/authz.h"
#include "tessera/v1/agent.grpc.pb.h"

namespace tessera::ctld::rpc {

class AgentService final : public v1::NodeAgent::Service {
 public:
  AgentService(Controller* ctl, Core* core, const Authorizer* auth) : ctl_(ctl), core_(core), auth_(auth) {}
  grpc::Status Connect(grpc::ServerContext* ctx,
                       grpc::ServerReaderWriter<v1::ControllerMessage, v1::NodeMessage>* stream) override;

 private:
  Controller* ctl_;
  Core* core_;
  const Authorizer* auth_;
};

}  // namespace tessera::ctld::rpc
