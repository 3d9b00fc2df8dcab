// tessera-nodeemu: N emulated nodes on one process (bench/nodeemu/README.md).
//   tessera-nodeemu -f tessera.conf [--nodes 'e[1-10000]'] [--run-ms 100] [--per-channel 1]
//                   [--status-file FILE] [--report-s 5] [--duration-s 0]
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "bench/nodeemu/emulator.h"
#include "common/hostlist.h"
#include "rpc/absl_tuning.h"

using namespace tessera;

namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

int Usage(const std::string& why) {
  std::cerr << "tessera-nodeemu: " << why << "\n"
            << "usage: tessera-nodeemu -f tessera.conf [--nodes HOSTLIST] [--run-ms MS]\n"
               "         [--per-channel K] [--connect-threads T] [--status-file FILE]\n"
               "         [--report-s S] [--duration-s S]\n";
  return 2;
}

bool ParseInt(const std::string& flag, const std::string& v, int64_t min, int64_t* out) {
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < min) {
    std::cerr << "tessera-nodeemu: " << flag << ": expected an integer >= " << min << ", got '"
              << v << "'\n";
    return false;
  }
  *out = x;
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  rpc::DisableAbslDeadlockDetection();  // thousands of streams: rpc/absl_tuning.h
  std::string conf = std::getenv("TESSERA_CONF") ? std::getenv("TESSERA_CONF") : "";
  std::string nodes_expr, status_file;
  int64_t run_ms = 100, per_channel = 1, threads = 8, report_s = 5, duration_s = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](std::string* v) {
      if (i + 1 >= argc) return false;
      *v = argv[++i];
      return true;
    };
    std::string v;
    if ((a == "-f" || a == "--conf") && next(&v)) conf = v;
    else if (a == "--nodes" && next(&v)) nodes_expr = v;
    else if (a == "--status-file" && next(&v)) status_file = v;
    else if (a == "--run-ms" && next(&v)) { if (!ParseInt(a, v, 0, &run_ms)) return 2; }
    else if (a == "--per-channel" && next(&v)) { if (!ParseInt(a, v, 1, &per_channel)) return 2; }
    else if (a == "--connect-threads" && next(&v)) { if (!ParseInt(a, v, 1, &threads)) return 2; }
    else if (a == "--report-s" && next(&v)) { if (!ParseInt(a, v, 0, &report_s)) return 2; }
    else if (a == "--duration-s" && next(&v)) { if (!ParseInt(a, v, 0, &duration_s)) return 2; }
    else return Usage("unknown or incomplete option '" + a + "'");
  }
  if (conf.empty()) return Usage("no config: give -f or set TESSERA_CONF");
  auto cfg = LoadClusterConfig(conf);
  if (!cfg.ok()) {
    std::cerr << "tessera-nodeemu: " << cfg.status().ToString() << "\n";
    return 1;
  }
  nodeemu::Options opts;
  if (nodes_expr.empty()) {
    for (const auto& n : cfg->nodes) opts.nodes.push_back(n.name);
  } else {
    auto names = ExpandHostlist(nodes_expr);
    if (!names.ok()) {
      std::cerr << "tessera-nodeemu: --nodes: " << names.status().ToString() << "\n";
      return 2;
    }
    for (const auto& n : *names) {
      if (!cfg->FindNode(n)) {
        std::cerr << "tessera-nodeemu: --nodes: node '" << n << "' is not in " << conf << "\n";
        return 2;
      }
      opts.nodes.push_back(n);
    }
  }
  if (opts.nodes.empty()) return Usage("no nodes to emulate");
  opts.run_ms = run_ms;
  opts.per_channel = static_cast<int>(per_channel);
  opts.connect_threads = static_cast<int>(threads);

  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGPIPE, SIG_IGN);
  rpc::MungeCodec codec(cfg->munge_socket);
  nodeemu::Emulator emu(*cfg, opts, codec);
  emu.Start();
  std::cerr << "tessera-nodeemu: " << emu.node_count() << " nodes -> " << cfg->ctld_addr << ":"
            << cfg->ctld_port << ", jobs run " << run_ms << " ms\n";
  auto t0 = std::chrono::steady_clock::now();
  int64_t ticks = 0;
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ++ticks;
    auto& c = emu.counters();
    char line[256];
    std::snprintf(line, sizeof line,
                  "registered=%lld/%lld registrations=%lld launches=%lld finished=%lld acked=%lld "
                  "stream_errors=%lld all_registered_ms=%lld",
                  (long long)c.registered.load(), (long long)emu.node_count(),
                  (long long)c.registrations.load(), (long long)c.launches.load(),
                  (long long)c.finished.load(), (long long)c.acked.load(),
                  (long long)c.stream_errors.load(), (long long)emu.all_registered_ms());
    if (!status_file.empty()) {  // written whole, then renamed: readers never see half a line
      std::string tmp = status_file + ".tmp";
      { std::ofstream(tmp) << line << "\n"; }
      std::rename(tmp.c_str(), status_file.c_str());
    }
    if (report_s > 0 && ticks % (report_s * 10) == 0) std::cerr << "tessera-nodeemu: " << line << "\n";
    if (duration_s > 0 && std::chrono::steady_clock::now() - t0 >= std::chrono::seconds(duration_s))
      break;
  }
  std::cerr << "tessera-nodeemu: stopping\n";
  std::_Exit(0);  // the streams end with the process, as a killed noded's would
}
