// RunLocalMain (command.h): a command without gRPC for the controller's host.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/lib/command.h"
#include "cli/lib/id_names.h"

namespace tessera::cli {
namespace {

// `name` in the directory of the running program (/proc/self/exe: symlinks such as sbatch ->
// tbatch resolved), or `name` alone when that cannot be read.
std::string Sibling(const char* name) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return name;
  std::string dir(self, static_cast<size_t>(n));
  return dir.substr(0, dir.rfind('/') + 1) + name;
}

}  // namespace

int RunLocalMain(int argc, char** argv, int (*run)(CommandContext&), const char* remote) {
  // Decided before the command reads anything (a script on stdin must reach `remote` intact).
  // Without a configuration `remote` reports the error as every command does.
  auto cfg = LoadCommandConfig();
  auto local = cfg.ok() ? ConnectLocal(*cfg) : Result<std::unique_ptr<ControllerApi>>(cfg.status());
  if (!local.ok()) {
    std::string path = Sibling(remote);
    ::execv(path.c_str(), argv);  // argv[0] unchanged: messages keep the command's name
    std::cerr << (argc > 0 ? argv[0] : "tessera") << ": error: cannot run " << path << ": "
              << std::strerror(errno) << "\n";
    ExitMain(1);
  }
  SystemIdNames names;
  CommandContext ctx;
  InitMainContext(argc, argv, &names, &ctx);
  auto api = std::make_shared<std::unique_ptr<ControllerApi>>(std::move(*local));
  ctx.connect = [api]() -> Result<std::unique_ptr<ControllerApi>> {
    if (!*api) return FailedPrecondition("the controller connection was already taken");
    return std::move(*api);
  };
  ExitMain(run(ctx));
}

}  // namespace tessera::cli
