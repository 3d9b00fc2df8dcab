#include "noded/host_stats.h"

#include <sys/utsname.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tessera::noded {
namespace {

std::string ReadAll(const char* path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

HostUname DiscoverUname() {
  struct utsname u {};
  if (uname(&u) != 0) return {};
  return {std::string(u.sysname) + " " + u.release + " " + u.version, u.machine};
}

int32_t ParseLoadAvgX100(const std::string& loadavg) {
  char* end = nullptr;
  double v = std::strtod(loadavg.c_str(), &end);
  if (end == loadavg.c_str() || v < 0 || v > 1e7) return -1;
  return static_cast<int32_t>(v * 100 + 0.5);
}

uint64_t ParseMemFreeMib(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemFree:") return kib / 1024;
  return 0;
}

int32_t ReadLoadAvgX100() { return ParseLoadAvgX100(ReadAll("/proc/loadavg")); }
uint64_t ReadMemFreeMib() { return ParseMemFreeMib(ReadAll("/proc/meminfo")); }

}  // namespace tessera::noded
