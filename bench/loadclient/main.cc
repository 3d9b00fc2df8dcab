// tessera-bench-submit: API submit-throughput load client for bench/run-vs-slurm.
//
// Submits N jobs equivalent to `tbatch --hold --wrap=true` (same script text, the caller's
// environment, cwd as workdir, one task of one CPU) through the controller's gRPC SubmitJob,
// with C concurrent calls from this one process (C threads with sync stubs over one shared
// channel). Each call carries a fresh munge credential (rpc::AttachCredential), exactly as the
// CLI does. The controller replies only after the job is durable, so every acknowledged id is a
// durable job; the ids are written to --ids-out so the harness can kill -9 the controller right
// after this program exits and check that every acknowledged job survived.
//
// With --batch B (B > 1) each call is one SubmitJobs RPC carrying B specs (the bulk API); the
// answer comes when all of them are durable, and the latency figures are per call.
//
// Output (stdout, one line): "acked=A errors=E elapsed_s=S jobs_per_s=R p50_ms=.. p99_ms=.."
// Exit status: 0 when every call succeeded, 1 when some failed, 2 on bad usage/config.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/cluster_config.h"
#include "common/env_block.h"
#include "rpc/grpc_util.h"
#include "rpc/munge_codec.h"
#include "tessera/v1/controller.grpc.pb.h"

extern char** environ;

namespace tessera::bench {
namespace {

namespace pb = tessera::v1;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string conf;
  int jobs = 1000;
  int concurrency = 64;
  int batch = 1;
  bool hold = true;
  std::string command = "true";
  std::string ids_out;
  std::string stdout_pattern;
  std::string name = "wrap";  // --name (tessera-nodeemu reads "emu-ms=N" as the job's run time)
  bool exclusive = false;     // --exclusive: a whole node each
};

const char kUsage[] =
    "usage: tessera-bench-submit [-f tessera.conf] [-n JOBS] [-c CONCURRENCY] [--batch B]\n"
    "                            [--no-hold] [--wrap CMD] [-o STDOUT_PATTERN] [--ids-out FILE]\n"
    "                            [--name NAME] [--exclusive]\n";

bool ParseArgs(int argc, char** argv, Options* o) {
  const char* env_conf = std::getenv("TESSERA_CONF");
  o->conf = env_conf ? env_conf : "/etc/tessera/tessera.conf";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        std::cerr << "tessera-bench-submit: " << a << " needs " << what << "\n";
        return nullptr;
      }
      return argv[++i];
    };
    const char* v = nullptr;
    if (a == "-f" && (v = next("a config path"))) o->conf = v;
    else if (a == "-n" && (v = next("a job count"))) o->jobs = std::atoi(v);
    else if (a == "-c" && (v = next("a concurrency"))) o->concurrency = std::atoi(v);
    else if (a == "--batch" && (v = next("a batch size"))) o->batch = std::atoi(v);
    else if (a == "--wrap" && (v = next("a command"))) o->command = v;
    else if (a == "-o" && (v = next("a filename pattern"))) o->stdout_pattern = v;
    else if (a == "--ids-out" && (v = next("a file"))) o->ids_out = v;
    else if (a == "--no-hold") o->hold = false;
    else if (a == "--name" && (v = next("a job name"))) o->name = v;
    else if (a == "--exclusive") o->exclusive = true;
    else {
      if (!v) std::cerr << "tessera-bench-submit: bad argument \"" << a << "\"\n" << kUsage;
      return false;
    }
  }
  if (o->jobs < 1 || o->concurrency < 1 || o->batch < 1 || o->batch > 10000) {
    std::cerr << "tessera-bench-submit: -n and -c must be >= 1, --batch 1..10000\n";
    return false;
  }
  return true;
}

// The same JobSpec `tbatch --hold --wrap=CMD` builds (cli/lib/batch_request.cc).
pb::SubmitJobRequest MakeRequest(const Options& o) {
  pb::SubmitJobRequest req;
  pb::JobSpec& s = *req.mutable_spec();
  s.set_name(o.name);
  s.set_exclusive(o.exclusive);
  s.set_script("#!/bin/sh\n# This script was created by tbatch --wrap.\n\n" + o.command + "\n");
  char cwd[4096];
  s.set_workdir(getcwd(cwd, sizeof cwd) ? cwd : "/tmp");
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) EnvBlockSet(s.mutable_env_block(), kv.substr(0, eq), kv.substr(eq + 1));
  }
  s.set_stdout_pattern(o.stdout_pattern);
  pb::TaskGroup& g = *s.add_task_groups();
  g.set_name("main");
  g.set_count(1);
  g.mutable_per_task()->set_cpus(1);
  s.set_hold(o.hold);
  s.set_requeue(true);
  return req;
}

struct Totals {
  std::mutex mu;
  std::vector<uint64_t> ids;
  std::vector<double> lat_ms;
  int errors = 0;
  std::string first_error;
};

void Worker(const Options& o, const pb::SubmitJobRequest& req, pb::Controller::Stub* stub,
            const rpc::CredentialCodec& codec, std::atomic<int>* next, Totals* t) {
  std::vector<uint64_t> ids;
  std::vector<double> lat;
  int errors = 0;
  std::string first_error;
  while (next->fetch_add(1) < o.jobs) {
    auto t0 = Clock::now();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    Status cred = rpc::AttachCredential(codec, &ctx);
    pb::SubmitJobResponse resp;
    grpc::Status st = cred.ok() ? stub->SubmitJob(&ctx, req, &resp) : rpc::ToGrpc(cred);
    if (st.ok() && resp.job_id() != 0) {
      ids.push_back(resp.job_id());
      lat.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    } else {
      if (errors++ == 0) first_error = st.error_message();
    }
  }
  std::lock_guard<std::mutex> lock(t->mu);
  t->ids.insert(t->ids.end(), ids.begin(), ids.end());
  t->lat_ms.insert(t->lat_ms.end(), lat.begin(), lat.end());
  if (errors && t->first_error.empty()) t->first_error = first_error;
  t->errors += errors;
}

// --batch: SubmitJobs calls of o.batch specs until o.jobs are taken.
void BatchWorker(const Options& o, const pb::SubmitJobRequest& req, pb::Controller::Stub* stub,
                 const rpc::CredentialCodec& codec, std::atomic<int>* next, Totals* t) {
  std::vector<uint64_t> ids;
  std::vector<double> lat;
  int errors = 0;
  std::string first_error;
  pb::SubmitJobsRequest full;
  for (int i = 0; i < o.batch; ++i) *full.add_specs() = req.spec();
  int start;
  while ((start = next->fetch_add(o.batch)) < o.jobs) {
    pb::SubmitJobsRequest part;
    int k = std::min(o.batch, o.jobs - start);
    if (k < o.batch)
      for (int i = 0; i < k; ++i) *part.add_specs() = req.spec();
    auto t0 = Clock::now();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    Status cred = rpc::AttachCredential(codec, &ctx);
    pb::SubmitJobsResponse resp;
    grpc::Status st = cred.ok() ? stub->SubmitJobs(&ctx, k < o.batch ? part : full, &resp) : rpc::ToGrpc(cred);
    if (!st.ok()) {
      if (errors == 0) first_error = st.error_message();
      errors += k;
      continue;
    }
    lat.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    for (const auto& r : resp.results()) {
      if (r.job_id() != 0) ids.push_back(r.job_id());
      else if (errors++ == 0) first_error = r.error();
    }
  }
  std::lock_guard<std::mutex> lock(t->mu);
  t->ids.insert(t->ids.end(), ids.begin(), ids.end());
  t->lat_ms.insert(t->lat_ms.end(), lat.begin(), lat.end());
  if (errors && t->first_error.empty()) t->first_error = first_error;
  t->errors += errors;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

int Run(const Options& o) {
  auto cfg = LoadClusterConfig(o.conf);
  if (!cfg.ok()) {
    std::cerr << "tessera-bench-submit: " << cfg.status().message() << "\n";
    return 2;
  }
  rpc::MungeCodec codec(cfg->munge_socket);
  auto stub = pb::Controller::NewStub(rpc::MakeCtldChannel(*cfg));
  const pb::SubmitJobRequest req = MakeRequest(o);
  std::atomic<int> next{0};
  Totals totals;
  std::vector<std::thread> threads;
  auto t0 = Clock::now();
  for (int i = 0; i < std::min(o.concurrency, o.jobs); ++i)
    threads.emplace_back(o.batch > 1 ? BatchWorker : Worker, std::cref(o), std::cref(req), stub.get(), std::cref(codec),
                         &next, &totals);
  for (auto& th : threads) th.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!o.ids_out.empty()) {
    std::ofstream f(o.ids_out);
    for (uint64_t id : totals.ids) f << id << "\n";
  }
  std::printf("acked=%zu errors=%d elapsed_s=%.3f jobs_per_s=%.1f p50_ms=%.2f p99_ms=%.2f\n",
              totals.ids.size(), totals.errors, elapsed, totals.ids.size() / elapsed,
              Percentile(totals.lat_ms, 0.5), Percentile(totals.lat_ms, 0.99));
  if (totals.errors) std::fprintf(stderr, "first error: %s\n", totals.first_error.c_str());
  return totals.errors ? 1 : 0;
}

}  // namespace
}  // namespace tessera::bench

int main(int argc, char** argv) {
  tessera::bench::Options o;
  if (!tessera::bench::ParseArgs(argc, argv, &o)) return 2;
  return tessera::bench::Run(o);
}
