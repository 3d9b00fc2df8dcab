#include "common/config_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/client_config.h"  // ParseConfigFileLenient

namespace tessera {
namespace {

constexpr int kMaxIncludeDepth = 16;
constexpr size_t kMaxConfigBytes = 16 << 20;

// skipped == nullptr: the first error ends the parse. Otherwise a line (or Include) that cannot
// be read is recorded there as "file:line: message" and the parse goes on (ParseConfigFileLenient).
Status ParseInto(std::string_view text, const std::string& filename, int depth,
                 std::vector<std::string>* stack, std::vector<ConfigLine>* out,
                 std::vector<std::string>* skipped);

Status ParseFileInto(const std::string& path, int depth, std::vector<std::string>* stack,
                     std::vector<ConfigLine>* out, const std::string& from,
                     std::vector<std::string>* skipped = nullptr) {
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
  Status st = ParseInto(text, path, depth, stack, out, skipped);
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
                 std::vector<std::string>* stack, std::vector<ConfigLine>* out,
                 std::vector<std::string>* skipped) {
  // Lenient parse: a bad line is noted and left out instead of ending the parse.
  // The line's text goes with the message ("...: <text>") so that a reader can tell which
  // keys it held (client_config.cc).
  std::string line_text;
  auto bad = [&](Status st) -> bool {
    if (!skipped || st.ok()) return false;
    skipped->push_back(st.message() + ": " + line_text.substr(0, 200));
    return true;
  };
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
    // A NUL byte would cut the value short in C.
    if (size_t nul = raw.find('\0'); nul != std::string::npos) {
      line_text = logical + raw.substr(0, nul);
      Status st = InvalidArgument(filename + ":" + std::to_string(lineno) + ": NUL byte at column " +
                                  std::to_string(nul + 1) + "; a config file is text");
      if (!bad(st)) return st;
      logical.clear();
      continue;
    }
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
    line_text = std::move(logical);
    logical.clear();
    if (!toks.ok()) {
      if (bad(toks.status())) continue;
      return toks.status();
    }
    if (toks->empty()) continue;
    if (ToLower((*toks)[0]) == "include") {
      Status st = toks->size() != 2 ? InvalidArgument(where + ": Include takes exactly one path")
                                    : Status::Ok();
      if (st.ok()) {
        std::filesystem::path inc = (*toks)[1];
        if (inc.is_relative()) inc = std::filesystem::path(filename).parent_path() / inc;
        st = ParseFileInto(inc.string(), depth + 1, stack, out, where, skipped);
      }
      if (!st.ok() && !bad(st)) return st;
      continue;
    }
    ConfigLine cl;
    cl.file = filename;
    cl.line = logical_start;
    Status st;
    for (const auto& t : *toks) {
      size_t eq = t.find('=');
      if (eq == std::string::npos || eq == 0) {
        st = InvalidArgument(where + ": expected Key=Value, got \"" + t + "\"");
        break;
      }
      cl.pairs.push_back({ToLower(t.substr(0, eq)), t.substr(0, eq), t.substr(eq + 1)});
    }
    if (!st.ok()) {
      if (bad(st)) continue;
      return st;
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
  TESSERA_RETURN_IF_ERROR(ParseInto(text, filename, 0, &stack, &out, nullptr));
  return out;
}

Result<std::vector<ConfigLine>> ParseConfigFileLenient(const std::string& path,
                                                       std::vector<std::string>* skipped) {
  std::vector<ConfigLine> out;
  std::vector<std::string> stack;
  std::vector<std::string> ignored;
  TESSERA_RETURN_IF_ERROR(ParseFileInto(path, 0, &stack, &out, "", skipped ? skipped : &ignored));
  return out;
}

}  // namespace tessera
