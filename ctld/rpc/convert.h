#pragma once
// Conversions between tessera.v1 protobuf messages and the controller's C++ model.
// Generated types stay inside ctld/rpc (DESIGN §3).
#include "ctld/controller.h"
#include "ctld/jobs/job.h"
#include "ctld/nodes/node_table.h"
#include "tessera/v1/agent.pb.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::ctld::rpc {

JobSpec FromProto(const v1::JobSpec& p);
// Fields of a request that the controller cannot honour yet: an error for those that would
// change the meaning of the job, a warning line for others. (--reservation is honoured since
// issue 17 §1: an unknown name is refused by sched::CheckSubmit.)
Status CheckRequestOnlyFields(const v1::JobSpec& p, std::vector<std::string>* warnings);
// `with_paths`: also resolve stdout/stderr paths (GetJob); lists leave them to the client.
void ToProto(const JobRecord& r, v1::JobInfo* out, bool with_paths = true);
void ToProto(const NodeRuntime& n, int64_t now, v1::NodeInfo* out);
// NodeRuntime::StateName() -> the enum (NODE_UNKNOWN for anything else).
v1::NodeState NodeStateOf(const std::string& state_name);
void ToProto(const JobEvent& e, v1::JobEvent* out);
void ToProto(const NodeAlloc& a, v1::NodeAllocation* out);
RegisterInfo FromProto(const v1::Register& p);
RegisterInfo::Finished FromProto(const v1::JobFinished& p);
GpuState FromProto(const v1::GpuDevice& g);
void ToProto(const GpuState& g, v1::GpuDevice* out);
void ToProto(const TopologyRecord& r, v1::TopologyRecord* out);  // issue 15
void ToLaunch(const JobRecord& r, const JobPayload& p, int64_t kill_wait_s, v1::LaunchJob* out);

}  // namespace tessera::ctld::rpc
