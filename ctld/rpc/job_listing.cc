#include "ctld/rpc/job_listing.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "common/array_spec.h"
#include "common/hostlist.h"
#include "ctld/rpc/convert.h"

namespace tessera::ctld::rpc {
namespace {

bool Has(const auto& list, const auto& x) {
  return list.empty() || std::find(list.begin(), list.end(), x) != list.end();
}

// The jobs named by req.job_ids, in id order, looked up by id: each named job, and the elements
// of an array named by its id (consecutive ids from the array's id on).
std::vector<const JobRecord*> Named(const JobManager& jm, const v1::ListJobsRequest& req) {
  const auto& all = jm.jobs();
  std::vector<const JobRecord*> out;
  for (uint64_t id : req.job_ids()) {
    auto it = all.find(id);
    if (it != all.end()) out.push_back(&it->second);
    for (it = all.lower_bound(id); it != all.end() && it->second.array_job_id == id; ++it)
      if (it->first != id) out.push_back(&it->second);
  }
  std::sort(out.begin(), out.end(),
            [](const JobRecord* a, const JobRecord* b) { return a->job_id < b->job_id; });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Records are ~10 cache lines each, scattered over the heap: listing is bound by memory
// latency, so the records a few rows ahead are fetched while the current one is read.
constexpr size_t kPrefetchAhead = 16;

void Prefetch(const JobRecord* j) {
  const char* p = reinterpret_cast<const char*>(j);
  for (size_t off = 0; off < sizeof(JobRecord); off += 64) __builtin_prefetch(p + off);
}

// Calls add(record) for every selected job in id order; add returns the row it made. Then
// calls collapse(row, array id, remaining indices) for each collapsed pending array.
template <typename Add, typename Collapse>
void Select(const JobManager& jm, const v1::ListJobsRequest& req, Add add, Collapse collapse) {
  std::vector<int> states(req.states().begin(), req.states().end());
  // Pending array elements that never ran are shown as one line per array (squeue's
  // "1234_[5-15%4]"), at the position of the array's first pending element.
  std::map<uint64_t, std::tuple<size_t, std::vector<uint32_t>, uint32_t>> arrays;
  std::vector<const JobRecord*> named;
  if (!req.job_ids().empty()) named = Named(jm, req);
  const std::vector<const JobRecord*>& candidates = req.job_ids().empty() ? jm.ordered() : named;
  size_t n = candidates.size();
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) Prefetch(candidates[i + kPrefetchAhead]);
    if (i + kPrefetchAhead / 2 < n)  // its line holding the vector was fetched 8 rows ago
      __builtin_prefetch(candidates[i + kPrefetchAhead / 2]->spec.task_groups.data());
    const JobRecord& j = *candidates[i];
    uint64_t id = j.job_id;
    if (!jm.IsDurable(id)) continue;
    if (!req.include_finished() && states.empty() && IsFinished(j.State())) continue;
    bool id_ok = Has(req.job_ids(), id) || (j.array_job_id && Has(req.job_ids(), j.array_job_id));
    if (!id_ok || !Has(req.uids(), j.uid) || !Has(states, j.state) ||
        !Has(req.partitions(), j.partition) || !Has(req.accounts(), j.spec.account))
      continue;
    // A held element is not folded (issue 19): Slurm splits it off the pending remainder, so it
    // shows on its own line with its own reason (JobHeldUser), not the remainder's.
    bool fold = !req.expand_arrays() && j.array_job_id && j.State() == JobState::kPending &&
                j.start_time == 0 && j.requeue_count == 0 && !j.held;
    if (fold) {
      auto it = arrays.find(j.array_job_id);
      if (it != arrays.end()) {
        std::get<1>(it->second).push_back(j.array_task_id);
        continue;
      }
      arrays[j.array_job_id] = {add(j), {j.array_task_id}, j.array_max_running};
      continue;
    }
    add(j);
  }
  for (const auto& [array_id, folded] : arrays) {
    const auto& [row, tasks, max_running] = folded;
    if (tasks.size() < 2) continue;  // a single remaining element shows as itself
    collapse(row, array_id, FormatArrayIndices(tasks, max_running));
  }
}

}  // namespace

std::vector<ListedJob> SelectJobs(const JobManager& jm, const v1::ListJobsRequest& req) {
  std::vector<ListedJob> rows;
  Select(
      jm, req,
      [&](const JobRecord& j) {
        rows.push_back({&j, j.job_id, {}});
        return rows.size() - 1;
      },
      [&](size_t row, uint64_t array_id, std::string rest) {
        rows[row].shown_id = array_id;
        rows[row].array_task_str = std::move(rest);
      });
  return rows;
}

SummaryBuilder::SummaryBuilder(v1::JobSummaries* out, size_t expected_rows)
    : out_(out), last_(8, {nullptr, 0}) {
  out_->add_strings();  // index 0: ""
  index_.emplace(std::string_view(), 0);
  int n = static_cast<int>(expected_rows);
  out_->mutable_job_id()->Reserve(n);
  out_->mutable_array_job_id()->Reserve(n);
  out_->mutable_array_task_id()->Reserve(n);
  out_->mutable_array_task_str()->Reserve(n);
  out_->mutable_state()->Reserve(n);
  out_->mutable_name()->Reserve(n);
  out_->mutable_uid()->Reserve(n);
  out_->mutable_user()->Reserve(n);
  out_->mutable_partition()->Reserve(n);
  out_->mutable_reason()->Reserve(n);
  out_->mutable_nodelist()->Reserve(n);
  out_->mutable_account()->Reserve(n);
  out_->mutable_priority()->Reserve(n);
  out_->mutable_submit_time()->Reserve(n);
  out_->mutable_start_time()->Reserve(n);
  out_->mutable_end_time()->Reserve(n);
  out_->mutable_time_limit_s()->Reserve(n);
  out_->mutable_expected_start_time()->Reserve(n);
  out_->mutable_num_nodes()->Reserve(n);
  out_->mutable_num_cpus()->Reserve(n);
}

uint32_t SummaryBuilder::Intern(const std::string& s) {
  if (s.empty()) return 0;
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  auto idx = static_cast<uint32_t>(out_->strings_size());
  std::string* stored = out_->add_strings();
  *stored = s;
  index_.emplace(std::string_view(*stored), idx);
  return idx;
}

void SummaryBuilder::Add(const ListedJob& row) {
  const JobRecord& j = *row.job;
  // Consecutive jobs mostly share user, partition, name...: compare with the last one first.
  auto column = [&](size_t col, const std::string& s) {
    auto& [last, idx] = last_[col];
    if (!last || *last != s) {
      idx = Intern(s);
      last = &s;
    }
    return idx;
  };
  out_->add_job_id(row.shown_id);
  out_->add_array_job_id(j.array_job_id);
  out_->add_array_task_id(j.array_task_id);
  out_->add_array_task_str(Intern(row.array_task_str));
  out_->add_state(static_cast<uint32_t>(j.state));
  out_->add_name(column(0, j.spec.name));
  out_->add_uid(j.uid);
  out_->add_user(column(1, j.user));
  out_->add_partition(column(2, j.partition.empty() ? j.spec.partition.str() : j.partition.str()));
  out_->add_reason(column(3, j.reason));
  out_->add_nodelist(j.alloc.empty() ? 0 : Intern(CompressHostlist(j.NodeNames())));
  out_->add_account(column(4, j.spec.account));
  out_->add_priority(static_cast<uint32_t>(j.priority > 0 ? j.priority : 0));
  out_->add_submit_time(j.submit_time);
  out_->add_start_time(j.start_time);
  out_->add_end_time(j.end_time);
  out_->add_time_limit_s(j.time_limit_s != 0 ? j.time_limit_s : j.spec.time_limit_s);
  out_->add_expected_start_time(j.expected_start);
  uint32_t nodes = static_cast<uint32_t>(j.alloc.size());
  out_->add_num_nodes(nodes ? nodes : std::max<uint32_t>(j.spec.nodes_min, 1));
  uint32_t cpus = j.NumCpus();
  if (cpus == 0)
    for (const auto& g : j.spec.task_groups) cpus += g.count * std::max<uint32_t>(1, g.per_task.cpus);
  out_->add_num_cpus(cpus ? cpus : 1);
}

void SummaryBuilder::Collapse(size_t row, uint64_t array_id, const std::string& rest) {
  out_->set_job_id(static_cast<int>(row), array_id);
  out_->set_array_task_str(static_cast<int>(row), Intern(rest));
}

void FillListJobs(const JobManager& jm, const v1::ListJobsRequest& req,
                  v1::ListJobsResponse* resp) {
  if (req.summary()) {
    // One pass over the records: each is read once, straight into the columns.
    size_t expected = req.job_ids().empty() ? jm.ordered().size() : 16;
    SummaryBuilder b(resp->mutable_summary(), expected);
    Select(
        jm, req,
        [&](const JobRecord& j) {
          b.Add({&j, j.job_id, {}});
          return static_cast<size_t>(resp->summary().job_id_size() - 1);
        },
        [&](size_t row, uint64_t array_id, const std::string& rest) {
          b.Collapse(row, array_id, rest);
        });
    return;
  }
  std::vector<ListedJob> rows = SelectJobs(jm, req);
  resp->mutable_jobs()->Reserve(static_cast<int>(rows.size()));
  for (const auto& r : rows) {
    v1::JobInfo* info = resp->add_jobs();
    ToProto(*r.job, info, /*with_paths=*/false);
    if (!r.array_task_str.empty()) {
      info->set_job_id(r.shown_id);
      info->set_array_task_str(r.array_task_str);
    }
  }
}

}  // namespace tessera::ctld::rpc
