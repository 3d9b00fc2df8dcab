#include "ctld/rpc/node_identity.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>

namespace tessera::ctld::rpc {

std::vector<std::string> NodeAddresses(const std::string& addr) {
  std::vector<std::string> out;
  in_addr a{};
  if (inet_pton(AF_INET, addr.c_str(), &a) == 1) return {addr};
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(addr.c_str(), nullptr, &hints, &res) != 0) return out;
  for (addrinfo* p = res; p; p = p->ai_next) {
    char buf[INET_ADDRSTRLEN];
    auto* sin = reinterpret_cast<sockaddr_in*>(p->ai_addr);
    if (inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf) &&
        std::find(out.begin(), out.end(), buf) == out.end())
      out.emplace_back(buf);
  }
  freeaddrinfo(res);
  return out;
}

Status CheckNodeOrigin(const ClusterConfig& cfg, const std::string& node,
                       const std::string& origin) {
  const NodeConfig* n = cfg.FindNode(node);
  if (!n || origin.empty() || origin == "0.0.0.0") return Status::Ok();
  std::vector<std::string> addrs = NodeAddresses(n->addr.empty() ? n->name : n->addr);
  if (addrs.empty()) return Status::Ok();
  // Loopback: all daemons share one host; the origin says nothing about which node this is.
  bool loopback = std::any_of(addrs.begin(), addrs.end(),
                              [](const std::string& a) { return a.rfind("127.", 0) == 0; });
  if (loopback) return Status::Ok();
  if (std::find(addrs.begin(), addrs.end(), origin) != addrs.end()) return Status::Ok();
  std::string list;
  for (const auto& a : addrs) list += (list.empty() ? "" : ",") + a;
  return PermissionDenied("registration as node " + node + " refused: the credential was made on " +
                          origin + ", not on the node's NodeAddr " + n->addr + " (" + list + ")");
}

}  // namespace tessera::ctld::rpc
