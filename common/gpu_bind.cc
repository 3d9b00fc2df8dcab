// srun --gpu-bind. See gpu_bind.h.
#include "common/gpu_bind.h"

#include <strings.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace tessera {
namespace {

constexpr size_t kMaxEntries = 4096;

bool StartsWith(const std::string& s, const char* prefix, size_t n) {
  return s.size() >= n && ::strncasecmp(s.c_str(), prefix, n) == 0;
}

// A count of at least 1 (per_task:N, single:N).
bool Count(const std::string& s, uint32_t* out) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *out = static_cast<uint32_t>(std::stoul(s));
  return *out > 0;
}

// One map_gpu index (decimal or 0x hex) or mask_gpu mask (hex, optional 0x).
bool Value(std::string s, bool hex, uint64_t* out) {
  if (StartsWith(s, "0x", 2)) s = s.substr(2), hex = true;
  const char* digits = hex ? "0123456789abcdefABCDEF" : "0123456789";
  if (s.empty() || s.size() > 16 || s.find_first_not_of(digits) != std::string::npos) return false;
  errno = 0;
  *out = std::strtoull(s.c_str(), nullptr, hex ? 16 : 10);
  return errno == 0;
}

}  // namespace

Result<GpuBind> ParseGpuBind(const std::string& value) {
  GpuBind b;
  b.text = value;
  std::string v = value;
  if (StartsWith(v, "verbose,", 8)) v = v.substr(8);
  auto bad = [&](const std::string& why) {
    return InvalidArgument("invalid --gpu-bind value \"" + value + "\": " + why);
  };
  if (::strcasecmp(v.c_str(), "none") == 0) return b;
  if (::strcasecmp(v.c_str(), "closest") == 0) {
    b.kind = GpuBind::kClosest;
    return b;
  }
  if (StartsWith(v, "per_task:", 9) || StartsWith(v, "single:", 7)) {
    bool per_task = StartsWith(v, "per_task:", 9);
    b.kind = per_task ? GpuBind::kPerTask : GpuBind::kSingle;
    if (!Count(v.substr(per_task ? 9 : 7), &b.count))
      return bad(std::string(per_task ? "per_task:" : "single:") + " needs a count of at least 1");
    return b;
  }
  bool map = StartsWith(v, "map_gpu:", 8);
  if (!map && !StartsWith(v, "mask_gpu:", 9))
    return bad("expected none, per_task:N, map_gpu:LIST, mask_gpu:LIST, closest or single:N "
               "(optionally after verbose,)");
  b.kind = map ? GpuBind::kMap : GpuBind::kMask;
  std::string list = v.substr(map ? 8 : 9);
  const char* what = map ? "map_gpu" : "mask_gpu";
  if (list.empty()) return bad(std::string(what) + ": the list is empty");
  for (size_t pos = 0; pos <= list.size();) {
    size_t comma = list.find(',', pos);
    size_t len = comma == std::string::npos ? std::string::npos : comma - pos;
    std::string tok = list.substr(pos, len);
    pos = comma == std::string::npos ? list.size() + 1 : comma + 1;
    uint64_t repeat = 1;
    size_t star = tok.find('*');
    if (star != std::string::npos) {
      std::string r = tok.substr(star + 1);
      tok = tok.substr(0, star);
      if (r.empty() || r.size() > 4 || r.find_first_not_of("0123456789") != std::string::npos)
        return bad(std::string(what) + ": \"*\" needs a repetition count");
      repeat = std::max<uint64_t>(1, std::stoull(r));  // Slurm: a count of 0 counts as 1
    }
    uint64_t x = 0;
    if (!Value(tok, !map, &x))
      return bad(std::string(what) + ": \"" + tok + "\" is not " +
                 (map ? "a GPU index" : "a hexadecimal GPU mask"));
    if (!map && x == 0) return bad("mask_gpu: a mask of 0 selects no GPU");
    for (uint64_t i = 0; i < repeat; ++i) {
      if (b.list.size() >= kMaxEntries) return bad(std::string(what) + ": more than 4096 entries");
      b.list.push_back(x);
    }
  }
  return b;
}

std::vector<size_t> TaskGpuPositions(const GpuBind& bind, size_t ngpus, uint32_t local_index,
                                     uint32_t local_tasks) {
  std::vector<size_t> out;
  if (ngpus == 0) return out;
  bool all = local_tasks <= 1 || bind.kind == GpuBind::kNone || bind.kind == GpuBind::kClosest ||
             ((bind.kind == GpuBind::kMap || bind.kind == GpuBind::kMask) && bind.list.empty()) ||
             ((bind.kind == GpuBind::kPerTask || bind.kind == GpuBind::kSingle) && bind.count == 0);
  if (all) {
    for (size_t i = 0; i < ngpus; ++i) out.push_back(i);
    return out;
  }
  switch (bind.kind) {
    case GpuBind::kPerTask: {
      uint64_t first = static_cast<uint64_t>(local_index) * bind.count;
      for (uint64_t p = first; p < first + bind.count && p < ngpus; ++p)
        out.push_back(static_cast<size_t>(p));
      break;
    }
    case GpuBind::kSingle:
      out.push_back((local_index / bind.count) % ngpus);
      break;
    case GpuBind::kMap: {
      uint64_t v = bind.list[local_index % bind.list.size()];
      if (v < ngpus) out.push_back(static_cast<size_t>(v));
      break;
    }
    case GpuBind::kMask: {
      uint64_t m = bind.list[local_index % bind.list.size()];
      for (size_t k = 0; k < ngpus && k < 64; ++k)
        if (m >> k & 1) out.push_back(k);
      break;
    }
    default: break;
  }
  if (out.empty()) out.push_back(0);  // as slurmstepd: the first GPU rather than none
  return out;
}

}  // namespace tessera
