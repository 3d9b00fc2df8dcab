#pragma once
// Reservations in a simulation (issue 17 §1): `--reservations FILE` gives tessera-sim
// maintenance windows and other advance reservations, one per line in scontrol's create
// syntax (`ReservationName=m StartTime=+86400 Duration=4:00:00 Nodes=ALL Users=root
// Flags=MAINT`). StartTime/EndTime are seconds: "+N" from the trace's first submission, or an
// absolute epoch. Each line is checked as `tcontrol create reservation` checks it (overlaps,
// unknown nodes, ...); errors name the file and line. Trace jobs name no reservation, so a
// reservation only keeps them off its nodes (backfill plans around it).
#include <cstdint>
#include <string>

#include "common/status.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sim {

// Adds the reservations of `text` (from `file`) to `cluster.reservations` (all of them, or on
// error none); `t0` = the trace's first submission.
Status LoadReservations(const std::string& text, const std::string& file, int64_t t0,
                        sched::ClusterSnapshot* cluster);
// The first reservation boundary (an occurrence's start or end) after `t`, or kNever.
int64_t NextReservationBoundary(const sched::ClusterSnapshot& cluster, int64_t t);

}  // namespace tessera::sim
