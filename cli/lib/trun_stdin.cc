// trun's stdin to the tasks. See trun_stdin.h.
#include "cli/lib/trun_stdin.h"

namespace tessera::cli {

namespace v1 = tessera::v1;

Result<std::set<uint32_t>> ForwardedRanks(const IoSpec& in, const v1::CreateStepResponse& step) {
  std::set<uint32_t> out;
  if (in.kind == IoSpec::kAll) {
    for (const auto& n : step.nodes()) out.insert(n.ranks().begin(), n.ranks().end());
  } else if (in.kind == IoSpec::kTask) {
    if (in.task >= step.ntasks())
      return InvalidArgument("--input=" + std::to_string(in.task) + ": the step has " +
                             std::to_string(step.ntasks()) + " task(s), numbered from 0");
    out.insert(in.task);
  }
  return out;
}

void StdinForwarder::Start(std::vector<std::unique_ptr<StepInputStream>> streams) {
  streams_ = std::move(streams);
  thread_ = std::thread([this] { Loop(); });
}

void StdinForwarder::Loop() {
  auto message = [&] {
    v1::StepInput m;
    m.set_job_id(job_id_);
    m.set_step_id(step_id_);
    return m;
  };
  auto send = [&](const v1::StepInput& m) {  // a node that ended its stream gets no more
    size_t live = 0;
    for (auto& s : streams_) {
      if (s && !s->Write(m)) (void)s->Close(), s.reset();
      live += s != nullptr;
    }
    return live > 0;
  };
  if (!send(message())) return;  // names the step to every node
  bool eof = false;
  while (!stop_ && !eof) {
    std::string data = in_.Read(100, &eof);
    if (data.empty() && !eof) continue;
    v1::StepInput m = message();
    m.set_data(std::move(data));
    m.set_eof(eof);
    if (!send(m)) return;
  }
}

void StdinForwarder::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  for (auto& s : streams_)
    if (s) (void)s->Close();
  streams_.clear();
}

}  // namespace tessera::cli
