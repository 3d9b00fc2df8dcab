#include "noded/node_resources.h"

#include <sched.h>
#include <unistd.h>

#include <sstream>

#include "common/file_io.h"

namespace tessera::noded {
namespace {


}  // namespace

uint32_t DiscoverCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<uint32_t>(n);
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<uint32_t>(n) : 1;
}

Result<uint64_t> ParseMemTotalMib(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemTotal:", 0) != 0) continue;
    std::istringstream fields(line.substr(9));
    uint64_t kb = 0;
    std::string unit;
    if (!(fields >> kb)) return InvalidArgument("meminfo: malformed MemTotal line: " + line);
    fields >> unit;
    if (!unit.empty() && unit != "kB") return InvalidArgument("meminfo: unexpected unit " + unit);
    return kb / 1024;
  }
  return InvalidArgument("meminfo: no MemTotal line");
}

Result<uint64_t> DiscoverMemoryMib() {
  auto text = ReadFile("/proc/meminfo");
  if (!text.ok()) return text.status();
  return ParseMemTotalMib(*text);
}

Result<int64_t> ParseBootTime(const std::string& proc_stat) {
  std::istringstream in(proc_stat);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("btime ", 0) != 0) continue;
    try {
      return static_cast<int64_t>(std::stoll(line.substr(6)));
    } catch (...) {
      return InvalidArgument("/proc/stat: malformed btime line: " + line);
    }
  }
  return InvalidArgument("/proc/stat: no btime line");
}

std::string DiscoverBootId() {
  auto text = ReadFile("/proc/sys/kernel/random/boot_id");
  if (!text.ok()) return "";
  std::string id = *text;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

Result<int64_t> DiscoverBootTime() {
  auto text = ReadFile("/proc/stat");
  if (!text.ok()) return text.status();
  return ParseBootTime(*text);
}

}  // namespace tessera::noded
