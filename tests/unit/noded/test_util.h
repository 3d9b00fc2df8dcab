#pragma once
// Helpers for noded tests: a scratch directory removed on destruction, file reading, waiting.
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "common/file_io.h"

namespace tessera::noded::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& base = "/tmp") {
    std::string tmpl = base + "/tessera-noded-test-XXXXXX";
    if (char* p = mkdtemp(tmpl.data())) path_ = p;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The file's contents, "" when it cannot be read.
inline std::string ReadAll(const std::string& path) {
  auto text = ReadFile(path);
  return text.ok() ? *text : std::string();
}

inline void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Polls `cond` every 50 ms until it holds or `seconds` pass.
inline bool WaitFor(const std::function<bool()>& cond, double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return cond();
}

}  // namespace tessera::noded::testing
