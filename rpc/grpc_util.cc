#include "rpc/grpc_util.h"

#include <sstream>

#include "rpc/message_limits.h"

namespace tessera::rpc {

std::shared_ptr<grpc::Channel> MakeChannel(const ClusterConfig& cfg, const std::string& host,
                                           uint16_t port) {
  std::string target = host + ":" + std::to_string(port);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxResponseBytes);
  if (!cfg.TlsEnabled()) {
    return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  }
  grpc::SslCredentialsOptions opts;
  auto ca = ReadFile(cfg.tls_ca);
  if (ca.ok()) opts.pem_root_certs = *ca;
  return grpc::CreateCustomChannel(target, grpc::SslCredentials(opts), args);
}

std::shared_ptr<grpc::Channel> MakeCtldChannel(const ClusterConfig& cfg) {
  return MakeChannel(cfg, cfg.ctld_addr, cfg.ctld_port);
}

Result<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ClusterConfig& cfg) {
  if (!cfg.TlsEnabled()) return grpc::InsecureServerCredentials();
  auto cert = ReadFile(cfg.tls_cert);
  if (!cert.ok()) return cert.status();
  auto key = ReadFile(cfg.tls_key);
  if (!key.ok()) return key.status();
  auto ca = ReadFile(cfg.tls_ca);
  if (!ca.ok()) return ca.status();
  grpc::SslServerCredentialsOptions opts(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  opts.pem_root_certs = *ca;
  opts.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(opts);
}

Status AttachCredential(const CredentialCodec& codec, grpc::ClientContext* ctx) {
  auto cred = codec.Encode("");
  if (!cred.ok()) return cred.status();
  ctx->AddMetadata(kMungeMetadataKey, *cred);
  return Status::Ok();
}

Result<Identity> Authenticate(const CredentialCodec& codec, const grpc::ServerContextBase& ctx) {
  const auto& md = ctx.client_metadata();
  auto it = md.find(kMungeMetadataKey);
  if (it == md.end()) return Unauthenticated("request carries no munge credential");
  std::string cred(it->second.data(), it->second.size());
  if (cred.size() > 8192) return Unauthenticated("munge credential too large");
  return codec.Decode(cred);
}

grpc::Status ToGrpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), s.message());
}

Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return Status::Ok();
  std::string msg = s.error_message();
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE && msg.find("connect") != std::string::npos)
    msg = "cannot reach tessera-ctld: " + msg;
  return Status(static_cast<Code>(s.error_code()), msg);
}

}  // namespace tessera::rpc
