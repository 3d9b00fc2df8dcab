// tprio (sprio): every pending job's multifactor priority, factor by factor (issue 16 §3).
// Options as sprio: -j/--jobs=, -u/--user=, -l/--long, -w/--weights, -o/--format=, -n/--norm
// (factors in [0, 1] instead of weighted), -h/--noheader, --help, --version.
// Formats as sprio (src/sprio/sprio.c, print.c): "%[.]W<letter>" ('.' right-justifies, W the
// width, other text is kept): i JOBID, r PARTITION, u USER, o ACCOUNT, Y/y PRIORITY, S SITE,
// A/a AGE, B/b ASSOC, F/f FAIRSHARE, J/j JOBSIZE, P/p PARTITION, Q/q QOS, N NICE, n QOSNAME,
// T/t TRES (upper case weighted, rounded; lower case normalized, 7 decimals). Default:
// "%.15i %9r[ %.8u] %.10Y %.10S" plus the factors whose weight is not 0; -l:
// "%.15i %9r %.8u %.8o %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10n %.10Q %.11N %.20T".
// -w prints the header and a "Weights" row only. Jobs by priority (highest first), then id.
// Tessera has no site factor, association factor or TRES weights: SITE and ASSOC are 0, TRES "".
// Tessera's time-limit factor (issue 17 §2, ctld/sched/priority.h) is L/l TIMELIMIT: in the
// default format when its weight is not 0, and in -l's before NICE only then (so a Slurm
// configuration keeps sprio's exact -l layout).
// The order shown is the priority order; the scheduler serves the oldest job of each partition
// that has waited bf_oldest_wait before it (issue 17 §2, ctld/sched/actions/actions.cc
// ServeOldest): --help says so, and tcontrol show job shows that job's Reason and StartTime.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <ostream>
#include <set>

#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/help_text.h"
#include "cli/lib/text_util.h"

namespace tessera::cli {
namespace {

enum { kJobs = 1, kUser, kLong, kWeights, kFormat, kNorm, kNoHeader, kHelp, kVersion };

const std::vector<OptionSpec> kSpecs = {
    {"jobs", 'j', ArgKind::kRequired, kJobs},     {"user", 'u', ArgKind::kRequired, kUser},
    {"users", 0, ArgKind::kRequired, kUser},      {"long", 'l', ArgKind::kNone, kLong},
    {"weights", 'w', ArgKind::kNone, kWeights},   {"format", 'o', ArgKind::kRequired, kFormat},
    {"norm", 'n', ArgKind::kNone, kNorm},         {"noheader", 'h', ArgKind::kNone, kNoHeader},
    {"help", 0, ArgKind::kNone, kHelp},           {"version", 'V', ArgKind::kNone, kVersion},
};

const char kUsage[] =
    "Usage: tprio [-j jobs] [-u users] [-l] [-w] [-n] [-o format] [-h]\n"
    "  -j, --jobs=LIST     only these jobs\n"
    "  -u, --user=LIST     only these users' jobs (adds the USER column); also --users\n"
    "  -l, --long          every factor\n"
    "  -w, --weights       the configured weights only\n"
    "  -n, --norm          normalized factors (0..1) instead of weighted\n"
    "  -o, --format=FMT    sprio format (%.15i %9r %.10Y %.10F ...)\n"
    "  -h, --noheader      no header\n"
    "      --help          this help;  -V, --version: the version\n"
    "Jobs are listed by priority, the order the scheduler places them in. Under the\n"
    "default policy (SchedulerParameters bf_oldest, bf_oldest_wait) the oldest pending\n"
    "job of each partition that has waited an hour is served before that order: it\n"
    "shows Reason=Resources and a StartTime in tcontrol show job while jobs listed\n"
    "above it show Reason=Priority.\n";

struct Item {
  std::string prefix;  // literal text before the field
  char letter = 0;
  int width = 0;
  bool right = false;
};

std::vector<Item> ParseFormat(const std::string& f) {
  std::vector<Item> out;
  std::string lit;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%' || i + 1 >= f.size()) {
      lit += f[i];
      continue;
    }
    Item it;
    it.prefix = lit;
    lit.clear();
    ++i;
    if (f[i] == '.') it.right = true, ++i;
    while (i < f.size() && std::isdigit(static_cast<unsigned char>(f[i])))
      it.width = it.width * 10 + (f[i++] - '0');
    if (i < f.size()) it.letter = f[i];
    out.push_back(it);
  }
  if (!lit.empty()) out.push_back({lit, 0, 0, false});
  return out;
}

// sprio's _print_str: right-justified or cut to the width, then padded.
std::string Cell(const std::string& s, const Item& it) {
  if (it.width == 0) return s;
  std::string v = s.substr(0, std::min<size_t>(s.size(), size_t(it.width)));
  std::string pad(size_t(it.width) - v.size(), ' ');
  return it.right ? pad + v : v + pad;
}

std::string Int(double v) {
  char b[32];
  snprintf(b, sizeof b, "%.0f", v);
  return b;
}
std::string Norm(double v) {
  char b[32];
  snprintf(b, sizeof b, "%.7f", v);
  return b;
}

const char* Header(char c) {
  switch (c) {
    case 'i': return "JOBID";
    case 'r': return "PARTITION";
    case 'u': return "USER";
    case 'o': return "ACCOUNT";
    case 'Y': case 'y': return "PRIORITY";
    case 'S': return "SITE";
    case 'A': case 'a': return "AGE";
    case 'B': case 'b': return "ASSOC";
    case 'F': case 'f': return "FAIRSHARE";
    case 'J': case 'j': return "JOBSIZE";
    case 'P': case 'p': return "PARTITION";
    case 'Q': case 'q': return "QOS";
    case 'N': return "NICE";
    case 'n': return "QOSNAME";
    case 'T': case 't': return "TRES";
    case 'L': case 'l': return "TIMELIMIT";
  }
  return "";
}

// (weighted, weight) of a factor letter; weight 0 gives normalized 0.
std::pair<double, uint32_t> Factor(const pb::JobPriority& j, const pb::PriorityWeights& w,
                                   char c) {
  switch (std::toupper(static_cast<unsigned char>(c))) {
    case 'A': return {j.age(), w.age()};
    case 'F': return {j.fairshare(), w.fairshare()};
    case 'J': return {j.job_size(), w.job_size()};
    case 'P': return {j.partition_factor(), w.partition()};
    case 'Q': return {j.qos_factor(), w.qos()};
    case 'L': return {j.time_limit_factor(), w.time_limit()};
  }
  return {0, 0};
}

std::string JobValue(const pb::JobPriority& j, const pb::PriorityWeights& w, char c) {
  switch (c) {
    case 'i': return std::to_string(j.job_id());
    case 'r': return j.partition();
    case 'u': return j.user();
    case 'o': return j.account();
    case 'n': return j.qos();
    case 'N': return std::to_string(j.nice());
    case 'Y': return std::to_string(std::max<int64_t>(1, j.priority()));
    case 'y': {
      double sum = double(w.age()) + w.fairshare() + w.job_size() + w.partition() + w.qos() +
                   w.time_limit();
      return Norm(sum > 0 ? double(j.priority()) / sum : 0);
    }
    case 'S': case 'B': return "0";
    case 'b': return Norm(0);
    case 'T': case 't': return "";
  }
  auto [weighted, weight] = Factor(j, w, c);
  if (std::isupper(static_cast<unsigned char>(c))) return Int(weighted);
  return Norm(weight ? weighted / weight : 0);
}

std::string WeightValue(const pb::PriorityWeights& w, char c) {
  if (c == 'i') return "Weights";
  if (std::string("AaFfJjPpQqLl").find(c) != std::string::npos) return Int(Factor({}, w, c).second);
  return "";
}

std::string DefaultFormat(bool lng, bool norm, bool user, const pb::PriorityWeights& w) {
  // -n: right-justified like the weighted columns, so each header ends where its values end
  // (issue 17: left-justified headers ended before their 9-character values).
  std::string limit = w.time_limit() ? (norm ? " %.10l" : " %.10L") : "";
  if (lng)
    return norm ? "%.15i %9r %.8u %.8o %.10y %.10a %.10b %.10f %.10j %.10p %.10n %.10q" + limit + " %.20t"
                : "%.15i %9r %.8u %.8o %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10n %.10Q" +
                      limit + " %.11N %.20T";
  std::string f = "%.15i %9r";
  if (user) f += " %.8u";
  f += norm ? " %.10y" : " %.10Y %.10S";
  auto add = [&](uint32_t weight, char c) {
    if (!weight) return;
    f += norm ? std::string(" %.10") + c : std::string(" %.10") + char(std::toupper(c));
  };
  add(w.age(), 'a');
  add(w.fairshare(), 'f');
  add(w.job_size(), 'j');
  add(w.partition(), 'p');
  add(w.qos(), 'q');
  add(w.time_limit(), 'l');
  return f;
}

}  // namespace

int RunTprio(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see tprio --help)");
  bool lng = false, weights = false, norm = false, header = true;
  std::string format;
  std::set<uint64_t> jobs;
  std::set<std::string> users;
  for (const auto& o : parsed->options) {
    switch (o.id) {
      case kJobs:
        for (const auto& s : Split(*o.value, ',')) {
          char* end = nullptr;
          unsigned long long id = std::strtoull(s.c_str(), &end, 10);
          if (s.empty() || *end) return Fail(ctx, "invalid job id \"" + s + "\"");
          jobs.insert(id);
        }
        break;
      case kUser: for (const auto& u : Split(*o.value, ',')) users.insert(u); break;
      case kLong: lng = true; break;
      case kWeights: weights = true; break;
      case kFormat: format = *o.value; break;
      case kNorm: norm = true; break;
      case kNoHeader: header = false; break;
      case kHelp: return (*ctx.out << HelpText(ctx, kUsage), 0);
      case kVersion: return (*ctx.out << VersionLine() << "\n", 0);
    }
  }
  if (!parsed->positionals.empty())
    return Fail(ctx, "unexpected argument \"" + parsed->positionals[0] + "\" (see tprio --help)");
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  auto resp = (*api)->GetPriorities(pb::GetPrioritiesRequest());
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  const auto& w = resp->weights();
  auto items = ParseFormat(format.empty() ? DefaultFormat(lng, norm, !users.empty(), w) : format);
  auto line = [&](auto value) {
    std::string s;
    for (const auto& it : items) s += it.prefix + (it.letter ? Cell(value(it.letter), it) : "");
    *ctx.out << s << "\n";
  };
  if (header) line([](char c) { return std::string(Header(c)); });
  if (weights) {
    line([&](char c) { return WeightValue(w, c); });
    return 0;
  }
  std::vector<pb::JobPriority> rows;
  for (const auto& j : resp->jobs()) {
    if (!jobs.empty() && !jobs.count(j.job_id())) continue;
    if (!users.empty() && !users.count(j.user())) continue;
    rows.push_back(j);
  }
  if (!jobs.empty() && rows.empty()) {
    *ctx.out << "Unable to find jobs matching user/id(s) specified\n";
    return 0;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.priority() != b.priority() ? a.priority() > b.priority() : a.job_id() < b.job_id();
  });
  for (const auto& j : rows) line([&](char c) { return JobValue(j, w, c); });
  return 0;
}

}  // namespace tessera::cli
