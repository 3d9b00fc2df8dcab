#pragma once
// trun against fake nodes (trun_test.cc, trun_stdin_test.cc): a FakeNode that replays canned
// output and records what trun asked and sent, a fake stdin, and TrunRun, which runs trun with
// them and a fake controller (fake_controller.h).
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/lib/trun.h"
#include "fake_controller.h"

namespace tessera::cli::trun_fakes {

using testing::CommandRun;
namespace v1 = tessera::v1;

class FakeNode final : public StepAgentApi {
 public:
  std::string name;
  std::vector<v1::TaskOutput> script;  // replayed by RunTasks
  bool block_until_cancel = false;
  Status result;
  std::vector<v1::RunTasksRequest> runs;
  std::vector<v1::SignalTasksRequest> signals;
  bool cancelled = false;
  // Issue 19 (h19 s7): what trun sent on its input streams; RunTasks waits for an EOF there.
  std::vector<v1::StepInput> inputs;
  bool wait_eof = false;

  std::string Target() const override { return name; }
  Status RunTasks(const v1::RunTasksRequest& req, const OnOutput& on_output) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      runs.push_back(req);
    }
    if (wait_eof) {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait_for(l, std::chrono::seconds(5), [&] {
        for (const auto& in : inputs)
          if (in.eof()) return true;
        return false;
      });
    }
    for (const auto& m : script) on_output(m);
    if (block_until_cancel) {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return cancelled; });
      return Status(Code::kCancelled, "cancelled");
    }
    return result;
  }
  void Cancel() override {
    std::lock_guard<std::mutex> l(mu_);
    cancelled = true;
    cv_.notify_all();
  }
  Status SignalTasks(const v1::SignalTasksRequest& req) override {
    std::lock_guard<std::mutex> l(mu_);
    signals.push_back(req);
    return Status::Ok();
  }
  Result<std::unique_ptr<StepInputStream>> OpenInput() override {
    struct Stream final : StepInputStream {
      FakeNode* n;
      explicit Stream(FakeNode* f) : n(f) {}
      bool Write(const v1::StepInput& in) override {
        std::lock_guard<std::mutex> l(n->mu_);
        n->inputs.push_back(in);
        n->cv_.notify_all();
        return true;
      }
      Status Close() override { return Status::Ok(); }
    };
    return std::unique_ptr<StepInputStream>(new Stream(this));
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
};

inline v1::TaskOutput Data(uint32_t rank, const std::string& text, uint32_t stream = 1) {
  v1::TaskOutput m;
  m.mutable_data()->set_rank(rank);
  m.mutable_data()->set_stream(stream);
  m.mutable_data()->set_data(text);
  return m;
}

inline v1::TaskOutput Exit(uint32_t rank, int code, int sig = 0) {
  v1::TaskOutput m;
  m.mutable_exit()->set_rank(rank);
  m.mutable_exit()->set_exit_code(code);
  m.mutable_exit()->set_exit_signal(sig);
  return m;
}

// trun's stdin: `data` then its end, or /dev/null.
class FakeStdin final : public Terminal {
 public:
  explicit FakeStdin(std::optional<std::string> data) : data_(std::move(data)) {}
  bool IsTerminal() override { return false; }
  bool Size(uint32_t*, uint32_t*) override { return false; }
  void MakeRaw() override {}
  void Restore() override {}
  bool IsNull() override { return !data_; }
  std::string Read(int, bool* eof) override {
    std::string d = data_.value_or("");
    data_ = "";
    *eof = d.empty();
    return d;
  }

 private:
  std::optional<std::string> data_;
};

struct TrunRun {
  CommandRun cmd;
  std::map<std::string, FakeNode*> nodes;  // owned by the hooks' callers after connect
  std::vector<std::unique_ptr<FakeNode>> owned;
  std::function<void(int)> signal_handler;
  int64_t mono = 0;

  TrunRun() {
    cmd.env["SLURM_JOB_ID"] = "42";
    cmd.env["PATH"] = "/usr/bin";
    v1::CreateStepResponse step;
    step.set_step_id(3);
    step.set_ntasks(4);
    step.set_nodelist("it[1-2]");
    for (int i = 0; i < 2; ++i) {
      auto* n = step.add_nodes();
      n->set_node("it" + std::to_string(i + 1));
      n->set_address("127.0.0.1");
      n->set_port(7000 + i);
      n->add_ranks(2 * i);
      n->add_ranks(2 * i + 1);
      owned.push_back(std::make_unique<FakeNode>());
      owned.back()->name = n->node();
      nodes[n->node()] = owned.back().get();
    }
    cmd.ctld.CreateStep_result = step;
  }

  int Run(std::vector<std::string> args) {
    static TrunRun* self;
    self = this;
    return cmd.Run(
        [](CommandContext& ctx) {
          TrunHooks hooks;
          hooks.connect_node = [](const pb::StepNode& n) -> Result<std::unique_ptr<StepAgentApi>> {
            FakeNode* f = self->nodes.at(n.node());
            self->owned_by_trun.push_back(f);
            return std::unique_ptr<StepAgentApi>(new Borrowed(f));
          };
          hooks.watch_signals = [](std::function<void(int)> h) -> std::function<void()> {
            self->signal_handler = std::move(h);
            if (self->on_watch) self->on_watch();
            return [] {  // as the real watcher: no handler runs after this returns
              if (self->sender.joinable()) self->sender.join();
            };
          };
          hooks.mono_ms = [] { return self->mono; };
          hooks.terminal = [] {
            return std::unique_ptr<Terminal>(new FakeStdin(self->stdin_data));
          };
          hooks.sleep_ms = [](int64_t) {
            if (self->on_sleep) self->on_sleep();
          };
          return RunTrunWith(ctx, hooks);
        },
        std::move(args));
  }
  std::optional<std::string> stdin_data;  // trun's stdin; unset: /dev/null
  std::function<void()> on_watch;
  std::function<void()> on_sleep;  // trun waits between CreateStep retries (GPUs busy)
  std::thread sender;  // a test's signal sender, joined when trun stops watching
  std::vector<FakeNode*> owned_by_trun;

  // Forwards to a FakeNode that the test keeps.
  class Borrowed final : public StepAgentApi {
   public:
    explicit Borrowed(FakeNode* f) : f_(f) {}
    std::string Target() const override { return f_->Target(); }
    Status RunTasks(const v1::RunTasksRequest& r, const OnOutput& o) override {
      return f_->RunTasks(r, o);
    }
    void Cancel() override { f_->Cancel(); }
    Status SignalTasks(const v1::SignalTasksRequest& r) override { return f_->SignalTasks(r); }
    Result<std::unique_ptr<StepInputStream>> OpenInput() override { return f_->OpenInput(); }

   private:
    FakeNode* f_;
  };
};

}  // namespace tessera::cli::trun_fakes
