#include "cli/lib/signal_names.h"

#include <csignal>

#include "cli/lib/text_util.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {

struct SignalName {
  const char* name;
  int number;
};

constexpr SignalName kSignals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},     {"QUIT", SIGQUIT},   {"ILL", SIGILL},
    {"TRAP", SIGTRAP}, {"ABRT", SIGABRT},   {"BUS", SIGBUS},     {"FPE", SIGFPE},
    {"KILL", SIGKILL}, {"USR1", SIGUSR1},   {"SEGV", SIGSEGV},   {"USR2", SIGUSR2},
    {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},   {"TERM", SIGTERM},   {"CHLD", SIGCHLD},
    {"CONT", SIGCONT}, {"STOP", SIGSTOP},   {"TSTP", SIGTSTP},   {"TTIN", SIGTTIN},
    {"TTOU", SIGTTOU}, {"URG", SIGURG},     {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ},
    {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"IO", SIGIO},
    {"PWR", SIGPWR},   {"SYS", SIGSYS},
};

}  // namespace

Result<int> ParseSignal(std::string_view s) {
  std::string upper = ToUpper(s);
  if (StartsWith(upper, "SIG")) upper = upper.substr(3);
  for (const auto& sig : kSignals)
    if (upper == sig.name) return sig.number;
  auto n = ParseUint(s, "signal");
  if (n.ok() && *n >= 1 && *n <= 64) return static_cast<int>(*n);
  return InvalidArgument("invalid signal \"" + std::string(s) + "\"");
}

}  // namespace tessera::cli
