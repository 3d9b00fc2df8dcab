#include "cli/lib/arg_parser.h"

#include "cli/lib/text_util.h"

namespace tessera::cli {
namespace {

std::string Canonical(const OptionSpec& s) {
  return s.long_name.empty() ? std::string("-") + s.short_name : "--" + s.long_name;
}

Result<const OptionSpec*> FindLong(const std::vector<OptionSpec>& specs, const std::string& name) {
  std::vector<const OptionSpec*> prefix_hits;
  for (const auto& s : specs) {
    if (s.long_name.empty()) continue;
    if (s.long_name == name) return &s;
    if (StartsWith(s.long_name, name)) prefix_hits.push_back(&s);
  }
  if (prefix_hits.size() == 1) return prefix_hits[0];
  if (prefix_hits.empty()) return InvalidArgument("unrecognized option '--" + name + "'");
  std::string msg = "option '--" + name + "' is ambiguous; possibilities:";
  for (const auto* s : prefix_hits) msg += " '--" + s->long_name + "'";
  return InvalidArgument(msg);
}

const OptionSpec* FindShort(const std::vector<OptionSpec>& specs, char c) {
  for (const auto& s : specs)
    if (s.short_name == c) return &s;
  return nullptr;
}

// Parses args[i] (a long option); may consume args[i+1]. Advances i past what it used.
Status ParseLong(const std::vector<std::string>& args, size_t& i,
                 const std::vector<OptionSpec>& specs, ParsedArgs& out) {
  std::string body = args[i].substr(2);
  std::optional<std::string> attached;
  size_t eq = body.find('=');
  if (eq != std::string::npos) {
    attached = body.substr(eq + 1);
    body = body.substr(0, eq);
  }
  auto spec = FindLong(specs, body);
  if (!spec.ok()) return spec.status();
  const OptionSpec& s = **spec;
  ParsedOption opt{s.id, Canonical(s), std::nullopt};
  if (s.arg == ArgKind::kNone && attached)
    return InvalidArgument("option '--" + s.long_name + "' doesn't allow an argument");
  if (s.arg == ArgKind::kRequired && !attached) {
    if (i + 1 >= args.size())
      return InvalidArgument("option '--" + s.long_name + "' requires an argument");
    attached = args[++i];
  }
  if (s.arg != ArgKind::kNone) opt.value = attached;
  out.options.push_back(std::move(opt));
  ++i;
  return Status::Ok();
}

// Parses args[i] (a bundle of short options); may consume args[i+1].
Status ParseShort(const std::vector<std::string>& args, size_t& i,
                  const std::vector<OptionSpec>& specs, ParsedArgs& out) {
  const std::string& a = args[i];
  for (size_t k = 1; k < a.size(); ++k) {
    const OptionSpec* s = FindShort(specs, a[k]);
    if (!s) return InvalidArgument(std::string("invalid option -- '") + a[k] + "'");
    ParsedOption opt{s->id, Canonical(*s), std::nullopt};
    if (s->arg == ArgKind::kNone) {
      out.options.push_back(std::move(opt));
      continue;
    }
    if (k + 1 < a.size()) {
      opt.value = a.substr(k + 1);
    } else if (s->arg == ArgKind::kRequired) {
      if (i + 1 >= args.size())
        return InvalidArgument(std::string("option requires an argument -- '") + a[k] + "'");
      opt.value = args[++i];
    }
    out.options.push_back(std::move(opt));
    break;
  }
  ++i;
  return Status::Ok();
}

}  // namespace

Result<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                             const std::vector<OptionSpec>& specs, bool stop_at_positional) {
  ParsedArgs out;
  size_t i = 0;
  while (i < args.size()) {
    const std::string& a = args[i];
    if (a == "--") {
      out.positionals.insert(out.positionals.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      TESSERA_RETURN_IF_ERROR(ParseLong(args, i, specs, out));
    } else if (a.size() > 1 && a[0] == '-') {
      TESSERA_RETURN_IF_ERROR(ParseShort(args, i, specs, out));
    } else if (stop_at_positional) {
      out.positionals.insert(out.positionals.end(), args.begin() + i, args.end());
      break;
    } else {
      out.positionals.push_back(a);
      ++i;
    }
  }
  return out;
}

}  // namespace tessera::cli
