#include "common/gres_shares.h"

#include <map>
#include <set>
#include <string>

#include "common/duration.h"
#include "common/hostlist.h"

namespace tessera {
namespace {

constexpr uint64_t kMaxMpsCount = 100000;  // per line; Slurm's counts are typically 100 per GPU
constexpr uint64_t kMaxShardsPerGpu = 64;  // as Replicas= on a Name=gpu line

struct ShareLine {
  const ConfigLine* line = nullptr;
  bool mps = false;
  std::vector<std::string> nodes;
  uint64_t count = 0;
  std::vector<uint32_t> files;  // GPU indices named by File=; empty = every GPU of the node
};

const char* Kind(bool mps) { return mps ? "mps" : "shard"; }

// /dev/nvidia[0-1] -> {0, 1}. Other device names are refused.
Status ParseFiles(const ConfigLine& l, const std::string& value, std::vector<uint32_t>* out) {
  auto files = ExpandHostlist(value);
  if (!files.ok())
    return InvalidArgument(l.Where() + ": File=" + value + ": " + files.status().message());
  for (const auto& f : *files) {
    const std::string prefix = "/dev/nvidia";
    std::string num = f.size() > prefix.size() ? f.substr(prefix.size()) : "";
    if (f.compare(0, prefix.size(), prefix) != 0 || num.empty() || num.size() > 4 ||
        num.find_first_not_of("0123456789") != std::string::npos)
      return InvalidArgument(l.Where() + ": File=" + value + ": expected GPU device files " +
                             "/dev/nvidia<N> (N = the GPU's index on the node), not " + f);
    out->push_back(static_cast<uint32_t>(std::stoul(num)));
  }
  return Status::Ok();
}

Result<ShareLine> ReadLine(const ConfigLine& l, const ClusterConfig& c) {
  ShareLine s;
  s.line = &l;
  bool has_count = false;
  for (const auto& p : l.pairs) {
    if (p.key == "name") {
      s.mps = ToLower(p.value) == "mps";
    } else if (p.key == "nodename") {
      auto n = ExpandHostlist(p.value);
      if (!n.ok()) return InvalidArgument(l.Where() + ": " + n.status().message());
      s.nodes = *n;
    } else if (p.key == "count") {
      auto n = ParseUint(p.value, "Count");
      if (!n.ok() || *n > kMaxMpsCount)
        return InvalidArgument(l.Where() + ": invalid value \"" + p.value + "\" for " + p.raw_key +
                               ": expected a count of 0.." + std::to_string(kMaxMpsCount));
      s.count = *n;
      has_count = true;
    } else if (p.key == "file") {
      TESSERA_RETURN_IF_ERROR(ParseFiles(l, p.value, &s.files));
    }
    // Type=, Cores=, Links= are taken from the Name=gpu lines, as Slurm does.
  }
  std::string what = l.Where() + ": Name=" + Kind(s.mps);
  if (s.nodes.empty()) return InvalidArgument(what + " line needs NodeName=");
  if (!has_count) return InvalidArgument(what + " line needs Count=");
  if (s.count == 0 && s.files.empty())
    return InvalidArgument(what + " Count=0 without File= offers nothing (leave the line out)");
  for (const auto& n : s.nodes)
    if (!c.FindNode(n)) return InvalidArgument(l.Where() + ": unknown node " + n);
  return s;
}

// Slurm's even spread: GPU i of n gets rem / (n - i) of what is left.
std::vector<uint64_t> Spread(uint64_t count, size_t n) {
  std::vector<uint64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = count / (n - i);
    count -= out[i];
  }
  return out;
}

// The per-GPU counts of one node and kind; `named` marks GPUs already given by a line.
Status ApplyToNode(const ShareLine& s, const std::string& node, size_t ngpus,
                   std::vector<uint64_t>& counts, std::set<uint32_t>& named) {
  const std::string where = s.line->Where();
  std::vector<uint32_t> gpus = s.files;
  if (gpus.empty())
    for (uint32_t i = 0; i < ngpus; ++i) gpus.push_back(i);
  std::vector<uint64_t> share = Spread(s.count, gpus.size());
  for (size_t k = 0; k < gpus.size(); ++k) {
    uint32_t g = gpus[k];
    if (g >= ngpus)
      return InvalidArgument(where + ": File=/dev/nvidia" + std::to_string(g) + ": node " + node +
                             " has " + std::to_string(ngpus) + " GPUs (indices 0.." +
                             std::to_string(ngpus - 1) + " from its Name=gpu lines)");
    if (!named.insert(g).second)
      return InvalidArgument(where + ": GPU " + std::to_string(g) + " of node " + node +
                             " already has a Name=" + Kind(s.mps) + " count");
    if (!s.mps && share[k] > kMaxShardsPerGpu)
      return InvalidArgument(where + ": Name=shard Count=" + std::to_string(s.count) +
                             " gives GPU " + std::to_string(g) + " of node " + node + " " +
                             std::to_string(share[k]) + " shards; at most " +
                             std::to_string(kMaxShardsPerGpu) + " per GPU");
    counts[g] = share[k];
  }
  return Status::Ok();
}

// Node -> per-GPU counts (by node-local index) of one kind.
using NodeCounts = std::map<std::string, std::vector<uint64_t>>;

Status Collect(const std::vector<ShareLine>& lines, bool mps, const ClusterConfig& c,
               NodeCounts* out) {
  std::map<std::string, std::set<uint32_t>> named;
  std::map<std::string, std::pair<bool, std::string>> with_file;  // node -> (File=?, first line)
  for (const auto& s : lines) {
    if (s.mps != mps) continue;
    for (const auto& node : s.nodes) {
      auto it = c.gpus.find(node);
      size_t ngpus = 0;
      if (it != c.gpus.end())
        for (const auto& d : it->second) ngpus += d.count;
      if (ngpus == 0)
        return InvalidArgument(s.line->Where() + ": Name=" + Kind(mps) + " for node " + node +
                               ", which has no Name=gpu line in gres.conf");
      for (const auto& d : it->second)
        if (mps ? d.mps : d.replicas > 0)
          return InvalidArgument(s.line->Where() + ": Name=" + Kind(mps) + " for node " + node +
                                 ", whose Name=gpu line " + d.where + " already says " +
                                 (mps ? "Mps=yes" : "Replicas=") + " (use one or the other)");
      auto [wf, fresh] = with_file.try_emplace(node, !s.files.empty(), s.line->Where());
      if (!fresh && wf->second.first != !s.files.empty())
        return InvalidArgument(s.line->Where() + ": Name=" + Kind(mps) + " lines for node " +
                               node + " both with and without File= (" + wf->second.second +
                               "); give every GPU its File= or use one line without");
      auto& counts = (*out)[node];
      counts.resize(ngpus, 0);
      TESSERA_RETURN_IF_ERROR(ApplyToNode(s, node, ngpus, counts, named[node]));
    }
  }
  return Status::Ok();
}

void Store(const NodeCounts& counts, bool mps, ClusterConfig* c) {
  for (const auto& [node, per_gpu] : counts) {
    size_t index = 0;
    for (auto& d : c->gpus[node]) {
      auto& dst = mps ? d.mps_counts : d.shard_counts;
      dst.assign(per_gpu.begin() + index, per_gpu.begin() + index + d.count);
      index += d.count;
      if (!mps) continue;
      for (uint32_t v : d.mps_counts) d.mps = d.mps || v > 0;
    }
  }
}

}  // namespace

bool IsGresShareLine(const ConfigLine& l) {
  const std::string* name = l.Find("name");
  if (!name) return false;
  std::string n = ToLower(*name);
  return n == "mps" || n == "shard";
}

Status ApplyGresShareLines(const std::vector<ConfigLine>& lines, ClusterConfig* c) {
  std::vector<ShareLine> parsed;
  for (const auto& l : lines) {
    auto s = ReadLine(l, *c);
    if (!s.ok()) return s.status();
    parsed.push_back(std::move(*s));
  }
  NodeCounts mps, shards;
  TESSERA_RETURN_IF_ERROR(Collect(parsed, true, *c, &mps));
  TESSERA_RETURN_IF_ERROR(Collect(parsed, false, *c, &shards));
  Store(mps, true, c);
  Store(shards, false, c);
  return Status::Ok();
}

}  // namespace tessera
