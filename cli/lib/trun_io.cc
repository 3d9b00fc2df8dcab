// trun -o/-e/-i (trun_io.h).
#include "cli/lib/trun_io.h"

#include "common/filename_pattern.h"

namespace tessera::cli {
namespace {

std::string PathFor(const std::string& pattern, const IoNames& n, uint32_t node_index,
                    const std::string& node, uint32_t rank) {
  FilenameVars v;
  v.job_id = n.job_id;
  v.job_name = n.job_name;
  v.user = n.user;
  v.array_job_id = n.array_job_id;
  v.array_index = n.array_index;
  v.node = node;
  v.step_id = n.step_id;
  v.node_id = node_index;
  v.task_id = rank;
  return ExpandFilenamePattern(pattern, v, n.cwd);
}

}  // namespace

Result<IoSpec> ParseIoSpec(const std::string& option, const std::string& value) {
  IoSpec s;
  if (value.empty()) return InvalidArgument("invalid " + option + " value \"\": expected all, none, a task id or a filename pattern");
  if (value == "all" || value == "-") return s;  // srun: "-" is all too
  if (value == "none") {
    s.kind = IoSpec::kNone;
    return s;
  }
  if (value.find_first_not_of("0123456789") == std::string::npos) {
    if (value.size() > 9) return InvalidArgument("invalid " + option + " value \"" + value + "\": task id too large");
    s.kind = IoSpec::kTask;
    s.task = static_cast<uint32_t>(std::stoul(value));
    s.pattern = value;  // srun: a number that is no task of the step names a file
    return s;
  }
  s.kind = IoSpec::kFile;
  s.pattern = value;
  return s;
}

StepOutput::StepOutput(std::ostream& out, std::ostream& err, bool label, uint32_t ntasks)
    : terminal_(out, err, label, ntasks), label_(label), ntasks_(ntasks) {}

Result<std::unique_ptr<StepOutput>> StepOutput::Open(std::ostream& out, std::ostream& err,
                                                     bool label, const IoSpec& o,
                                                     const IoSpec& e,
                                                     const tessera::v1::CreateStepResponse& step,
                                                     const IoNames& names) {
  std::unique_ptr<StepOutput> s(new StepOutput(out, err, label, step.ntasks()));
  std::map<std::string, RankOutput*> by_path;
  for (int ni = 0; ni < step.nodes_size(); ++ni) {
    const auto& node = step.nodes(ni);
    for (uint32_t rank : node.ranks()) {
      for (uint32_t stream : {1u, 2u}) {
        IoSpec spec = stream == 2 ? e : o;
        if (spec.kind == IoSpec::kTask && spec.task >= step.ntasks()) spec.kind = IoSpec::kFile;
        RankOutput* sink = nullptr;
        switch (spec.kind) {
          case IoSpec::kAll: sink = &s->terminal_; break;
          case IoSpec::kNone: sink = nullptr; break;
          case IoSpec::kTask: sink = rank == spec.task ? &s->terminal_ : nullptr; break;
          case IoSpec::kFile: {
            std::string path = PathFor(spec.pattern, names, static_cast<uint32_t>(ni), node.node(), rank);
            auto it = by_path.find(path);
            if (it == by_path.end()) {
              auto f = std::make_unique<std::ofstream>(
                  path, names.append ? std::ios::app | std::ios::binary
                                     : std::ios::trunc | std::ios::binary);
              if (!*f) return InvalidArgument("cannot open " + path + " for task " +
                                              std::to_string(rank) + "'s output");
              s->file_outputs_.push_back(
                  std::make_unique<RankOutput>(*f, *f, label, step.ntasks()));
              s->files_.push_back(std::move(f));
              it = by_path.emplace(path, s->file_outputs_.back().get()).first;
            }
            sink = it->second;
            break;
          }
        }
        s->route_[{rank, stream}] = sink;
      }
    }
  }
  return s;
}

void StepOutput::Write(uint32_t rank, uint32_t stream, const std::string& data) {
  auto it = route_.find({rank, stream});
  RankOutput* sink = it == route_.end() ? &terminal_ : it->second;
  if (sink) sink->Write(rank, stream, data);
}

void StepOutput::Flush(uint32_t rank) {
  terminal_.Flush(rank);
  for (auto& f : file_outputs_) f->Flush(rank);
}

void StepOutput::FlushAll() {
  terminal_.FlushAll();
  for (auto& f : file_outputs_) f->FlushAll();
  for (auto& f : files_) f->flush();
}

std::string SharedInputPath(const IoSpec& in, const IoNames& names) {
  if (in.kind != IoSpec::kFile) return "";
  IoNames other = names;  // %u differs too: srun leaves a name with %u to the nodes
  other.user = names.user + "~";
  std::string one = PathFor(in.pattern, names, 0, "node-a", 0);
  return one == PathFor(in.pattern, other, 1, "node-b", 1) ? one : "";
}

Result<std::map<uint32_t, std::string>> TaskInputs(const IoSpec& in,
                                                   const tessera::v1::CreateStepResponse& step,
                                                   const IoNames& names) {
  std::map<uint32_t, std::string> out;
  if (in.kind != IoSpec::kFile) return out;
  for (int ni = 0; ni < step.nodes_size(); ++ni)
    for (uint32_t rank : step.nodes(ni).ranks())
      out[rank] = PathFor(in.pattern, names, static_cast<uint32_t>(ni), step.nodes(ni).node(), rank);
  return out;
}

}  // namespace tessera::cli
