#pragma once
// Issue 19 (scontrol show node): the host facts slurmd reports besides CPUs and memory — the
// uname (OS=, Arch=) at registration, the load average (CPULoad=) and free memory (FreeMem=)
// with every heartbeat. Parsers are pure functions of the /proc text.
#include <cstdint>
#include <string>

namespace tessera::noded {

// "Linux 6.1.0-13-amd64 #1 SMP PREEMPT_DYNAMIC ..." (sysname release version) and machine.
struct HostUname {
  std::string os, arch;
};
HostUname DiscoverUname();
// The 1-minute load average of /proc/loadavg text, times 100; -1 when unreadable.
int32_t ParseLoadAvgX100(const std::string& loadavg);
// MemFree of /proc/meminfo text in MiB (slurmd's FreeMem); 0 when absent.
uint64_t ParseMemFreeMib(const std::string& meminfo);
// Both read from /proc now.
int32_t ReadLoadAvgX100();
uint64_t ReadMemFreeMib();

}  // namespace tessera::noded
