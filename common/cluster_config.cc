#include "common/cluster_config.h"
#include "common/metrics_config.h"
#include "common/wire_config.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/client_config.h"
#include "common/config_keys.h"
#include "common/duration.h"
#include "common/gres_shares.h"
#include "common/hostlist.h"

namespace tessera {
namespace {

using Setter = std::function<Status(const ConfigPair&, const std::string& where)>;

std::string ToUpper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Status BadValue(const std::string& where, const ConfigPair& p, const std::string& why) {
  return InvalidArgument(where + ": invalid value \"" + p.value + "\" for " + p.raw_key +
                         (why.empty() ? "" : ": " + why));
}

// MigStrategy=dynamic|static (case-insensitive), stored lower-case.
Status MigStrategy(const std::string& where, const ConfigPair& p, std::string* out) {
  std::string v = ToLower(p.value);
  if (v != "dynamic" && v != "static") return BadValue(where, p, "expected dynamic or static");
  *out = v;
  return Status::Ok();
}

Result<int64_t> Seconds(const std::string& where, const ConfigPair& p) {
  auto n = ParseUint(p.value, p.raw_key);
  if (!n.ok()) return BadValue(where, p, "expected seconds");
  return static_cast<int64_t>(*n);
}

Result<bool> YesNo(const std::string& where, const ConfigPair& p) {
  std::string v = ToLower(p.value);
  if (v == "yes" || v == "true" || v == "1") return true;
  if (v == "no" || v == "false" || v == "0") return false;
  return BadValue(where, p, "expected YES or NO");
}

// Gres=gpu:a100:2,gpu:2 -> model->count.
Status ParseGres(const std::string& where, const ConfigPair& p, std::map<std::string, uint32_t>* out) {
  for (const auto& item : SplitList(p.value)) {
    std::vector<std::string> f;
    size_t pos = 0;
    while (pos <= item.size()) {
      size_t c = item.find(':', pos);
      if (c == std::string::npos) c = item.size();
      f.push_back(item.substr(pos, c - pos));
      pos = c + 1;
    }
    if (f[0] != "gpu") return BadValue(where, p, "only gpu GRES are supported");
    std::string model = f.size() == 3 ? f[1] : "";
    auto n = ParseUint(f.size() >= 2 ? f.back() : "1", "count");
    if (!n.ok() || f.size() > 3) return BadValue(where, p, "expected gpu[:type]:count");
    (*out)[model] += static_cast<uint32_t>(*n);
  }
  return Status::Ok();
}

class Builder {
 public:
  explicit Builder(ClusterConfig* c) : c_(c) {}

  Status Line(const ConfigLine& l) {
    const std::string& head = l.Head();
    if (head == "nodename") return NodeLine(l);
    if (head == "partitionname") return PartitionLine(l);
    // QoS and account lines belong to the scheduler (ctld/sched/sched_config.h).
    if (head == "qosname" || head == "accountname" || head == "username") return Status::Ok();
    for (const auto& p : l.pairs) TESSERA_RETURN_IF_ERROR(Scalar(p, l.Where()));
    return Status::Ok();
  }

  Status Finish() {
    if (c_->nodes.empty()) return InvalidArgument(c_->path + ": no NodeName lines: the cluster has no nodes");
    std::set<std::string> names;
    std::map<std::pair<std::string, uint16_t>, const NodeConfig*> endpoints;
    for (const auto& n : c_->nodes) {
      if (!names.insert(n.name).second) return InvalidArgument(n.where + ": node " + n.name + " defined twice");
      auto [it, fresh] = endpoints.emplace(std::make_pair(n.addr, n.port), &n);
      if (!fresh)  // one noded answers on an address and port: the two would be one daemon
        return InvalidArgument(n.where + ": node " + n.name + " has NodeAddr " + n.addr +
                               " and Port " + std::to_string(n.port) + ", as node " +
                               it->second->name + " (" + it->second->where +
                               "); give each node its own address or port");
    }
    int defaults = 0;
    // name -> node once: FindNode per partition member was O(nodes^2), ~0.45 s of every command
    // on a 10,000-node config (issue 20 §2).
    std::unordered_map<std::string_view, NodeConfig*> by_name;
    by_name.reserve(c_->nodes.size());
    for (auto& n : c_->nodes) by_name.emplace(n.name, &n);
    for (auto& part : c_->partitions) {
      defaults += part.is_default;
      for (const auto& n : part.nodes) {
        auto it = by_name.find(n);
        if (it == by_name.end()) return InvalidArgument(part.where + ": partition " + part.name + " names unknown node " + n);
        it->second->partitions.push_back(part.name);
      }
    }
    if (defaults > 1) return InvalidArgument(c_->path + ": more than one partition has Default=YES");
    TESSERA_RETURN_IF_ERROR(FinishClientKeys(c_, ctld_socket_set_));  // client_config.h
    std::filesystem::path dir = std::filesystem::path(c_->path).parent_path();
    std::filesystem::path topo = topology_file_.empty() ? "topology.conf" : topology_file_;
    c_->topology_file = topo.is_absolute() ? topo.string() : (dir / topo).string();
    return Status::Ok();
  }

 private:
  Status Scalar(const ConfigPair& p, const std::string& where) {
    const std::string& k = p.key;
    // The key table (config_keys.h) is the list of keys the code knows; the chain below parses
    // the cluster's own, the rest are read by noded or the scheduler.
    const ConfigKey* known = FindConfigKey("tessera.conf", "", k);
    if (!known && k.rfind("priorityweight", 0) == 0) return Status::Ok();  // the scheduler warns
    if (!known) {
      c_->warnings.push_back(where + ": unknown key " + p.raw_key + "; ignored");
      return Status::Ok();
    }
    if (std::string(known->readers) == "ignored") {
      c_->warnings.push_back(where + ": " + p.raw_key + " is a Slurm key Tessera does not implement; ignored");
      return Status::Ok();
    }
    auto client = ApplyClientKey(p, where, c_, &ctld_socket_set_);  // client_config.h
    if (!client.ok() || *client) return client.status();
    if (k == "clustername") { c_->cluster_name = p.value; return Status::Ok(); }
    if (k == "statesavelocation") { c_->state_dir = p.value; return Status::Ok(); }
    if (k == "metricsport" || k == "metricsaddress") return Status::Ok();  // metrics_config.h
    if (k == "controllerwireport") return Status::Ok();  // wire_config.h
    if (k == "slurmdspooldir") { c_->spool_dir = p.value; return Status::Ok(); }
    if (k == "tesseralogdir") { c_->log_dir = p.value; return Status::Ok(); }
    if (k == "topologyplugin" || k == "topologyfile") return Topology(p, where);
    auto secs = [&](int64_t* dst) -> Status {
      auto v = Seconds(where, p);
      if (!v.ok()) return v.status();
      *dst = *v;
      return Status::Ok();
    };
    if (k == "slurmdtimeout") return secs(&c_->node_timeout_s);
    if (k == "heartbeatinterval") return secs(&c_->heartbeat_interval_s);
    if (k == "killwait") return secs(&c_->kill_wait_s);
    if (k == "minjobage") return secs(&c_->min_job_age_s);
    if (k == "schedulerinterval") return secs(&c_->sched_interval_s);
    if (k == "maxarraysize") {
      auto n = ParseUint(p.value, p.raw_key);
      if (!n.ok() || *n == 0 || *n > 4000001) return BadValue(where, p, "expected 1..4000001");
      c_->max_array_size = static_cast<uint32_t>(*n);
      return Status::Ok();
    }
    if (k == "enforcepartlimits") {  // issue 19
      std::string v = ToUpper(p.value);
      if (v == "YES") v = "ANY";
      if (v != "NO" && v != "ANY" && v != "ALL") return BadValue(where, p, "expected NO, ANY, ALL or YES");
      c_->enforce_part_limits = v;
      return Status::Ok();
    }
    if (k == "slurmuser" || k == "tesserauser") { c_->cluster_user = p.value; return Status::Ok(); }
    if (k == "tesseraadmins") { c_->admins = SplitList(p.value); return Status::Ok(); }
    if (k == "tesseraoperators") { c_->operators = SplitList(p.value); return Status::Ok(); }
    return Status::Ok();  // read by tessera-noded or the scheduler (config_keys.cc says which)
  }

  // TopologyPlugin=topology/tree|block|flat|default, TopologyFile=path (issue 15).
  Status Topology(const ConfigPair& p, const std::string& where) {
    if (p.key == "topologyfile") {
      if (p.value.empty()) return BadValue(where, p, "expected a path");
      topology_file_ = p.value;
      return Status::Ok();
    }
    auto kind = ParseTopologyPlugin(p.value);
    if (!kind.ok()) return BadValue(where, p, kind.status().message());
    c_->topology_kind = *kind;
    return Status::Ok();
  }

  Status NodeLine(const ConfigLine& l) {
    const std::string& expr = l.pairs[0].value;
    bool is_default = ToLower(expr) == "default";
    NodeConfig proto = node_default_;
    proto.where = l.Where();
    std::string port_spec;
    for (size_t i = 1; i < l.pairs.size(); ++i) {
      const auto& p = l.pairs[i];
      const std::string& k = p.key;
      if (k == "nodeaddr" || k == "nodehostname") {
        if (k == "nodeaddr") proto.addr = p.value;
      } else if (k == "port") {
        port_spec = p.value;
      } else if (k == "metricsport") {  // issue 20 §3: read by common/metrics_config.h
      } else if (k == "cpus" || k == "procs") {
        auto n = ParseUint(p.value, "CPUs");
        if (!n.ok() || *n == 0 || *n > 65536) return BadValue(l.Where(), p, "expected a CPU count");
        proto.cpus = static_cast<uint32_t>(*n);
      } else if (k == "realmemory") {
        auto n = ParseUint(p.value, "RealMemory");
        if (!n.ok()) return BadValue(l.Where(), p, "expected MiB");
        proto.real_memory_mib = *n;
      } else if (k == "feature" || k == "features") {
        proto.features = SplitList(p.value);
      } else if (k == "gres") {
        proto.gres_gpus.clear();
        TESSERA_RETURN_IF_ERROR(ParseGres(l.Where(), p, &proto.gres_gpus));
      } else if (k == "weight") {
        auto n = ParseUint(p.value, "Weight");
        if (!n.ok()) return BadValue(l.Where(), p, "expected a number");
        proto.weight = static_cast<uint32_t>(*n);
      } else if (k == "state") {
        std::string v = ToLower(p.value);
        if (v != "unknown" && v != "idle" && v != "drain" && v != "down" && v != "future" && v != "cloud")
          return BadValue(l.Where(), p, "expected UNKNOWN, IDLE, DRAIN, DOWN or FUTURE");
        proto.initial_state = (v == "unknown" || v == "idle") ? "" : ToUpper(v);
      } else if (k == "reason") {
        proto.reason = p.value;
      } else if (k == "migstrategy") {
        TESSERA_RETURN_IF_ERROR(MigStrategy(l.Where(), p, &proto.mig_strategy));
      } else if (k == "sockets" || k == "corespersocket" || k == "threadspercore" || k == "boards" ||
                 k == "tmpdisk" || k == "socketsperboard" || k == "corespeccount" || k == "memspeclimit") {
        c_->warnings.push_back(l.Where() + ": " + p.raw_key + " is not used by Tessera (CPUs= counts cores); ignored");
      } else {
        c_->warnings.push_back(l.Where() + ": unknown node key " + p.raw_key + "; ignored");
      }
    }
    if (is_default) {
      if (!port_spec.empty()) {
        auto n = ParseUint(port_spec, "Port");
        if (!n.ok() || *n == 0 || *n > 65535) return InvalidArgument(l.Where() + ": invalid Port \"" + port_spec + "\"");
        proto.port = static_cast<uint16_t>(*n);
      }
      node_default_ = proto;
      return Status::Ok();
    }
    auto names = ExpandHostlist(expr);
    if (!names.ok()) return InvalidArgument(l.Where() + ": " + names.status().message());
    if (names->empty()) return InvalidArgument(l.Where() + ": NodeName is empty");
    std::vector<uint16_t> ports;
    if (!port_spec.empty()) {
      size_t dash = port_spec.find('-');
      auto lo = ParseUint(port_spec.substr(0, dash), "Port");
      auto hi = dash == std::string::npos ? lo : ParseUint(port_spec.substr(dash + 1), "Port");
      if (!lo.ok() || !hi.ok() || *lo == 0 || *hi > 65535 || *hi < *lo)
        return InvalidArgument(l.Where() + ": invalid Port \"" + port_spec + "\"");
      if (dash != std::string::npos && *hi - *lo + 1 != names->size())
        return InvalidArgument(l.Where() + ": Port range " + port_spec + " has " +
                               std::to_string(*hi - *lo + 1) + " ports for " +
                               std::to_string(names->size()) + " nodes");
      for (size_t i = 0; i < names->size(); ++i)
        ports.push_back(static_cast<uint16_t>(dash == std::string::npos ? *lo : *lo + i));
    }
    // NodeAddr: one address for every node, or a hostlist with one address per node (Slurm).
    std::vector<std::string> addrs;
    if (!proto.addr.empty()) {
      auto a = ExpandHostlist(proto.addr);
      if (!a.ok()) return InvalidArgument(l.Where() + ": NodeAddr: " + a.status().message());
      addrs = *a;
      if (addrs.size() != 1 && addrs.size() != names->size())
        return InvalidArgument(l.Where() + ": NodeAddr " + proto.addr + " names " +
                               std::to_string(addrs.size()) + " addresses for " +
                               std::to_string(names->size()) + " nodes");
    }
    for (size_t i = 0; i < names->size(); ++i) {
      NodeConfig n = proto;
      n.name = (*names)[i];
      n.addr = addrs.empty() ? n.name : addrs.size() == 1 ? addrs[0] : addrs[i];
      if (!ports.empty()) n.port = ports[i];
      c_->nodes.push_back(std::move(n));
    }
    return Status::Ok();
  }

  Status PartitionLine(const ConfigLine& l) {
    bool is_default = ToLower(l.pairs[0].value) == "default";
    PartitionConfig p = part_default_;
    p.name = l.pairs[0].value;
    p.where = l.Where();
    p.is_default = false;
    for (size_t i = 1; i < l.pairs.size(); ++i) {
      const auto& kv = l.pairs[i];
      const std::string& k = kv.key;
      if (k == "nodes") {
        p.nodes_expr = kv.value;
        if (ToLower(kv.value) == "all") {
          p.nodes.clear();
          for (const auto& n : c_->nodes) p.nodes.push_back(n.name);
        } else {
          auto names = ExpandHostlist(kv.value);
          if (!names.ok()) return InvalidArgument(l.Where() + ": " + names.status().message());
          p.nodes = *names;
        }
      } else if (k == "default") {
        auto v = YesNo(l.Where(), kv);
        if (!v.ok()) return v.status();
        p.is_default = *v;
      } else if (k == "maxtime" || k == "defaulttime") {
        auto t = ParseTimeLimit(kv.value);
        if (!t.ok()) return BadValue(l.Where(), kv, t.status().message());
        (k == "maxtime" ? p.max_time_s : p.default_time_s) = *t;
      } else if (k == "maxnodes") {
        if (ToLower(kv.value) == "unlimited") { p.max_nodes = 0; continue; }
        auto n = ParseUint(kv.value, "MaxNodes");
        if (!n.ok()) return BadValue(l.Where(), kv, "expected a number or UNLIMITED");
        p.max_nodes = static_cast<uint32_t>(*n);
      } else if (k == "state") {
        std::string v = ToLower(kv.value);
        if (v != "up" && v != "down" && v != "drain" && v != "inactive")
          return BadValue(l.Where(), kv, "expected UP, DOWN, DRAIN or INACTIVE");
        p.up = v == "up";
      } else if (k == "migstrategy") {
        TESSERA_RETURN_IF_ERROR(MigStrategy(l.Where(), kv, &p.mig_strategy));
      } else if (k == "prioritytier") {
        auto n = ParseUint(kv.value, "PriorityTier");
        if (!n.ok()) return BadValue(l.Where(), kv, "expected a number");
        p.priority_tier = static_cast<uint32_t>(*n);
      } else if (k == "preemptmode" || k == "gracetime") {
        // read by the scheduler's config (ctld/sched/preempt_config.h; issue 16 §4)
      } else if (k == "topologymode") {
        std::string v = ToLower(kv.value);
        if (v != "required" && v != "preferred") return BadValue(l.Where(), kv, "expected required or preferred");
        p.topology_required = v == "required";
      } else if (k == "tresbillingweights") {
        continue;  // fair share: read by the scheduler's config (ctld/sched/fairshare.h)
      } else if (k == "gpufailurepolicy") {
        auto pol = ParseGpuFailurePolicy(kv.value);
        if (!pol.ok()) return BadValue(l.Where(), kv, pol.status().message());
        p.gpu_failure_policy = *pol;
      } else {
        c_->warnings.push_back(l.Where() + ": partition key " + kv.raw_key + " is not implemented by Tessera; ignored");
      }
    }
    if (is_default) {
      part_default_ = p;
      return Status::Ok();
    }
    if (c_->FindPartition(p.name)) return InvalidArgument(l.Where() + ": partition " + p.name + " defined twice");
    if (p.nodes.empty()) return InvalidArgument(l.Where() + ": partition " + p.name + " has no Nodes=");
    c_->partitions.push_back(std::move(p));
    return Status::Ok();
  }

  ClusterConfig* c_;
  bool ctld_socket_set_ = false;
  std::string topology_file_;  // TopologyFile= as written
  NodeConfig node_default_;
  PartitionConfig part_default_;
};

}  // namespace

Result<GpuFailurePolicy> ParseGpuFailurePolicy(const std::string& text) {
  std::string v = ToLower(text);
  if (v == "requeue") return GpuFailurePolicy::kRequeue;
  if (v == "fail") return GpuFailurePolicy::kFail;
  if (v == "ignore") return GpuFailurePolicy::kIgnore;
  return InvalidArgument("expected requeue, fail or ignore");
}

const char* GpuFailurePolicyName(GpuFailurePolicy p) {
  switch (p) {
    case GpuFailurePolicy::kFail: return "fail";
    case GpuFailurePolicy::kIgnore: return "ignore";
    default: return "requeue";
  }
}

namespace {

Status GresLine(const ConfigLine& l, ClusterConfig* c) {
  std::vector<std::string> nodes;
  GpuDecl d;
  d.where = l.Where();
  std::string name;
  for (const auto& p : l.pairs) {
    if (p.key == "nodename") {
      auto n = ExpandHostlist(p.value);
      if (!n.ok()) return InvalidArgument(l.Where() + ": " + n.status().message());
      nodes = *n;
    } else if (p.key == "name") {
      name = p.value;
    } else if (p.key == "type") {
      d.model = p.value;
    } else if (p.key == "count") {
      auto n = ParseUint(p.value, "Count");
      if (!n.ok() || *n > 64) return BadValue(l.Where(), p, "expected 1..64");
      d.count = static_cast<uint32_t>(*n);
    } else if (p.key == "memorymib") {
      auto n = ParseUint(p.value, "MemoryMiB");
      if (!n.ok()) return BadValue(l.Where(), p, "expected MiB");
      d.memory_mib = *n;
    } else if (p.key == "simulated") {
      auto v = YesNo(l.Where(), p);
      if (!v.ok()) return v.status();
      d.simulated = *v;
    } else if (p.key == "mps") {  // GPU sharing: the scheduler uses it too (issue 14 §3)
      auto v = YesNo(l.Where(), p);
      if (!v.ok()) return v.status();
      d.mps = *v;
    } else if (p.key == "replicas") {
      auto n = ParseUint(p.value, "Replicas");
      if (!n.ok() || *n > 64) return BadValue(l.Where(), p, "expected 0..64");
      d.replicas = static_cast<uint32_t>(*n);
    } else if (p.key == "file" || p.key == "autodetect" || p.key == "cores" || p.key == "links" ||
               p.key == "migenabled" || p.key == "miglayout" || p.key == "numanode") {
      // Device files, affinity, MIG layout and sharing: read by noded's GPU backends.
    } else {
      c->warnings.push_back(l.Where() + ": unknown gres.conf key " + p.raw_key + "; ignored");
    }
  }
  // A global line such as `AutoDetect=nvml` declares no GRES of its own; noded reads it.
  if (name.empty() && nodes.empty() && l.Find("autodetect")) return Status::Ok();
  if (name != "gpu") return InvalidArgument(l.Where() + ": only Name=gpu, Name=mps and Name=shard are supported in gres.conf");
  if (nodes.empty()) return InvalidArgument(l.Where() + ": gres.conf line needs NodeName=");
  if (d.count == 0) return InvalidArgument(l.Where() + ": gres.conf line needs Count=");
  for (const auto& n : nodes) {
    if (!c->FindNode(n)) return InvalidArgument(l.Where() + ": unknown node " + n);
    c->gpus[n].push_back(d);
  }
  return Status::Ok();
}

}  // namespace

const NodeConfig* ClusterConfig::FindNode(const std::string& name) const {
  for (const auto& n : nodes)
    if (n.name == name) return &n;
  return nullptr;
}

const PartitionConfig* ClusterConfig::FindPartition(const std::string& name) const {
  for (const auto& p : partitions)
    if (p.name == name) return &p;
  return nullptr;
}

const PartitionConfig* ClusterConfig::DefaultPartition() const {
  for (const auto& p : partitions)
    if (p.is_default) return &p;
  return partitions.empty() ? nullptr : &partitions.front();
}

bool ClusterConfig::MigDynamic(const std::string& node) const {
  const NodeConfig* n = FindNode(node);
  if (!n) return false;
  if (!n->mig_strategy.empty()) return n->mig_strategy == "dynamic";
  for (const auto& p : partitions)
    if (p.mig_strategy == "dynamic" &&
        std::find(p.nodes.begin(), p.nodes.end(), node) != p.nodes.end())
      return true;
  return false;
}

int64_t ClusterConfig::HeartbeatInterval() const {
  if (heartbeat_interval_s > 0) return heartbeat_interval_s;
  return std::max<int64_t>(1, node_timeout_s / 3);
}

std::string ClusterConfig::SpoolDirFor(const std::string& node) const {
  std::string s = spool_dir;
  for (size_t pos; (pos = s.find("%n")) != std::string::npos;) s.replace(pos, 2, node);
  return s;
}

Result<ClusterConfig> BuildClusterConfig(const std::vector<ConfigLine>& lines,
                                         const std::vector<ConfigLine>& gres_lines) {
  ClusterConfig c;
  if (!lines.empty()) c.path = lines.front().file;
  Builder b(&c);
  for (const auto& l : lines) TESSERA_RETURN_IF_ERROR(b.Line(l));
  TESSERA_RETURN_IF_ERROR(b.Finish());
  TESSERA_RETURN_IF_ERROR(ReadMetricsSettings(lines).status());  // issue 20 §3: checked here
  TESSERA_RETURN_IF_ERROR(ReadWirePort(lines, c.TlsEnabled()).status());  // issue 20 §1
  std::vector<ConfigLine> shares;  // Name=mps / Name=shard: once every GPU line is known
  for (const auto& l : gres_lines) {
    if (IsGresShareLine(l)) shares.push_back(l);
    else TESSERA_RETURN_IF_ERROR(GresLine(l, &c));
  }
  TESSERA_RETURN_IF_ERROR(ApplyGresShareLines(shares, &c));
  return c;
}

Result<ClusterConfig> LoadClusterConfig(const std::string& path) {
  auto lines = ParseConfigFile(path);
  if (!lines.ok()) return lines.status();
  std::vector<ConfigLine> gres;
  auto gres_path = std::filesystem::path(path).parent_path() / "gres.conf";
  if (std::filesystem::exists(gres_path)) {
    auto g = ParseConfigFile(gres_path.string());
    if (!g.ok()) return g.status();
    gres = std::move(*g);
  }
  auto c = BuildClusterConfig(*lines, gres);
  if (c.ok()) c->path = path;
  return c;
}

std::string DefaultConfigPath() {
  const char* env = std::getenv("TESSERA_CONF");
  return env && *env ? env : "/etc/tessera/tessera.conf";
}

}  // namespace tessera
