#include "noded/core_map.h"

#include <sched.h>

#include <algorithm>
#include <sstream>

namespace tessera::noded {

CoreMap::CoreMap(std::vector<uint32_t> cores) : cores_(std::move(cores)) {
  std::sort(cores_.begin(), cores_.end());
  cores_.erase(std::unique(cores_.begin(), cores_.end()), cores_.end());
}

std::vector<uint32_t> CoreMap::Assign(uint64_t job, uint32_t count) {
  if (auto it = jobs_.find(job); it != jobs_.end()) return it->second;
  if (cores_.empty()) return {};
  count = std::clamp<uint32_t>(count, 1, static_cast<uint32_t>(cores_.size()));
  std::map<uint32_t, int> use;
  for (uint32_t c : cores_) use[c] = 0;
  for (const auto& [id, cs] : jobs_)
    for (uint32_t c : cs)
      if (use.count(c)) ++use[c];
  std::vector<uint32_t> order = cores_;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return use[a] < use[b]; });
  order.resize(count);
  std::sort(order.begin(), order.end());
  jobs_[job] = order;
  return order;
}

void CoreMap::Restore(uint64_t job, const std::vector<uint32_t>& cores) {
  std::vector<uint32_t> mine;
  for (uint32_t c : cores)
    if (std::binary_search(cores_.begin(), cores_.end(), c)) mine.push_back(c);
  jobs_[job] = mine;
}

void CoreMap::Release(uint64_t job) { jobs_.erase(job); }

std::vector<uint32_t> CoreMap::Free() const {
  std::vector<uint32_t> out;
  for (uint32_t c : cores_) {
    bool used = false;
    for (const auto& [id, cs] : jobs_) used = used || std::count(cs.begin(), cs.end(), c) > 0;
    if (!used) out.push_back(c);
  }
  return out;
}

std::string FormatCpuList(const std::vector<uint32_t>& in) {
  std::vector<uint32_t> c = in;
  std::sort(c.begin(), c.end());
  std::string out;
  for (size_t i = 0; i < c.size();) {
    size_t j = i;
    while (j + 1 < c.size() && c[j + 1] == c[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(c[i]);
    if (j > i) out += "-" + std::to_string(c[j]);
    i = j + 1;
  }
  return out;
}

Result<std::vector<uint32_t>> ParseCpuList(const std::string& text) {
  std::vector<uint32_t> out;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, ',');) {
    while (!part.empty() && (part.back() == '\n' || part.back() == ' ')) part.pop_back();
    if (part.empty()) continue;
    size_t dash = part.find('-');
    auto num = [&](const std::string& s) -> long {
      if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
        return -1;
      return std::stol(s);
    };
    long a = num(part.substr(0, dash));
    long b = dash == std::string::npos ? a : num(part.substr(dash + 1));
    if (a < 0 || b < 0 || b < a)
      return InvalidArgument("cpu list '" + text + "': bad element '" + part + "'");
    for (long v = a; v <= b; ++v) out.push_back(static_cast<uint32_t>(v));
  }
  return out;
}

std::vector<uint32_t> AllowedCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<uint32_t> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (uint32_t i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) out.push_back(i);
  return out;
}

}  // namespace tessera::noded
