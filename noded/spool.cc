#include "noded/spool.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/file_io.h"

namespace tessera::noded {

namespace fs = std::filesystem;

namespace {

uint32_t ScriptOwner(const std::string& dir) {
  struct stat st{};
  if (::lstat((dir + "/script").c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return Spool::kNoUser;
  return st.st_uid;
}

}  // namespace

Status Spool::Init() {
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) return Internal("cannot create spool directory " + root_ + ": " + ec.message());
  if (::chmod(root_.c_str(), 0755) != 0)
    return Internal("cannot chmod spool directory " + root_ + ": " + std::strerror(errno));
  free_.clear();
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("free.", 0) != 0) continue;
    std::string num = name.substr(5);
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) continue;
    next_free_ = std::max<uint64_t>(next_free_, std::stoull(num) + 1);
    if (free_.size() < kMaxFreeDirs && it->is_directory())
      free_.push_back({it->path().string(), ScriptOwner(it->path().string())});
    else
      fs::remove_all(it->path(), ec);
  }
  return Status::Ok();
}

Result<std::vector<uint64_t>> Spool::ListJobs() const {
  std::vector<uint64_t> ids;
  std::error_code ec;
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("job.", 0) != 0 || !it->is_directory()) continue;
    std::string num = name.substr(4);
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) continue;
    ids.push_back(std::stoull(num));
  }
  if (ec) return Internal("cannot list spool directory " + root_ + ": " + ec.message());
  std::sort(ids.begin(), ids.end());
  return ids;
}

Status Spool::CreateJobDir(uint64_t id, uint32_t uid) {
  std::string dir = JobDir(id);
  struct stat st{};
  if (::lstat(dir.c_str(), &st) == 0) return AlreadyExists("job directory " + dir + " exists");
  while (!free_.empty()) {
    auto mine = std::find_if(free_.rbegin(), free_.rend(),
                             [uid](const FreeDir& f) { return f.script_uid == uid; });
    auto pick = mine != free_.rend() ? std::prev(mine.base()) : std::prev(free_.end());
    FreeDir from = std::move(*pick);
    free_.erase(pick);
    // rename() would replace an empty job.<id> made meanwhile; the lstat above rules that out
    // for noded, the only writer of the spool's top level.
    if (::rename(from.path.c_str(), dir.c_str()) != 0) continue;
    // The files the next job writes atomically go back to <file>.tmp, whose inode
    // WriteFileAtomic then reuses; until then the job has none of them. launch.pb stays: noded
    // rewrites it in place before it starts the stepd that reads it.
    for (std::string f : {"/isolation", "/stepd.pid", "/status"})
      (void)::rename((dir + f).c_str(), (dir + f + ".tmp").c_str());
    if (from.script_uid != uid || uid == kNoUser) (void)::unlink((dir + "/script").c_str());
    (void)::truncate((dir + "/stepd.log").c_str(), 0);
    return Status::Ok();
  }
  if (::mkdir(dir.c_str(), 0755) != 0) {
    if (errno == EEXIST) return AlreadyExists("job directory " + dir + " exists");
    return Internal("cannot create " + dir + ": " + std::strerror(errno));
  }
  ::chmod(dir.c_str(), 0755);
  return Status::Ok();
}

Status Spool::RemoveJobDir(uint64_t id) {
  std::string dir = JobDir(id);
  if (free_.size() < kMaxFreeDirs) {
    std::string to = root_ + "/free." + std::to_string(next_free_++);
    if (::rename(dir.c_str(), to.c_str()) == 0) {
      free_.push_back({to, ScriptOwner(to)});
      return Status::Ok();
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) return Internal("cannot remove " + dir + ": " + ec.message());
  return Status::Ok();
}

pid_t Spool::ReadPid(uint64_t id) const {
  std::ifstream in(PidFile(id));
  long long pid = 0;
  if (!(in >> pid) || pid <= 0) return 0;
  return static_cast<pid_t>(pid);
}

Result<uint64_t> ProcessStartTime(pid_t pid) {
  std::string where = "/proc/" + std::to_string(pid) + "/stat";
  auto text = ReadFile(where);
  if (!text.ok()) return NotFound("no process " + std::to_string(pid));
  // Fields after the command name, which may hold spaces and parentheses: 3 = state, 22 = start.
  size_t paren = text->rfind(')');
  if (paren == std::string::npos) return Internal("unreadable " + where);
  const char* p = text->c_str() + paren + 1;
  char state = 0;
  uint64_t start = 0;
  for (int field = 3; field <= 22; ++field) {
    while (*p == ' ') ++p;
    if (!*p) return Internal("unreadable " + where);
    if (field == 3) state = *p;
    if (field == 22) start = std::strtoull(p, nullptr, 10);
    while (*p && *p != ' ') ++p;
  }
  if (state == 'Z' || state == 'X') return NotFound("process " + std::to_string(pid) + " has exited");
  return start;
}

bool ProcStepdProbe::IsStepdAlive(pid_t pid, const std::string& job_dir) const {
  if (pid <= 0) return false;
  {
    std::ifstream pf(job_dir + "/stepd.pid");
    long long recorded_pid = 0;
    uint64_t recorded_start = 0;
    if (pf >> recorded_pid && recorded_pid == pid && pf >> recorded_start) {
      auto start = ProcessStartTime(pid);
      return start.ok() && *start == recorded_start;
    }
  }
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  std::vector<std::string> argv;
  for (size_t start = 0; start < all.size();) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    argv.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  if (argv.empty()) return false;  // a zombie has an empty cmdline
  if (fs::path(argv[0]).filename() != "tessera-stepd") return false;
  return std::find(argv.begin() + 1, argv.end(), job_dir) != argv.end();
}

JobDirState ClassifyJob(const Spool& spool, const StepdProbe& probe, uint64_t id,
                        JobStatus* status) {
  auto read = [&]() -> bool {
    auto st = ReadStatusFile(spool.StatusFile(id));
    if (st.ok()) {
      *status = *st;
      return true;
    }
    if (st.status().code() == Code::kNotFound) return false;
    *status = JobStatus{};
    status->state = JobState::kFailed;
    status->message = "unreadable status file: " + st.status().message();
    return true;
  };
  if (read()) return JobDirState::kFinished;
  if (probe.IsStepdAlive(spool.ReadPid(id), spool.JobDir(id))) return JobDirState::kRunning;
  if (read()) return JobDirState::kFinished;
  return JobDirState::kLost;
}

Result<SpoolScan> ScanSpool(const Spool& spool, const StepdProbe& probe) {
  auto ids = spool.ListJobs();
  if (!ids.ok()) return ids.status();
  SpoolScan scan;
  for (uint64_t id : *ids) {
    JobStatus st;
    switch (ClassifyJob(spool, probe, id, &st)) {
      case JobDirState::kRunning: scan.running.push_back(id); break;
      case JobDirState::kFinished: scan.finished[id] = st; break;
      case JobDirState::kLost: scan.lost.push_back(id); break;
    }
  }
  return scan;
}

}  // namespace tessera::noded
