#include "cli/lib/grpc_controller_api.h"

#include <mutex>
#include <vector>

#include "rpc/grpc_util.h"
#include "rpc/submit_split.h"

namespace tessera::cli {

GrpcControllerApi::GrpcControllerApi(const ClusterConfig& cfg,
                                     std::unique_ptr<rpc::CredentialCodec> codec,
                                     std::chrono::seconds deadline)
    : target_((cfg.ctld_addr.empty() ? cfg.ctld_host : cfg.ctld_addr) + ":" +
              std::to_string(cfg.ctld_port)),
      codec_(std::move(codec)),
      deadline_(deadline),
      stub_(nullptr) {
  std::shared_ptr<grpc::Channel> channel = rpc::MakeCtldChannel(cfg);
  // Connect now, so TCP (and TLS) set-up runs on gRPC's threads while the first call encodes
  // its munge credential, instead of after it.
  channel->GetState(/*try_to_connect=*/true);
  // One reference lives as long as the process: a command ends with ExitMain (no destructors),
  // and destroying the last channel shuts gRPC down first, joining its threads (several ms of
  // every remote command, bench/RESULTS.md "Remote commands").
  static auto* keep = new std::vector<std::shared_ptr<grpc::Channel>>;
  static std::mutex keep_mu;
  {
    std::lock_guard<std::mutex> l(keep_mu);
    keep->push_back(channel);
  }
  stub_ = pb::Controller::NewStub(channel);
}

template <typename Req, typename Resp, typename Method>
Result<Resp> GrpcControllerApi::Call(Method method, const Req& req) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + deadline_);
  Status cred = rpc::AttachCredential(*codec_, &ctx);
  if (!cred.ok()) return Status(cred.code(), "munge credential: " + cred.message());
  Resp resp;
  grpc::Status st = (stub_.get()->*method)(&ctx, req, &resp);
  if (st.ok()) return resp;
  Status s = rpc::FromGrpc(st);
  if (s.code() == Code::kUnavailable) {
    std::string msg = s.message();
    const std::string generic = "cannot reach tessera-ctld: ";
    if (msg.rfind(generic, 0) == 0) msg = msg.substr(generic.size());
    return Unavailable("cannot reach tessera-ctld at " + target_ + ": " + msg);
  }
  if (s.code() == Code::kDeadlineExceeded)
    return Status(s.code(), "tessera-ctld at " + target_ + " did not answer within " +
                                std::to_string(deadline_.count()) + " s");
  return s;
}

#define TESSERA_CLI_RPC(Name, Req, Resp)                                \
  Result<pb::Resp> GrpcControllerApi::Name(const pb::Req& req) {        \
    return rpc::CallInParts<pb::Resp>(req, [this](const pb::Req& part) { \
      return Call<pb::Req, pb::Resp>(&pb::Controller::Stub::Name, part); \
    });                                                                 \
  }

TESSERA_CONTROLLER_UNARY_RPCS(TESSERA_CLI_RPC)

#undef TESSERA_CLI_RPC

}  // namespace tessera::cli
