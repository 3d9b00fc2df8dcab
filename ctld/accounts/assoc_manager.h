#pragma once
// The durable association store (issue 16 §1): owns the AssocDb, keeps it in the state
// database (migration 6, table assoc) and derives the live SchedConfig from it. Core thread
// only (the controller calls it).
//
// Contract:
//  - Start: the stored rows are the truth. Entries of tessera.conf (AccountName=, UserName=,
//    QOSName= lines) that the store lacks and that were never imported before are added (on
//    the first start that is all of them); a line that differs from the stored entry is
//    reported and the store's entry kept. Imported entry names are remembered (meta
//    "assoc_config_seen"), so an entry deleted with tacctmgr is not brought back by its line.
//    Durable before Start returns; a store that cannot be written refuses the start.
//  - Reconfigure (MergeConfig): the same for the new configuration's entries.
//  - Change: validated on a copy (assoc_ops.h); with `dry_run` only validated; otherwise
//    committed (one transaction, waited for) and only then swapped in. A failed commit is the
//    caller's error and changes nothing.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "ctld/accounts/assoc_db.h"
#include "ctld/accounts/assoc_ops.h"
#include "ctld/sched/sched_config.h"
#include "ctld/state/store.h"

namespace tessera::ctld::accounts {

class AssocManager {
 public:
  explicit AssocManager(Store* store) : store_(store) {}

  // `notes`: conflicts and entries not imported, one line each, for the log.
  Status Start(const Recovered& rec, const sched::SchedConfig& base,
               std::vector<std::string>* notes);
  Status MergeConfig(const sched::SchedConfig& base, std::vector<std::string>* notes);
  // `base` with the store's accounts, associations, default accounts and QoS (Overlay).
  std::shared_ptr<const sched::SchedConfig> Live(const sched::SchedConfig& base) const;

  struct Changed {
    std::string message;  // sacctmgr-like summary
    size_t rows = 0;      // rows written (0 = nothing changed)
  };
  Result<Changed> Change(const AssocRequest& r, bool dry_run);
  Result<std::vector<ShowRow>> Show(const AssocRequest& r, const std::string& cluster) const;
  const AssocDb& db() const { return db_; }

 private:
  // Commits `next` (and `seen`, when given and changed) and only then swaps them in.
  Status Commit(AssocDb next, const std::set<std::string>* seen, size_t* rows);

  Store* store_;
  AssocDb db_;
  std::set<std::string> seen_;
};

}  // namespace tessera::ctld::accounts
