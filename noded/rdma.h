#pragma once
// RDMA HCA discovery from sysfs and the choice of HCAs for a job.
//
// Discovery reads <sysfs>/class/infiniband/<dev>/ports/<n>/{state,rate,link_layer} and
// <sysfs>/class/infiniband/<dev>/device/numa_node; the PCI location is the resolved path of
// <sysfs>/class/infiniband/<dev>/device. The sysfs root is configurable (tessera.conf
// `RdmaSysfsRoot=`, default /sys) so tests use a fake tree. A missing class directory means no
// HCAs, not an error.
//
// Choice (pure): for each GPU of the job, the ACTIVE port closest to it: same PCIe switch (the
// GPU's and the HCA's PCI paths share their parent bridge) beats same NUMA node beats anything;
// ties go to the lower name. Without GPUs (or without locality facts) every ACTIVE port is given.
// One link layer per job: when any ACTIVE port is InfiniBand only InfiniBand ports are
// candidates, otherwise the Ethernet (RoCE) ones; a job never gets both.
//
// Device files (issue 14 §5): the port's /dev/infiniband character devices are named by
// <dev>/device/infiniband_verbs/uverbsN (the HCA's verbs device) and
// <dev>/device/infiniband_mad/umadN (one per port: its `port` file names it). A RoCE port's
// network interface is <dev>/ports/<n>/gid_attrs/ndevs/0, else the interface under
// <sysfs>/class/net whose device is the HCA's PCI function (NCCL_SOCKET_IFNAME).
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::noded {

struct RdmaPort {
  std::string device;      // "mlx5_0"
  uint32_t port = 1;
  std::string state;       // "ACTIVE" (the "4: " prefix stripped)
  std::string rate;        // "200 Gb/sec (4X HDR)"
  std::string link_layer;  // "InfiniBand" / "Ethernet"
  int32_t numa_node = -1;
  std::string pci_path;    // resolved sysfs device path, "" unknown
  std::vector<std::string> char_devices;  // its /dev/infiniband names ("uverbs0", "umad0")
  std::string netdev;      // RoCE: its network interface ("eth2"); "" none or unknown
  std::string Name() const { return device + ":" + std::to_string(port); }  // NCCL_IB_HCA form
};

// Where a GPU sits (from NVML's PCI bus id or gres.conf); numa -1 / empty path = unknown.
struct GpuLocality {
  int32_t numa_node = -1;
  std::string pci_path;
};

Result<std::vector<RdmaPort>> DiscoverRdma(const std::string& sysfs_root);

std::vector<RdmaPort> ChooseHcas(const std::vector<GpuLocality>& job_gpus,
                                 const std::vector<RdmaPort>& ports);

// The parent bridge of a PCI device path ("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
// -> "/sys/devices/pci0000:00/0000:00:01.0"); "" for "".
std::string PciParent(const std::string& pci_path);

}  // namespace tessera::noded
