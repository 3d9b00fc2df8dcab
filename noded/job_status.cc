#include "noded/job_status.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "common/file_io.h"

namespace tessera::noded {
namespace {

Status Errno(const std::string& what, const std::string& path) {
  return Internal(what + " " + path + ": " + std::strerror(errno));
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

std::string FormatJobStatus(const JobStatus& s) {
  std::string msg = s.message;
  for (char& c : msg)
    if (c == '\n' || c == '\r') c = ' ';
  std::ostringstream out;
  out << "state=" << JobStateName(s.state) << "\n"
      << "exit_code=" << s.exit_code << "\n"
      << "exit_signal=" << s.exit_signal << "\n"
      << "end_time=" << s.end_time << "\n"
      << "message=" << msg << "\n";
  if (!s.usage.empty()) out << "usage=" << s.usage << "\n";
  return out.str();
}

Result<JobStatus> ParseJobStatus(const std::string& text, const std::string& where) {
  JobStatus s;
  bool have_state = false;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    size_t eq = line.find('=');
    std::string at = where + ":" + std::to_string(lineno) + ": ";
    if (eq == std::string::npos) return InvalidArgument(at + "expected key=value, got '" + line + "'");
    std::string key = line.substr(0, eq), val = line.substr(eq + 1);
    int64_t n = 0;
    if (key == "state") {
      auto st = ParseJobState(val);
      if (!st) return InvalidArgument(at + "unknown job state '" + val + "'");
      s.state = *st;
      have_state = true;
    } else if (key == "message") {
      s.message = val;
    } else if (key == "usage") {
      s.usage = val;
    } else if (key == "exit_code" || key == "exit_signal" || key == "end_time") {
      if (!ParseInt(val, &n)) return InvalidArgument(at + key + " is not a number: '" + val + "'");
      if (key == "exit_code") s.exit_code = static_cast<int32_t>(n);
      if (key == "exit_signal") s.exit_signal = static_cast<int32_t>(n);
      if (key == "end_time") s.end_time = n;
    }
  }
  if (!have_state) return InvalidArgument(where + ": no state= line");
  return s;
}

namespace {
Status WriteInPlace(const std::string& path, const std::string& contents, mode_t mode, bool sync) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return Errno("cannot create", path);
  auto fail = [&](const char* what) {
    Status st = Errno(what, path);
    ::close(fd);
    return st;
  };
  if (::fchmod(fd, mode) != 0) return fail("cannot chmod");
  size_t off = 0;
  while (off < contents.size()) {
    ssize_t n = ::pwrite(fd, contents.data() + off, contents.size() - off, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot write");
    off += static_cast<size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(contents.size())) != 0) return fail("cannot truncate");
  if (sync && ::fsync(fd) != 0) return fail("cannot fsync");
  ::close(fd);
  return Status::Ok();
}
}  // namespace

Status WriteFileInPlace(const std::string& path, const std::string& contents, mode_t mode) {
  return WriteInPlace(path, contents, mode, /*sync=*/false);
}

Status WriteFileAtomic(const std::string& path, const std::string& contents,
                       Durability durability, mode_t mode) {
  bool sync = durability == Durability::kPowerLoss;
  std::string tmp = path + ".tmp";
  TESSERA_RETURN_IF_ERROR(WriteInPlace(tmp, contents, mode, sync));
  if (::rename(tmp.c_str(), path.c_str()) != 0) return Errno("cannot rename to", path);
  if (!sync) return Status::Ok();
  int dfd = ::open(DirName(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

Status WriteStatusFile(const std::string& path, const JobStatus& s) {
  return WriteFileAtomic(path, FormatJobStatus(s), Durability::kProcessCrash);
}

Result<JobStatus> ReadStatusFile(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseJobStatus(*text, path);
}

}  // namespace tessera::noded
