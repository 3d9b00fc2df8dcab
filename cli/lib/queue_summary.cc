#include "cli/lib/queue_summary.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <ostream>
#include <string_view>

#include "cli/lib/text_util.h"
#include "common/control_chars.h"
#include "common/duration.h"
#include "common/job_state.h"

namespace tessera::cli {
namespace {

constexpr char kSummaryCodes[] = "iAFKjuUtTMlLDCPRrNVSeaQp";
constexpr size_t kChunk = 64 * 1024;

using Summaries = tessera::v1::JobSummaries;

void AppendPadded(std::string* out, std::string_view v, int width, bool right, bool cut) {
  if (width <= 0) {
    out->append(v);
    return;
  }
  auto w = static_cast<size_t>(width);
  if (cut && v.size() > w) v = v.substr(0, w);
  if (v.size() >= w) {
    out->append(v);
    return;
  }
  if (right) out->append(w - v.size(), ' ');
  out->append(v);
  if (!right) out->append(w - v.size(), ' ');
}

Status Validate(const Summaries& s, size_t* rows) {
  size_t n = static_cast<size_t>(s.job_id_size());
  auto same = [&](int size, const char* col) -> Status {
    if (static_cast<size_t>(size) != n)
      return InvalidArgument(std::string("malformed job summary from the controller: column ") +
                             col + " has " + std::to_string(size) + " rows, job_id " +
                             std::to_string(n));
    return Status::Ok();
  };
  auto strings = [&](const auto& col, const char* name) -> Status {
    Status st = same(col.size(), name);
    if (!st.ok()) return st;
    for (uint32_t v : col)
      if (v >= static_cast<uint32_t>(s.strings_size()))
        return InvalidArgument(std::string("malformed job summary from the controller: column ") +
                               name + " names string " + std::to_string(v) + " of " +
                               std::to_string(s.strings_size()));
    return Status::Ok();
  };
  for (const Status& st :
       {same(s.array_job_id_size(), "array_job_id"), same(s.array_task_id_size(), "array_task_id"),
        strings(s.array_task_str(), "array_task_str"), same(s.state_size(), "state"),
        strings(s.name(), "name"), same(s.uid_size(), "uid"), strings(s.user(), "user"),
        strings(s.partition(), "partition"), strings(s.reason(), "reason"),
        strings(s.nodelist(), "nodelist"), strings(s.account(), "account"),
        same(s.priority_size(), "priority"), same(s.submit_time_size(), "submit_time"),
        same(s.start_time_size(), "start_time"), same(s.end_time_size(), "end_time"),
        same(s.time_limit_s_size(), "time_limit_s"),
        same(s.expected_start_time_size(), "expected_start_time"),
        same(s.num_nodes_size(), "num_nodes"), same(s.num_cpus_size(), "num_cpus")})
    if (!st.ok()) return st;
  *rows = n;
  return Status::Ok();
}

// Raw column arrays (the repeated fields' storage), read without bounds checks once Validate
// has checked every column's length and string indices.
struct Cols {
  explicit Cols(const Summaries& s)
      : job_id(s.job_id().data()), array_job_id(s.array_job_id().data()),
        array_task_id(s.array_task_id().data()), array_task_str(s.array_task_str().data()),
        state(s.state().data()), name(s.name().data()), uid(s.uid().data()),
        user(s.user().data()), partition(s.partition().data()), reason(s.reason().data()),
        nodelist(s.nodelist().data()), account(s.account().data()),
        priority(s.priority().data()), submit_time(s.submit_time().data()),
        start_time(s.start_time().data()), end_time(s.end_time().data()),
        time_limit_s(s.time_limit_s().data()),
        expected_start_time(s.expected_start_time().data()), num_nodes(s.num_nodes().data()),
        num_cpus(s.num_cpus().data()) {}
  const uint64_t *job_id, *array_job_id;
  const uint32_t *array_task_id, *array_task_str, *state, *name, *uid, *user, *partition, *reason,
      *nodelist, *account, *priority;
  const int64_t *submit_time, *start_time, *end_time, *time_limit_s, *expected_start_time;
  const uint32_t *num_nodes, *num_cpus;
};

// The text of computed fields, remembered for the last key (consecutive rows repeat a lot).
struct Memo {
  bool valid = false;
  int64_t a = 0, b = 0;
  std::string text;
  template <typename Fn>
  std::string_view Get(int64_t ka, int64_t kb, Fn fn) {
    if (!valid || ka != a || kb != b) {
      text = fn();
      a = ka;
      b = kb;
      valid = true;
    }
    return text;
  }
};

class RowPrinter {
 public:
  RowPrinter(const Summaries& s, const IdNames& names, int64_t now, size_t fields)
      : s_(s), c_(s), names_(names), now_(now), memo_(fields) {}

  void Print(const QueueFormat& fmt, int r, std::string* out) {
    out->append(fmt.prefix);
    for (size_t k = 0; k < fmt.fields.size(); ++k) {
      const QueueField& f = fmt.fields[k];
      bool cut = true;
      std::string_view text = Cell(f.code, r, k, &cut);
      if (HasControlChars(text)) {  // names and comments from older versions, node text
        std::string safe = EscapeControlChars(text);
        AppendPadded(out, safe, f.width, f.right, cut);
      } else {
        AppendPadded(out, text, f.width, f.right, cut);
      }
      out->append(f.suffix);
    }
    out->push_back('\n');
  }

 private:
  std::string_view Str(uint32_t idx) const { return s_.strings(static_cast<int>(idx)); }
  JobState State(int r) const { return static_cast<JobState>(c_.state[r]); }
  std::string_view Num(uint64_t v) {
    auto res = std::to_chars(buf_, buf_ + sizeof buf_, v);
    return {buf_, static_cast<size_t>(res.ptr - buf_)};
  }
  int64_t Elapsed(int r) const {
    JobState st = State(r);
    int64_t start = c_.start_time[r];
    if (start <= 0 || st == JobState::kPending) return 0;
    int64_t end = IsFinished(st) && c_.end_time[r] > 0 ? c_.end_time[r] : now_;
    return end > start ? end - start : 0;
  }
  int64_t EndTime(int r) const {
    if (c_.end_time[r] > 0) return c_.end_time[r];
    int64_t limit = c_.time_limit_s[r];
    if (State(r) == JobState::kRunning && c_.start_time[r] > 0 && limit > 0)
      return c_.start_time[r] + limit;
    return 0;
  }
  static std::string LimitText(int64_t limit, int64_t used) {
    if (limit < 0) return "UNLIMITED";
    if (limit == 0) return "NOT_SET";
    return SqueueSecs(limit - used);
  }

  std::string_view Cell(char code, int r, size_t k, bool* cut) {
    Memo& m = memo_[k];
    switch (code) {
      case 'i': {
        uint64_t array = c_.array_job_id[r];
        if (array == 0) return Num(c_.job_id[r]);
        std::string& t = m.text;
        t.assign(Num(array));
        t += '_';
        std::string_view rest = Str(c_.array_task_str[r]);
        if (rest.empty()) {
          t.append(Num(c_.array_task_id[r]));
        } else {
          t += '[';
          t.append(rest);
          t += ']';
        }
        m.valid = false;
        return t;
      }
      case 'A': return Num(c_.job_id[r]);
      case 'F': return Num(c_.array_job_id[r] ? c_.array_job_id[r] : c_.job_id[r]);
      case 'K': {
        if (c_.array_job_id[r] == 0) return "N/A";
        std::string_view rest = Str(c_.array_task_str[r]);
        return rest.empty() ? Num(c_.array_task_id[r]) : rest;
      }
      case 'j': return Str(c_.name[r]);
      case 'u': {
        if (c_.user[r] != 0) return Str(c_.user[r]);
        uint32_t uid = c_.uid[r];
        return m.Get(1, uid, [&] { return UserLabel(names_, uid); });
      }
      case 'U': return Num(c_.uid[r]);
      case 't': return m.Get(0, c_.state[r], [&] { return std::string(JobStateCode(State(r))); });
      case 'T': return m.Get(0, c_.state[r], [&] { return std::string(JobStateName(State(r))); });
      case 'M': {
        *cut = false;
        int64_t e = Elapsed(r);
        return m.Get(0, e, [&] { return SqueueSecs(e); });
      }
      case 'l': {
        *cut = false;
        int64_t limit = c_.time_limit_s[r];
        return m.Get(limit, 0, [&] { return LimitText(limit, 0); });
      }
      case 'L': {
        *cut = false;
        int64_t limit = c_.time_limit_s[r], e = Elapsed(r);
        return m.Get(limit, e, [&] { return LimitText(limit, e); });
      }
      case 'D': return Num(c_.num_nodes[r]);
      case 'C': return Num(c_.num_cpus[r]);
      case 'P': return Str(c_.partition[r]);
      case 'R': {
        JobState st = State(r);
        if (st == JobState::kPending || st == JobState::kTimeout || st == JobState::kFailed) {
          uint32_t reason = c_.reason[r];
          return m.Get(0, reason, [&] {
            return "(" + (reason ? std::string(Str(reason)) : std::string("None")) + ")";
          });
        }
        *cut = false;
        return Str(c_.nodelist[r]);
      }
      case 'r': return c_.reason[r] ? Str(c_.reason[r]) : "None";
      case 'N': *cut = false; return Str(c_.nodelist[r]);
      case 'V': return m.Get(0, c_.submit_time[r], [&] { return FormatTimestamp(c_.submit_time[r]); });
      case 'S': {
        int64_t t = c_.start_time[r] > 0 ? c_.start_time[r] : c_.expected_start_time[r];
        return m.Get(0, t, [&] { return FormatTimestamp(t); });
      }
      case 'e': {
        if (State(r) == JobState::kRunning && c_.time_limit_s[r] < 0 && c_.end_time[r] == 0)
          return "NONE";
        int64_t t = EndTime(r);
        return m.Get(0, t, [&] { return FormatTimestamp(t); });
      }
      case 'a': return c_.account[r] ? Str(c_.account[r]) : "(null)";
      case 'Q': return Num(c_.priority[r]);
      case 'p': {
        uint32_t prio = c_.priority[r];
        return m.Get(0, prio, [&] { return std::to_string(prio / 4294967295.0).substr(0, 10); });
      }
      default: return "?";
    }
  }

  const Summaries& s_;
  Cols c_;
  const IdNames& names_;
  int64_t now_;
  std::vector<Memo> memo_;
  char buf_[24];
};

template <typename C, typename V>
bool In(const C& c, const V& v) {
  return c.empty() || std::find(c.begin(), c.end(), v) != c.end();
}

// Rows passing the filter, in squeue's default order (as SortQueue orders JobInfo messages).
std::vector<int> SelectAndSort(const Summaries& s, size_t n, const SummaryFilter& f) {
  Cols c(s);
  size_t nstr = static_cast<size_t>(s.strings_size());
  auto allowed = [&](const auto& wanted) {  // string indices whose text is in `wanted`
    std::vector<char> ok(nstr, wanted.empty());
    for (size_t i = 0; i < nstr && !wanted.empty(); ++i)
      ok[i] = In(wanted, s.strings(static_cast<int>(i)));
    return ok;
  };
  std::vector<char> name_ok = allowed(f.names), part_ok = allowed(f.partitions),
                    acct_ok = allowed(f.accounts);
  // Partition names ranked by their text, so rows compare by a number.
  std::vector<uint32_t> rank(nstr, 0), used;
  std::vector<char> seen(nstr, 0);
  for (uint32_t p : s.partition())
    if (!seen[p]) seen[p] = 1, used.push_back(p);
  std::sort(used.begin(), used.end(),
            [&](uint32_t a, uint32_t b) { return s.strings(a) < s.strings(b); });
  for (size_t i = 0; i < used.size(); ++i) rank[used[i]] = static_cast<uint32_t>(i);

  struct Key {
    uint32_t partition;
    int state;
    uint32_t priority;
    uint64_t id;
    int row;
  };
  auto key = [&](int r) -> Key {
    return {rank[c.partition[r]], QueueStateRank(static_cast<JobState>(c.state[r])),
            c.priority[r], c.job_id[r], r};
  };
  auto less = [](const Key& a, const Key& b) {
    if (a.partition != b.partition) return a.partition < b.partition;
    if (a.state != b.state) return a.state < b.state;
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.id < b.id;
  };
  std::vector<int> rows;
  rows.reserve(n);
  bool sorted = true;  // often already in order (one partition, equal priorities): no keys then
  for (int r = 0; r < static_cast<int>(n); ++r) {
    if (!In(f.job_ids, c.job_id[r]) || !In(f.uids, c.uid[r]) ||
        !In(f.states, static_cast<int>(c.state[r])) || !name_ok[c.name[r]] ||
        !part_ok[c.partition[r]] || !acct_ok[c.account[r]])
      continue;
    if (sorted && !rows.empty() && less(key(r), key(rows.back()))) sorted = false;
    rows.push_back(r);
  }
  if (sorted) return rows;
  std::vector<Key> keys;
  keys.reserve(rows.size());
  for (int r : rows) keys.push_back(key(r));
  std::stable_sort(keys.begin(), keys.end(), less);
  for (size_t i = 0; i < keys.size(); ++i) rows[i] = keys[i].row;
  return rows;
}

}  // namespace

bool SummaryCovers(const QueueFormat& fmt) {
  for (const auto& f : fmt.fields)
    if (f.code == 0 || !std::strchr(kSummaryCodes, f.code)) return false;
  return true;
}

namespace {

// Prints into `buf`, handing it to `flush` every ~64 KiB (a 100k-job listing then reuses one
// small buffer instead of faulting in megabytes).
template <typename Flush>
Status Print(const Summaries& s, const SummaryFilter& filter, const QueueFormat& fmt, bool header,
             const IdNames& names, int64_t now, std::string& buf, Flush flush) {
  size_t n = 0;
  Status st = Validate(s, &n);
  if (!st.ok()) return st;
  std::vector<int> rows = SelectAndSort(s, n, filter);
  if (header) buf.append(FormatQueue({}, fmt, true, names, now));
  RowPrinter p(s, names, now, fmt.fields.size());
  for (int r : rows) {
    p.Print(fmt, r, &buf);
    if (buf.size() >= kChunk) flush(buf);
  }
  flush(buf);
  return Status::Ok();
}

}  // namespace

Status FormatSummaryQueue(const Summaries& s, const SummaryFilter& filter, const QueueFormat& fmt,
                          bool header, const IdNames& names, int64_t now, std::string* out) {
  std::string buf;
  Status st = Print(s, filter, fmt, header, names, now, buf, [&](std::string& b) {
    out->append(b);
    b.clear();
  });
  if (!st.ok()) out->clear();
  return st;
}

Status PrintSummaryQueue(const Summaries& s, const SummaryFilter& filter, const QueueFormat& fmt,
                         bool header, const IdNames& names, int64_t now, std::ostream& os) {
  std::string buf;
  buf.reserve(kChunk + 4096);
  return Print(s, filter, fmt, header, names, now, buf, [&](std::string& b) {
    os.write(b.data(), static_cast<std::streamsize>(b.size()));
    b.clear();
  });
}

}  // namespace tessera::cli
