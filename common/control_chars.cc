#include "common/control_chars.h"

#include <cstdio>

namespace tessera {
namespace {

// Length of the control character starting at text[i] (0 when none) and its code point.
size_t ControlAt(std::string_view text, size_t i, unsigned* code) {
  auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x20 || c == 0x7f) {
    *code = c;
    return 1;
  }
  if (c == 0xc2 && i + 1 < text.size()) {
    auto next = static_cast<unsigned char>(text[i + 1]);
    if (next >= 0x80 && next <= 0x9f) {
      *code = next;  // U+0080..U+009F
      return 2;
    }
  }
  return 0;
}

}  // namespace

std::optional<ControlChar> FindControlChar(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned code = 0;
    if (ControlAt(text, i, &code)) return ControlChar{i + 1, code};
  }
  return std::nullopt;
}

bool HasControlChars(std::string_view text) { return FindControlChar(text).has_value(); }

std::string DescribeControlChar(unsigned code) {
  char hex[16];
  if (code >= 0x80) {
    std::snprintf(hex, sizeof hex, "U+%04X", code);
    return hex;
  }
  std::snprintf(hex, sizeof hex, "0x%02x", code);
  const char* name = code == '\n'   ? "newline"
                     : code == '\r' ? "carriage return"
                     : code == '\t' ? "tab"
                     : code == 0x1b ? "ESC"
                     : code == 0x7f ? "DEL"
                     : code == 0    ? "NUL"
                                    : "control character";
  return std::string(name) + ", " + hex;
}

Status CheckNoControlChars(std::string_view field, std::string_view text) {
  auto c = FindControlChar(text);
  if (!c) return Status::Ok();
  return InvalidArgument(std::string(field) + " contains a control character (" +
                         DescribeControlChar(c->code) + ") at position " +
                         std::to_string(c->position) + "; control characters are not allowed");
}

std::string EscapeControlChars(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned code = 0;
    size_t n = ControlAt(text, i, &code);
    if (n == 0) {
      out += text[i++];
      continue;
    }
    i += n;
    char buf[16];
    if (code == '\n') out += "\\n";
    else if (code == '\r') out += "\\r";
    else if (code == '\t') out += "\\t";
    else if (code == 0x1b) out += "\\e";
    else {
      std::snprintf(buf, sizeof buf, code >= 0x80 ? "\\u%04x" : "\\x%02x", code);
      out += buf;
    }
  }
  return out;
}

}  // namespace tessera
