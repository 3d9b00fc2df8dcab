#include "ctld/rpc/accounting_runs.h"

#include <boost/json.hpp>

#include "common/hostlist.h"

namespace tessera::ctld::rpc {

std::vector<v1::JobInfo> EarlierRuns(const v1::JobInfo& job, const std::vector<JobEvent>& events) {
  std::vector<v1::JobInfo> out;
  bool in_run = false, preempted = false;
  int64_t start = 0, suspended = 0, suspend_at = 0;
  std::vector<std::string> nodes;
  for (const auto& e : events) {
    if (e.type == event::kStarted) {
      in_run = true;
      preempted = false;
      start = e.time, suspended = 0, suspend_at = 0;
      nodes.clear();
      boost::system::error_code ec;
      auto d = boost::json::parse(e.detail, ec);
      if (!ec && d.is_object()) {
        if (auto* t = d.as_object().if_contains("start_time"); t && t->is_int64()) start = t->as_int64();
        if (auto* a = d.as_object().if_contains("alloc"); a && a->is_array())
          for (const auto& n : a->as_array())
            if (n.is_object())
              if (auto* name = n.as_object().if_contains("node"); name && name->is_string())
                nodes.emplace_back(name->as_string());
      }
    } else if (!in_run) {
      continue;
    } else if (e.type == event::kSuspended) {
      suspend_at = e.time;
    } else if (e.type == event::kResumed && suspend_at > 0) {
      suspended += e.time - suspend_at, suspend_at = 0;
    } else if (e.type == event::kPreempted) {
      preempted = true;
    } else if (e.type == event::kRequeued) {
      if (e.detail.find("\"Preempted\"") != std::string::npos) preempted = true;
      if (suspend_at > 0) suspended += e.time - suspend_at;
      v1::JobInfo r = job;
      r.set_state(preempted ? v1::PREEMPTED : v1::REQUEUED);
      r.set_start_time(start);
      r.set_end_time(e.time);
      r.clear_alloc();
      r.set_nodelist(CompressHostlist(nodes));
      r.set_exit_code(0);
      r.set_exit_signal(0);
      r.set_reason(preempted ? "Preempted" : "None");
      r.set_suspended_s(suspended);
      r.set_suspend_time(0);
      r.set_expected_start_time(0);
      out.push_back(std::move(r));
      in_run = false;
    }
  }
  return out;
}

}  // namespace tessera::ctld::rpc
