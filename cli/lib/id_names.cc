#include "cli/lib/id_names.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <vector>

#include "cli/lib/text_util.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {
constexpr size_t kBufSize = 16384;
}

std::string SystemIdNames::UserName(uint32_t uid) const {
  struct passwd pw, *res = nullptr;
  std::vector<char> buf(kBufSize);
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &res) != 0 || !res) return "";
  return pw.pw_name;
}

std::string SystemIdNames::GroupName(uint32_t gid) const {
  struct group gr, *res = nullptr;
  std::vector<char> buf(kBufSize);
  if (getgrgid_r(gid, &gr, buf.data(), buf.size(), &res) != 0 || !res) return "";
  return gr.gr_name;
}

std::optional<uint32_t> SystemIdNames::UserId(std::string_view name) const {
  struct passwd pw, *res = nullptr;
  std::vector<char> buf(kBufSize);
  std::string n(name);
  if (getpwnam_r(n.c_str(), &pw, buf.data(), buf.size(), &res) != 0 || !res)
    return std::nullopt;
  return pw.pw_uid;
}

std::string UserLabel(const IdNames& names, uint32_t uid) {
  std::string n = names.UserName(uid);
  return n.empty() ? std::to_string(uid) : n;
}

std::string GroupLabel(const IdNames& names, uint32_t gid) {
  std::string n = names.GroupName(gid);
  return n.empty() ? std::to_string(gid) : n;
}

Result<std::vector<uint32_t>> ParseUserList(const IdNames& names, std::string_view list) {
  std::vector<uint32_t> uids;
  for (const std::string& piece : Split(list, ',')) {
    if (piece.empty()) continue;
    if (auto uid = names.UserId(piece)) {
      uids.push_back(*uid);
      continue;
    }
    auto n = ParseUint(piece, "uid");
    if (!n.ok() || *n > 0xFFFFFFFFull)
      return InvalidArgument("invalid user: \"" + piece + "\"");
    uids.push_back(static_cast<uint32_t>(*n));
  }
  if (uids.empty()) return InvalidArgument("invalid user list \"" + std::string(list) + "\"");
  return uids;
}

}  // namespace tessera::cli
