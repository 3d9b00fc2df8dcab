#include "noded/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

#include "common/file_io.h"
#include "noded/cgroup_impl.h"

namespace tessera::noded {

const char* CgroupModeName(CgroupMode m) {
  switch (m) {
    case CgroupMode::kV1: return "v1";
    case CgroupMode::kV2: return "v2";
    default: return "none";
  }
}

namespace {

std::string StripSlash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// /proc/mounts escapes blanks as \040 etc.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (int k = 1; k <= 3; ++k) {
        char c = s[i + k];
        if (c < '0' || c > '7') ok = false;
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace

CgroupMounts DetectCgroups(const std::string& proc_mounts, const std::string& root_in) {
  CgroupMounts m;
  m.root = StripSlash(root_in);
  std::istringstream in(proc_mounts);
  // cpuacct: only for usage accounting (task_usage.h, issue 19); jobs do not join it.
  static const char* kControllers[] = {"cpuset", "memory", "devices", "pids", "freezer", "cpuacct"};
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string dev, dir, type, opts;
    if (!(ls >> dev >> dir >> type >> opts)) continue;
    dir = StripSlash(Unescape(dir));
    if ((type == "cgroup2" || type == "cgroup") && ("," + opts + ",").find(",favordynmods,") !=
                                                       std::string::npos)
      m.favordynmods = true;
    if (type == "cgroup2" && dir == m.root) m.unified = dir;
    if (type != "cgroup") continue;
    if (dir.rfind(m.root + "/", 0) != 0) continue;
    std::istringstream os(opts);
    for (std::string o; std::getline(os, o, ',');)
      for (const char* c : kControllers)
        if (o == c) m.v1[c] = dir;
  }
  if (!m.unified.empty()) {
    m.mode = CgroupMode::kV2;
    m.v1.clear();
  } else if (!m.v1.empty()) {
    m.mode = CgroupMode::kV1;
  }
  return m;
}

CgroupMounts DetectCgroupsOnHost(const std::string& root) {
  auto mounts = ReadFile("/proc/mounts");
  return DetectCgroups(mounts.ok() ? *mounts : std::string(), root);
}

std::string DeviceRuleText(const DeviceRule& r) {
  if (r.type == 'a') return "a";
  auto num = [](int64_t v) { return v < 0 ? std::string("*") : std::to_string(v); };
  return std::string(1, r.type) + " " + num(r.major) + ":" + num(r.minor) + " " + r.access;
}

Result<DeviceRule> ParseDeviceRule(const std::string& text) {
  DeviceRule r;
  std::istringstream in(text);
  std::string type, mm, access;
  in >> type >> mm >> access;
  auto bad = [&](const std::string& why) {
    return InvalidArgument("device rule '" + text + "': " + why);
  };
  if (type == "a" && mm.empty()) return DeviceRule{'a', -1, -1, "rwm"};
  if (type != "c" && type != "b") return bad("type must be c, b or a");
  r.type = type[0];
  size_t colon = mm.find(':');
  if (colon == std::string::npos) return bad("expected MAJOR:MINOR");
  auto num = [](const std::string& s, int64_t* out) {
    if (s == "*") return *out = -1, true;
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoll(s);
    return true;
  };
  if (!num(mm.substr(0, colon), &r.major) || !num(mm.substr(colon + 1), &r.minor))
    return bad("bad MAJOR:MINOR");
  if (access.empty() || access.find_first_not_of("rwm") != std::string::npos)
    return bad("access must be a combination of r, w, m");
  r.access = access;
  return r;
}

std::vector<DeviceRule> StandardDeviceRules() {
  return {{'c', -1, -1, "m"}, {'b', -1, -1, "m"},     {'c', 1, 3, "rwm"}, {'c', 1, 5, "rwm"},
          {'c', 1, 7, "rwm"}, {'c', 1, 8, "rwm"},     {'c', 1, 9, "rwm"}, {'c', 5, 0, "rwm"},
          {'c', 5, 1, "rwm"}, {'c', 5, 2, "rwm"},     {'c', 136, -1, "rwm"}};
}

Status WriteCgroupFile(const std::string& path, const std::string& value) {
  return WriteCgroupValues(path, {value});
}

Status WriteCgroupValues(const std::string& path, const std::vector<std::string>& values) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Internal("cannot open " + path + ": " + std::strerror(errno));
  for (const std::string& value : values) {
    ssize_t n = ::write(fd, value.data(), value.size());
    if (n != static_cast<ssize_t>(value.size())) {
      int err = errno;
      ::close(fd);
      return Internal("cannot write '" + value + "' to " + path + ": " + std::strerror(err));
    }
  }
  ::close(fd);
  return Status::Ok();
}

std::vector<pid_t> ParsePidList(const std::string& text) {
  std::vector<pid_t> out;
  std::istringstream in(text);
  for (long v; in >> v;) out.push_back(static_cast<pid_t>(v));
  return out;
}

int64_t KeyedValue(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string k;
    int64_t v = 0;
    if (ls >> k >> v && k == key) return v;
  }
  return -1;
}

bool RemoveCgroupChildren(const std::string& dir, const std::string& keep) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return errno == ENOENT;
  std::vector<std::string> kids;
  while (dirent* e = ::readdir(d))
    if (e->d_type == DT_DIR && std::strcmp(e->d_name, ".") != 0 &&
        std::strcmp(e->d_name, "..") != 0 && (keep.empty() || keep != e->d_name))
      kids.push_back(dir + "/" + e->d_name);
  ::closedir(d);
  bool ok = true;
  for (const auto& k : kids) ok = RemoveCgroupDir(k).ok() && ok;
  return ok;
}

Status RemoveCgroupDir(const std::string& dir) {
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return Status::Ok();  // a leaf: done
  (void)RemoveCgroupChildren(dir);  // issue 19: the per-task accounting cgroups under a job's
  for (int tries = 0; tries < 40; ++tries) {
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return Status::Ok();
    if (errno != EBUSY) break;
    ::usleep(50 * 1000);
  }
  return Internal("cannot remove cgroup " + dir + ": " + std::strerror(errno));
}

std::string CgroupPoolSlot(const std::string& job_name, int k) {
  size_t slash = job_name.rfind('/');
  std::string parent = slash == std::string::npos ? "" : job_name.substr(0, slash + 1);
  return parent + "pool_" + std::to_string(k);
}

void RemoveCgroupPool(const CgroupMounts& mounts, const std::string& parent) {
  if (mounts.mode != CgroupMode::kV1) return;
  for (const auto& [ctrl, mount] : mounts.v1)
    for (int k = 0; k < kCgroupPoolSlots; ++k)
      (void)RemoveCgroupDir(mount + "/" + CgroupPoolSlot(parent + "/x", k));
}

std::unique_ptr<CgroupManager> MakeCgroupManager(const CgroupMounts& mounts) {
  switch (mounts.mode) {
    case CgroupMode::kV1: return std::make_unique<CgroupV1>(mounts);
    case CgroupMode::kV2: return std::make_unique<CgroupV2>(mounts);
    default: return nullptr;
  }
}

}  // namespace tessera::noded
