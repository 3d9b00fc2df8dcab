#include "tests/unit/sched/scenario.h"
#include "tests/unit/sched/scenario_preempt.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/config_file.h"
#include "common/duration.h"
#include "common/hostlist.h"
#include "tests/unit/sched/scenario_fairshare.h"
#include "tests/unit/sched/scenario_queues.h"

namespace tessera::sched::testing {
namespace {

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::map<std::string, std::string> KeyVals(const std::vector<std::string>& w, size_t from) {
  std::map<std::string, std::string> kv;
  for (size_t i = from; i < w.size(); ++i) {
    size_t eq = w[i].find('=');
    kv[w[i].substr(0, eq)] = eq == std::string::npos ? "yes" : w[i].substr(eq + 1);
  }
  return kv;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) { if (!cur.empty()) out.push_back(cur); cur.clear(); }
    else cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

class Parser {
 public:
  explicit Parser(std::string file) { sc_.file = std::move(file); }
  Status Line(int no, const std::string& raw);
  Status Finish();
  Scenario& scenario() { return sc_; }

 private:
  Status Err(const std::string& m) const { return InvalidArgument(sc_.file + ":" + std::to_string(no_) + ": " + m); }
  Result<uint64_t> Num(const std::string& v, const std::string& what) const {
    auto n = ParseUint(v, what);
    if (!n.ok()) return Err("bad " + what + " \"" + v + "\"");
    return *n;
  }
  Status Node(const std::vector<std::string>& w);
  Status Partition(const std::vector<std::string>& w);
  Status Job(const std::vector<std::string>& w, bool group);
  Status Running(const std::vector<std::string>& w);
  Status Group(GroupReq& g, const std::map<std::string, std::string>& kv);

  Scenario sc_;
  int no_ = 0;
};

Status Parser::Line(int no, const std::string& raw) {
  no_ = no;
  std::string s = raw.substr(0, raw.find('#'));
  auto w = Words(s);
  if (w.empty()) return Status::Ok();
  const std::string& k = w[0];
  if (k == "name:") { sc_.name = s.substr(s.find(':') + 1); return Status::Ok(); }
  if (k == "now") { auto n = Num(w.size() > 1 ? w[1] : "", "now"); if (!n.ok()) return n.status(); sc_.snap.now = static_cast<int64_t>(*n); return Status::Ok(); }
  if (k == "config") { sc_.config_text.push_back(s.substr(s.find("config") + 6)); return Status::Ok(); }
  if (k == "node") return Node(w);
  if (k == "partition") return Partition(w);
  if (k == "job") return Job(w, false);
  if (k == "group") return Job(w, true);
  if (k == "running") return Running(w);
  if (k == "resv") { sc_.resv_lines.emplace_back(no, s.substr(s.find("resv") + 4)); return Status::Ok(); }
  if (k == "topology") return ScenarioTopologyLine(sc_, s.substr(s.find("topology") + 8), sc_.file + ":" + std::to_string(no));
  if (auto fs = FairshareScenarioLine(w, sc_); !fs.ok() || *fs)  // fair share (issue 16)
    return fs.ok() ? Status::Ok() : Err(fs.status().message());
  if (auto q = QueueScenarioLine(w, sc_); !q.ok() || *q)  // queues (issue 16 §2)
    return q.ok() ? Status::Ok() : Err(q.status().message());
  if (k == "finished") {
    if (w.size() != 3) return Err("finished ID ok|failed");
    auto n = Num(w[1], "job id");
    if (!n.ok()) return n.status();
    sc_.snap.finished.push_back({*n, w[2] == "ok"});
    return Status::Ok();
  }
  if (k == "expect") {
    if (w.size() < 2) return Err("expect KIND ...");
    Expect e{w[1], 0, {}, no};
    size_t i = 2;
    if (e.kind != "config_error" && !TopologyExpectHasNoJob(e.kind) && !QueueExpectHasNoJob(e.kind) &&
        !ResvExpectHasNoJob(e.kind)) {
      if (w.size() < 3) return Err("expect " + e.kind + " needs a job id");
      auto n = Num(w[2], "job id");
      if (!n.ok()) return n.status();
      e.job = *n;
      i = 3;
    }
    e.args.assign(w.begin() + static_cast<long>(i), w.end());
    sc_.expects.push_back(e);
    return Status::Ok();
  }
  return Err("unknown line kind \"" + k + "\"");
}

Status Parser::Node(const std::vector<std::string>& w) {
  if (w.size() < 2) return Err("node NAMES key=value...");
  auto names = ExpandHostlist(w[1]);
  if (!names.ok()) return Err(names.status().message());
  auto kv = KeyVals(w, 2);
  for (const auto& name : *names) {
    NodeSnap n;
    n.name = name;
    for (const auto& [key, v] : kv) {
      if (key == "cpus") { auto x = Num(v, "cpus"); if (!x.ok()) return x.status(); n.cpus_total = static_cast<uint32_t>(*x); }
      else if (key == "mem") { auto m = ParseMemMiB(v); if (!m.ok()) return Err("bad mem " + v); n.mem_total = *m; }
      else if (key == "gpus") {
        for (const auto& spec : Split(v, ',')) {
          size_t c = spec.rfind(':');
          std::string model = c == std::string::npos ? "" : spec.substr(0, c);
          auto x = Num(c == std::string::npos ? spec : spec.substr(c + 1), "gpus");
          if (!x.ok()) return x.status();
          for (uint64_t i = 0; i < *x; ++i) n.gpus.push_back({static_cast<uint32_t>(n.gpus.size()), model, true, true});
        }
      }
      else if (key == "features") n.features = Split(v, ',');
      else if (key == "partitions") n.partitions = Split(v, ',');
      else if (key == "state") n.schedulable = v != "down" && v != "drain";
      else if (key == "weight") { auto x = Num(v, "weight"); if (!x.ok()) return x.status(); n.weight = static_cast<uint32_t>(*x); }
      else return Err("unknown node key " + key);
    }
    if (n.mem_total == 0) n.mem_total = 1000ull * n.cpus_total;
    n.cpus_free = n.cpus_total;
    n.mem_free = n.mem_total;
    sc_.snap.nodes.push_back(std::move(n));
  }
  return Status::Ok();
}

Status Parser::Partition(const std::vector<std::string>& w) {
  if (w.size() < 2) return Err("partition NAME key=value...");
  PartitionSnap p;
  p.name = w[1];
  for (const auto& [key, v] : KeyVals(w, 2)) {
    if (key == "state") p.up = v == "up";
    else if (key == "maxnodes") { auto x = Num(v, "maxnodes"); if (!x.ok()) return x.status(); p.max_nodes = static_cast<uint32_t>(*x); }
    else if (key == "maxtime" || key == "defaulttime") {
      auto t = ParseTimeLimit(v);
      if (!t.ok()) return Err("bad time " + v);
      (key == "maxtime" ? p.max_time : p.default_time) = *t;
    } else if (key == "tier") { auto x = Num(v, "tier"); if (!x.ok()) return x.status(); p.priority_tier = static_cast<uint32_t>(*x); }
    else if (std::string why; ScenarioTopologyPartitionKey(key, v, p, &why)) { if (!why.empty()) return Err(why); }
    else return Err("unknown partition key " + key);
  }
  sc_.snap.partitions.push_back(p);
  return Status::Ok();
}

Status Parser::Group(GroupReq& g, const std::map<std::string, std::string>& kv) {
  for (const auto& [key, v] : kv) {
    auto num = [&](uint32_t* dst) -> Status {
      auto x = Num(v, key);
      if (!x.ok()) return x.status();
      *dst = static_cast<uint32_t>(*x);
      return Status::Ok();
    };
    if (key == "tasks") TESSERA_RETURN_IF_ERROR(num(&g.count));
    else if (key == "cpus") TESSERA_RETURN_IF_ERROR(num(&g.per_task.cpus));
    else if (key == "gpus") TESSERA_RETURN_IF_ERROR(num(&g.per_task.gpus));
    else if (key == "node_gpus") TESSERA_RETURN_IF_ERROR(num(&g.per_node.gpus));
    else if (key == "node_cpus") TESSERA_RETURN_IF_ERROR(num(&g.per_node.cpus));
    else if (key == "tpn") TESSERA_RETURN_IF_ERROR(num(&g.tasks_per_node));
    else if (key == "model") g.per_task.gpu_model = g.per_node.gpu_model = v;
    else if (key == "mem") { auto m = ParseMemMiB(v); if (!m.ok()) return Err("bad mem " + v); g.per_task.mem_mib = *m; }
    else if (key == "name") g.name = v;
    else continue;
  }
  return Status::Ok();
}

Status Parser::Job(const std::vector<std::string>& w, bool group) {
  if (w.size() < 2) return Err("job ID key=value...");
  auto id = Num(w[1], "job id");
  if (!id.ok()) return id.status();
  auto kv = KeyVals(w, 2);
  if (group) {
    for (auto& j : sc_.snap.pending)
      if (j.id == *id) {
        j.groups.emplace_back();
        return Group(j.groups.back(), kv);
      }
    return Err("group for unknown job " + w[1]);
  }
  JobSnap j;
  j.id = *id;
  j.submit_time = static_cast<int64_t>(*id);
  j.user = "u";
  j.partition = sc_.snap.partitions.empty() ? "" : sc_.snap.partitions[0].name;
  j.groups.emplace_back();
  TESSERA_RETURN_IF_ERROR(Group(j.groups[0], kv));
  static const std::set<std::string> kGroupKeys = {"tasks", "cpus", "gpus", "node_gpus", "node_cpus", "tpn", "model", "mem", "name"};
  for (const auto& [key, v] : kv) {
    if (kGroupKeys.count(key)) {
      if (key == "name") j.name = v;
      continue;
    }
    auto i64 = [&](int64_t* dst) -> Status {
      auto x = Num(v, key);
      if (!x.ok()) return x.status();
      *dst = static_cast<int64_t>(*x);
      return Status::Ok();
    };
    if (key == "partition") j.partition = v;
    else if (key == "user") j.user = v;
    else if (key == "account") j.account = v;
    else if (key == "qos") j.qos = v;
    else if (key == "submit") TESSERA_RETURN_IF_ERROR(i64(&j.submit_time));
    else if (key == "eligible") TESSERA_RETURN_IF_ERROR(i64(&j.eligible_time));
    else if (key == "begin") TESSERA_RETURN_IF_ERROR(i64(&j.begin_time));
    else if (key == "priority") TESSERA_RETURN_IF_ERROR(i64(&j.priority));
    else if (key == "nice") { int64_t n = 0; TESSERA_RETURN_IF_ERROR(i64(&n)); j.nice = static_cast<int32_t>(n); }
    else if (key == "gang") { auto x = Num(v, key); if (!x.ok()) return x.status(); j.gang_min = static_cast<uint32_t>(*x); }
    else if (key == "time") { auto t = ParseTimeLimit(v); if (!t.ok()) return Err("bad time " + v); j.time_limit = *t; }
    else if (key == "nodes") {
      auto parts = Split(v, '-');
      auto lo = Num(parts.empty() ? "" : parts[0], "nodes");
      if (!lo.ok()) return lo.status();
      j.nodes_min = static_cast<uint32_t>(*lo);
      if (parts.size() > 1) { auto hi = Num(parts[1], "nodes"); if (!hi.ok()) return hi.status(); j.nodes_max = static_cast<uint32_t>(*hi); }
    }
    else if (key == "constraint") j.constraint = v;
    else if (key == "dep") j.dependency = v;
    else if (key == "hold") j.hold_reason = v;
    else if (key == "resv") j.reservation = v;  // issue 17 §1
    else if (key == "exclusive") j.exclusive = true;
    else if (key == "nodelist" || key == "exclude") {
      auto h = ExpandHostlist(v);
      if (!h.ok()) return Err(h.status().message());
      (key == "nodelist" ? j.nodelist : j.exclude) = *h;
    } else if (key == "array") {  // ARRAYID_INDEX[%MAX]
      size_t us = v.find('_'), pc = v.find('%');
      auto a = Num(v.substr(0, us), "array id");
      if (!a.ok() || us == std::string::npos) return Err("array=ARRAYID_INDEX[%MAX]");
      j.array_job_id = *a;
      auto ix = Num(v.substr(us + 1, pc == std::string::npos ? std::string::npos : pc - us - 1), "array index");
      if (!ix.ok()) return ix.status();
      j.array_task_id = static_cast<uint32_t>(*ix);
      if (pc != std::string::npos) { auto m = Num(v.substr(pc + 1), "array max"); if (!m.ok()) return m.status(); j.array_max_running = static_cast<uint32_t>(*m); }
    } else if (std::string why; ScenarioTopologyJobKey(key, v, j, &why)) {
      if (!why.empty()) return Err(why);
    } else return Err("unknown job key " + key);
  }
  sc_.snap.pending.push_back(std::move(j));
  return Status::Ok();
}

// running ID nodes=n1:cpus=4:gpus=2:mem=1G,n2:cpus=4 end=T [user= qos= account= name= array=]
Status Parser::Running(const std::vector<std::string>& w) {
  if (w.size() < 2) return Err("running ID key=value...");
  auto id = Num(w[1], "job id");
  if (!id.ok()) return id.status();
  RunningSnap r;
  r.id = *id;
  r.user = "u";
  for (const auto& [key, v] : KeyVals(w, 2)) {
    if (key == "nodes") {
      for (const auto& spec : Split(v, ',')) {
        auto f = Split(spec, ':');
        NodeUse u;
        u.node = f[0];
        for (size_t i = 1; i < f.size(); ++i) {
          size_t eq = f[i].find('=');
          std::string k = f[i].substr(0, eq), val = eq == std::string::npos ? "" : f[i].substr(eq + 1);
          if (k == "mem") { auto m = ParseMemMiB(val); if (!m.ok()) return Err("bad mem " + val); u.mem_mib = *m; continue; }
          auto x = Num(val, k);
          if (!x.ok()) return x.status();
          if (k == "cpus") u.cpus = static_cast<uint32_t>(*x);
          else if (k == "gpus") u.gpus = static_cast<uint32_t>(*x);
          else return Err("unknown node use key " + k);
        }
        r.nodes.push_back(u);
      }
    } else if (key == "end") { auto x = Num(v, "end"); if (!x.ok()) return x.status(); r.end_time = static_cast<int64_t>(*x); }
    else if (key == "user") r.user = v;
    else if (key == "qos") r.qos = v;
    else if (key == "account") r.account = v;
    else if (key == "name") r.name = v;
    else if (key == "partition") r.partition = v;
    else if (key == "array") { auto x = Num(v, "array"); if (!x.ok()) return x.status(); r.array_job_id = *x; }
    else if (std::string err; RunningPreemptKey(r, key, v, &err)) { if (!err.empty()) return Err(err); }  // issue 16 §4
    else return Err("unknown running key " + key);
  }
  sc_.snap.running.push_back(r);
  return Status::Ok();
}

// Applies running jobs to the nodes' free resources.
Status Parser::Finish() {
  for (auto& r : sc_.snap.running)
    for (auto& u : r.nodes) {
      auto it = std::find_if(sc_.snap.nodes.begin(), sc_.snap.nodes.end(), [&](const NodeSnap& n) { return n.name == u.node; });
      if (it == sc_.snap.nodes.end()) return InvalidArgument(sc_.file + ": running job " + std::to_string(r.id) + " on unknown node " + u.node);
      if (u.cpus > it->cpus_free) return InvalidArgument(sc_.file + ": running job " + std::to_string(r.id) + " overcommits " + u.node);
      it->cpus_free -= u.cpus;
      uint64_t mem = u.mem_mib ? u.mem_mib : it->mem_total * u.cpus / std::max<uint32_t>(1, it->cpus_total);
      u.mem_mib = mem;  // the timeline returns exactly what the job holds
      it->mem_free -= std::min(it->mem_free, mem);
      uint32_t g = u.gpus;
      for (auto& gpu : it->gpus)
        if (g > 0 && gpu.free) gpu.free = false, --g;
      it->idle = false;
    }
  return Status::Ok();
}

}  // namespace

Result<Scenario> ParseScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open " + path);
  Parser p(path);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) TESSERA_RETURN_IF_ERROR(p.Line(no, line));
  TESSERA_RETURN_IF_ERROR(p.Finish());
  TESSERA_RETURN_IF_ERROR(FinishScenarioTopology(p.scenario()));
  TESSERA_RETURN_IF_ERROR(FinishScenarioResv(p.scenario()));
  return std::move(p.scenario());
}

}  // namespace tessera::sched::testing
