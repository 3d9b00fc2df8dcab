#include "cli/lib/rank_output.h"

namespace tessera::cli {

RankOutput::RankOutput(std::ostream& out, std::ostream& err, bool label, uint32_t ntasks)
    : out_(out), err_(err), label_(label),
      width_(static_cast<int>(std::to_string(ntasks > 0 ? ntasks - 1 : 0).size())) {}

void RankOutput::Emit(uint32_t rank, uint32_t stream, const std::string& text) {
  std::ostream& o = stream == 2 ? err_ : out_;
  if (label_) {
    std::string r = std::to_string(rank);
    if (static_cast<int>(r.size()) < width_) r.insert(0, width_ - r.size(), ' ');
    o << r << ": ";
  }
  o << text;
  o.flush();
}

void RankOutput::Write(uint32_t rank, uint32_t stream, const std::string& data) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string& buf = partial_[{rank, stream}];
  buf += data;
  size_t start = 0;
  for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1)
    Emit(rank, stream, buf.substr(start, nl + 1 - start));
  buf.erase(0, start);
}

void RankOutput::Flush(uint32_t rank) {
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t stream : {1u, 2u}) {
    auto it = partial_.find({rank, stream});
    if (it == partial_.end()) continue;
    if (!it->second.empty()) Emit(rank, stream, it->second);
    partial_.erase(it);
  }
}

void RankOutput::FlushAll() {
  std::map<std::pair<uint32_t, uint32_t>, std::string> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    left.swap(partial_);
    for (auto& [key, text] : left)
      if (!text.empty()) Emit(key.first, key.second, text);
  }
}

}  // namespace tessera::cli
