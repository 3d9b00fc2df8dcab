#include "cli/lib/tshare_queues.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "cli/lib/text_util.h"

namespace tessera::cli {
namespace {

using tessera::v1::QueueInfo;
using tessera::v1::QueueTres;

struct Col {
  std::string name;
  int len;  // negative: left-justified
};
const std::vector<Col> kCols = {{"Account", -20},   {"Guarantee", 22}, {"Limit", 22},
                                {"Weight", 6},      {"Reclaimable", 11}, {"Allocated", 28},
                                {"Demand", 28},     {"Deserved", 28},  {"Borrowed", 22},
                                {"OverShare", 22}};
const char kDefault[] = "Account,Guarantee,Limit,Weight,Allocated,Demand,Deserved,Borrowed,OverShare";

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "cpu=8,mem=64000M,gres/gpu=4": items > 0 (none: -1 items skipped); "" when nothing.
std::string Tres(int64_t cpu, int64_t mem, int64_t gpu) {
  std::vector<std::string> items;
  if (cpu > 0) items.push_back("cpu=" + std::to_string(cpu));
  if (mem > 0) items.push_back("mem=" + std::to_string(mem) + "M");
  if (gpu > 0) items.push_back("gres/gpu=" + std::to_string(gpu));
  return Join(items, ",");
}
std::string Tres(const QueueTres& t) { return Tres(t.cpu(), t.mem(), t.gpu()); }
int64_t Above(int64_t have, int64_t base) { return std::max<int64_t>(0, have - std::max<int64_t>(0, base)); }

std::string Value(const QueueInfo& q, const std::string& col) {
  if (col == "Account") return std::string(q.depth(), ' ') + q.account();
  if (col == "Guarantee") return Tres(q.guarantee());
  if (col == "Limit") return Tres(q.limit());
  if (col == "Weight") return std::to_string(q.weight());
  if (col == "Reclaimable") return q.reclaimable() ? "Yes" : "No";
  if (col == "Allocated") return Tres(q.allocated());
  if (col == "Demand") return Tres(q.pending());
  if (col == "Deserved") return Tres(q.deserved());
  const QueueTres& a = q.allocated();
  const QueueTres& b = col == "Borrowed" ? q.guarantee() : q.deserved();
  return Tres(Above(a.cpu(), b.cpu()), Above(a.mem(), b.mem()), Above(a.gpu(), b.gpu()));
}

}  // namespace

Status PrintQueues(std::ostream& out, const tessera::v1::GetSharesResponse& resp,
                   const std::string& format, int parsable, bool header,
                   const std::set<std::string>& accounts) {
  std::vector<Col> cols;
  for (const auto& item : Split(format.empty() ? kDefault : format, ',')) {
    if (item.empty()) continue;
    size_t pct = item.find('%');
    std::string name = item.substr(0, pct);
    const Col* hit = nullptr;
    for (const auto& c : kCols)
      if (!name.empty() && Lower(c.name).rfind(Lower(name), 0) == 0) {
        hit = &c;
        break;
      }
    if (!hit) return InvalidArgument("Invalid field requested: \"" + name + "\" (tshare --queues)");
    Col c = *hit;
    if (pct != std::string::npos) {
      int w = std::atoi(item.c_str() + pct + 1);
      if (w > 0) c.len = c.len < 0 ? -w : w;
    }
    cols.push_back(c);
  }
  auto cell = [&](const std::string& v, const Col& c, bool last) {
    if (parsable) {
      out << v << (parsable == 2 && last ? "" : "|");
      return;
    }
    size_t w = static_cast<size_t>(std::abs(c.len));
    std::string s = v.size() > w ? v.substr(0, w - 1) + "+" : v;
    std::string pad(w - s.size(), ' ');
    out << (c.len < 0 ? s + pad : pad + s) << " ";
  };
  if (header) {
    for (size_t i = 0; i < cols.size(); ++i) cell(cols[i].name, cols[i], i + 1 == cols.size());
    out << "\n";
    if (!parsable) {
      for (const auto& c : cols) out << std::string(static_cast<size_t>(std::abs(c.len)), '-') << " ";
      out << "\n";
    }
  }
  for (const auto& q : resp.queues()) {
    if (!accounts.empty() && !accounts.count(q.account())) continue;
    for (size_t i = 0; i < cols.size(); ++i) cell(Value(q, cols[i].name), cols[i], i + 1 == cols.size());
    out << "\n";
  }
  return Status::Ok();
}

}  // namespace tessera::cli
