#include "common/config_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessera {
namespace {

constexpr int kMaxIncludeDepth = 16;
constexpr size_t kMaxConfigBytes = 16 << 20;

Status ParseInto(std::string_view text, const std::string& filename, int depth,
                 std::vector<std::string>* stack, std::vector<ConfigLine>* out);

Status ParseFileInto(const std::string& path, int depth, std::vector<std::string>* stack,
                     std::vector<ConfigLine>* out, const std::string& from) {
  std::string canon = std::filesystem::weakly_canonical(path).string();
  for (const auto& s : *stack)
    if (s == canon) return InvalidArgument(from + ": include cycle through " + path);
  if (depth > kMaxIncludeDepth) return InvalidArgument(from + ": includes nested too deeply");
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound((from.empty() ? "" : from + ": ") + "cannot open config file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > kMaxConfigBytes) return InvalidArgument(path + ": config file too large");
  stack->push_back(canon);
  Status st = ParseInto(text, path, depth, stack, out);
  stack->pop_back();
  return st;
}

// Splits one logical line into tokens, honouring quotes; strips comments.
Result<std::vector<std::string>> Tokenize(const std::string& line, const std::string& where) {
  std::vector<std::string> toks;
  std::string cur;
  bool in_quote = false, have = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\\' && i + 1 < line.size() && line[i + 1] == '#') {
      cur += '#';
      have = true;
      ++i;
    } else if (c == '"') {
      in_quote = !in_quote;
      have = true;
    } else if (c == '#' && !in_quote) {
      break;
    } else if (std::isspace(static_cast<unsigned char>(c)) && !in_quote) {
      if (have) toks.push_back(cur);
      cur.clear();
      have = false;
    } else {
      cur += c;
      have = true;
    }
  }
  if (in_quote) return InvalidArgument(where + ": unterminated quote");
  if (have) toks.push_back(cur);
  return toks;
}

Status ParseInto(std::string_view text, const std::string& filename, int depth,
                 std::vector<std::string>* stack, std::vector<ConfigLine>* out) {
  int lineno = 0;
  size_t pos = 0;
  std::string logical;
  int logical_start = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string raw(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++lineno;
    if (size_t nul = raw.find('\0'); nul != std::string::npos)  // would cut the value short in C
      return InvalidArgument(filename + ":" + std::to_string(lineno) + ": NUL byte at column " +
                             std::to_string(nul + 1) + "; a config file is text");
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (logical.empty()) logical_start = lineno;
    if (!raw.empty() && raw.back() == '\\') {
      raw.pop_back();
      logical += raw + " ";
      if (pos <= text.size()) continue;
    }
    logical += raw;
    std::string where = filename + ":" + std::to_string(logical_start);
    auto toks = Tokenize(logical, where);
    logical.clear();
    if (!toks.ok()) return toks.status();
    if (toks->empty()) continue;
    if (ToLower((*toks)[0]) == "include") {
      if (toks->size() != 2) return InvalidArgument(where + ": Include takes exactly one path");
      std::filesystem::path inc = (*toks)[1];
      if (inc.is_relative()) inc = std::filesystem::path(filename).parent_path() / inc;
      TESSERA_RETURN_IF_ERROR(ParseFileInto(inc.string(), depth + 1, stack, out, where));
      continue;
    }
    ConfigLine cl;
    cl.file = filename;
    cl.line = logical_start;
    for (const auto& t : *toks) {
      size_t eq = t.find('=');
      if (eq == std::string::npos || eq == 0) {
        return InvalidArgument(where + ": expected Key=Value, got \"" + t + "\"");
      }
      cl.pairs.push_back({ToLower(t.substr(0, eq)), t.substr(0, eq), t.substr(eq + 1)});
    }
    out->push_back(std::move(cl));
  }
  return Status::Ok();
}

}  // namespace

std::string ToLower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::vector<std::string> SplitList(std::string_view s, bool unique) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string_view::npos) end = s.size();
    std::string item(s.substr(start, end - start));
    if (!item.empty() && (!unique || std::find(out.begin(), out.end(), item) == out.end()))
      out.push_back(std::move(item));
    start = end + 1;
  }
  return out;
}

const std::string* ConfigLine::Find(std::string_view key) const {
  for (const auto& p : pairs)
    if (p.key == key) return &p.value;
  return nullptr;
}

Result<std::vector<ConfigLine>> ParseConfigFile(const std::string& path) {
  std::vector<ConfigLine> out;
  std::vector<std::string> stack;
  TESSERA_RETURN_IF_ERROR(ParseFileInto(path, 0, &stack, &out, ""));
  return out;
}

Result<std::vector<ConfigLine>> ParseConfigText(std::string_view text, const std::string& filename) {
  std::vector<ConfigLine> out;
  std::vector<std::string> stack{filename};
  TESSERA_RETURN_IF_ERROR(ParseInto(text, filename, 0, &stack, &out));
  return out;
}

}  // namespace tessera
