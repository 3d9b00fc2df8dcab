#pragma once
// What the machine offers, read from the kernel: usable CPUs (sched_getaffinity, falling back to
// sysconf), total memory (/proc/meminfo MemTotal), boot time (/proc/stat btime).
// The parsers are pure functions of the file text so they are tested without /proc.
#include <cstdint>
#include <string>

#include "common/status.h"

namespace tessera::noded {

uint32_t DiscoverCpus();
// MemTotal in MiB from /proc/meminfo text.
Result<uint64_t> ParseMemTotalMib(const std::string& meminfo);
Result<uint64_t> DiscoverMemoryMib();
// btime (epoch seconds) from /proc/stat text.
Result<int64_t> ParseBootTime(const std::string& proc_stat);
Result<int64_t> DiscoverBootTime();
// The kernel's boot id (/proc/sys/kernel/random/boot_id, a UUID new on every boot); "" when
// it cannot be read. ctld tells a rebooted host from a reconnecting noded by it.
std::string DiscoverBootId();

}  // namespace tessera::noded
