#pragma once
#include <filesystem>
#include <string>
#include <unistd.h>

// A fresh temporary directory removed at scope exit.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/tessera-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};
