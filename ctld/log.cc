#include "ctld/log.h"

#include <cstdio>
#include <ctime>
#include <mutex>

namespace tessera::ctld {

void Log(const std::string& msg) {
  static std::mutex mu;  // serializes lines from gRPC threads and the core thread
  time_t t = time(nullptr);
  struct tm tm;
  localtime_r(&t, &tm);
  char ts[32];
  strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
  std::lock_guard<std::mutex> l(mu);
  std::fprintf(stderr, "%s tessera-ctld: %s\n", ts, msg.c_str());
}

}  // namespace tessera::ctld
