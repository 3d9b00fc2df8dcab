#pragma once
// gRPC plumbing shared by every Tessera process: channels and server credentials (TLS when the
// config names certificates), the munge credential in call metadata, and Status conversion.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "common/cluster_config.h"
#include "common/file_io.h"
#include "common/status.h"
#include "rpc/munge_codec.h"

namespace tessera::rpc {

// Metadata key that carries the munge credential on every call.
inline constexpr char kMungeMetadataKey[] = "x-tessera-munge";

// Channel to `host:port`; TLS with the config's CA when TLS is configured. The TLS target name
// is the host name (certificates are issued for it).
std::shared_ptr<grpc::Channel> MakeChannel(const ClusterConfig& cfg, const std::string& host,
                                           uint16_t port);
// Channel to the controller.
std::shared_ptr<grpc::Channel> MakeCtldChannel(const ClusterConfig& cfg);
// Server credentials: TLS (no client certificate required: munge authenticates callers) or
// insecure when TLS is not configured. Errors when the files cannot be read.
Result<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ClusterConfig& cfg);

// Adds a fresh munge credential to a client call.
Status AttachCredential(const CredentialCodec& codec, grpc::ClientContext* ctx);
// Decodes the caller's credential from a server call. kUnauthenticated when missing, invalid or
// replayed.
Result<Identity> Authenticate(const CredentialCodec& codec, const grpc::ServerContextBase& ctx);

grpc::Status ToGrpc(const Status& s);
Status FromGrpc(const grpc::Status& s);

}  // namespace tessera::rpc
