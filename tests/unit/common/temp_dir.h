#pragma once
// A scratch directory for tests that write config files; removed on destruction.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tessera::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-test-XXXXXX").string();
    char* p = mkdtemp(tmpl.data());
    if (p) path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `text` to `name` (relative to the directory, subdirectories created) and returns the
  // full path.
  std::string Write(const std::string& name, const std::string& text) const {
    std::filesystem::path full = std::filesystem::path(path_) / name;
    std::filesystem::create_directories(full.parent_path());
    std::ofstream(full, std::ios::binary) << text;
    return full.string();
  }

 private:
  std::string path_;
};

}  // namespace tessera::testing
