#include "noded/job_isolation.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "noded/mig_caps.h"

namespace tessera::noded {

namespace v1 = tessera::v1;

std::string FormatJobIsolation(const JobIsolation& iso) {
  std::ostringstream o;
  o << "cgroup_root=" << iso.cgroup_root << "\n";
  o << "cgroup=" << iso.cgroup.name << "\n";
  o << "cpus=" << iso.cgroup.cpus << "\n";
  o << "memory_bytes=" << iso.cgroup.memory_bytes << "\n";
  o << "pids_max=" << iso.cgroup.pids_max << "\n";
  o << "restrict_devices=" << (iso.cgroup.restrict_devices ? 1 : 0) << "\n";
  for (const auto& d : iso.cgroup.devices) o << "device=" << DeviceRuleText(d) << "\n";
  for (const auto& h : iso.hcas) o << "hca=" << h << "\n";
  for (const auto& n : iso.netdevs) o << "netdev=" << n << "\n";
  return o.str();
}

Result<JobIsolation> ParseJobIsolation(const std::string& text) {
  JobIsolation iso;
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.empty()) continue;
    size_t eq = line.find('=');
    auto bad = [&](const std::string& why) {
      return InvalidArgument("isolation line " + std::to_string(n) + " '" + line + "': " + why);
    };
    if (eq == std::string::npos) return bad("expected key=value");
    std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    auto num = [&](uint64_t* out) -> Status {
      if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
        return bad("expected a number");
      *out = std::stoull(v);
      return Status::Ok();
    };
    if (k == "cgroup_root") iso.cgroup_root = v;
    else if (k == "cgroup") iso.cgroup.name = v;
    else if (k == "cpus") {
      if (!ParseCpuList(v).ok()) return bad("bad cpu list");
      iso.cgroup.cpus = v;
    } else if (k == "memory_bytes") TESSERA_RETURN_IF_ERROR(num(&iso.cgroup.memory_bytes));
    else if (k == "pids_max") TESSERA_RETURN_IF_ERROR(num(&iso.cgroup.pids_max));
    else if (k == "restrict_devices") iso.cgroup.restrict_devices = v == "1";
    else if (k == "device") {
      auto r = ParseDeviceRule(v);
      if (!r.ok()) return bad(r.status().message());
      iso.cgroup.devices.push_back(*r);
    } else if (k == "hca") iso.hcas.push_back(v);
    else if (k == "netdev") iso.netdevs.push_back(v);
    else return bad("unknown key");
  }
  if (!iso.cgroup_root.empty() && iso.cgroup.name.empty())
    return InvalidArgument("isolation: cgroup_root without cgroup");
  return iso;
}

std::vector<DeviceRule> CharDeviceRules(const std::string& dir, const std::string& prefix) {
  std::vector<DeviceRule> out;
  for (const auto& [name, rule] : CharDeviceRulesByName(dir))
    if (name.rfind(prefix, 0) == 0) out.push_back(rule);
  return out;
}

std::map<std::string, DeviceRule> CharDeviceRulesByName(const std::string& dir) {
  std::map<std::string, DeviceRule> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st{};
    if (::stat((dir + "/" + n).c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) continue;
    out[n] = {'c', static_cast<int64_t>(major(st.st_rdev)), static_cast<int64_t>(minor(st.st_rdev)),
              "rwm"};
  }
  ::closedir(d);
  return out;
}

namespace {

// The HCA ports' own /dev/infiniband devices (+ rdma_cm); all of them when none is known.
void AddRdmaDevices(const std::vector<RdmaPort>& ports, const IsolationFacts& f,
                    std::vector<DeviceRule>& out) {
  std::vector<DeviceRule> own;
  for (const auto& p : ports)
    for (const auto& d : p.char_devices) {
      auto it = f.rdma_devices_by_name.find(d);
      if (it != f.rdma_devices_by_name.end() &&
          std::find(own.begin(), own.end(), it->second) == own.end())
        own.push_back(it->second);
    }
  if (own.empty()) {
    out.insert(out.end(), f.rdma_devices.begin(), f.rdma_devices.end());
    return;
  }
  if (auto cm = f.rdma_devices_by_name.find("rdma_cm"); cm != f.rdma_devices_by_name.end())
    own.push_back(cm->second);
  out.insert(out.end(), own.begin(), own.end());
}

}  // namespace

JobIsolation PlanJobIsolation(const v1::LaunchJob& l, const IsolationFacts& f,
                              const std::vector<uint32_t>& cores) {
  JobIsolation iso;
  const v1::NodeAllocation* mine = nullptr;
  for (const auto& a : l.alloc())
    if (a.node() == f.node_name) mine = &a;
  std::set<uint32_t> gpus;
  std::vector<DeviceRule> mig_caps;
  if (mine) {
    for (uint32_t i : mine->gpu_indices()) gpus.insert(i);
    for (const auto& u : mine->mig_uuids()) {
      for (const auto& g : f.gpus)
        for (const auto& m : g.mig)
          if (m.uuid == u) gpus.insert(g.index);
      auto caps = f.mig_devices.find(u);
      if (caps != f.mig_devices.end())
        mig_caps.insert(mig_caps.end(), caps->second.begin(), caps->second.end());
    }
  }
  std::vector<GpuLocality> where;
  for (uint32_t i : gpus)
    if (i < f.gpus.size()) where.push_back({f.gpus[i].numa_node, ""});
  std::vector<RdmaPort> ports = ChooseHcas(where, f.hcas);
  for (const auto& p : ports) {
    iso.hcas.push_back(p.Name());
    if (!p.netdev.empty() &&
        std::find(iso.netdevs.begin(), iso.netdevs.end(), p.netdev) == iso.netdevs.end())
      iso.netdevs.push_back(p.netdev);
  }
  if (f.cgroup_root.empty()) return iso;
  iso.cgroup_root = f.cgroup_root;
  CgroupSpec& s = iso.cgroup;
  s.name = (f.cgroup_parent.empty() ? "tessera/" + f.node_name : f.cgroup_parent) + "/job_" +
           std::to_string(l.job_id());
  s.cpus = FormatCpuList(cores);
  if (mine && mine->mem_mib() > 0) s.memory_bytes = mine->mem_mib() * 1024ULL * 1024ULL;
  s.pids_max = f.pids_max;
  s.restrict_devices = true;
  s.devices = StandardDeviceRules();
  for (uint32_t i : gpus)
    if (i < f.gpus.size()) s.devices.push_back({'c', 195, f.gpus[i].minor, "rwm"});
  if (!gpus.empty())
    s.devices.insert(s.devices.end(), f.gpu_shared_devices.begin(), f.gpu_shared_devices.end());
  s.devices.insert(s.devices.end(), mig_caps.begin(), mig_caps.end());
  if (!iso.hcas.empty()) AddRdmaDevices(ports, f, s.devices);
  return iso;
}

std::string CgroupParentFor(const std::string& node, const std::string& spool_dir) {
  uint32_t h = 2166136261u;
  for (unsigned char c : spool_dir) h = (h ^ c) * 16777619u;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return "tessera/" + node + "-" + buf;
}

JobIsolation IsolationPlanner::Plan(const v1::LaunchJob& l) {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t cpus = 1;
  for (const auto& a : l.alloc())
    if (a.node() == facts_.node_name && a.cpus() > 0) cpus = a.cpus();
  return PlanJobIsolation(l, facts_, cores_.Assign(l.job_id(), cpus));
}

void IsolationPlanner::Restore(uint64_t job, const JobIsolation& iso) {
  std::lock_guard<std::mutex> lock(mu_);
  auto cpus = ParseCpuList(iso.cgroup.cpus);
  if (cpus.ok() && !cpus->empty()) cores_.Restore(job, *cpus);
}

void IsolationPlanner::UpdateGpu(const GpuInfo& gpu) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& g : facts_.gpus) {
    if (g.index != gpu.index) continue;
    for (const auto& m : g.mig) facts_.mig_devices.erase(m.uuid);
    g = gpu;
  }
  for (auto& [uuid, rules] : MigDeviceRules({gpu}, facts_.nvidia_proc, nullptr))
    facts_.mig_devices[uuid] = std::move(rules);
}

}  // namespace tessera::noded
