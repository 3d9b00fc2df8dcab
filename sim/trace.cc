#include "sim/trace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/config_file.h"

namespace tessera::sim {
namespace {

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == ',') { out.push_back(cur); cur.clear(); }
    else if (c != '\r') cur += c;
  }
  out.push_back(cur);
  return out;
}

Status LineErr(const std::string& path, int no, const std::string& what) {
  return InvalidArgument(path + ":" + std::to_string(no) + ": " + what);
}

bool ToInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (*end || !std::isfinite(d)) return false;
  *out = static_cast<int64_t>(d);
  return true;
}

void SortBySubmit(std::vector<TraceJob>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
}

}  // namespace

Result<std::vector<TraceJob>> ReadSwf(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open trace " + path);
  std::vector<TraceJob> jobs;
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == ';') continue;
    std::istringstream ls(line);
    std::vector<int64_t> f;
    for (std::string w; ls >> w;) {
      int64_t v;
      if (!ToInt(w, &v)) return LineErr(path, no, "field " + std::to_string(f.size() + 1) + " \"" + w + "\" is not a number");
      f.push_back(v);
    }
    if (f.size() < 18) return LineErr(path, no, "SWF needs 18 fields, found " + std::to_string(f.size()));
    TraceJob j;
    j.id = static_cast<uint64_t>(f[0]);
    j.submit = f[1];
    j.runtime = f[3];
    int64_t procs = f[7] > 0 ? f[7] : f[4];
    if (procs <= 0) return LineErr(path, no, "no processor count (fields 5 and 8 are -1)");
    if (j.runtime < 0) continue;  // cancelled before start: nothing to replay
    j.cpus = static_cast<uint32_t>(procs);
    j.req_time = f[8] > 0 ? f[8] : 0;
    j.user = "u" + std::to_string(f[11]);
    j.account = "g" + std::to_string(f[12]);
    jobs.push_back(j);
  }
  SortBySubmit(jobs);
  return jobs;
}

Result<std::vector<TraceJob>> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open trace " + path);
  std::vector<TraceJob> jobs;
  std::string line;
  std::getline(in, line);
  if (line.rfind("submit,", 0) != 0)
    return LineErr(path, 1, "expected the header submit,runtime,req_time,gpus,cpus,mem_mib,nodes,user,account,partition,qos[,gpu_model]");
  for (int no = 2; std::getline(in, line); ++no) {
    if (line.empty() || line == "\r") continue;
    auto c = SplitCsv(line);
    if (c.size() < 11) return LineErr(path, no, "expected at least 11 columns, found " + std::to_string(c.size()));
    static const char* kNames[] = {"submit", "runtime", "req_time", "gpus", "cpus", "mem_mib", "nodes"};
    int64_t v[7];
    for (int i = 0; i < 7; ++i)
      if (!ToInt(c[static_cast<size_t>(i)], &v[i]) || v[i] < 0)
        return LineErr(path, no, std::string(kNames[i]) + " \"" + c[static_cast<size_t>(i)] + "\" is not a non-negative number");
    TraceJob j;
    j.id = jobs.size() + 1;
    j.submit = v[0], j.runtime = v[1], j.req_time = v[2];
    j.gpus = static_cast<uint32_t>(v[3]);
    j.cpus = static_cast<uint32_t>(std::max<int64_t>(1, v[4]));
    j.mem_mib = static_cast<uint64_t>(v[5]);
    j.nodes = static_cast<uint32_t>(v[6]);
    j.user = c[7], j.account = c[8], j.partition = c[9], j.qos = c[10];
    if (c.size() > 11) j.gpu_model = c[11];
    jobs.push_back(j);
  }
  SortBySubmit(jobs);
  return jobs;
}

Result<std::vector<TraceJob>> ReadOpenb(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open trace " + path);
  std::vector<TraceJob> jobs;
  std::string line;
  std::getline(in, line);
  if (line.rfind("name,cpu_milli,memory_mib,num_gpu", 0) != 0 || line.find("creation_time") == std::string::npos)
    return LineErr(path, 1, "not an openb pod list with times (expected name,cpu_milli,memory_mib,num_gpu,...,creation_time,...)");
  for (int no = 2; std::getline(in, line); ++no) {
    if (line.empty() || line == "\r") continue;
    auto c = SplitCsv(line);
    if (c.size() < 11) return LineErr(path, no, "expected 11 columns, found " + std::to_string(c.size()));
    int64_t cpu_milli, mem, gpus, created, deleted, scheduled = 0;
    if (!ToInt(c[1], &cpu_milli) || !ToInt(c[2], &mem) || !ToInt(c[3], &gpus) || !ToInt(c[8], &created) ||
        !ToInt(c[9], &deleted) || gpus < 0 || cpu_milli < 0)
      return LineErr(path, no, "bad number in cpu_milli/memory_mib/num_gpu/creation_time/deletion_time");
    if (!c[10].empty() && !ToInt(c[10], &scheduled)) return LineErr(path, no, "bad scheduled_time \"" + c[10] + "\"");
    int64_t began = c[10].empty() ? created : scheduled;
    TraceJob j;
    j.id = jobs.size() + 1;
    j.submit = created;
    j.runtime = std::max<int64_t>(1, deleted - began);
    j.cpus = static_cast<uint32_t>(std::max<int64_t>(1, (cpu_milli + 999) / 1000));
    j.mem_mib = static_cast<uint64_t>(std::max<int64_t>(0, mem));
    j.gpus = static_cast<uint32_t>(gpus);
    if (!c[5].empty() && gpus > 0) j.constraint = c[5];
    j.qos = ToLower(c[6]);
    j.account = j.qos;
    j.user = j.qos;
    jobs.push_back(j);
  }
  SortBySubmit(jobs);
  return jobs;
}

Result<std::vector<TraceJob>> ReadTrace(const std::string& path, const std::string& format) {
  std::string f = format;
  if (f.empty()) {
    if (path.size() > 4 && path.substr(path.size() - 4) == ".swf") f = "swf";
    else if (path.find("openb_pod_list") != std::string::npos) f = "openb";
    else f = "csv";
  }
  if (f == "swf") return ReadSwf(path);
  if (f == "csv") return ReadCsv(path);
  if (f == "openb") return ReadOpenb(path);
  return InvalidArgument("unknown trace format \"" + format + "\" (swf, csv, openb)");
}

Result<std::string> OpenbNodesToConf(const std::string& node_csv) {
  std::ifstream in(node_csv);
  if (!in) return NotFound("cannot open " + node_csv);
  std::string line;
  std::getline(in, line);
  if (line.rfind("sn,cpu_milli,memory_mib,gpu,model", 0) != 0)
    return LineErr(node_csv, 1, "expected the header sn,cpu_milli,memory_mib,gpu,model");
  std::ostringstream out;
  out << "# Generated by tessera-sim --openb-nodes from " << node_csv << "\nClusterName=openb\n";
  std::vector<std::string> names;
  for (int no = 2; std::getline(in, line); ++no) {
    if (line.empty() || line == "\r") continue;
    auto c = SplitCsv(line);
    int64_t cpu, mem, gpus;
    if (c.size() < 5 || !ToInt(c[1], &cpu) || !ToInt(c[2], &mem) || !ToInt(c[3], &gpus))
      return LineErr(node_csv, no, "expected sn,cpu_milli,memory_mib,gpu,model");
    out << "NodeName=" << c[0] << " CPUs=" << std::max<int64_t>(1, cpu / 1000) << " RealMemory=" << mem;
    if (gpus > 0) out << " Gres=gpu:" << c[4] << ":" << gpus << " Features=" << c[4];
    out << "\n";
    names.push_back(c[0]);
  }
  out << "PartitionName=main Default=YES State=UP MaxTime=UNLIMITED Nodes=";
  for (size_t i = 0; i < names.size(); ++i) out << (i ? "," : "") << names[i];
  out << "\nPriorityWeightQOS=1000\nPriorityWeightAge=100\nQOSName=ls Priority=100\nQOSName=guaranteed Priority=100\nQOSName=burstable Priority=50\n"
         "QOSName=be Priority=0\nQOSName=normal Priority=0 Default=YES\n";
  return out.str();
}

}  // namespace tessera::sim
