#pragma once
// cgroup v2 device access control: a BPF_PROG_TYPE_CGROUP_DEVICE program built from an allow
// list, loaded and attached with the bpf() syscall directly (no libbpf), as runc's devicefilter
// does. The program reads struct bpf_cgroup_dev_ctx {access_type = (access << 16) | type, major,
// minor} and returns 1 (allow) for the first matching rule, 0 (deny) when none matches.
#include <linux/bpf.h>

#include <vector>

#include "common/status.h"
#include "noded/cgroup.h"

namespace tessera::noded {

// Pure: the instructions for `allow` (rules of type 'a' allow everything).
std::vector<bpf_insn> BuildDeviceProgram(const std::vector<DeviceRule>& allow);

// Loads the program and attaches it (BPF_F_ALLOW_MULTI) to the cgroup2 directory `cgroup_dir`.
// The attachment outlives this process. Errors carry the kernel's verifier log when there is one.
Status AttachDeviceProgram(const std::string& cgroup_dir, const std::vector<bpf_insn>& prog);

}  // namespace tessera::noded
