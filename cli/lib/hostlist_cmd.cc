// scontrol show hostnames | hostlist | hostlistsorted (hostlist_cmd.h).
#include "cli/lib/hostlist_cmd.h"

#include <algorithm>
#include <cctype>
#include <istream>
#include <iterator>
#include <ostream>

#include "cli/lib/text_util.h"
#include "common/hostlist.h"

namespace tessera::cli {
namespace {

// The names a LIST argument stands for (file, stdin or expression).
Result<std::string> ListText(CommandContext& ctx, const std::vector<std::string>& args) {
  std::string text;
  for (const auto& a : args) text += (text.empty() ? "" : ",") + a;
  std::string raw;
  if (text == "-") {
    if (!ctx.in) return InvalidArgument("no standard input to read host names from");
    raw.assign(std::istreambuf_iterator<char>(*ctx.in), std::istreambuf_iterator<char>());
  } else if (!text.empty() && text[0] == '/') {
    auto f = ctx.read_file(text);
    if (!f.ok()) return InvalidArgument("cannot read host names from " + text + ": " +
                                        f.status().message());
    raw = *f;
  } else {
    return text;
  }
  std::string out;  // white space separates names too
  bool sep = false;
  for (char c : raw) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
      sep = !out.empty();
      continue;
    }
    if (sep) out += ',';
    sep = false;
    out += c;
  }
  return out;
}

struct HostKey {
  std::string prefix;
  bool numbered = false;
  unsigned long long number = 0;
  size_t width = 0;
};

HostKey KeyOf(const std::string& h) {
  size_t d = h.size();
  while (d > 0 && std::isdigit(static_cast<unsigned char>(h[d - 1]))) --d;
  HostKey k{h.substr(0, d)};
  if (d < h.size() && h.size() - d <= 18) {
    k.numbered = true;
    k.number = std::stoull(h.substr(d));
    k.width = h.size() - d;
  } else {
    k.prefix = h;
  }
  return k;
}

}  // namespace

std::vector<std::string> SortHostnames(std::vector<std::string> hosts) {
  std::stable_sort(hosts.begin(), hosts.end(), [](const std::string& a, const std::string& b) {
    HostKey ka = KeyOf(a), kb = KeyOf(b);
    if (ka.prefix != kb.prefix) return ka.prefix < kb.prefix;
    if (ka.numbered != kb.numbered) return !ka.numbered;
    if (ka.number != kb.number) return ka.number < kb.number;
    return ka.width < kb.width;
  });
  return hosts;
}

int RunHostlistCommand(CommandContext& ctx, const std::vector<std::string>& words) {
  if (words.size() < 2 || ToLower(words[0]) != "show") return -1;
  std::string what = ToLower(words[1]);
  // scontrol takes "hostname" (and any prefix of "hostnames" from "hostn") for hostnames, as
  // scripts write it: scontrol show hostname $SLURM_NODELIST | head -n1 (h19 s6, the corpus).
  if (what.size() >= 5 && std::string("hostnames").rfind(what, 0) == 0) what = "hostnames";
  if (what != "hostnames" && what != "hostlist" && what != "hostlistsorted") return -1;
  std::vector<std::string> args(words.begin() + 2, words.end());
  if (args.empty() && what == "hostnames") {
    auto it = ctx.env.find("SLURM_JOB_NODELIST");
    if (it == ctx.env.end() || it->second.empty())
      return Fail(ctx, "show hostnames: no host list given and SLURM_JOB_NODELIST is not set");
    args.push_back(it->second);
  }
  if (args.empty()) return Fail(ctx, "show " + what + ": a host list is required");
  auto text = ListText(ctx, args);
  if (!text.ok()) return Fail(ctx, text.status().message());
  auto hosts = ExpandHostlist(*text);
  if (!hosts.ok())
    return Fail(ctx, "show " + what + ": invalid host list \"" + *text + "\": " +
                         hosts.status().message());
  if (what == "hostnames") {
    for (const auto& h : *hosts) *ctx.out << h << "\n";
    return 0;
  }
  if (what == "hostlistsorted") *hosts = SortHostnames(std::move(*hosts));
  *ctx.out << CompressHostlist(*hosts) << "\n";
  return 0;
}

}  // namespace tessera::cli
