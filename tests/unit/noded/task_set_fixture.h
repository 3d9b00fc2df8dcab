#pragma once
// Shared by the TaskSet tests (step_test, step_pty_test, step_stdin_test): a plan running `bash -c script`
// as the current user for the given ranks, the output collected per rank, and a driver that runs
// the set on a thread while the test talks to it.
#include <unistd.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "noded/task_set.h"

namespace tessera::noded::testing {

// `shell -c script` as the current user for the given ranks (environment PATH and R=rank).
inline TaskPlan ShellPlan(const std::string& shell, const std::string& script,
                          const std::vector<uint32_t>& ranks) {
  TaskPlan p;
  p.uid = ::getuid();
  p.gid = ::getgid();
  auto groups = UserGroups("root", p.gid);
  if (groups.ok()) p.groups = *groups;
  p.cwd = "/tmp";
  p.argv = {shell, "-c", script};
  for (uint32_t r : ranks) p.tasks.push_back({r, {"PATH=/usr/bin:/bin", "R=" + std::to_string(r)}});
  p.kill_wait_ms = 500;
  return p;
}

inline TaskPlan BashPlan(const std::string& script, const std::vector<uint32_t>& ranks) {
  return ShellPlan("bash", script, ranks);
}

struct TaskOut {
  std::mutex mu;
  std::map<uint32_t, std::string> data;
  std::map<uint32_t, int> exit_code;
  std::string Of(uint32_t r) {
    std::lock_guard<std::mutex> lock(mu);
    return data[r];
  }
};

// Runs the set on a thread; `drive` talks to it meanwhile.
inline void RunWith(TaskSet& set, TaskOut& out, const std::function<void()>& drive) {
  std::thread t([&] {
    set.Run([&](const tessera::v1::TaskOutput& m) {
      std::lock_guard<std::mutex> lock(out.mu);
      if (m.has_data()) out.data[m.data().rank()] += m.data().data();
      if (m.has_exit()) out.exit_code[m.exit().rank()] = m.exit().exit_code();
      return true;
    }, nullptr);
  });
  drive();
  t.join();
}

}  // namespace tessera::noded::testing
