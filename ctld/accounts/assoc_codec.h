#pragma once
// The association store's rows (migration 6, table assoc): one JSON record per account, user,
// user association and QoS. Decoding is lenient (missing keys keep their defaults, unknown
// keys are ignored), so rows written by older versions still load.
//
// Hook for other helpers: a field added to sched::QosConfig or sched::AccountConfig is stored
// once it is added to the Encode/Decode pair here (assoc_codec.cc); until then Overlay keeps
// it from tessera.conf (assoc_db.h).
#include <string>
#include <vector>

#include "common/status.h"
#include "ctld/accounts/assoc_db.h"
#include "ctld/state/store.h"

namespace tessera::ctld::accounts {

// Every record of `db` as rows, in (kind, name) order.
std::vector<AssocRow> EncodeRows(const AssocDb& db);
// The rows back into a database; DataLoss naming the row on a record that does not parse.
Result<AssocDb> DecodeRows(const std::vector<AssocRow>& rows);
// What turns `before` into `after`: rows to put and (kind, name) rows to delete.
void DiffRows(const AssocDb& before, const AssocDb& after, Batch* batch, size_t* changes);

}  // namespace tessera::ctld::accounts
