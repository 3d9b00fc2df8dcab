#include "cli/lib/batch_request.h"

#include "cli/lib/batch_script.h"
#include "cli/lib/text_util.h"

namespace tessera::cli {
namespace {

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

uint32_t TaskCount(const BatchOptions& o) {
  if (o.ntasks) return *o.ntasks;
  uint32_t nodes = o.nodes_min.value_or(0);
  if (o.ntasks_per_node) return (nodes ? nodes : 1) * *o.ntasks_per_node;
  return nodes ? nodes : 1;
}

Status FillTaskGroup(const BatchOptions& o, tessera::v1::TaskGroup& g) {
  g.set_name("main");
  uint32_t count = TaskCount(o);
  g.set_count(count);
  uint32_t cpus = o.cpus_per_task.value_or(1);
  g.mutable_per_task()->set_cpus(cpus);
  if (o.mem_per_cpu_mib) g.mutable_per_task()->set_mem_mib(*o.mem_per_cpu_mib * cpus);
  if (o.mem_mib) g.mutable_per_node()->set_mem_mib(*o.mem_mib);
  if (o.ntasks_per_node) g.set_tasks_per_node(*o.ntasks_per_node);
  if (o.gpus_per_node) {
    g.mutable_per_node()->set_gpus(o.gpus_per_node->count);
    g.mutable_per_node()->set_gpu_model(o.gpus_per_node->model);
  }
  if (o.gpus_total) {
    if (o.gpus_total->count % count != 0)
      return InvalidArgument("--gpus=" + std::to_string(o.gpus_total->count) +
                             " cannot be divided evenly among " + std::to_string(count) +
                             " tasks; use --gpus-per-node or a multiple of -n");
    g.mutable_per_task()->set_gpus(o.gpus_total->count / count);
    g.mutable_per_task()->set_gpu_model(o.gpus_total->model);
  }
  return Status::Ok();
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
      Status st = ApplyBatchOption(opt, OptionSource::kDirective, now, merged);
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
  spec.mutable_env()->insert(exported->begin(), exported->end());
  spec.set_stdout_pattern(o.output.value_or(""));
  spec.set_stderr_pattern(o.error.value_or(""));
  spec.set_partition(o.partition.value_or(""));
  spec.set_qos(o.qos.value_or(""));
  spec.set_account(o.account.value_or(""));
  TESSERA_RETURN_IF_ERROR(FillTaskGroup(o, *spec.add_task_groups()));
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
  return spec;
}

}  // namespace tessera::cli
