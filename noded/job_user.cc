#include "noded/job_user.h"

#include <grp.h>
#include <pwd.h>

#include <algorithm>

namespace tessera::noded {

Result<JobUser> LookUpJobUser(uid_t uid, gid_t gid, bool with_groups) {
  passwd pwd{}, *pw = nullptr;
  char buf[16384];
  if (getpwuid_r(uid, &pwd, buf, sizeof buf, &pw) != 0 || !pw)
    return NotFound("unknown uid " + std::to_string(uid));
  JobUser u{{pw->pw_name, pw->pw_dir, pw->pw_shell}, {}};
  if (with_groups) {
    int n = 64;
    u.groups.resize(static_cast<size_t>(n));
    while (::getgrouplist(u.info.name.c_str(), gid, u.groups.data(), &n) < 0 &&
           static_cast<size_t>(n) > u.groups.size())
      u.groups.resize(static_cast<size_t>(n));
    u.groups.resize(static_cast<size_t>(std::max(n, 0)));
  }
  return u;
}

const JobUser* JobUserCache::Get(uid_t uid, gid_t gid, int64_t now_ms) {
  auto key = std::make_pair(uid, gid);
  auto it = entries_.find(key);
  if (it != entries_.end() && now_ms - it->second.at_ms < ttl_ms_) return &it->second.user;
  auto r = look_up_(uid, gid);
  if (!r.ok()) {
    if (it != entries_.end()) entries_.erase(it);
    return nullptr;
  }
  // Expired entries of other users go too, so the map holds only recent users.
  std::erase_if(entries_, [&](const auto& e) { return now_ms - e.second.at_ms >= ttl_ms_; });
  Entry& e = entries_[key] = Entry{std::move(*r), now_ms};
  return &e.user;
}

}  // namespace tessera::noded
