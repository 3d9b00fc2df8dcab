#include "cli/lib/sdiag_view.h"

#include <cstdint>
#include <ctime>

#include "cli/lib/id_names.h"

namespace tessera::cli {
namespace {

// "Thu Nov 12 10:08:31 2020 (1605172111)", as Slurm's sdiag prints a time.
std::string When(int64_t epoch) {
  time_t t = static_cast<time_t>(epoch);
  struct tm tm {};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", &tm);
  return std::string(buf) + " (" + std::to_string(epoch) + ")";
}

std::string N(uint64_t v) { return std::to_string(v); }

}  // namespace

std::string FormatSdiag(const tessera::v1::DiagnosticsResponse& d, const IdNames& names) {
  std::string o = "*******************************************************\n";
  o += "sdiag output at " + When(d.server_time()) + "\n";
  o += "Data since      " + When(d.start_time()) + "\n";
  o += "*******************************************************\n";
  o += "Server thread count:  " + N(d.server_thread_count()) + "\n";
  o += "Agent queue size:     " + N(d.agent_queue_size()) + "\n";
  o += "Agent count:          " + N(d.agent_count()) + "\n";
  o += "Agent thread count:   " + N(d.agent_thread_count()) + "\n";
  o += "DBD Agent queue size: " + N(d.dbd_agent_queue_size()) + "\n\n";
  o += "Jobs submitted: " + N(d.jobs_submitted()) + "\n";
  o += "Jobs started:   " + N(d.jobs_started()) + "\n";
  o += "Jobs completed: " + N(d.jobs_completed()) + "\n";
  o += "Jobs canceled:  " + N(d.jobs_canceled()) + "\n";
  o += "Jobs failed:    " + N(d.jobs_failed()) + "\n\n";
  o += "Job states ts:  " + When(d.job_states_ts() ? d.job_states_ts() : d.server_time()) + "\n";
  o += "Jobs pending:   " + N(d.jobs_pending()) + "\n";
  o += "Jobs running:   " + N(d.jobs_running()) + "\n";
  o += "\nMain schedule statistics (microseconds):\n";
  o += "\tLast cycle:   " + N(d.schedule_cycle_last_us()) + "\n";
  o += "\tMax cycle:    " + N(d.schedule_cycle_max_us()) + "\n";
  o += "\tTotal cycles: " + N(d.schedule_cycles()) + "\n";
  if (d.schedule_cycles() > 0) {
    o += "\tMean cycle:   " + N(d.schedule_cycle_mean_us()) + "\n";
    o += "\tMean depth cycle:  " + N(d.schedule_cycle_depth_mean()) + "\n";
  }
  int64_t minutes = (d.server_time() - d.start_time()) / 60;
  if (d.server_time() - d.start_time() > 60)
    o += "\tCycles per minute: " + N(d.schedule_cycles() / static_cast<uint64_t>(minutes)) + "\n";
  o += "\tLast queue length: " + N(d.schedule_queue_length()) + "\n";
  const auto& bf = d.backfill();
  o += "\nBackfilling stats\n";
  o += "\tTotal backfilled jobs (since last slurm start): " + N(bf.backfilled_jobs_since_start()) + "\n";
  o += "\tTotal backfilled jobs (since last stats cycle start): " + N(bf.backfilled_jobs()) + "\n";
  o += "\tTotal backfilled heterogeneous job components: 0\n";
  o += "\tTotal cycles: " + N(bf.cycles()) + "\n";
  o += "\tLast cycle when: " + (bf.last_cycle_when() > 0 ? When(bf.last_cycle_when()) : "N/A") + "\n";
  o += "\tLast cycle: " + N(bf.last_cycle_us()) + "\n";
  o += "\tMax cycle:  " + N(bf.max_cycle_us()) + "\n";
  if (bf.cycles() > 0) o += "\tMean cycle: " + N(bf.mean_cycle_us()) + "\n";
  o += "\tLast depth cycle: " + N(bf.last_depth()) + "\n";
  o += "\tLast depth cycle (try sched): " + N(bf.last_depth_try()) + "\n";
  if (bf.cycles() > 0) {
    o += "\tDepth Mean: " + N(bf.depth_mean()) + "\n";
    o += "\tDepth Mean (try depth): " + N(bf.depth_try_mean()) + "\n";
  }
  o += "\tLast queue length: " + N(bf.queue_length()) + "\n";
  if (bf.cycles() > 0) o += "\tQueue length mean: " + N(bf.queue_length_mean()) + "\n";
  o += "\nRemote Procedure Call statistics by message type\n";
  for (const auto& r : d.rpc_stats())
    o += "\t" + r.name() + " count:" + N(r.count()) + " ave_time:" +
         N(r.count() ? r.total_time_us() / r.count() : 0) + " total_time:" + N(r.total_time_us()) + "\n";
  o += "\nRemote Procedure Call statistics by user\n";
  for (const auto& u : d.user_stats())
    o += "\t" + UserLabel(names, u.uid()) + "(" + N(u.uid()) + ") count:" + N(u.count()) +
         " ave_time:" + N(u.count() ? u.total_time_us() / u.count() : 0) +
         " total_time:" + N(u.total_time_us()) + "\n";
  return o;
}

}  // namespace tessera::cli
