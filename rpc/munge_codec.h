#pragma once
// munge credentials: every RPC carries one; the receiver decodes it with the same munged
// (key) to learn the caller's uid/gid. munged itself rejects replays and expired credentials.
#include <cstdint>
#include <string>

#include "common/status.h"

namespace tessera::rpc {

struct Identity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string payload;
  // The IPv4 address of the host that encoded the credential, as munged put it there
  // (MUNGE_OPT_ADDR4); "" when unknown. ctld checks a node's registration against it.
  std::string origin;
};

// Interface so tests of handlers can run without munged.
class CredentialCodec {
 public:
  virtual ~CredentialCodec() = default;
  // A fresh credential for the calling process's uid/gid.
  virtual Result<std::string> Encode(const std::string& payload) const = 0;
  // kUnauthenticated with munge's reason (invalid, expired, replayed, ...) on failure.
  virtual Result<Identity> Decode(const std::string& cred) const = 0;
};

// libmunge, talking to the munged at `socket_path` ("" = munge's compiled-in default).
class MungeCodec final : public CredentialCodec {
 public:
  explicit MungeCodec(std::string socket_path) : socket_(std::move(socket_path)) {}
  Result<std::string> Encode(const std::string& payload) const override;
  Result<Identity> Decode(const std::string& cred) const override;

 private:
  std::string socket_;
};

}  // namespace tessera::rpc
