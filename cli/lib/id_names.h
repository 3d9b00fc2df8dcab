#pragma once
// User and group names <-> ids. The system implementation reads the passwd/group databases
// (getpwuid_r & co.); tests use FakeIdNames so formatting never depends on the machine.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::cli {

class IdNames {
 public:
  virtual ~IdNames() = default;
  // "" when the id has no name.
  virtual std::string UserName(uint32_t uid) const = 0;
  virtual std::string GroupName(uint32_t gid) const = 0;
  virtual std::optional<uint32_t> UserId(std::string_view name) const = 0;
};

class SystemIdNames final : public IdNames {
 public:
  std::string UserName(uint32_t uid) const override;
  std::string GroupName(uint32_t gid) const override;
  std::optional<uint32_t> UserId(std::string_view name) const override;
};

class FakeIdNames final : public IdNames {
 public:
  void AddUser(uint32_t uid, std::string name) { users_[uid] = std::move(name); }
  void AddGroup(uint32_t gid, std::string name) { groups_[gid] = std::move(name); }
  std::string UserName(uint32_t uid) const override {
    auto it = users_.find(uid);
    return it == users_.end() ? "" : it->second;
  }
  std::string GroupName(uint32_t gid) const override {
    auto it = groups_.find(gid);
    return it == groups_.end() ? "" : it->second;
  }
  std::optional<uint32_t> UserId(std::string_view name) const override {
    for (const auto& [uid, n] : users_)
      if (n == name) return uid;
    return std::nullopt;
  }

 private:
  std::map<uint32_t, std::string> users_;
  std::map<uint32_t, std::string> groups_;
};

// The user's name, or the uid as a number when it has none.
std::string UserLabel(const IdNames& names, uint32_t uid);
std::string GroupLabel(const IdNames& names, uint32_t gid);

// "alice,1001,bob" -> uids. Numbers are taken as uids; unknown names are an error
// (invalid user: "carol").
Result<std::vector<uint32_t>> ParseUserList(const IdNames& names, std::string_view list);

}  // namespace tessera::cli
