// tacctmgr (sacctmgr): the association store (issue 16 §1).
//   tacctmgr [-i] [-n] [-p|-P] VERB ENTITY [NAMES] [where] [KEY=VALUE...] [set KEY=VALUE...]
//            [format=FIELDS]
// VERB: add|create, modify|update, delete|remove, show|list; ENTITY: account, user, qos,
// assoc|association. Changes without -i are shown first and asked for, as sacctmgr does:
// "Would you like to commit changes? (You have 30 seconds to decide)" and "(N/y): " on stdout;
// only an answer starting with y or Y commits (end of input: " Changes Discarded").
#include <iostream>
#include <sstream>

#include "cli/lib/acctmgr_format.h"
#include "cli/lib/command.h"
#include "cli/lib/help_text.h"

namespace tessera::cli {
namespace {

const char kUsage[] =
    "Usage: tacctmgr [-i] [-n] [-p|-P] COMMAND\n"
    "  -i, --immediate   commit changes without asking\n"
    "  -n, --noheader    no header lines\n"
    "  -p, --parsable    '|' after every field\n"
    "  -P, --parsable2   '|' between fields\n"
    "  -h, --help        this text;  -V, --version\n"
    "COMMAND:\n"
    "  add|create account NAME[,NAME] [Parent=] [Description=] [Organization=] [Fairshare=]\n"
    "                     [GrpTRES=] [GrpJobs=] [GrpSubmitJobs=] [MaxTRES=] [MaxJobs=]\n"
    "                     [MaxSubmitJobs=] [MaxWall=] [QOS=] [DefaultQOS=]\n"
    "  add user NAME[,NAME] Account=A[,B] [DefaultAccount=] [Fairshare=] [limits] [QOS=]\n"
    "  add qos NAME [Priority=] [MaxWall=] [MaxJobsPerUser=] [MaxSubmitJobsPerUser=]\n"
    "               [MaxTRESPerUser=] [GrpTRES=] [GrpJobs=]\n"
    "  modify|update account|user|qos [where] NAME|Name=.. [Account=..] set KEY=VALUE ...\n"
    "  delete|remove account|user|qos NAME [where Account=..]\n"
    "  show|list account|user|qos|assoc [where KEY=VALUE ...] [format=FIELD[%WIDTH],...]\n";

struct Args {
  bool immediate = false, noheader = false, help = false, version = false;
  AcctmgrLayout layout = AcctmgrLayout::kColumns;
  std::vector<std::string> words;
};

Result<Args> ParseOptions(const std::vector<std::string>& argv) {
  Args a;
  for (const auto& w : argv) {
    if (w == "-i" || w == "--immediate") a.immediate = true;
    else if (w == "-n" || w == "--noheader") a.noheader = true;
    else if (w == "-p" || w == "--parsable") a.layout = AcctmgrLayout::kParsable;
    else if (w == "-P" || w == "--parsable2") a.layout = AcctmgrLayout::kParsable2;
    else if (w == "-h" || w == "--help") a.help = true;
    else if (w == "-V" || w == "--version") a.version = true;
    else if (w.size() > 1 && w[0] == '-' && w.find('=') == std::string::npos) {
      // combined short options: -iP, -nP
      for (size_t i = 1; i < w.size(); ++i) {
        char c = w[i];
        if (c == 'i') a.immediate = true;
        else if (c == 'n') a.noheader = true;
        else if (c == 'p') a.layout = AcctmgrLayout::kParsable;
        else if (c == 'P') a.layout = AcctmgrLayout::kParsable2;
        else return InvalidArgument("invalid option -- '" + std::string(1, c) + "'");
      }
    } else {
      a.words.push_back(w);
    }
  }
  return a;
}

// VERB ENTITY rest... -> request; `format` gets format= of show.
Result<pb::AssocRequest> BuildRequest(const std::vector<std::string>& words, std::string* format) {
  if (words.size() < 2)
    return InvalidArgument("need a command and an entity (see tacctmgr --help)");
  pb::AssocRequest r;
  r.set_verb(words[0]);
  r.set_entity(words[1]);
  std::string verb = words[0];
  for (auto& c : verb) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool is_add = verb == "add" || verb == "create";
  bool in_set = false;
  for (size_t i = 2; i < words.size(); ++i) {
    std::string w = words[i], low = w;
    for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (low == "where") { in_set = false; continue; }
    if (low == "set") { in_set = true; continue; }
    if (low == "withassoc" || low == "withsubaccounts" || low == "withdeleted") continue;
    size_t eq = w.find('=');
    if (eq == std::string::npos) {
      std::stringstream ss(w);
      for (std::string n; std::getline(ss, n, ',');)
        if (!n.empty()) r.add_names(n);
      continue;
    }
    std::string key = w.substr(0, eq), value = w.substr(eq + 1);
    bool quoted = value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
                  value.back() == value.front();
    if (quoted)
      value = value.substr(1, value.size() - 2);
    std::string lkey = key;
    for (auto& c : lkey) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lkey == "format") {
      *format = value;
      continue;
    }
    auto* kv = is_add || in_set ? r.add_set() : r.add_where();
    kv->set_key(key);
    kv->set_value(value);
  }
  return r;
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string CanonEntity(const std::string& e) {
  std::string l = Lower(e);
  if (l == "accounts") return "account";
  if (l == "users") return "user";
  if (l == "association" || l == "associations" || l == "assocs") return "assoc";
  return l;
}

int Show(CommandContext& ctx, ControllerApi& api, const Args& a, const pb::AssocRequest& req,
         const std::string& format) {
  std::string entity = CanonEntity(req.entity());
  auto fields = ParseAcctmgrFormat(format.empty() ? DefaultAcctmgrFormat(entity) : format);
  if (!fields.ok()) return Fail(ctx, fields.status().message());
  auto resp = api.ShowAssoc(req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  std::vector<AcctmgrRow> rows;
  for (const auto& r : resp->rows()) {
    AcctmgrRow row;
    for (const auto& f : r.fields()) row.emplace_back(f.key(), f.value());
    rows.push_back(std::move(row));
  }
  *ctx.out << FormatAcctmgrTable(*fields, rows, a.layout, !a.noheader);
  return 0;
}

// sacctmgr's commit_check: true when the answer starts with y/Y.
bool Confirm(CommandContext& ctx) {
  *ctx.out << "Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): ";
  ctx.out->flush();
  std::string answer;
  if (!ctx.in || !std::getline(*ctx.in, answer)) {
    *ctx.out << "\n";
    return false;
  }
  *ctx.out << "\n";
  return !answer.empty() && (answer[0] == 'y' || answer[0] == 'Y');
}

int Change(CommandContext& ctx, ControllerApi& api, const Args& a, pb::AssocRequest req) {
  if (!a.immediate) {
    req.set_dry_run(true);
    auto probe = api.ChangeAssoc(req);
    if (!probe.ok()) return Fail(ctx, probe.status().message());
    *ctx.out << probe->message();
    if (probe->changed_rows() == 0) return (*ctx.out << " Nothing modified\n", 0);
    if (!Confirm(ctx)) return (*ctx.out << " Changes Discarded\n", 0);
    req.set_dry_run(false);
  }
  auto resp = api.ChangeAssoc(req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  if (a.immediate) *ctx.out << resp->message();
  if (resp->changed_rows() == 0) *ctx.out << " Nothing modified\n";
  return 0;
}

}  // namespace

int RunTacctmgr(CommandContext& ctx) {
  auto a = ParseOptions(ctx.args);
  if (!a.ok()) return Fail(ctx, a.status().message() + " (see tacctmgr --help)");
  if (a->help) return (*ctx.out << HelpText(ctx, kUsage), 0);
  if (a->version) return (*ctx.out << VersionLine() << "\n", 0);
  std::string format;
  auto req = BuildRequest(a->words, &format);
  if (!req.ok()) return Fail(ctx, req.status().message());
  std::string verb = Lower(req->verb());
  bool show = verb == "show" || verb == "list";
  if (!show && !format.empty()) return Fail(ctx, "format= is for show only");
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  if (show) return Show(ctx, **api, *a, *req, format);
  return Change(ctx, **api, *a, *req);
}

}  // namespace tessera::cli
