// Controller: what sdiag and sinfo read (issue 20, h20a): resetting the statistics, and the
// node-state summary (sinfo's default rows) with its cache. Same class, same core-thread rule.
#include <algorithm>
#include <unordered_set>

#include "common/hostlist.h"
#include "ctld/controller.h"

namespace tessera::ctld {
namespace {

// StateName()'s values in sinfo's row order within a partition; anything else ranks last.
constexpr const char* kStateOrder[] = {"MIXED", "ALLOCATED", "IDLE", "DRAINING",
                                       "DRAINED", "DOWN", "FAILED"};
constexpr uint8_t kOtherRank = 7;

uint8_t StateRank(const std::string& state) {
  for (uint8_t i = 0; i < kOtherRank; ++i)
    if (state == kStateOrder[i]) return i;
  return kOtherRank;
}

}  // namespace

void Controller::ResetStats() {
  CtldStats fresh;
  fresh.start_time = clock_->Now();
  fresh.last_cycle_cpu_us = stats_.last_cycle_cpu_us;  // paces cycles (RequestSchedule)
  fresh.jobs_backfilled_since_start = stats_.jobs_backfilled_since_start;
  stats_ = fresh;
}

void Controller::RecordCycleDepth(const sched::CycleResult& r, int64_t now) {
  CtldStats& s = stats_;
  s.jobs_backfilled_since_start += r.jobs_backfilled;
  s.depth_total += r.allocate_depth;
  s.last_queue_length = r.jobs_considered;
  if (!r.backfill_ran) return;
  s.bf_cycles++;
  s.bf_last_when = now;
  s.bf_last_us = r.backfill_us;
  s.bf_max_us = std::max(s.bf_max_us, r.backfill_us);
  s.bf_total_us += r.backfill_us;
  s.bf_last_depth = r.backfill_depth;
  s.bf_last_depth_try = r.backfill_depth_try;
  s.bf_last_queue = r.backfill_queue;
  s.bf_last_reserved = r.reservations;
  s.bf_depth_total += r.backfill_depth;
  s.bf_depth_try_total += r.backfill_depth_try;
  s.bf_queue_total += r.backfill_queue;
}

const std::vector<NodeStateGroup>& Controller::StateSummary(uint64_t* generation) {
  // Each node's state, in config order, with the "other" states told apart by name.
  std::vector<uint8_t> states;
  std::vector<std::string> others;  // names of states ranked kOtherRank, by index - kOtherRank
  states.reserve(nodes_.order().size());
  for (const auto& name : nodes_.order()) {
    std::string st = nodes_.Find(name)->StateName();
    uint8_t rank = StateRank(st);
    if (rank == kOtherRank) {
      auto it = std::find(others.begin(), others.end(), st);
      rank = static_cast<uint8_t>(kOtherRank + (it - others.begin()));
      if (it == others.end()) others.push_back(st);
    }
    states.push_back(rank);
  }
  if (summary_.cfg == cfg_ && summary_.states == states) {
    *generation = summary_.generation;
    return summary_.groups;
  }
  std::vector<NodeStateGroup> groups;
  for (const auto& p : cfg_->partitions) {
    std::unordered_set<std::string> listed(p.nodes.begin(), p.nodes.end());
    if (p.nodes.empty())
      if (auto hosts = ExpandHostlist(p.nodes_expr); hosts.ok())
        listed.insert(hosts->begin(), hosts->end());
    // rank (the "other" states share kOtherRank, as sinfo's rows do) -> state, names
    std::vector<std::pair<std::string, std::vector<std::string>>> by_rank(kOtherRank + 1);
    for (size_t i = 0; i < nodes_.order().size(); ++i) {
      const std::string& name = nodes_.order()[i];
      const NodeRuntime* n = nodes_.Find(name);
      const auto& parts = n->config->partitions;
      if (std::find(parts.begin(), parts.end(), p.name) == parts.end() && !listed.count(name))
        continue;
      uint8_t rank = std::min(states[i], kOtherRank);
      by_rank[rank].first = rank < kOtherRank ? kStateOrder[rank] : others[states[i] - kOtherRank];
      by_rank[rank].second.push_back(name);
    }
    for (auto& [state, names] : by_rank) {
      if (names.empty()) continue;
      SortHostNames(names);
      groups.push_back({p.name, state, static_cast<uint32_t>(names.size()), CompressHostlist(names)});
    }
  }
  summary_.cfg = cfg_;
  summary_.states = std::move(states);
  summary_.groups = std::move(groups);
  *generation = ++summary_.generation;
  return summary_.groups;
}

}  // namespace tessera::ctld
