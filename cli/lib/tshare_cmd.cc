// tshare (sshare): fair-share usage and factors of the associations (issue 16 §3).
// Options as sshare: -a/--all, -A/--accounts=, -u/--users=, -U/--Users (user rows only),
// -l/--long, -o/--format=, -p/--parsable, -P/--parsable2, -n/--noheader, --help, --version.
// Formats as sshare (src/sshare/process.c, src/common/print_fields.c): fields Account (-20,
// tree-indented), User (10), RawShares (10), NormShares (11), RawUsage (11), NormUsage (11),
// EffectvUsage (13), FairShare (10), LevelFS (10); "Name%W" sets a width. Default (Fair Tree):
// Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare; -l adds NormUsage and
// LevelFS (classic: no LevelFS). Without -a/-u only the caller's user rows are listed.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>

#include "cli/lib/arg_parser.h"
#include "cli/lib/command.h"
#include "cli/lib/help_text.h"
#include "cli/lib/text_util.h"
#include "cli/lib/tshare_queues.h"

namespace tessera::cli {
namespace {

enum { kAll = 1, kAccounts, kUsers, kUsersOnly, kLong, kFormat, kParsable, kParsable2,
       kNoHeader, kHelp, kVersion, kQueues };

const std::vector<OptionSpec> kSpecs = {
    {"all", 'a', ArgKind::kNone, kAll},          {"accounts", 'A', ArgKind::kRequired, kAccounts},
    {"users", 'u', ArgKind::kRequired, kUsers},  {"Users", 'U', ArgKind::kNone, kUsersOnly},
    {"long", 'l', ArgKind::kNone, kLong},        {"format", 'o', ArgKind::kRequired, kFormat},
    {"parsable", 'p', ArgKind::kNone, kParsable}, {"parsable2", 'P', ArgKind::kNone, kParsable2},
    {"noheader", 'n', ArgKind::kNone, kNoHeader}, {"help", 0, ArgKind::kNone, kHelp},
    {"version", 'V', ArgKind::kNone, kVersion},
    {"queues", 0, ArgKind::kNone, kQueues},  // issue 16 §2 (tshare_queues.h)
};

const char kUsage[] =
    "Usage: tshare [-a] [-A accounts] [-u users] [-U] [-l] [-o format] [-p|-P] [-n]\n"
    "  -a, --all             all users' associations\n"
    "  -A, --accounts=LIST   only these accounts\n"
    "  -u, --users=LIST      these users' associations\n"
    "  -U, --Users           user rows only\n"
    "  -l, --long            add NormUsage and LevelFS\n"
    "  -o, --format=FIELDS   Account,User,RawShares,NormShares,RawUsage,NormUsage,\n"
    "                        EffectvUsage,FairShare,LevelFS (Name%WIDTH sets a width)\n"
    "  -p, --parsable        '|' after every field;  -P, --parsable2: between fields\n"
    "  -n, --noheader        no header\n"
    "      --queues          accounts as queues: Guarantee, Limit, Weight, Allocated, Demand,\n"
    "                        Deserved, Borrowed, OverShare (-o takes these fields)\n"
    "      --help            this help;  -V, --version: the version\n";

enum class Field { kAccount, kUser, kRawShares, kNormShares, kRawUsage, kNormUsage, kEff, kFs,
                   kLevelFs };
struct Column {
  Field f;
  std::string name;
  int len;  // negative: left-justified
};

const std::vector<Column> kFields = {
    {Field::kAccount, "Account", -20},     {Field::kUser, "User", 10},
    {Field::kRawShares, "RawShares", 10},  {Field::kNormShares, "NormShares", 11},
    {Field::kRawUsage, "RawUsage", 11},    {Field::kNormUsage, "NormUsage", 11},
    {Field::kEff, "EffectvUsage", 13},     {Field::kFs, "FairShare", 10},
    {Field::kLevelFs, "LevelFS", 10},
};

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// sshare matches a field by a case-insensitive prefix ("A", "Eff", "Fairshare").
Result<std::vector<Column>> ParseFields(const std::string& spec) {
  std::vector<Column> out;
  for (const auto& item : Split(spec, ',')) {
    if (item.empty()) continue;
    std::string name = item;
    int width = 0;
    size_t pct = item.find('%');
    if (pct != std::string::npos) {
      name = item.substr(0, pct);
      width = std::atoi(item.c_str() + pct + 1);
    }
    const Column* hit = nullptr;
    for (const auto& c : kFields)
      if (!name.empty() && Lower(c.name).rfind(Lower(name), 0) == 0) {
        hit = &c;
        break;
      }
    if (!hit) return InvalidArgument("Invalid field requested: \"" + name + "\"");
    Column c = *hit;
    if (width) c.len = c.len < 0 ? -width : width;
    out.push_back(c);
  }
  return out;
}

struct Printer {
  std::ostream& out;
  int parsable;  // 0 none, 1 -p, 2 -P
  void Cell(const std::string& v, const Column& c, bool last) {
    if (parsable) {
      out << v << (parsable == 2 && last ? "" : "|");
      return;
    }
    size_t w = static_cast<size_t>(std::abs(c.len));
    std::string s = v;
    if (s.size() > w) s = s.substr(0, w - 1) + "+";
    std::string pad(w - s.size(), ' ');
    out << (c.len < 0 ? s + pad : pad + s) << " ";
  }
};

std::string Dbl(double v) {
  if (std::isinf(v)) return "inf";
  char b[64];
  snprintf(b, sizeof b, "%f", v);
  return b;
}

std::string Value(const pb::ShareInfo& s, Field f) {
  bool root = s.depth() == 0;
  switch (f) {
    case Field::kAccount:
      return std::string(s.depth(), ' ') + s.account();  // tree-indented (also with -p/-P)
    case Field::kUser: return s.user();
    case Field::kRawShares: return root ? "" : std::to_string(s.raw_shares());
    case Field::kNormShares: return Dbl(root ? 0 : s.norm_shares());
    case Field::kRawUsage: return std::to_string(static_cast<uint64_t>(s.raw_usage()));
    case Field::kNormUsage: return Dbl(s.norm_usage());
    case Field::kEff: return Dbl(s.effective_usage());
    case Field::kFs: return s.user().empty() ? "" : Dbl(s.fairshare());
    case Field::kLevelFs: return root ? "" : Dbl(s.level_fs());
  }
  return "";
}

}  // namespace

int RunTshare(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, false);
  if (!parsed.ok()) return Fail(ctx, parsed.status().message() + " (see tshare --help)");
  bool all = false, users_only = false, lng = false, header = true, queues = false;
  int parsable = 0;
  std::string format;
  std::set<std::string> accounts, users;
  for (const auto& o : parsed->options) {
    switch (o.id) {
      case kAll: all = true; break;
      case kAccounts: for (const auto& a : Split(*o.value, ',')) accounts.insert(a); break;
      case kUsers: for (const auto& u : Split(*o.value, ',')) users.insert(u); break;
      case kUsersOnly: users_only = true; break;
      case kLong: lng = true; break;
      case kFormat: format = *o.value; break;
      case kParsable: parsable = 1; break;
      case kParsable2: parsable = 2; break;
      case kNoHeader: header = false; break;
      case kHelp: return (*ctx.out << HelpText(ctx, kUsage), 0);
      case kVersion: return (*ctx.out << VersionLine() << "\n", 0);
      case kQueues: queues = true; break;
    }
  }
  if (!parsed->positionals.empty())
    return Fail(ctx, "unexpected argument \"" + parsed->positionals[0] + "\" (see tshare --help)");
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  auto resp = (*api)->GetShares(pb::GetSharesRequest());
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  if (queues) {  // issue 16 §2
    if (resp->queues().empty())
      return Fail(ctx, "no queues: no account sets Guarantee, Limit, Weight or Reclaimable "
                       "(tacctmgr modify account NAME set Guarantee=gres/gpu=N)");
    Status st = PrintQueues(*ctx.out, *resp, format, parsable, header, accounts);
    return st.ok() ? 0 : Fail(ctx, st.message());
  }
  if (format.empty())
    format = !lng ? "Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare"
             : resp->fair_tree()
                 ? "Account,User,RawShares,NormShares,RawUsage,NormUsage,EffectvUsage,FairShare,"
                   "LevelFS"
                 : "Account,User,RawShares,NormShares,RawUsage,NormUsage,EffectvUsage,FairShare";
  auto cols = ParseFields(format);
  if (!cols.ok()) return Fail(ctx, cols.status().message());
  if (users.empty() && !all && ctx.names) users.insert(ctx.names->UserName(ctx.uid));
  Printer p{*ctx.out, parsable};
  if (header) {
    for (size_t i = 0; i < cols->size(); ++i)
      p.Cell((*cols)[i].name, (*cols)[i], i + 1 == cols->size());
    *ctx.out << "\n";
    if (!parsable) {
      for (const auto& c : *cols) *ctx.out << std::string(std::abs(c.len), '-') << " ";
      *ctx.out << "\n";
    }
  }
  for (const auto& s : resp->shares()) {
    bool user_row = !s.user().empty();
    if (users_only && !user_row) continue;
    if (!accounts.empty() && !accounts.count(s.account())) continue;
    if (user_row && !all && !users.count(s.user())) continue;
    for (size_t i = 0; i < cols->size(); ++i)
      p.Cell(Value(s, (*cols)[i].f), (*cols)[i], i + 1 == cols->size());
    *ctx.out << "\n";
  }
  return 0;
}

}  // namespace tessera::cli
