#pragma once
// Where a node's registration comes from (DESIGN §9: a node's identity is more than its name).
//
// munged puts the address of the host that encoded a credential in it (MUNGE_OPT_ADDR4; see
// rpc::Identity::origin). A registration as node N is accepted only from a credential made on
// N's host, when that can be told:
//  - NodeAddr is an IPv4 literal, or a name that resolves to IPv4 addresses: the origin must be
//    one of them;
//  - NodeAddr is a loopback address (every daemon on one host: development and test clusters),
//    or the credential carries no origin (munged could not determine its address, or a codec
//    without one): not checkable, accepted (the node credential and the one-live-stream rule
//    still apply);
//  - NodeAddr does not resolve: not checkable, accepted (refusing would lock a node out on a
//    DNS hiccup).
// The other half of the identity - one live stream per node, the boot id - is the controller's
// (Controller::OnRegister).
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/status.h"

namespace tessera::ctld::rpc {

// OK when `origin` (dotted IPv4, "" = unknown) may register as `node`; PERMISSION_DENIED naming
// the node, its NodeAddr and the origin otherwise. Unknown nodes are left to OnRegister.
Status CheckNodeOrigin(const ClusterConfig& cfg, const std::string& node,
                       const std::string& origin);

// The IPv4 addresses `addr` stands for (a literal, or a name resolved with getaddrinfo);
// empty when it does not resolve.
std::vector<std::string> NodeAddresses(const std::string& addr);

}  // namespace tessera::ctld::rpc
