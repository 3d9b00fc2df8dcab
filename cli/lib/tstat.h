#pragma once
// Issue 19 (h19): the commands that reach a running step's nodes directly.
//  - tstat (sstat): live usage of running steps, asked from each of the step's nodes
//    (StepAgent.GetStepUsage) and added up.
//  - tattach (sattach JOB.STEP): a copy of the step's output from now on, from each of its
//    nodes (StepAgent.AttachTasks), to stdout/stderr (-l: "rank: " labels); it ends when the
//    step's tasks have ended. Its stdin is not forwarded (tasks read what srun gave them).
// `connect_node` makes a node's client (tests: fakes).
#include <functional>
#include <memory>

#include "cli/lib/command.h"
#include "cli/lib/step_agent_api.h"

namespace tessera::cli {

using NodeConnector =
    std::function<Result<std::unique_ptr<StepAgentApi>>(const tessera::v1::StepNode& node)>;

int RunTstatWith(CommandContext& ctx, const NodeConnector& connect_node);
int RunTstat(CommandContext& ctx);  // trun_os.cc: nodes from tessera.conf with munge
int RunTattachWith(CommandContext& ctx, const NodeConnector& connect_node);
int RunTattach(CommandContext& ctx);  // trun_os.cc

}  // namespace tessera::cli
