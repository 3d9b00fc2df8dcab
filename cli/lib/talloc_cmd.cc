// talloc (salloc, issue 19): an allocation, then a command (default: the user's shell) on this
// host with the allocation's SLURM_* variables; the allocation is released when it exits.
// Options are tbatch's (sbatch's and salloc's share their spellings); directives are not read.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "cli/lib/batch_request.h"
#include "cli/lib/help_text.h"
#include "cli/lib/talloc.h"
#include "cli/lib/trun_alloc.h"

namespace tessera::cli {
namespace {

constexpr char kUsage[] = R"(Usage: talloc [OPTIONS] [command [args...]]
Obtain a job allocation (salloc), run the command on this host with SLURM_JOB_ID,
SLURM_JOB_NODELIST, SLURM_NNODES, SLURM_NTASKS, SLURM_JOB_CPUS_PER_NODE, ... set (trun/srun
inside it runs steps on the allocated nodes), and release the allocation when the command
exits. Without a command, the user's shell ($SHELL, else /bin/sh) runs.
Options are tbatch's: -N, -n, -c, --ntasks-per-node, --mem, --mem-per-cpu, -t, -p, -A, -q,
-J, -w, -x, -C, --gres, --gpus*, --exclusive, --reservation, -d ... (see tbatch --help).
Exit status: the command's (128+signal when it was killed); 1 when no allocation was made.
)";

// Runs argv with env in the foreground and waits; its exit status (128+signal if killed).
Result<int> RunLocal(const std::vector<std::string>& argv,
                     const std::map<std::string, std::string>& env) {
  std::vector<std::string> env_s;
  for (const auto& [k, v] : env) env_s.push_back(k + "=" + v);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (auto& e : env_s) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t def;
  sigemptyset(&def);
  for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) sigaddset(&def, s);
  posix_spawnattr_setsigdefault(&attr, &def);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  // While the command runs in the foreground, the terminal's signals are the command's.
  struct sigaction ign {}, old_int{}, old_quit{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGQUIT, &ign, &old_quit);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, cargv[0], nullptr, &attr, cargv.data(), cenv.data());
  posix_spawnattr_destroy(&attr);
  int status = 0;
  if (rc == 0)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (rc != 0)
    return Status(rc == ENOENT ? Code::kNotFound : Code::kInternal,
                  "cannot run " + argv[0] + ": " + std::strerror(rc));
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

int RunTalloc(CommandContext& ctx) {
  auto cl = ParseBatchCommandLine(ctx.args, ctx.now);
  if (!cl.ok()) return Fail(ctx, cl.status().message() + " (see talloc --help)");
  BatchOptions& o = cl->options;
  if (o.help || o.usage) return (*ctx.out << HelpText(ctx, kUsage), 0);
  if (o.version) return (*ctx.out << VersionLine() << "\n", 0);
  if (o.wrap) return Fail(ctx, "--wrap is an option of tbatch (sbatch), not of talloc");
  std::vector<std::string> argv = cl->positionals;
  if (argv.empty()) {
    auto sh = ctx.env.find("SHELL");
    argv.push_back(sh != ctx.env.end() && !sh->second.empty() ? sh->second : "/bin/sh");
  }
  if (!o.job_name) {
    size_t slash = argv[0].rfind('/');
    o.job_name = slash == std::string::npos ? argv[0] : argv[0].substr(slash + 1);
  }
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  auto job = CreateAllocation(ctx, **api, o, AllocStyle::kSalloc);
  if (!job.ok()) return Fail(ctx, job.status().message());
  std::map<std::string, std::string> env = ctx.env;
  for (const auto& [k, v] : AllocationEnv(*job, o, ctx.cwd)) env[k] = v;
  auto rc = RunLocal(argv, env);
  ReleaseAllocation(ctx, **api, job->job_id(), AllocStyle::kSalloc);
  if (!rc.ok()) return Fail(ctx, rc.status().message());
  return *rc;
}

}  // namespace tessera::cli
