#pragma once
// sdiag's report (tcontrol sdiag, or run as sdiag) from a Diagnostics answer, in Slurm's layout
// and labels: header with the times, server and agent figures, job counters, the main
// scheduler's cycle statistics, the backfill section, then RPC statistics by method and by
// user. Times print as ctime does, in local time, followed by the epoch in parentheses.
#include <string>

#include "tessera/v1/controller.pb.h"

namespace tessera::cli {

class IdNames;

std::string FormatSdiag(const tessera::v1::DiagnosticsResponse& d, const IdNames& names);

}  // namespace tessera::cli
