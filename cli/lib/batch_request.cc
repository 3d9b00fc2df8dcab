#include "cli/lib/batch_request.h"

#include "cli/lib/batch_script.h"
#include "cli/lib/text_util.h"
#include "common/env_block.h"

namespace tessera::cli {
namespace {

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Total GPUs the flat options ask for per node (--gpus-per-node / --gres) or per job (-G).
uint32_t TaskCount(const BatchOptions& o) {
  if (o.ntasks) return *o.ntasks;
  uint32_t nodes = o.nodes_min.value_or(0);
  if (o.ntasks_per_gpu) {
    if (o.gpus_per_node) return (nodes ? nodes : 1) * o.gpus_per_node->count * *o.ntasks_per_gpu;
    if (o.gpus_total) return o.gpus_total->count * *o.ntasks_per_gpu;
  }
  if (o.ntasks_per_node) return (nodes ? nodes : 1) * *o.ntasks_per_node;
  return nodes ? nodes : 1;
}

// GPUs each task gets: --gpus-per-task, or -G divided evenly among the tasks.
Result<std::optional<GpuRequest>> PerTaskGpus(const BatchOptions& o, uint32_t count) {
  if (o.gpus_per_task) return std::optional<GpuRequest>(*o.gpus_per_task);
  if (!o.gpus_total) return std::optional<GpuRequest>();
  if (o.ntasks_per_gpu && *o.ntasks_per_gpu > 1)
    return InvalidArgument("--ntasks-per-gpu above 1 needs --gpus-per-node, not --gpus");
  if (o.gpus_total->count % count != 0)
    return InvalidArgument("--gpus=" + std::to_string(o.gpus_total->count) +
                           " cannot be divided evenly among " + std::to_string(count) +
                           " tasks; use --gpus-per-node or a multiple of -n");
  return std::optional<GpuRequest>(GpuRequest{o.gpus_total->model, o.gpus_total->count / count});
}

// Per-node resources shared by the flat translation and --task-group.
void FillPerNode(const BatchOptions& o, tessera::v1::TaskGroup& g) {
  if (o.mem_mib) g.mutable_per_node()->set_mem_mib(*o.mem_mib);
  if (o.gres_shares) {  // --gres=mps:N / shard:N: per node, from one GPU
    g.mutable_per_node()->set_mps(o.gres_shares->mps);
    g.mutable_per_node()->set_shards(o.gres_shares->shards);
    if (!o.gres_shares->model.empty()) g.mutable_per_node()->set_share_model(o.gres_shares->model);
  }
  if (o.gpus_per_node) {
    g.mutable_per_node()->set_gpus(o.gpus_per_node->count);
    g.mutable_per_node()->set_gpu_model(o.gpus_per_node->model);
    if (o.cpus_per_gpu) g.mutable_per_node()->set_cpus(*o.cpus_per_gpu * o.gpus_per_node->count);
    if (o.mem_per_gpu_mib)
      g.mutable_per_node()->set_mem_mib(*o.mem_per_gpu_mib * o.gpus_per_node->count);
  }
}

Status FillTaskGroup(const BatchOptions& o, tessera::v1::TaskGroup& g) {
  g.set_name("main");
  uint32_t count = TaskCount(o);
  g.set_count(count);
  auto gpus = PerTaskGpus(o, count);
  if (!gpus.ok()) return gpus.status();
  uint32_t cpus = o.cpus_per_task.value_or(1);
  if (!o.cpus_per_task && o.cpus_per_gpu && *gpus) cpus = *o.cpus_per_gpu * (*gpus)->count;
  g.mutable_per_task()->set_cpus(cpus);
  if (o.mem_per_cpu_mib) g.mutable_per_task()->set_mem_mib(*o.mem_per_cpu_mib * cpus);
  if (o.ntasks_per_node) g.set_tasks_per_node(*o.ntasks_per_node);
  if (*gpus) {
    g.mutable_per_task()->set_gpus((*gpus)->count);
    g.mutable_per_task()->set_gpu_model((*gpus)->model);
    if (o.mem_per_gpu_mib) g.mutable_per_task()->set_mem_mib(*o.mem_per_gpu_mib * (*gpus)->count);
  }
  FillPerNode(o, g);
  if (o.mem_per_gpu_mib && !*gpus && !o.gpus_per_node)
    return InvalidArgument("--mem-per-gpu needs a GPU request (--gpus, --gpus-per-node, "
                           "--gpus-per-task or --gres=gpu)");
  if (o.cpus_per_gpu && !*gpus && !o.gpus_per_node)
    return InvalidArgument("--cpus-per-gpu needs a GPU request (--gpus, --gpus-per-node, "
                           "--gpus-per-task or --gres=gpu)");
  return Status::Ok();
}

// #TESSERA --task-group: the groups replace the flat per-task options.
Status FillTaskGroups(const BatchOptions& o, tessera::v1::JobSpec& spec) {
  const char* clash = o.ntasks ? "--ntasks" : o.cpus_per_task ? "--cpus-per-task"
                      : o.ntasks_per_node ? "--ntasks-per-node" : o.gpus_per_task ? "--gpus-per-task"
                      : o.gpus_total ? "--gpus" : o.mem_per_cpu_mib ? "--mem-per-cpu"
                      : o.mem_per_gpu_mib ? "--mem-per-gpu" : o.cpus_per_gpu ? "--cpus-per-gpu"
                      : o.ntasks_per_gpu ? "--ntasks-per-gpu" : nullptr;
  if (clash)
    return InvalidArgument(std::string(clash) +
                           " cannot be combined with --task-group (give per-task resources in "
                           "each group)");
  for (const TaskGroupSpec& t : o.task_groups) {
    auto& g = *spec.add_task_groups();
    g.set_name(t.name);
    g.set_count(t.count);
    g.mutable_per_task()->set_cpus(t.cpus);
    g.mutable_per_task()->set_mem_mib(t.mem_mib);
    g.mutable_per_task()->set_gpus(t.gpus);
    g.mutable_per_task()->set_gpu_model(t.gpu_model);
    g.set_tasks_per_node(t.tasks_per_node);
    FillPerNode(o, g);
  }
  return Status::Ok();
}

// The newer JobSpec fields (issue #5).
void FillExtras(const BatchOptions& o, tessera::v1::JobSpec& spec) {
  spec.set_array(o.array.value_or(""));
  spec.set_time_min_s(o.time_min_s.value_or(0));
  spec.set_deadline(o.deadline.value_or(0));
  spec.set_mem_per_gpu_mib(o.mem_per_gpu_mib.value_or(0));
  if (o.signal) {
    spec.set_signal_number(o.signal->number);
    spec.set_signal_time_s(o.signal->time_s);
    spec.set_signal_batch_only(o.signal->batch_only);
  }
  spec.set_open_mode(o.open_mode.value_or(""));
  spec.set_reservation(o.reservation.value_or(""));
  if (o.switches) {
    spec.set_switches(o.switches->count);
    spec.set_switches_wait_s(o.switches->wait_s);
  }
  spec.set_priority(o.priority.value_or(0));
  spec.set_stdin_pattern(o.input.value_or(""));
  spec.set_cpus_per_gpu(o.cpus_per_gpu.value_or(0));
  spec.set_mem_whole_node(o.mem_whole_node.value_or(false));
  spec.set_gpu_min_mem_mib(o.gpu_min_mem_mib.value_or(0));
  spec.set_no_kill(o.no_kill.value_or(false));
  spec.set_segment(o.segment.value_or(0));
}

bool IsSlurmVar(const std::string& name) { return StartsWith(name, "SLURM_"); }

}  // namespace

std::string AbsolutePath(const std::string& path, const std::string& cwd) {
  if (path.empty() || path[0] == '/') return path;
  if (cwd.empty() || cwd.back() == '/') return cwd + path;
  return cwd + "/" + path;
}

Result<BatchCommandLine> ParseBatchCommandLine(const std::vector<std::string>& args,
                                               int64_t now) {
  auto parsed = ParseArgs(args, BatchOptionSpecs(), /*stop_at_positional=*/true);
  if (!parsed.ok()) return parsed.status();
  BatchCommandLine out;
  for (const auto& opt : parsed->options)
    TESSERA_RETURN_IF_ERROR(ApplyBatchOption(opt, OptionSource::kCommandLine, now, out.options));
  out.positionals = std::move(parsed->positionals);
  return out;
}

Result<BatchOptions> ResolveBatchOptions(const BatchOptions& cmdline, const std::string& script,
                                         const std::map<std::string, std::string>& env,
                                         int64_t now) {
  auto directives = ExtractDirectives(script);
  if (!directives.ok()) return directives.status();
  BatchOptions merged;
  for (const Directive& d : *directives) {
    std::string where = "script line " + std::to_string(d.line) + ": ";
    auto parsed = ParseArgs(d.words, BatchOptionSpecs(), /*stop_at_positional=*/false);
    if (!parsed.ok()) return InvalidArgument(where + parsed.status().message());
    if (!parsed->positionals.empty())
      return InvalidArgument(where + "unexpected argument \"" + parsed->positionals[0] +
                             "\" in a directive");
    for (const auto& opt : parsed->options) {
      Status st = ApplyBatchOption(
          opt, d.tessera ? OptionSource::kTesseraDirective : OptionSource::kDirective, now,
          merged);
      if (!st.ok()) return InvalidArgument(where + st.message());
    }
  }
  auto from_env = BatchOptionsFromEnv(env, now);
  if (!from_env.ok()) return from_env.status();
  MergeBatchOptions(*from_env, merged);
  MergeBatchOptions(cmdline, merged);
  return merged;
}

Result<std::map<std::string, std::string>> BuildExportEnv(
    const std::optional<std::string>& spec, const std::map<std::string, std::string>& env) {
  if (!spec || EqualsIgnoreCase(*spec, "ALL")) return env;
  std::map<std::string, std::string> out;
  auto items = Split(*spec, ',');
  bool all = !items.empty() && EqualsIgnoreCase(items[0], "ALL");
  for (const auto& [k, v] : env)
    if (all || IsSlurmVar(k)) out[k] = v;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    if (i == 0 && (EqualsIgnoreCase(item, "ALL") || EqualsIgnoreCase(item, "NONE"))) continue;
    size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    if (name.empty()) return InvalidArgument("invalid --export value \"" + *spec + "\"");
    if (eq != std::string::npos) {
      out[name] = item.substr(eq + 1);
    } else if (auto it = env.find(name); it != env.end()) {
      out[name] = it->second;
    }
  }
  return out;
}

Result<tessera::v1::JobSpec> BuildJobSpec(const BatchOptions& o, const ScriptSource& script,
                                          const std::map<std::string, std::string>& env,
                                          const std::string& cwd) {
  tessera::v1::JobSpec spec;
  std::string default_name = o.wrap ? "wrap" : script.path.empty() ? "tbatch"
                                                                    : Basename(script.path);
  spec.set_name(o.job_name.value_or(default_name));
  spec.set_script(script.text);
  if (!script.path.empty()) {
    spec.add_argv(AbsolutePath(script.path, cwd));
    for (const auto& a : script.args) spec.add_argv(a);
  }
  spec.set_workdir(AbsolutePath(o.chdir.value_or(cwd), cwd));
  auto exported = BuildExportEnv(o.export_spec, env);
  if (!exported.ok()) return exported.status();
  spec.set_env_block(EnvBlockFromMap(*exported));
  spec.set_stdout_pattern(o.output.value_or(""));
  spec.set_stderr_pattern(o.error.value_or(""));
  spec.set_partition(o.partition.value_or(""));
  spec.set_qos(o.qos.value_or(""));
  spec.set_account(o.account.value_or(""));
  if (o.task_groups.empty()) {
    TESSERA_RETURN_IF_ERROR(FillTaskGroup(o, *spec.add_task_groups()));
  } else {
    TESSERA_RETURN_IF_ERROR(FillTaskGroups(o, spec));
  }
  spec.set_nodes_min(o.nodes_min.value_or(0));
  spec.set_nodes_max(o.nodes_max.value_or(0));
  spec.set_time_limit_s(o.time_limit_s.value_or(0));
  spec.set_hold(o.hold.value_or(false));
  spec.set_requeue(o.requeue.value_or(true));
  spec.set_comment(o.comment.value_or(""));
  spec.set_exclusive(o.exclusive.value_or(false));
  spec.set_constraint(o.constraint.value_or(""));
  spec.set_nodelist(o.nodelist.value_or(""));
  spec.set_exclude(o.exclude.value_or(""));
  spec.set_nice(o.nice.value_or(0));
  spec.set_begin_time(o.begin_time.value_or(0));
  spec.set_dependency(o.dependency.value_or(""));
  FillExtras(o, spec);
  return spec;
}

}  // namespace tessera::cli
