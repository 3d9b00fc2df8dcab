#include "noded/job_manager.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/file_io.h"
#include "noded/task_usage.h"

namespace tessera::noded {

namespace v1 = tessera::v1;

v1::JobFinished ToJobFinished(uint64_t id, const JobStatus& s, uint64_t run) {
  v1::JobFinished f;
  f.set_job_id(id);
  f.set_run(run);
  f.set_state(static_cast<v1::JobState>(static_cast<int>(s.state)));
  f.set_exit_code(s.exit_code);
  f.set_exit_signal(s.exit_signal);
  f.set_end_time(s.end_time);
  f.set_message(s.message);
  TaskUsage u;  // issue 19: the .batch step's usage
  if (!s.usage.empty() && ParseUsageText(s.usage, &u)) *f.mutable_batch_usage() = ToStepUsage({u}, "");
  return f;
}

JobManager::JobManager(Spool spool, StepdControl& control, const StepdProbe& probe,
                       const Clock& clock, LogFn log, IsolationPlanner* planner)
    : spool_(std::move(spool)), control_(control), probe_(probe), clock_(clock),
      log_(std::move(log)), planner_(planner) {}

namespace {

std::string RunTag(uint64_t id, uint64_t run) {
  return "job " + std::to_string(id) + (run ? " run " + std::to_string(run) : std::string()) + ": ";
}

}  // namespace

void JobManager::Track(const v1::LaunchJob& l) {
  for (const auto& a : l.alloc())
    for (const auto& u : a.mig_uuids()) mig_[l.job_id()].push_back(u);
}

std::map<std::string, uint64_t> JobManager::MigInUse() const {
  std::map<std::string, uint64_t> out;
  for (const auto& [id, uuids] : mig_)
    for (const auto& u : uuids) out[u] = id;
  return out;
}

Status JobManager::Recover() {
  auto scan = ScanSpool(spool_, probe_);
  if (!scan.ok()) return scan.status();
  auto read_launch = [this](uint64_t id, v1::LaunchJob* l) {
    auto launch = ReadFile(spool_.LaunchFile(id));
    if (!launch.ok() || !l->ParseFromString(*launch)) return false;
    runs_[id] = l->run();
    return true;
  };
  for (uint64_t id : scan->running) {
    running_[id] = spool_.ReadPid(id);
    v1::LaunchJob l;
    if (read_launch(id, &l)) {
      Track(l);
      if (mps_) mps_->Adopt(l);
    }
    auto text = ReadFile(spool_.JobDir(id) + "/isolation");
    if (text.ok() && planner_) {
      auto iso = ParseJobIsolation(*text);
      if (iso.ok()) planner_->Restore(id, *iso);
    }
    log_("job " + std::to_string(id) + ": reattached to running tessera-stepd pid " +
         std::to_string(running_[id]));
  }
  running_now_.store(running_.size(), std::memory_order_relaxed);
  for (const auto& [id, st] : scan->finished) {
    v1::LaunchJob l;
    if (read_launch(id, &l) && mps_) {  // ended while noded was away: its daemon may stop
      mps_->Adopt(l);
      mps_->Release(id);
    }
    finished_[id] = st;
    log_("job " + std::to_string(id) + ": finished " + JobStateName(st.state) +
         " while unacknowledged; will report it");
  }
  for (uint64_t id : scan->lost) {
    v1::LaunchJob l;
    // the verdict is reported with the run that was lost; Fail releases its MPS daemon
    if (read_launch(id, &l) && mps_) mps_->Adopt(l);
    Fail(id, "tessera-stepd for job " + std::to_string(id) + " was lost");
  }
  return Status::Ok();
}

Status JobManager::PrepareJobDir(const v1::LaunchJob& l) {
  uint64_t id = l.job_id();
  TESSERA_RETURN_IF_ERROR(spool_.CreateJobDir(id, l.uid()));
  // Only root reads it: it holds the job's script and environment. Written in place: only the
  // stepd started after it reads it (a noded that dies midway started none: the job is lost).
  TESSERA_RETURN_IF_ERROR(WriteFileInPlace(spool_.LaunchFile(id), l.SerializeAsString(), 0600));
  if (planner_) {
    JobIsolation iso = planner_->Plan(l);
    TESSERA_RETURN_IF_ERROR(
        WriteFileAtomic(spool_.JobDir(id) + "/isolation", FormatJobIsolation(iso),
                        Durability::kProcessCrash));
    if (!iso.cgroup_root.empty())
      log_("job " + std::to_string(id) + ": cores " + iso.cgroup.cpus + ", memory limit " +
           std::to_string(iso.cgroup.memory_bytes >> 20) + " MiB");
  }
  if (l.script().empty()) return Status::Ok();
  // An existing script here is the same user's (Spool::CreateJobDir): overwritten in place.
  std::string path = spool_.ScriptFile(id);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0700);
  if (fd < 0) return Internal("cannot create script " + path + ": " + std::strerror(errno));
  const std::string& text = l.script();
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::pwrite(fd, text.data() + off, text.size() - off, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return Internal("cannot write script " + path + ": " + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(text.size())) != 0) {
    ::close(fd);
    return Internal("cannot write script " + path + ": " + std::strerror(errno));
  }
  bool owned = ::fchown(fd, l.uid(), l.gid()) == 0;
  int chown_errno = errno;
  ::fchmod(fd, 0700);
  ::close(fd);
  if (!owned && l.uid() != ::geteuid())
    return Internal("cannot give script " + path + " to uid " + std::to_string(l.uid()) + ": " +
                    std::strerror(chown_errno));
  return Status::Ok();
}

void JobManager::Launch(const v1::LaunchJob& l) {
  uint64_t id = l.job_id();
  std::string tag = RunTag(id, l.run());
  if (running_.count(id) || finished_.count(id)) {
    uint64_t known = RunOf(id);
    if (l.run() == 0 || known == 0 || l.run() <= known) {
      log_(tag + "launch ignored: " +
           (l.run() < known ? "run " + std::to_string(known) + " is already known on this node"
                            : std::string("job already known on this node")));
      return;
    }
    Defer(l);
    return;
  }
  Start(l);
}

void JobManager::Start(const v1::LaunchJob& launch) {
  uint64_t id = launch.job_id();
  std::string tag = RunTag(id, launch.run());
  if (mps_ && mps_->Wants(launch) && !running_.count(id) && !finished_.count(id)) {
    v1::LaunchJob with_mps = launch;  // completed with its MPS memory limit and directories
    if (Status ms = mps_->Prepare(&with_mps); !ms.ok()) {
      runs_[id] = launch.run();
      Status dir = spool_.CreateJobDir(id, launch.uid());
      log_(tag + "launch failed: " + ms.message());
      launch_failures_.fetch_add(1, std::memory_order_relaxed);
      if (dir.ok()) Fail(id, "launch failed on this node: " + ms.message());
      return;
    }
    StartPrepared(with_mps);
    return;
  }
  StartPrepared(launch);
}

void JobManager::StartPrepared(const v1::LaunchJob& l) {
  uint64_t id = l.job_id();
  std::string tag = RunTag(id, l.run());
  Status st = PrepareJobDir(l);
  if (st.code() == Code::kAlreadyExists) {
    log_(tag + "launch ignored: " + st.message());
    if (mps_) mps_->Release(id);
    return;
  }
  runs_[id] = l.run();
  if (st.ok()) st = control_.Start(id, spool_.JobDir(id));
  if (!st.ok()) {
    log_(tag + "launch failed: " + st.message());
    launch_failures_.fetch_add(1, std::memory_order_relaxed);
    Fail(id, "launch failed on this node: " + st.message());
    return;
  }
  running_[id] = spool_.ReadPid(id);
  launches_.fetch_add(1, std::memory_order_relaxed);
  running_now_.store(running_.size(), std::memory_order_relaxed);
  Track(l);
  log_(tag + "launched, tessera-stepd pid " + std::to_string(running_[id]));
  v1::NodeMessage m;
  m.mutable_started()->set_job_id(id);
  m.mutable_started()->set_start_time(clock_.Now());
  m.mutable_started()->set_run(l.run());
  outbox_.push_back(std::move(m));
}

void JobManager::Defer(const v1::LaunchJob& l) {
  uint64_t id = l.job_id();
  uint64_t old = runs_.count(id) ? runs_[id] : 0;
  auto w = waiting_.find(id);
  if (w != waiting_.end() && w->second.launch.run() >= l.run()) {
    log_(RunTag(id, l.run()) + "launch ignored: run " + std::to_string(w->second.launch.run()) +
         " already waits here");
    return;
  }
  waiting_[id] = {l, false};
  log_(RunTag(id, l.run()) + "waits for run " + std::to_string(old) +
       " of the job to end and be acknowledged");
  if (running_.count(id)) SignalStarted(id, 0, 0);  // the earlier run must end first
}

void JobManager::EndCancelled(const v1::LaunchJob& l) {
  uint64_t id = l.job_id();
  runs_[id] = l.run();
  JobStatus st;
  st.state = JobState::kCancelled;
  st.end_time = clock_.Now();
  st.message = "cancelled before it started on this node";
  Status dir = spool_.CreateJobDir(id, l.uid());
  Status w = dir.ok() ? WriteStatusFile(spool_.StatusFile(id), st) : dir;
  if (!w.ok()) log_(RunTag(id, l.run()) + w.message());
  Finish(id, st);
}

void JobManager::Signal(uint64_t id, int signal, uint64_t run) {
  std::string tag = RunTag(id, run);
  auto w = waiting_.find(id);
  if (w != waiting_.end() && (run == 0 || run == w->second.launch.run())) {
    if (signal == 0) {
      w->second.cancelled = true;
      log_(tag + "cancel of run " + std::to_string(w->second.launch.run()) +
           ", which waits: it will end without starting");
    } else if (run != 0) {
      log_(tag + "signal " + std::to_string(signal) + " ignored: the run has not started");
    }
    if (run != 0) return;
  }
  SignalStarted(id, signal, run);
}

void JobManager::SignalStarted(uint64_t id, int signal, uint64_t run) {
  std::string tag = RunTag(id, run);
  auto it = running_.find(id);
  if (it == running_.end()) {
    log_(tag + "signal " + std::to_string(signal) + " ignored: job is not running here");
    return;
  }
  uint64_t here = RunOfStarted(id);
  if (run != 0 && here != 0 && here != run) {
    log_(tag + "signal " + std::to_string(signal) + " ignored: run " + std::to_string(here) +
         " runs here");
    return;
  }
  // A job with a status file has ended, and its stepd may already run the next job
  // (stepd_main.cc): no signal goes to it. This thread also launches the jobs, so a job without
  // one cannot lose its stepd to another job before the signal below is queued.
  if (ReadStatusFile(spool_.StatusFile(id)).status().code() != Code::kNotFound) {
    log_(tag + "signal " + std::to_string(signal) + " not sent: the job has ended");
    Poll();
    return;
  }
  pid_t pid = spool_.ReadPid(id);
  if (!probe_.IsStepdAlive(pid, spool_.JobDir(id))) {
    log_(tag + "signal " + std::to_string(signal) + " not delivered: tessera-stepd is gone");
    Poll();
    return;
  }
  Status st = signal == 0 ? control_.Cancel(id, pid) : control_.Forward(id, pid, signal);
  log_(tag + (signal == 0 ? std::string("cancel") : "signal " + std::to_string(signal)) +
       (st.ok() ? " sent to tessera-stepd" : " failed: " + st.message()));
}

void JobManager::Ack(uint64_t id, uint64_t run) {
  auto f = finished_.find(id);
  uint64_t here = RunOfStarted(id);
  if (f == finished_.end()) {
    log_(RunTag(id, run) + "ack ignored: job is not finished here");
    return;
  }
  if (run != 0 && here != 0 && run != here) {
    log_(RunTag(id, run) + "ack ignored: the run that ended here is " + std::to_string(here));
    return;
  }
  finished_.erase(f);
  runs_.erase(id);
  Status st = spool_.RemoveJobDir(id);
  log_(RunTag(id, here) + "acknowledged" + (st.ok() ? "" : "; " + st.message()));
  auto w = waiting_.find(id);
  if (w == waiting_.end()) return;
  Waiting next = std::move(w->second);
  waiting_.erase(w);
  if (next.cancelled) {
    EndCancelled(next.launch);
  } else {
    log_(RunTag(id, next.launch.run()) + "the earlier run is done; starting this one");
    Start(next.launch);
  }
}

void JobManager::Poll() {
  std::vector<uint64_t> ids;
  for (const auto& [id, pid] : running_) ids.push_back(id);
  for (uint64_t id : ids) PollJob(id);
}

void JobManager::PollJob(uint64_t id) {
  if (!running_.count(id)) return;
  JobStatus st;
  switch (ClassifyJob(spool_, probe_, id, &st)) {
    case JobDirState::kRunning: break;
    case JobDirState::kFinished: Finish(id, st); break;
    case JobDirState::kLost:
      Fail(id, "tessera-stepd for job " + std::to_string(id) + " was lost");
      break;
  }
}

void JobManager::Finish(uint64_t id, const JobStatus& status) {
  running_.erase(id);
  running_now_.store(running_.size(), std::memory_order_relaxed);
  mig_.erase(id);
  if (planner_) planner_->Release(id);
  if (mps_) mps_->Release(id);
  finished_[id] = status;
  log_(RunTag(id, RunOfStarted(id)) + "finished " + JobStateName(status.state) + " exit " +
       std::to_string(status.exit_code) + ":" + std::to_string(status.exit_signal) +
       (status.message.empty() ? "" : " (" + status.message + ")"));
  v1::NodeMessage m;
  *m.mutable_finished() = ToJobFinished(id, status, RunOfStarted(id));
  outbox_.push_back(std::move(m));
}

void JobManager::Fail(uint64_t id, const std::string& message) {
  JobStatus st;
  st.state = JobState::kFailed;
  st.exit_code = 1;
  st.end_time = clock_.Now();
  st.message = message;
  Status w = WriteStatusFile(spool_.StatusFile(id), st);
  if (!w.ok()) log_("job " + std::to_string(id) + ": " + w.message());
  Finish(id, st);
}

std::vector<uint64_t> JobManager::Running() const {
  std::vector<uint64_t> ids;
  for (const auto& [id, pid] : running_) ids.push_back(id);
  for (const auto& [id, w] : waiting_)
    if (!running_.count(id)) ids.push_back(id);
  return ids;
}

uint64_t JobManager::RunOf(uint64_t id) const {
  auto w = waiting_.find(id);
  if (w != waiting_.end()) return w->second.launch.run();
  return RunOfStarted(id);
}

uint64_t JobManager::RunOfStarted(uint64_t id) const {
  auto r = runs_.find(id);
  return r == runs_.end() ? 0 : r->second;
}

std::vector<v1::JobFinished> JobManager::Unacked() const {
  std::vector<v1::JobFinished> out;
  for (const auto& [id, st] : finished_) out.push_back(ToJobFinished(id, st, RunOfStarted(id)));
  return out;
}

std::vector<v1::NodeMessage> JobManager::TakeOutbox() {
  std::vector<v1::NodeMessage> out;
  out.swap(outbox_);
  return out;
}

}  // namespace tessera::noded
