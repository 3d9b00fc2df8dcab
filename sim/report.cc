#include "sim/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>

namespace tessera::sim {
namespace {

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::ceil(q * double(v.size()))) ;
  return v[std::min(v.size() - 1, i ? i - 1 : 0)];
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / double(v.size());
}

std::string Esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

}  // namespace

Metrics Compute(const SimRun& run) {
  Metrics m;
  m.label = run.label;
  m.jobs = run.jobs.size();
  std::vector<double> waits, slow, jct;
  double gpu_s = 0, cpu_s = 0, mem_s = 0;
  std::map<std::string, double> by_account;
  for (const auto& j : run.jobs) {
    if (!j.rejected.empty()) { ++m.rejected; continue; }
    if (j.start < 0) { ++m.never_started; continue; }
    ++m.started;
    double wait = double(j.start - j.trace.submit), ran = double(j.end - j.start - j.suspended_s);
    waits.push_back(wait);
    slow.push_back(std::max(1.0, (wait + ran) / std::max(ran, 10.0)));
    jct.push_back(double(j.end - j.trace.submit));
    gpu_s += ran * j.gpus;
    cpu_s += ran * j.cpus;
    mem_s += ran * double(j.gpu_mem_mib);
    by_account[j.trace.account] += run.total_gpus ? ran * j.gpus : ran * j.cpus;
  }
  m.makespan = std::max<int64_t>(0, run.last_end - run.first_submit);
  if (m.makespan > 0) {
    if (run.total_gpus) m.gpu_util = gpu_s / (double(run.total_gpus) * double(m.makespan));
    if (run.total_cpus) m.cpu_util = cpu_s / (double(run.total_cpus) * double(m.makespan));
    if (run.total_gpu_mem_mib)
      m.gpu_mem_util = mem_s / (double(run.total_gpu_mem_mib) * double(m.makespan));
  }
  m.mig_reconfigs = run.mig_reconfigs;
  m.preemptions = run.preemptions;
  m.wait_mean = Mean(waits);
  m.wait_p50 = Quantile(waits, 0.5);
  m.wait_p95 = Quantile(waits, 0.95);
  m.wait_max = waits.empty() ? 0 : *std::max_element(waits.begin(), waits.end());
  m.bounded_slowdown = Mean(slow);
  m.jct_mean = Mean(jct);
  double total = 0;
  for (const auto& [a, v] : by_account) total += v;
  for (const auto& [a, v] : by_account) m.account_share[a] = total > 0 ? v / total : 0;
  m.cycles = run.cycle_ms.size();
  m.cycle_mean_ms = Mean(run.cycle_ms);
  m.cycle_p99_ms = Quantile(run.cycle_ms, 0.99);
  return m;
}

void PrintTable(std::ostream& out, const std::vector<Metrics>& runs) {
  auto row = [&](const std::string& name, auto get, int prec) {
    out << std::left << std::setw(22) << name;
    for (const auto& m : runs) out << std::right << std::setw(16) << std::fixed << std::setprecision(prec) << get(m);
    out << "\n";
  };
  out << std::left << std::setw(22) << "metric";
  for (const auto& m : runs) out << std::right << std::setw(16) << m.label;
  out << "\n";
  row("jobs", [](const Metrics& m) { return double(m.jobs); }, 0);
  row("started", [](const Metrics& m) { return double(m.started); }, 0);
  row("rejected at submit", [](const Metrics& m) { return double(m.rejected); }, 0);
  row("never started", [](const Metrics& m) { return double(m.never_started); }, 0);
  row("GPU utilization %", [](const Metrics& m) { return 100 * m.gpu_util; }, 2);
  row("CPU utilization %", [](const Metrics& m) { return 100 * m.cpu_util; }, 2);
  bool mem = false;
  for (const auto& m : runs) mem = mem || m.gpu_mem_util >= 0;
  if (mem) {
    row("GPU-mem utilization %", [](const Metrics& m) { return 100 * std::max(0.0, m.gpu_mem_util); }, 2);
    row("MIG reconfigurations", [](const Metrics& m) { return double(m.mig_reconfigs); }, 0);
  }
  std::map<std::string, bool> modes;  // issue 16 §4
  for (const auto& m : runs)
    for (const auto& [mode, n] : m.preemptions) modes[mode] = true;
  for (const auto& [mode, any] : modes)
    row("preempted " + mode, [&](const Metrics& m) {
      auto it = m.preemptions.find(mode);
      return it == m.preemptions.end() ? 0.0 : double(it->second);
    }, 0);
  row("wait mean s", [](const Metrics& m) { return m.wait_mean; }, 0);
  row("wait p50 s", [](const Metrics& m) { return m.wait_p50; }, 0);
  row("wait p95 s", [](const Metrics& m) { return m.wait_p95; }, 0);
  row("wait max s", [](const Metrics& m) { return m.wait_max; }, 0);
  row("bounded slowdown", [](const Metrics& m) { return m.bounded_slowdown; }, 2);
  row("job completion mean s", [](const Metrics& m) { return m.jct_mean; }, 0);
  row("makespan s", [](const Metrics& m) { return double(m.makespan); }, 0);
  row("cycles", [](const Metrics& m) { return double(m.cycles); }, 0);
  row("cycle mean ms", [](const Metrics& m) { return m.cycle_mean_ms; }, 3);
  row("cycle p99 ms", [](const Metrics& m) { return m.cycle_p99_ms; }, 3);
  if (!runs.empty())
    for (const auto& [acct, share] : runs[0].account_share)
      row("share " + acct + " %", [&](const Metrics& m) {
        auto it = m.account_share.find(acct);
        return it == m.account_share.end() ? 0.0 : 100 * it->second;
      }, 2);
}

void PrintJson(std::ostream& out, const std::vector<Metrics>& runs) {
  out << "{\"runs\": [";
  for (size_t i = 0; i < runs.size(); ++i) {
    const Metrics& m = runs[i];
    out << (i ? ", " : "") << "{\"label\": \"" << Esc(m.label) << "\", \"jobs\": " << m.jobs
        << ", \"started\": " << m.started << ", \"rejected\": " << m.rejected
        << ", \"never_started\": " << m.never_started << ", \"gpu_utilization\": " << m.gpu_util
        << ", \"cpu_utilization\": " << m.cpu_util << ", \"gpu_mem_utilization\": " << m.gpu_mem_util
        << ", \"mig_reconfigurations\": " << m.mig_reconfigs << ", \"wait_s\": {\"mean\": " << m.wait_mean
        << ", \"p50\": " << m.wait_p50 << ", \"p95\": " << m.wait_p95 << ", \"max\": " << m.wait_max
        << "}, \"bounded_slowdown\": " << m.bounded_slowdown << ", \"jct_mean_s\": " << m.jct_mean
        << ", \"makespan_s\": " << m.makespan << ", \"cycles\": " << m.cycles
        << ", \"cycle_ms\": {\"mean\": " << m.cycle_mean_ms << ", \"p99\": " << m.cycle_p99_ms
        << "}, \"account_share\": {";
    size_t k = 0;
    for (const auto& [a, s] : m.account_share) out << (k++ ? ", " : "") << "\"" << Esc(a) << "\": " << s;
    out << "}, \"preemptions\": {";
    k = 0;
    for (const auto& [mode, n] : m.preemptions) out << (k++ ? ", " : "") << "\"" << mode << "\": " << n;
    out << "}}";
  }
  out << "]}\n";
}

void PrintSvg(std::ostream& out, const std::vector<SimRun>& runs) {
  const int w = 900, ph = 220, pad = 50;
  int h = static_cast<int>(runs.size()) * (ph + pad) + pad;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (size_t r = 0; r < runs.size(); ++r) {
    const SimRun& run = runs[r];
    int top = pad + static_cast<int>(r) * (ph + pad);
    int64_t t0 = run.first_submit, t1 = std::max(run.last_end, t0 + 1);
    size_t qmax = 1;
    for (const auto& s : run.samples) qmax = std::max(qmax, s.queued);
    bool gpu = run.total_gpus > 0;
    out << "<text x=\"" << pad << "\" y=\"" << top - 8 << "\">" << run.label << ": "
        << (run.total_gpu_mem_mib ? "GPU-memory" : gpu ? "GPU" : "CPU")
        << " utilization (blue, 0-100%) and queue length (red, 0-" << qmax << ") over "
        << (t1 - t0) / 3600 << " h</text>\n";
    out << "<rect x=\"" << pad << "\" y=\"" << top << "\" width=\"" << w - 2 * pad << "\" height=\"" << ph
        << "\" fill=\"none\" stroke=\"#888\"/>\n";
    auto x = [&](int64_t t) { return pad + double(t - t0) / double(t1 - t0) * (w - 2 * pad); };
    for (int series = 0; series < 2; ++series) {
      out << "<polyline fill=\"none\" stroke=\"" << (series ? "#c33" : "#36c") << "\" stroke-width=\"1\" points=\"";
      size_t step = std::max<size_t>(1, run.samples.size() / 2000);
      for (size_t i = 0; i < run.samples.size(); i += step) {
        const Sample& s = run.samples[i];
        double util = run.total_gpu_mem_mib ? s.gpu_mem_util : gpu ? s.gpu_util : s.cpu_util;
        double v = series ? double(s.queued) / double(qmax) : util;
        out << std::fixed << std::setprecision(1) << x(s.t) << "," << top + ph - v * ph << " ";
      }
      out << "\"/>\n";
    }
  }
  out << "</svg>\n";
}

void PrintWorstWaits(std::ostream& out, const SimRun& run, size_t n) {
  std::vector<const SimJob*> started;
  for (const auto& j : run.jobs)
    if (j.start >= 0) started.push_back(&j);
  auto wait = [](const SimJob* j) { return j->start - j->trace.submit; };
  n = std::min(n, started.size());
  std::partial_sort(started.begin(), started.begin() + static_cast<std::ptrdiff_t>(n), started.end(),
                    [&](const SimJob* a, const SimJob* b) {
                      return wait(a) != wait(b) ? wait(a) > wait(b) : a->trace.id < b->trace.id;
                    });
  out << "\nlongest waits: " << run.label << "\n"
      << "  trace_id     submit_s       wait_s      run_s    limit_s  gpus  cpus nodes account\n";
  for (size_t i = 0; i < n; ++i) {
    const SimJob& j = *started[i];
    char line[160];
    std::snprintf(line, sizeof line, "  %8llu %12lld %12lld %10lld %10lld %5u %5u %5u ",
                  static_cast<unsigned long long>(j.trace.id), static_cast<long long>(j.trace.submit),
                  static_cast<long long>(wait(&j)), static_cast<long long>(j.end - j.start),
                  static_cast<long long>(j.snap.time_limit), j.trace.gpus, j.trace.cpus,
                  std::max<uint32_t>(1, j.trace.nodes));
    out << line << (j.trace.account.empty() ? "-" : j.trace.account) << "\n";
  }
}

void PrintJobsCsv(std::ostream& out, const SimRun& run, const std::vector<std::string>& node_names,
                  bool header) {
  if (header) out << "config,trace_id,submit,start,end,wait,gpus,cpus,nodes\n";
  for (const auto& j : run.jobs) {
    out << run.label << ',' << j.trace.id << ',' << j.trace.submit << ',' << j.start << ',' << j.end
        << ',' << (j.start >= 0 ? j.start - j.trace.submit : -1) << ',' << j.trace.gpus << ','
        << j.trace.cpus << ',';
    for (size_t i = 0; i < j.nodes.size(); ++i)
      out << (i ? " " : "") << (j.nodes[i] < node_names.size() ? node_names[j.nodes[i]] : "?");
    out << '\n';
  }
}

}  // namespace tessera::sim
