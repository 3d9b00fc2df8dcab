#include "noded/bpf_device.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tessera::noded {
namespace {

bpf_insn Insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst;
  i.src_reg = src;
  i.off = off;
  i.imm = imm;
  return i;
}

// Registers: r1 = ctx; r2 = type, r3 = access, r4 = major, r5 = minor (loaded in the prologue).
constexpr uint8_t kLdxW = BPF_LDX | BPF_MEM | BPF_W;
constexpr uint8_t kAnd32K = BPF_ALU | BPF_AND | BPF_K;
constexpr uint8_t kRsh32K = BPF_ALU | BPF_RSH | BPF_K;
constexpr uint8_t kMov32X = BPF_ALU | BPF_MOV | BPF_X;
constexpr uint8_t kMov64K = BPF_ALU64 | BPF_MOV | BPF_K;
constexpr uint8_t kJneK = BPF_JMP | BPF_JNE | BPF_K;
constexpr uint8_t kJneX = BPF_JMP | BPF_JNE | BPF_X;
constexpr uint8_t kExit = BPF_JMP | BPF_EXIT;

int32_t AccessBits(const std::string& a) {
  int32_t v = 0;
  if (a.find('m') != std::string::npos) v |= BPF_DEVCG_ACC_MKNOD;
  if (a.find('r') != std::string::npos) v |= BPF_DEVCG_ACC_READ;
  if (a.find('w') != std::string::npos) v |= BPF_DEVCG_ACC_WRITE;
  return v;
}

// One rule: each test jumps past the block's end when it fails.
std::vector<bpf_insn> RuleBlock(const DeviceRule& r) {
  std::vector<bpf_insn> b;
  std::vector<size_t> jumps;  // indices of instructions that jump to the block's end
  if (r.type == 'c' || r.type == 'b') {
    jumps.push_back(b.size());
    b.push_back(Insn(kJneK, 2, 0, 0, r.type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK));
  }
  int32_t acc = AccessBits(r.access);
  if (r.type != 'a' && acc != (BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE)) {
    // requested access must be a subset of the rule's: (r3 & acc) == r3
    b.push_back(Insn(kMov32X, 1, 3, 0, 0));
    b.push_back(Insn(kAnd32K, 1, 0, 0, acc));
    jumps.push_back(b.size());
    b.push_back(Insn(kJneX, 1, 3, 0, 0));
  }
  if (r.type != 'a' && r.major >= 0) {
    jumps.push_back(b.size());
    b.push_back(Insn(kJneK, 4, 0, 0, static_cast<int32_t>(r.major)));
  }
  if (r.type != 'a' && r.minor >= 0) {
    jumps.push_back(b.size());
    b.push_back(Insn(kJneK, 5, 0, 0, static_cast<int32_t>(r.minor)));
  }
  b.push_back(Insn(kMov64K, 0, 0, 0, 1));
  b.push_back(Insn(kExit, 0, 0, 0, 0));
  for (size_t j : jumps) b[j].off = static_cast<int16_t>(b.size() - j - 1);
  return b;
}

long Bpf(int cmd, bpf_attr* attr) { return ::syscall(__NR_bpf, cmd, attr, sizeof(*attr)); }

}  // namespace

std::vector<bpf_insn> BuildDeviceProgram(const std::vector<DeviceRule>& allow) {
  std::vector<bpf_insn> p = {
      Insn(kLdxW, 2, 1, 0, 0),   // r2 = ctx->access_type
      Insn(kAnd32K, 2, 0, 0, 0xFFFF),
      Insn(kLdxW, 3, 1, 0, 0),   // r3 = ctx->access_type >> 16
      Insn(kRsh32K, 3, 0, 0, 16),
      Insn(kLdxW, 4, 1, 4, 0),   // r4 = ctx->major
      Insn(kLdxW, 5, 1, 8, 0),   // r5 = ctx->minor
  };
  for (const auto& r : allow) {
    auto b = RuleBlock(r);
    p.insert(p.end(), b.begin(), b.end());
  }
  p.push_back(Insn(kMov64K, 0, 0, 0, 0));
  p.push_back(Insn(kExit, 0, 0, 0, 0));
  return p;
}

Status AttachDeviceProgram(const std::string& cgroup_dir, const std::vector<bpf_insn>& prog) {
  static char license[] = "Apache";
  std::vector<char> log(64 * 1024);
  bpf_attr load{};
  load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  load.insns = reinterpret_cast<uint64_t>(prog.data());
  load.insn_cnt = static_cast<uint32_t>(prog.size());
  load.license = reinterpret_cast<uint64_t>(license);
  load.log_buf = reinterpret_cast<uint64_t>(log.data());
  load.log_size = static_cast<uint32_t>(log.size());
  load.log_level = 1;
  int prog_fd = static_cast<int>(Bpf(BPF_PROG_LOAD, &load));
  if (prog_fd < 0) {
    std::string why = std::strerror(errno);
    std::string vlog(log.data());
    return Internal("bpf(BPF_PROG_LOAD) of the device program: " + why +
                    (vlog.empty() ? "" : "; verifier: " + vlog.substr(0, 400)));
  }
  int cg_fd = ::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg_fd < 0) {
    ::close(prog_fd);
    return Internal("cannot open " + cgroup_dir + ": " + std::strerror(errno));
  }
  bpf_attr at{};
  at.target_fd = static_cast<uint32_t>(cg_fd);
  at.attach_bpf_fd = static_cast<uint32_t>(prog_fd);
  at.attach_type = BPF_CGROUP_DEVICE;
  at.attach_flags = BPF_F_ALLOW_MULTI;
  long rc = Bpf(BPF_PROG_ATTACH, &at);
  int err = errno;
  ::close(cg_fd);
  ::close(prog_fd);
  if (rc != 0)
    return Internal("bpf(BPF_PROG_ATTACH) to " + cgroup_dir + ": " + std::strerror(err));
  return Status::Ok();
}

}  // namespace tessera::noded
