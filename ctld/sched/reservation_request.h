#pragma once
// Creating and changing reservations (issue 17 §1): scontrol's `create|update reservation`
// keys, parsed and checked against the cluster. Pure: times arrive as epoch seconds (the CLI
// resolves StartTime=now+1hour in the user's time zone) and `now` is given.
//
// Keys (case-insensitive, as scontrol): ReservationName, StartTime, EndTime, Duration
// (Slurm time syntax, minutes by default), Nodes (hostlist; "ALL"), NodeCnt, PartitionName,
// Users, Accounts, Flags. On update, Users/Accounts/Flags take "+x"/"-x" items (or the
// "Users+=x" / "Users-=x" spelling) to add or remove rather than replace; Duration keeps the
// start, StartTime keeps the duration.
//
// Checks (each error names what is wrong; nothing is changed on error): a name on create,
// unique; end after start; Users or Accounts given; Nodes or NodeCnt given; every node known;
// NodeCnt satisfiable; no other reservation holds a node over an overlapping window (unless
// either has MAINT or OVERLAP); no running job holds a node past the start (unless
// IGNORE_JOBS); at most one of HOURLY/DAILY/WEEKLY and an occurrence shorter than its period.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

// A list key with its update mode: replace (set), add ("+x") or remove ("-x"), per item.
struct ResvListEdit {
  bool given = false;
  std::vector<std::string> set;     // plain items (replace when no +/- item is present)
  std::vector<std::string> add;
  std::vector<std::string> remove;
};

struct ResvRequest {
  std::string name;
  std::optional<int64_t> start, end, duration;
  std::optional<std::string> nodes;      // hostlist as typed
  std::optional<uint32_t> node_cnt;
  std::optional<std::string> partition;
  ResvListEdit users, accounts;
  bool flags_given = false;
  uint32_t flags_set = 0, flags_add = 0, flags_remove = 0;
};

using ResvKeyValues = std::vector<std::pair<std::string, std::string>>;

// Parses scontrol's key=value pairs (StartTime/EndTime already epoch seconds). Unknown keys,
// bad numbers and unknown flags are errors naming the key.
Result<ResvRequest> ParseResvRequest(const ResvKeyValues& kv);

// The reservation a create (`existing` null) or an update of `existing` gives, checked against
// `cluster` (nodes, partitions, running jobs) and `cluster.reservations` (the reservation
// being updated is skipped by name).
Result<ReservationSnap> ApplyResvRequest(const ResvRequest& req, const ReservationSnap* existing,
                                         const ClusterSnapshot& cluster, int64_t now);

}  // namespace tessera::sched
