#include "rpc/munge_codec.h"

#include <arpa/inet.h>
#include <munge.h>
#include <netinet/in.h>

#include <cstdlib>
#include <memory>

namespace tessera::rpc {
namespace {

struct CtxDeleter {
  void operator()(munge_ctx_t c) const { munge_ctx_destroy(c); }
};
using Ctx = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, CtxDeleter>;

Result<Ctx> MakeCtx(const std::string& socket) {
  Ctx ctx(munge_ctx_create());
  if (!ctx) return Internal("munge_ctx_create failed");
  if (!socket.empty() && munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS)
    return Internal("cannot set munge socket " + socket);
  return ctx;
}

}  // namespace

Result<std::string> MungeCodec::Encode(const std::string& payload) const {
  auto ctx = MakeCtx(socket_);
  if (!ctx.ok()) return ctx.status();
  char* cred = nullptr;
  munge_err_t err = munge_encode(&cred, ctx->get(), payload.data(), static_cast<int>(payload.size()));
  if (err != EMUNGE_SUCCESS) {
    std::string why = munge_ctx_strerror(ctx->get()) ? munge_ctx_strerror(ctx->get()) : munge_strerror(err);
    return Unavailable("cannot create munge credential (is munged running" +
                       (socket_.empty() ? std::string() : " at " + socket_) + "?): " + why);
  }
  std::string out(cred);
  std::free(cred);
  return out;
}

Result<Identity> MungeCodec::Decode(const std::string& cred) const {
  auto ctx = MakeCtx(socket_);
  if (!ctx.ok()) return ctx.status();
  void* buf = nullptr;
  int len = 0;
  uid_t uid;
  gid_t gid;
  munge_err_t err = munge_decode(cred.c_str(), ctx->get(), &buf, &len, &uid, &gid);
  Identity id;
  if (buf) {
    id.payload.assign(static_cast<char*>(buf), static_cast<size_t>(len));
    std::free(buf);
  }
  if (err != EMUNGE_SUCCESS) {
    if (err == EMUNGE_SOCKET) return Unavailable(std::string("munged unreachable: ") + munge_strerror(err));
    return Unauthenticated(std::string("munge credential rejected: ") + munge_strerror(err));
  }
  id.uid = uid;
  id.gid = gid;
  in_addr addr{};
  char text[INET_ADDRSTRLEN];
  if (munge_ctx_get(ctx->get(), MUNGE_OPT_ADDR4, &addr) == EMUNGE_SUCCESS && addr.s_addr != 0 &&
      inet_ntop(AF_INET, &addr, text, sizeof text))
    id.origin = text;
  return id;
}

}  // namespace tessera::rpc
