#pragma once
// trun's view of one node's StepAgent service (step.proto): RunTasks as a blocking call that
// hands every TaskOutput to a callback, a thread-safe Cancel, and SignalTasks. The real client
// (GrpcStepAgentApi) attaches a fresh munge credential to every call and uses TLS when the
// config has it; tests use fakes.
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/status.h"
#include "rpc/munge_codec.h"
#include "tessera/v1/step.grpc.pb.h"

namespace tessera::cli {

// Issue 19 (h19 s6): trun's input stream to one node's tasks of a running step (SendInput).
class StepInputStream {
 public:
  virtual ~StepInputStream() = default;
  // False once the stream is broken (the node ended it: Close() says why).
  virtual bool Write(const tessera::v1::StepInput& in) = 0;
  // Ends the stream and returns the node's answer.
  virtual Status Close() = 0;
};

class StepAgentApi {
 public:
  using OnOutput = std::function<void(const tessera::v1::TaskOutput&)>;
  virtual ~StepAgentApi() = default;
  // "node (address:port)", for messages.
  virtual std::string Target() const = 0;
  // Blocks until the stream ends; `on_output` runs on the calling thread. kCancelled after
  // Cancel(); other errors name the node.
  virtual Status RunTasks(const tessera::v1::RunTasksRequest& req, const OnOutput& on_output) = 0;
  // Thread-safe; also effective before RunTasks starts.
  virtual void Cancel() = 0;
  virtual Status SignalTasks(const tessera::v1::SignalTasksRequest& req) = 0;
  // Issue 19 (sattach): a copy of this node's tasks' output of a running step, until they end
  // here; blocks like RunTasks (Cancel ends it).
  virtual Status AttachTasks(uint64_t job, uint32_t step, const OnOutput& on_output) {
    (void)job;
    (void)step;
    (void)on_output;
    return Status(Code::kUnimplemented, "AttachTasks is not implemented by " + Target());
  }
  // Issue 19 (sstat): the live usage of this node's tasks of a running step.
  virtual Result<tessera::v1::StepUsage> GetStepUsage(uint64_t job, uint32_t step) {
    (void)job;
    (void)step;
    return Status(Code::kUnimplemented, "GetStepUsage is not implemented by " + Target());
  }
  // Issue 19 (h19 s6, --pty, --mpi=pmi2): opens the input stream (SendInput); thread-safe, may
  // be called while RunTasks runs. Cancel() also ends it.
  virtual Result<std::unique_ptr<StepInputStream>> OpenInput() {
    return Status(Code::kUnimplemented, "SendInput is not implemented by " + Target());
  }
};

class GrpcStepAgentApi final : public StepAgentApi {
 public:
  GrpcStepAgentApi(const ClusterConfig& cfg, std::shared_ptr<rpc::CredentialCodec> codec,
                   const std::string& node, const std::string& address, uint16_t port);
  std::string Target() const override { return target_; }
  Status RunTasks(const tessera::v1::RunTasksRequest& req, const OnOutput& on_output) override;
  void Cancel() override;
  Status SignalTasks(const tessera::v1::SignalTasksRequest& req) override;
  Result<tessera::v1::StepUsage> GetStepUsage(uint64_t job, uint32_t step) override;
  Status AttachTasks(uint64_t job, uint32_t step, const OnOutput& on_output) override;
  Result<std::unique_ptr<StepInputStream>> OpenInput() override;

 private:
  template <typename Call>
  Status Stream(const Call& call, const OnOutput& on_output);
  Status Explain(const Status& s) const;
  std::string target_;
  std::shared_ptr<rpc::CredentialCodec> codec_;
  std::unique_ptr<tessera::v1::StepAgent::Stub> stub_;
  std::mutex mu_;
  grpc::ClientContext* active_ = nullptr;
  std::vector<grpc::ClientContext*> inputs_;  // open SendInput calls (Cancel ends them)
  bool cancelled_ = false;
};

}  // namespace tessera::cli
