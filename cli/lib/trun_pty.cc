#include "cli/lib/trun_pty.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tessera::cli {

namespace v1 = tessera::v1;

namespace {

class FdTerminal final : public Terminal {
 public:
  explicit FdTerminal(int fd = 0, bool owned = false) : fd_(fd), owned_(owned) {}
  ~FdTerminal() override {
    if (owned_) ::close(fd_);
  }
  bool IsTerminal() override { return ::isatty(fd_) == 1; }
  bool Size(uint32_t* rows, uint32_t* cols) override {
    winsize ws{};
    if (::ioctl(fd_, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0) return false;
    *rows = ws.ws_row;
    *cols = ws.ws_col;
    return true;
  }
  void MakeRaw() override {
    if (::tcgetattr(fd_, &saved_) != 0) return;
    termios raw = saved_;
    ::cfmakeraw(&raw);
    if (::tcsetattr(fd_, TCSADRAIN, &raw) == 0) raw_ = true;
  }
  void Restore() override {
    if (raw_) ::tcsetattr(fd_, TCSADRAIN, &saved_);
    raw_ = false;
  }
  bool IsNull() override {
    struct stat st {}, null {};
    if (::fstat(fd_, &st) != 0) return true;  // closed
    return S_ISCHR(st.st_mode) && ::stat("/dev/null", &null) == 0 && st.st_rdev == null.st_rdev;
  }
  std::string Read(int timeout_ms, bool* eof) override {
    *eof = false;
    pid_t fg = ::isatty(fd_) == 1 ? ::tcgetpgrp(fd_) : -1;
    if (fg > 0 && fg != ::getpgrp()) {  // our terminal, and we are in the background: wait
      ::poll(nullptr, 0, timeout_ms);
      return "";
    }
    pollfd f{fd_, POLLIN, 0};
    if (::poll(&f, 1, timeout_ms) <= 0) return "";
    char buf[64 * 1024];
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return "";
    if (n <= 0) {
      *eof = true;
      return "";
    }
    return std::string(buf, static_cast<size_t>(n));
  }

 private:
  int fd_;
  bool owned_;
  termios saved_{};
  bool raw_ = false;
};

}  // namespace

std::unique_ptr<Terminal> OsTerminal() { return std::make_unique<FdTerminal>(); }

Result<std::unique_ptr<Terminal>> OpenInputFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)  // srun's words
    return Status(Code::kNotFound,
                  "Could not open stdin file " + path + ": " + std::strerror(errno));
  return std::unique_ptr<Terminal>(new FdTerminal(fd, true));
}

void PtyForwarder::Prepare(uint32_t* rows, uint32_t* cols) {
  if (!term_.Size(&rows_, &cols_)) rows_ = cols_ = 0;
  *rows = rows_;
  *cols = cols_;
  if (term_.IsTerminal()) {
    term_.MakeRaw();
    raw_ = true;
  }
}

void PtyForwarder::Start(std::unique_ptr<StepInputStream> in) {
  in_ = std::move(in);
  thread_ = std::thread([this] { Loop(); });
}

void PtyForwarder::Loop() {
  auto message = [&] {
    v1::StepInput m;
    m.set_job_id(job_id_);
    m.set_step_id(step_id_);
    return m;
  };
  if (!in_->Write(message())) return;  // names the step to the node
  bool eof = false;
  while (!stop_ && !eof) {
    std::string data = term_.Read(100, &eof);
    v1::StepInput m = message();
    bool send = !data.empty() || eof;
    m.set_data(std::move(data));
    m.set_eof(eof);
    uint32_t rows = 0, cols = 0;
    if (term_.Size(&rows, &cols) && (rows != rows_ || cols != cols_)) {
      rows_ = rows, cols_ = cols;
      m.set_rows(rows);
      m.set_cols(cols);
      send = true;
    }
    if (send && !in_->Write(m)) return;
  }
}

void PtyForwarder::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (in_) (void)in_->Close();
  in_.reset();
  if (raw_) term_.Restore();
  raw_ = false;
}

}  // namespace tessera::cli
