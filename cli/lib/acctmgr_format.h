#pragma once
// sacctmgr's output: field names as `format=` takes them (case-insensitive, shortest prefixes
// as sacctmgr's own table: "Acc", "Descr", "Org", "DefaultA", "Fair", ...), `Name%W` widths,
// and the three layouts: columns (right-justified to the width, a dashes line under the header,
// '+' marking a cut value), -p (each value followed by '|'), -P (values joined by '|').
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tessera::cli {

struct AcctmgrField {
  std::string header;  // as sacctmgr prints it, and the server's column name ("Def Acct")
  int width = 10;      // negative: left-justified
};

// "Account,Descr%30,User" -> fields; InvalidArgument naming an unknown field.
Result<std::vector<AcctmgrField>> ParseAcctmgrFormat(const std::string& spec);
// The default columns of `show <entity>` (entity canonical: account, user, qos, assoc).
std::string DefaultAcctmgrFormat(const std::string& entity);

enum class AcctmgrLayout { kColumns, kParsable, kParsable2 };
using AcctmgrRow = std::vector<std::pair<std::string, std::string>>;  // (header, value)

std::string FormatAcctmgrTable(const std::vector<AcctmgrField>& fields,
                               const std::vector<AcctmgrRow>& rows, AcctmgrLayout layout,
                               bool header);

}  // namespace tessera::cli
