#include "ctld/sched/constraint.h"

#include <algorithm>
#include <cctype>

namespace tessera::sched {
namespace {

bool FeatureChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
         c == ':' || c == '/';
}

bool Has(const std::vector<std::string>& sorted, const std::string& f) {
  return std::binary_search(sorted.begin(), sorted.end(), f);
}

}  // namespace

Result<Constraint> ParseConstraint(const std::string& expr) {
  Constraint c;
  std::string rest;
  size_t open = expr.find('[');
  if (open != std::string::npos) {
    size_t close = expr.find(']', open);
    if (close == std::string::npos) return InvalidArgument("constraint \"" + expr + "\": '[' without ']'");
    if (expr.find('[', close) != std::string::npos)
      return InvalidArgument("constraint \"" + expr + "\": only one [..] group is supported");
    std::string inner = expr.substr(open + 1, close - open - 1);
    size_t s = 0;
    while (s <= inner.size()) {
      size_t e = inner.find('|', s);
      if (e == std::string::npos) e = inner.size();
      std::string alt = inner.substr(s, e - s);
      if (alt.empty() || !std::all_of(alt.begin(), alt.end(), FeatureChar))
        return InvalidArgument("constraint \"" + expr + "\": bad alternative \"" + alt +
                               "\" inside [..] (expected a|b|c)");
      c.alternatives_.push_back(alt);
      s = e + 1;
    }
    std::string before = expr.substr(0, open), after = expr.substr(close + 1);
    // Drop the '&' that joined the group to the rest.
    while (!before.empty() && before.back() == ' ') before.pop_back();
    if (!before.empty() && before.back() == '&') before.pop_back();
    else if (!before.empty()) return InvalidArgument("constraint \"" + expr + "\": [..] must be joined with &");
    if (!after.empty() && after.front() == '&') after.erase(0, 1);
    else if (!after.empty()) return InvalidArgument("constraint \"" + expr + "\": [..] must be joined with &");
    rest = before.empty() || after.empty() ? before + after : before + "&" + after;
  } else {
    rest = expr;
  }
  // Shunting-yard over features, &, |, ( ).
  std::vector<char> ops;
  bool expect_operand = true;
  auto prec = [](char op) { return op == '&' ? 2 : op == '|' ? 1 : 0; };
  for (size_t i = 0; i < rest.size();) {
    char ch = rest[i];
    std::string at = " at position " + std::to_string(i + 1);
    if (ch == ' ') { ++i; continue; }
    if (FeatureChar(ch)) {
      if (!expect_operand) return InvalidArgument("constraint \"" + expr + "\": missing & or |" + at);
      size_t j = i;
      while (j < rest.size() && FeatureChar(rest[j])) ++j;
      c.rpn_.push_back({0, rest.substr(i, j - i)});
      i = j;
      expect_operand = false;
    } else if (ch == '&' || ch == '|') {
      if (expect_operand) return InvalidArgument("constraint \"" + expr + "\": missing feature" + at);
      while (!ops.empty() && ops.back() != '(' && prec(ops.back()) >= prec(ch)) {
        c.rpn_.push_back({ops.back(), ""});
        ops.pop_back();
      }
      ops.push_back(ch);
      expect_operand = true;
      ++i;
    } else if (ch == '(') {
      if (!expect_operand) return InvalidArgument("constraint \"" + expr + "\": unexpected '('" + at);
      ops.push_back(ch);
      ++i;
    } else if (ch == ')') {
      if (expect_operand) return InvalidArgument("constraint \"" + expr + "\": unexpected ')'" + at);
      while (!ops.empty() && ops.back() != '(') {
        c.rpn_.push_back({ops.back(), ""});
        ops.pop_back();
      }
      if (ops.empty()) return InvalidArgument("constraint \"" + expr + "\": unbalanced ')'" + at);
      ops.pop_back();
      ++i;
    } else {
      return InvalidArgument("constraint \"" + expr + "\": unsupported character '" +
                             std::string(1, ch) + "'" + at +
                             (ch == '*' ? " (feature counts are not supported)" : ""));
    }
  }
  if (expect_operand && !c.rpn_.empty())
    return InvalidArgument("constraint \"" + expr + "\": ends with an operator");
  while (!ops.empty()) {
    if (ops.back() == '(') return InvalidArgument("constraint \"" + expr + "\": unbalanced '('");
    c.rpn_.push_back({ops.back(), ""});
    ops.pop_back();
  }
  return c;
}

bool Constraint::Matches(const std::vector<std::string>& f, int alternative) const {
  if (alternative >= 0 && !Has(f, alternatives_[static_cast<size_t>(alternative)])) return false;
  if (alternative < 0 && !alternatives_.empty()) {
    bool any = false;
    for (const auto& a : alternatives_) any |= Has(f, a);
    if (!any) return false;
  }
  if (rpn_.empty()) return true;
  bool stack[64];
  size_t sp = 0;
  for (const auto& t : rpn_) {
    if (t.op == 0) {
      if (sp < 64) stack[sp++] = Has(f, t.name);
    } else if (sp >= 2) {
      bool b = stack[--sp], a = stack[--sp];
      stack[sp++] = t.op == '&' ? (a && b) : (a || b);
    }
  }
  return sp == 1 && stack[0];
}

std::vector<std::string> Constraint::Features() const {
  std::vector<std::string> out = alternatives_;
  for (const auto& t : rpn_)
    if (t.op == 0) out.push_back(t.name);
  return out;
}

}  // namespace tessera::sched
