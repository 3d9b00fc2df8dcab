// Allocations made by trun outside a job and by talloc (trun_alloc.h).
#include "cli/lib/trun_alloc.h"

#include <signal.h>

#include <chrono>
#include <thread>
#include <vector>

#include "cli/lib/batch_env.h"
#include "cli/lib/batch_request.h"
#include "common/env_block.h"
#include "common/hostlist.h"

namespace tessera::cli {

const char kAllocationHolder[] =
    "#!/bin/sh\n"
    "# Tessera: holds this job's allocation for trun/talloc until they release it (SIGUSR2).\n"
    "trap 'exit 0' USR2\n"
    "while :; do sleep 30 & wait $!; done\n";

namespace {

// GetJob polls 100 ms apart before saying the job is queued (srun says nothing when the
// allocation is granted at once); then once a second through ctx.sleep.
constexpr int kQuietPolls = 30;

const char* Word(AllocStyle s) { return s == AllocStyle::kSalloc ? "salloc" : "srun"; }

std::string Compress(const std::vector<uint32_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j < v.size() && v[j] == v[i]) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(v[i]);
    if (j - i > 1) out += "(x" + std::to_string(j - i) + ")";
    i = j;
  }
  return out;
}

bool Ended(pb::JobState s) {
  return s != pb::PENDING && s != pb::RUNNING && s != pb::SUSPENDED &&
         s != pb::JOB_STATE_UNSPECIFIED;
}

}  // namespace

Result<pb::JobInfo> CreateAllocation(CommandContext& ctx, ControllerApi& api,
                                     const BatchOptions& opts, AllocStyle style) {
  ScriptSource script;
  script.text = kAllocationHolder;
  auto spec = BuildJobSpec(opts, script, ctx.env, ctx.cwd);
  if (!spec.ok()) return spec.status();
  SetBatchOptionEnv(opts, &*spec);
  spec->set_stdout_pattern("/dev/null");
  spec->set_stderr_pattern("/dev/null");
  spec->set_requeue(false);
  pb::SubmitJobRequest req;
  *req.mutable_spec() = std::move(*spec);
  auto sub = api.SubmitJob(req);
  if (!sub.ok()) return Status(sub.status().code(), "cannot submit the allocation: " + sub.status().message());
  uint64_t id = sub->job_id();
  std::string w = Word(style);
  if (style == AllocStyle::kSalloc) *ctx.err << w << ": Pending job allocation " << id << "\n";
  bool said = false;
  for (int polls = 0;; ++polls) {
    pb::GetJobRequest g;
    g.set_job_id(id);
    auto job = api.GetJob(g);
    if (job.ok() && job->state() == pb::RUNNING) {
      if (style == AllocStyle::kSalloc) {
        *ctx.err << w << ": Granted job allocation " << id << "\n";
        *ctx.err << w << ": Nodes " << job->nodelist() << " are ready for job\n";
      } else if (said) {
        *ctx.err << w << ": job " << id << " has been allocated resources\n";
      }
      ctx.err->flush();
      return *job;
    }
    if (job.ok() && Ended(job->state()))
      return FailedPrecondition("job " + std::to_string(id) + " ended before its allocation was granted" +
                                (job->reason().empty() ? "" : " (" + job->reason() + ")"));
    if (polls < kQuietPolls) {  // most allocations start within a scheduling cycle or two
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (!said) {
      *ctx.err << w << ": job " << id << " queued and waiting for resources\n";
      ctx.err->flush();
      said = true;
    }
    if (!ctx.sleep || !ctx.sleep(1)) {
      pb::CancelJobRequest c;
      c.add_job_ids(id);
      (void)api.CancelJob(c);
      return Status(Code::kCancelled, "job " + std::to_string(id) +
                                          " was not allocated resources: interrupted; cancelled");
    }
  }
}

void ReleaseAllocation(CommandContext& ctx, ControllerApi& api, uint64_t job_id,
                       AllocStyle style) {
  if (style == AllocStyle::kSalloc)
    *ctx.err << Word(style) << ": Relinquishing job allocation " << job_id << "\n";
  pb::CancelJobRequest c;
  c.add_job_ids(job_id);
  c.set_signal(SIGUSR2);
  c.set_batch_only(true);
  auto r = api.CancelJob(c);
  if (r.ok() && r->errors().empty()) return;
  pb::CancelJobRequest plain;
  plain.add_job_ids(job_id);
  auto p = api.CancelJob(plain);
  if (!p.ok()) Warn(ctx, "cannot release job allocation " + std::to_string(job_id) + ": " + p.status().message());
}

std::map<std::string, std::string> AllocationEnv(const pb::JobInfo& job, const BatchOptions& opts,
                                                 const std::string& cwd) {
  std::map<std::string, std::string> env;
  pb::JobSpec from_options;
  SetBatchOptionEnv(opts, &from_options);
  for (const auto& [k, v] : EnvBlockToMap(from_options.env_block())) env[k] = v;
  std::string id = std::to_string(job.job_id());
  env["SLURM_JOB_ID"] = env["SLURM_JOBID"] = id;
  env["SLURM_JOB_NAME"] = job.spec().name();
  std::vector<std::string> names;
  std::vector<uint32_t> cpus, tasks;
  for (const auto& a : job.alloc()) {
    names.push_back(a.node());
    cpus.push_back(a.cpus());
    tasks.push_back(a.tasks() ? a.tasks() : 1);
  }
  std::string nodelist = job.nodelist().empty() ? CompressHostlist(names) : job.nodelist();
  env["SLURM_JOB_NODELIST"] = env["SLURM_NODELIST"] = nodelist;
  std::string nnodes = std::to_string(names.empty() ? 1 : names.size());
  env["SLURM_JOB_NUM_NODES"] = env["SLURM_NNODES"] = nnodes;
  if (job.num_tasks() > 0) env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = std::to_string(job.num_tasks());
  if (!cpus.empty()) env["SLURM_JOB_CPUS_PER_NODE"] = Compress(cpus);
  if (!tasks.empty()) env["SLURM_TASKS_PER_NODE"] = Compress(tasks);
  if (!job.partition().empty()) env["SLURM_JOB_PARTITION"] = job.partition();
  std::string account = job.account().empty() ? job.spec().account() : job.account();
  if (!account.empty()) env["SLURM_JOB_ACCOUNT"] = account;
  env["SLURM_JOB_QOS"] = job.spec().qos().empty() ? "normal" : job.spec().qos();
  env["SLURM_SUBMIT_DIR"] = cwd;
  if (job.alloc_size() > 0 && job.alloc(0).mem_mib() > 0)
    env["SLURM_MEM_PER_NODE"] = std::to_string(job.alloc(0).mem_mib());
  return env;
}

}  // namespace tessera::cli
