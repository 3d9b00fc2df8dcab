#pragma once
// The submitter of a job as stepd runs it: the passwd entry of the job's uid and, when stepd
// switches users (runs as root), the supplementary groups of that user with the job's gid as
// primary group (getgrouplist). JobUserCache keeps lookups for a short time, so a zygote that
// starts a burst of one user's jobs reads passwd/group (and asks the other NSS modules) once
// instead of once per job; like nscd, a change to the user database shows after at most ttl.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "noded/job_env.h"

namespace tessera::noded {

struct JobUser {
  UserInfo info;              // name, home, shell
  std::vector<gid_t> groups;  // supplementary groups; only when looked up with_groups
};

// getpwuid_r(uid) and, with_groups, getgrouplist(name, gid). Error: the uid is unknown.
Result<JobUser> LookUpJobUser(uid_t uid, gid_t gid, bool with_groups);

class JobUserCache {
 public:
  using LookUp = std::function<Result<JobUser>(uid_t, gid_t)>;
  JobUserCache(LookUp look_up, int64_t ttl_ms) : look_up_(std::move(look_up)), ttl_ms_(ttl_ms) {}

  // The user of (uid, gid) as of at most ttl_ms before now_ms; nullptr when the lookup fails
  // (failures are not kept: the caller reports them). The pointer is valid until the next Get.
  const JobUser* Get(uid_t uid, gid_t gid, int64_t now_ms);

 private:
  struct Entry {
    JobUser user;
    int64_t at_ms;
  };
  LookUp look_up_;
  int64_t ttl_ms_;
  std::map<std::pair<uid_t, gid_t>, Entry> entries_;
};

}  // namespace tessera::noded
