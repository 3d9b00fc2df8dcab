#include "ctld/accounts/assoc_manager.h"

#include <boost/json.hpp>

#include "ctld/accounts/assoc_codec.h"

namespace tessera::ctld::accounts {
namespace {

constexpr const char* kSeenKey = "assoc_config_seen";

Result<std::set<std::string>> DecodeSeen(const std::string& text) {
  std::set<std::string> out;
  if (text.empty()) return out;
  try {
    boost::json::value doc = boost::json::parse(text);
    for (const auto& v : doc.as_array()) out.insert(std::string(v.as_string()));
  } catch (const std::exception& e) {
    return Status(Code::kDataLoss, std::string("cannot decode meta ") + kSeenKey + ": " + e.what());
  }
  return out;
}

std::string EncodeSeen(const std::set<std::string>& seen) {
  boost::json::array a;
  for (const auto& s : seen) a.emplace_back(s);
  return boost::json::serialize(a);
}

}  // namespace

Status AssocManager::Start(const Recovered& rec, const sched::SchedConfig& base,
                           std::vector<std::string>* notes) {
  auto db = DecodeRows(rec.assoc_rows);
  if (!db.ok()) return db.status();
  auto seen = DecodeSeen(rec.assoc_config_seen);
  if (!seen.ok()) return seen.status();
  db_ = std::move(*db);
  seen_ = std::move(*seen);
  if (Status st = db_.Validate(); !st.ok())
    return Status(Code::kDataLoss, "association store: " + st.message());
  return MergeConfig(base, notes);
}

Status AssocManager::MergeConfig(const sched::SchedConfig& base, std::vector<std::string>* notes) {
  AssocDb next = db_;
  std::set<std::string> seen = seen_;
  AddMissing(next, FromConfig(base), &seen, notes);
  if (Status st = next.Validate(); !st.ok())
    return InvalidArgument("the configuration's associations do not fit the association store: " +
                           st.message());
  size_t rows = 0;
  return Commit(std::move(next), &seen, &rows);
}

std::shared_ptr<const sched::SchedConfig> AssocManager::Live(const sched::SchedConfig& base) const {
  return std::make_shared<const sched::SchedConfig>(Overlay(base, db_));
}

Result<AssocManager::Changed> AssocManager::Change(const AssocRequest& r, bool dry_run) {
  auto out = ApplyChange(db_, r);
  if (!out.ok()) return out.status();
  Changed c;
  c.message = out->message;
  if (dry_run) {
    Batch probe;
    DiffRows(db_, out->next, &probe, &c.rows);
    return c;
  }
  TESSERA_RETURN_IF_ERROR(Commit(std::move(out->next), nullptr, &c.rows));
  return c;
}

Result<std::vector<ShowRow>> AssocManager::Show(const AssocRequest& r,
                                                const std::string& cluster) const {
  return ShowRows(db_, r, cluster);
}

Status AssocManager::Commit(AssocDb next, const std::set<std::string>* seen, size_t* rows) {
  Batch b;
  DiffRows(db_, next, &b, rows);
  bool seen_changed = seen && *seen != seen_;
  if (seen_changed) b.SetMeta(kSeenKey, EncodeSeen(*seen));
  if (b.empty()) return Status::Ok();
  TESSERA_RETURN_IF_ERROR(store_->CommitSync(std::move(b)));
  db_ = std::move(next);
  if (seen_changed) seen_ = *seen;
  return Status::Ok();
}

}  // namespace tessera::ctld::accounts
