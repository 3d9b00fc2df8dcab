#pragma once
// Control characters in text that other users see (job names, comments, reasons): refused at
// submit, escaped on output, so no job can write escape sequences or fake lines into another
// user's terminal through tqueue, tcontrol, tacct or tinfo.
//
// A control character is a C0 byte (0x00-0x1f), DEL (0x7f), or a C1 control encoded in UTF-8
// (U+0080-U+009F, bytes C2 80-C2 9F; some terminals act on them like ESC [). Other UTF-8 text
// passes unchanged.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera {

struct ControlChar {
  size_t position = 0;  // 1-based byte position in the text
  unsigned code = 0;    // the code point (0x1b for ESC, 0x85 for NEL, ...)
};

// The first control character of `text`, if any.
std::optional<ControlChar> FindControlChar(std::string_view text);

// "ESC (0x1b)", "newline (0x0a)", "U+009B": how an error message names a control character.
std::string DescribeControlChar(unsigned code);

// kInvalidArgument "<field> contains a control character (ESC, 0x1b) at position 7" when `text`
// holds one; OK otherwise.
Status CheckNoControlChars(std::string_view field, std::string_view text);

// `text` with each control character written as a visible escape: \n, \r, \t, \e (ESC), \x01
// for the rest of C0 and DEL (\x7f), \u0085 for C1. Returns `text` unchanged (same content)
// when it holds none; backslashes themselves are left as they are.
std::string EscapeControlChars(std::string_view text);
bool HasControlChars(std::string_view text);

}  // namespace tessera
