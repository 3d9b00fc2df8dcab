#include "noded/rdma.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace tessera::noded {
namespace {

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string ReadLine(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string Resolve(const std::string& path) {
  char buf[PATH_MAX];
  if (!::realpath(path.c_str(), buf)) return "";
  return buf;
}

// Closeness: 2 same switch, 1 same NUMA node, 0 otherwise.
int Closeness(const GpuLocality& g, const RdmaPort& p) {
  if (!g.pci_path.empty() && !p.pci_path.empty() && PciParent(g.pci_path) == PciParent(p.pci_path))
    return 2;
  if (g.numa_node >= 0 && g.numa_node == p.numa_node) return 1;
  return 0;
}

// The port's /dev/infiniband names: the HCA's uverbs devices and the umad device of this port.
std::vector<std::string> CharDevices(const std::string& base, uint32_t port) {
  std::vector<std::string> out = ListDir(base + "/device/infiniband_verbs");
  for (const std::string& mad : ListDir(base + "/device/infiniband_mad")) {
    std::string p = ReadLine(base + "/device/infiniband_mad/" + mad + "/port");
    if (p.empty() || p == std::to_string(port)) out.push_back(mad);
  }
  return out;
}

// A RoCE port's network interface: gid_attrs/ndevs/0, else the /sys/class/net interface whose
// device is the HCA's PCI function.
std::string NetDev(const std::string& sysfs_root, const std::string& base, const std::string& port,
                   const std::string& pci) {
  std::string nd = ReadLine(base + "/ports/" + port + "/gid_attrs/ndevs/0");
  if (!nd.empty() || pci.empty()) return nd;
  for (const std::string& ifname : ListDir(sysfs_root + "/class/net"))
    if (Resolve(sysfs_root + "/class/net/" + ifname + "/device") == pci) return ifname;
  return "";
}

}  // namespace

std::string PciParent(const std::string& pci_path) {
  size_t slash = pci_path.rfind('/');
  return slash == std::string::npos ? "" : pci_path.substr(0, slash);
}

Result<std::vector<RdmaPort>> DiscoverRdma(const std::string& sysfs_root) {
  std::vector<RdmaPort> out;
  std::string cls = sysfs_root + "/class/infiniband";
  for (const std::string& dev : ListDir(cls)) {
    std::string base = cls + "/" + dev;
    std::string numa = ReadLine(base + "/device/numa_node");
    int32_t numa_node = -1;
    if (!numa.empty() && numa.find_first_not_of("-0123456789") == std::string::npos)
      numa_node = std::stoi(numa);
    std::string pci = Resolve(base + "/device");
    for (const std::string& port : ListDir(base + "/ports")) {
      if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 4) continue;
      RdmaPort p;
      p.device = dev;
      p.port = static_cast<uint32_t>(std::stoul(port));
      std::string state = ReadLine(base + "/ports/" + port + "/state");
      size_t colon = state.find(": ");
      p.state = colon == std::string::npos ? state : state.substr(colon + 2);
      p.rate = ReadLine(base + "/ports/" + port + "/rate");
      p.link_layer = ReadLine(base + "/ports/" + port + "/link_layer");
      p.numa_node = numa_node;
      p.pci_path = pci;
      p.char_devices = CharDevices(base, p.port);
      if (p.link_layer == "Ethernet") p.netdev = NetDev(sysfs_root, base, port, pci);
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<RdmaPort> ChooseHcas(const std::vector<GpuLocality>& job_gpus,
                                 const std::vector<RdmaPort>& ports) {
  bool ib = std::any_of(ports.begin(), ports.end(), [](const RdmaPort& p) {
    return p.state == "ACTIVE" && p.link_layer == "InfiniBand";
  });
  std::vector<RdmaPort> active;  // one link layer: InfiniBand when there is any
  for (const auto& p : ports)
    if (p.state == "ACTIVE" && (p.link_layer == "InfiniBand") == ib) active.push_back(p);
  std::sort(active.begin(), active.end(),
            [](const RdmaPort& a, const RdmaPort& b) { return a.Name() < b.Name(); });
  bool known = false;
  for (const auto& g : job_gpus) known = known || g.numa_node >= 0 || !g.pci_path.empty();
  if (job_gpus.empty() || !known || active.empty()) return active;
  std::set<std::string> chosen;
  for (const auto& g : job_gpus) {
    const RdmaPort* best = nullptr;
    int best_score = -1;
    for (const auto& p : active) {
      int s = Closeness(g, p);
      if (s > best_score) best = &p, best_score = s;  // first (lowest name) wins ties
    }
    chosen.insert(best->Name());
  }
  std::vector<RdmaPort> out;
  for (const auto& p : active)
    if (chosen.count(p.Name())) out.push_back(p);
  return out;
}

}  // namespace tessera::noded
