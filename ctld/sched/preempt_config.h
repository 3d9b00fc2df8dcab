#pragma once
// Preemption settings (issue 16 §4), Slurm's names and meanings:
//   PreemptType=preempt/none|preempt/qos|preempt/partition_prio     (cluster)
//   PreemptMode=OFF|CANCEL|REQUEUE|SUSPEND[,GANG]                    (cluster default)
//   PreemptExemptTime=T                                               (cluster: minimum run time
//                                                                     before a job may be preempted)
//   PartitionName=p ... PreemptMode=... GraceTime=S                   (per partition)
//   QOSName=q ... Preempt=q1,q2 PreemptMode=... GraceTime=S PreemptExemptTime=T  (per QoS)
// Which jobs may preempt which:
//   preempt/qos: a job whose QoS lists the victim's QoS in Preempt=.
//   preempt/partition_prio: a job in a partition of higher PriorityTier than the victim's.
// The mode a victim gets (Slurm's order): its QoS PreemptMode (preempt/qos only), else its
// partition's PreemptMode, else the cluster's. OFF = never preempted. GraceTime: the victim's
// QoS GraceTime, else its partition's (seconds between SIGTERM and SIGKILL; CANCEL and
// REQUEUE). PreemptExemptTime: the victim's QoS value, else the cluster's.
// Tessera decisions: PreemptType set and PreemptMode not given = CANCEL (Slurm rejects OFF with
// a preempt type). SUSPEND needs no GANG here (Slurm requires SUSPEND,GANG cluster-wide); GANG
// (time-slicing suspended jobs with their preemptor) is accepted but not implemented: a
// suspended victim stays suspended until its preemptor ends, then resumes (Slurm's preempt/qos
// SUSPEND behaviour), with either preempt type. A warning says so.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/config_file.h"
#include "common/status.h"

namespace tessera::sched {

enum class PreemptType { kNone, kQos, kPartitionPrio };
// kUnset: not given at this level (the next level decides).
enum class PreemptModeKind { kUnset, kOff, kCancel, kRequeue, kSuspend };

struct PreemptModeSpec {
  PreemptModeKind kind = PreemptModeKind::kUnset;
  bool gang = false;
};

// "CANCEL", "requeue", "SUSPEND,GANG", "GANG" (= OFF,GANG), "OFF", "CLUSTER" (= unset).
Result<PreemptModeSpec> ParsePreemptMode(const std::string& v);
Result<PreemptType> ParsePreemptType(const std::string& v);
std::string PreemptModeName(PreemptModeKind k);  // "CANCEL", "REQUEUE", "SUSPEND", "OFF", ""
std::string PreemptTypeName(PreemptType t);      // "preempt/none", ...

// Per-partition preemption settings (PartitionName= lines).
struct PartitionPreempt {
  PreemptModeKind mode = PreemptModeKind::kUnset;
  int64_t grace_time = 0;  // seconds
};

}  // namespace tessera::sched
