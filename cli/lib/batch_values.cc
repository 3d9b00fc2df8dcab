#include "cli/lib/batch_values.h"

#include <algorithm>
#include <cctype>

#include "cli/lib/signal_names.h"
#include "cli/lib/text_util.h"
#include "common/array_spec.h"
#include "common/duration.h"

namespace tessera::cli {

Result<SignalSpec> ParseSignalSpec(const std::string& value) {
  SignalSpec out;
  std::string v = value;
  while (v.size() >= 2 && v[1] == ':' && (v[0] == 'B' || v[0] == 'R' || v[0] == 'b' ||
                                          v[0] == 'r')) {
    if (v[0] == 'B' || v[0] == 'b') out.batch_only = true;
    v = v.substr(2);
  }
  size_t at = v.find('@');
  std::string sig = v.substr(0, at);
  if (sig.empty()) return InvalidArgument("expected [{R|B}:]SIGNAL[@TIME]");
  auto n = ParseSignal(sig);
  if (!n.ok()) return n.status();
  out.number = *n;
  if (at != std::string::npos) {
    auto t = ParseUint(v.substr(at + 1), "time");
    if (!t.ok() || *t > 65535) return InvalidArgument("expected a signal time in seconds (0-65535)");
    out.time_s = static_cast<int64_t>(*t);
  }
  return out;
}

Result<uint32_t> ValidateArraySpec(const std::string& value) {
  auto a = ParseArraySpec(value);
  if (!a.ok()) return a.status();
  return static_cast<uint32_t>(a->indices.size());
}

Result<std::vector<uint32_t>> ExpandArraySpec(const std::string& value) {
  auto a = ParseArraySpec(value);
  if (!a.ok()) return a.status();
  return a->indices;
}

Result<SwitchesSpec> ParseSwitches(const std::string& value) {
  SwitchesSpec out;
  size_t at = value.find('@');
  auto n = ParseUint(value.substr(0, at), "count");
  if (!n.ok() || *n == 0 || *n > 65535) return InvalidArgument("expected COUNT[@MAX-TIME]");
  out.count = static_cast<uint32_t>(*n);
  if (at != std::string::npos) {
    auto t = ParseTimeLimit(value.substr(at + 1));
    if (!t.ok() || *t < 0) return InvalidArgument("bad max-time after '@'");
    out.wait_s = *t;
  }
  return out;
}

namespace {

Status ApplyGroupKey(const std::string& key, const std::string& val, TaskGroupSpec& g) {
  auto count = [&](uint32_t& field, bool zero_ok) -> Status {
    auto n = ParseUint(val, key);
    if (!n.ok() || (*n == 0 && !zero_ok) || *n > 1000000)
      return InvalidArgument("bad " + key + " \"" + val + "\"");
    field = static_cast<uint32_t>(*n);
    return Status::Ok();
  };
  if (key == "cpus") return count(g.cpus, false);
  if (key == "gpus") return count(g.gpus, true);
  if (key == "tasks-per-node") return count(g.tasks_per_node, false);
  if (key == "gpu-model") {
    g.gpu_model = val;
    return Status::Ok();
  }
  if (key == "mem") {
    auto m = ParseMemMiB(val);
    if (!m.ok() || *m == 0) return InvalidArgument("bad mem \"" + val + "\"");
    g.mem_mib = *m;
    return Status::Ok();
  }
  return InvalidArgument("unknown key \"" + key + "\" (cpus, mem, gpus, gpu-model, tasks-per-node)");
}

}  // namespace

Result<TaskGroupSpec> ParseTaskGroup(const std::string& value) {
  TaskGroupSpec g;
  size_t c1 = value.find(':');
  g.name = value.substr(0, c1);
  if (g.name.empty()) return InvalidArgument("expected NAME:COUNT[:KEY=VALUE,...]");
  for (char ch : g.name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_')
      return InvalidArgument("bad group name \"" + g.name + "\"");
  if (c1 == std::string::npos) return g;
  size_t c2 = value.find(':', c1 + 1);
  auto n = ParseUint(value.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1),
                     "count");
  if (!n.ok() || *n == 0 || *n > 1000000) return InvalidArgument("bad task count in \"" + value + "\"");
  g.count = static_cast<uint32_t>(*n);
  if (c2 == std::string::npos) return g;
  for (const std::string& kv : Split(value.substr(c2 + 1), ',')) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos) return InvalidArgument("expected KEY=VALUE, got \"" + kv + "\"");
    TESSERA_RETURN_IF_ERROR(ApplyGroupKey(ToLower(kv.substr(0, eq)), kv.substr(eq + 1), g));
  }
  return g;
}

}  // namespace tessera::cli
