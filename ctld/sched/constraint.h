#pragma once
// Slurm --constraint expressions over node features.
//   "a"           nodes with feature a
//   "a&b", "a|b"  and / or (& binds tighter than |), parentheses group
//   "[a|b|c]"     matching or: every node of the job has the same one of a, b, c
//                 (at most one bracket group, joined to the rest with &)
// Feature names are letters, digits and "_-.:/". Counts ("a*2") are not supported and are an
// error. An empty expression matches every node.
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::sched {

class Constraint {
 public:
  bool Empty() const { return rpn_.empty() && alternatives_.empty(); }
  // The alternatives of the bracket group; empty when there is none.
  const std::vector<std::string>& Alternatives() const { return alternatives_; }
  // True when a node with `sorted_features` satisfies the expression; with a bracket group,
  // `alternative` (an index into Alternatives()) is the one every node must have.
  bool Matches(const std::vector<std::string>& sorted_features, int alternative = -1) const;
  // Every feature name the expression mentions.
  std::vector<std::string> Features() const;

 private:
  friend Result<Constraint> ParseConstraint(const std::string& expr);
  struct Tok {
    char op = 0;  // 0 = feature, '&', '|'
    std::string name;
  };
  std::vector<Tok> rpn_;
  std::vector<std::string> alternatives_;
};

// Parses `expr`; errors name the offending position.
Result<Constraint> ParseConstraint(const std::string& expr);

}  // namespace tessera::sched
