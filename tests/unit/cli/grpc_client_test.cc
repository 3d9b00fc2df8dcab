// GrpcControllerApi against an in-process gRPC server: a fresh credential in the metadata of
// every call, answers passed through, errors converted, an unreachable controller named.
#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>

#include <mutex>
#include <vector>

#include "cli/lib/grpc_controller_api.h"
#include "rpc/grpc_util.h"

namespace tessera::cli {
namespace {

class CountingCodec final : public rpc::CredentialCodec {
 public:
  Result<std::string> Encode(const std::string&) const override {
    return "cred-" + std::to_string(++count_);
  }
  Result<rpc::Identity> Decode(const std::string&) const override { return rpc::Identity{}; }

 private:
  mutable int count_ = 0;
};

class FakeService final : public pb::Controller::Service {
 public:
  grpc::Status SubmitJob(grpc::ServerContext* ctx, const pb::SubmitJobRequest* req,
                         pb::SubmitJobResponse* resp) override {
    Record(*ctx);
    resp->set_job_id(req->spec().name() == "x" ? 99 : 1);
    return grpc::Status::OK;
  }
  grpc::Status GetJob(grpc::ServerContext* ctx, const pb::GetJobRequest* req,
                      pb::JobInfo*) override {
    Record(*ctx);
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        "job " + std::to_string(req->job_id()) + " not found");
  }
  std::vector<std::string> creds() {
    std::lock_guard<std::mutex> l(mu_);
    return creds_;
  }

 private:
  void Record(const grpc::ServerContext& ctx) {
    auto it = ctx.client_metadata().find(rpc::kMungeMetadataKey);
    std::lock_guard<std::mutex> l(mu_);
    creds_.push_back(it == ctx.client_metadata().end()
                         ? "<none>"
                         : std::string(it->second.data(), it->second.size()));
  }
  std::mutex mu_;
  std::vector<std::string> creds_;
};

TEST_CASE("GrpcControllerApi talks to a Controller service") {
  FakeService service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  REQUIRE(server);
  REQUIRE(port > 0);

  ClusterConfig cfg;
  cfg.ctld_host = cfg.ctld_addr = "127.0.0.1";
  cfg.ctld_port = static_cast<uint16_t>(port);
  GrpcControllerApi api(cfg, std::make_unique<CountingCodec>(), std::chrono::seconds(5));
  CHECK(api.Target() == "127.0.0.1:" + std::to_string(port));

  pb::SubmitJobRequest req;
  req.mutable_spec()->set_name("x");
  auto resp = api.SubmitJob(req);
  REQUIRE(resp.ok());
  CHECK(resp->job_id() == 99);
  pb::GetJobRequest get;
  get.set_job_id(5);
  auto job = api.GetJob(get);
  REQUIRE_FALSE(job.ok());
  CHECK(job.status().code() == Code::kNotFound);
  CHECK(job.status().message() == "job 5 not found");
  CHECK(service.creds() == std::vector<std::string>{"cred-1", "cred-2"});

  server->Shutdown();
  server.reset();
  auto down = api.SubmitJob(req);
  REQUIRE_FALSE(down.ok());
  CHECK(down.status().code() == Code::kUnavailable);
  CHECK(down.status().message().rfind("cannot reach tessera-ctld at 127.0.0.1:", 0) == 0);
}

}  // namespace
}  // namespace tessera::cli
