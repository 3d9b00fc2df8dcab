#include "noded/pmi2.h"

#include <cstdio>

namespace tessera::noded {

namespace v1 = tessera::v1;

namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    out += c;
    if (c == ';') out += ';';
  }
  return out;
}

std::string Get(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? "" : it->second;
}

}  // namespace

Pmi2Server::Pmi2Server(Options opts) : opts_(std::move(opts)) {
  live_.insert(opts_.local_ranks.begin(), opts_.local_ranks.end());
}

std::string Pmi2Server::Frame(const std::string& body) {
  char len[16];
  std::snprintf(len, sizeof len, "%6zu", body.size());
  return std::string(len, 6) + body;
}

std::map<std::string, std::string> Pmi2Server::Parse(std::string_view body) {
  std::map<std::string, std::string> out;
  std::string key, val;
  bool in_val = false;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == ';' && in_val && i + 1 < body.size() && body[i + 1] == ';') {
      val += ';';
      ++i;
    } else if (c == ';') {
      if (!key.empty()) out[key] = val;
      key.clear(), val.clear();
      in_val = false;
    } else if (c == '=' && !in_val) {
      in_val = true;
    } else {
      (in_val ? val : key) += c;
    }
  }
  if (!key.empty()) out[key] = val;
  return out;
}

std::string Pmi2Server::Feed(uint32_t rank, std::string_view bytes) {
  std::string& b = buf_[rank];
  b.append(bytes);
  std::string reply;
  while (true) {
    if (b.rfind("cmd=init", 0) == 0) {  // the PMI-1-style handshake line
      size_t nl = b.find('\n');
      if (nl == std::string::npos) break;
      b.erase(0, nl + 1);
      reply += "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n";
      continue;
    }
    if (b.size() < 6) break;
    size_t len = 0;
    bool ok = true;
    for (size_t i = 0; i < 6; ++i) {
      char c = b[i];
      if (c >= '0' && c <= '9') len = len * 10 + static_cast<size_t>(c - '0');
      else if (c != ' ') ok = false;
    }
    if (!ok) {  // not PMI-2: drop what we have (the client is broken)
      b.clear();
      reply += Frame("cmd=error;rc=-1;errmsg=malformed PMI-2 message;");
      break;
    }
    if (b.size() < 6 + len) break;
    auto m = Parse(std::string_view(b).substr(6, len));
    b.erase(0, 6 + len);
    reply += Handle(rank, m);
  }
  return reply;
}

std::string Pmi2Server::Handle(uint32_t rank, const std::map<std::string, std::string>& m) {
  const std::string cmd = Get(m, "cmd");
  std::string thrid = Get(m, "thrid");
  auto answer = [&](const std::string& name, const std::string& rest) {
    return Frame("cmd=" + name + ";" + (thrid.empty() ? "" : "thrid=" + thrid + ";") + rest +
                 "rc=0;");
  };
  if (cmd == "fullinit") {
    return answer("fullinit-response", "pmi-version=2;pmi-subversion=0;rank=" +
                                           std::to_string(rank) + ";size=" +
                                           std::to_string(opts_.size) +
                                           ";appnum=0;spawner-jobid=;debugged=FALSE;"
                                           "pmiverbose=FALSE;");
  }
  if (cmd == "job-getid") return answer("job-getid-response", "jobid=" + Escape(opts_.jobid) + ";");
  if (cmd == "info-getjobattr") {
    std::string key = Get(m, "key"), value;
    bool found = false;
    if (key == "PMI_process_mapping" && !opts_.process_mapping.empty())
      value = opts_.process_mapping, found = true;
    if (key == "universeSize") value = std::to_string(opts_.size), found = true;
    return answer("info-getjobattr-response",
                  found ? "found=TRUE;value=" + Escape(value) + ";" : "found=FALSE;");
  }
  if (cmd == "info-putnodeattr") {
    node_attr_[Get(m, "key")] = Get(m, "value");
    return answer("info-putnodeattr-response", "");
  }
  if (cmd == "info-getnodeattr") {
    auto it = node_attr_.find(Get(m, "key"));
    return answer("info-getnodeattr-response", it == node_attr_.end()
                                                   ? "found=FALSE;"
                                                   : "found=TRUE;value=" + Escape(it->second) + ";");
  }
  if (cmd == "kvs-put") {
    pending_[Get(m, "key")] = Get(m, "value");
    return answer("kvs-put-response", "");
  }
  if (cmd == "kvs-get") {
    std::string key = Get(m, "key");
    const std::string* v = nullptr;
    for (const auto* space : {&kvs_, &pending_}) {
      auto it = space->find(key);
      if (!v && it != space->end()) v = &it->second;
    }
    return answer("kvs-get-response", v ? "found=TRUE;value=" + Escape(*v) + ";" : "found=FALSE;");
  }
  if (cmd == "kvs-fence") {
    in_fence_.insert(rank);
    if (!thrid.empty()) fence_thrid_[rank] = thrid;
    ready_ = MaybeFence();
    return "";  // answered by FenceDone
  }
  if (cmd == "finalize") return answer("finalize-response", "");
  if (cmd == "abort") {
    aborted_ = true;
    abort_message_ = Get(m, "msg");
    return "";
  }
  return Frame("cmd=" + cmd + "-response;" + (thrid.empty() ? "" : "thrid=" + thrid + ";") +
               "rc=-1;errmsg=" + Escape("unsupported PMI-2 command " + cmd) + ";");
}

std::optional<v1::PmiKvs> Pmi2Server::MaybeFence() {
  if (fence_sent_ || in_fence_.empty()) return std::nullopt;
  for (uint32_t r : live_)
    if (!in_fence_.count(r)) return std::nullopt;
  v1::PmiKvs out;
  out.set_seq(seq_);
  for (const auto& [k, v] : pending_) (*out.mutable_kv())[k] = v;
  fence_sent_ = true;
  return out;
}

std::optional<v1::PmiKvs> Pmi2Server::TakeFence() {
  auto out = std::move(ready_);
  ready_.reset();
  return out;
}

std::optional<v1::PmiKvs> Pmi2Server::Gone(uint32_t rank) {
  live_.erase(rank);
  ready_ = MaybeFence();
  return TakeFence();
}

std::map<uint32_t, std::string> Pmi2Server::FenceDone(const v1::PmiKvs& result) {
  std::map<uint32_t, std::string> out;
  if (!fence_sent_ || result.seq() != seq_) return out;
  for (const auto& [k, v] : pending_) kvs_[k] = v;
  for (const auto& [k, v] : result.kv()) kvs_[k] = v;
  pending_.clear();
  for (uint32_t r : in_fence_) {
    std::string thrid = fence_thrid_.count(r) ? fence_thrid_[r] : "";
    out[r] = Frame("cmd=kvs-fence-response;" + (thrid.empty() ? "" : "thrid=" + thrid + ";") +
                   "rc=0;");
  }
  in_fence_.clear();
  fence_thrid_.clear();
  fence_sent_ = false;
  ++seq_;
  return out;
}

bool Pmi2Server::Aborted(std::string* message) const {
  if (aborted_ && message) *message = abort_message_;
  return aborted_;
}

}  // namespace tessera::noded
