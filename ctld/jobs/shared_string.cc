#include "ctld/jobs/shared_string.h"

#include <mutex>
#include <unordered_map>

namespace tessera::ctld {
namespace {

// Keys view the nodes' own text. Leaked on purpose: holders may be destroyed during static
// destruction, after a pool object would be gone.
struct Pool {
  std::mutex mu;
  std::unordered_map<std::string_view, void*> nodes;
};
Pool& ThePool() {
  static Pool* pool = new Pool;
  return *pool;
}

const std::string& EmptyString() {
  static const std::string* kEmpty = new std::string;
  return *kEmpty;
}

}  // namespace

const std::string& SharedString::str() const { return n_ ? n_->value : EmptyString(); }

SharedString::Node* SharedString::Acquire(std::string_view s) {
  if (s.empty()) return nullptr;
  Pool& p = ThePool();
  std::lock_guard<std::mutex> lock(p.mu);
  auto it = p.nodes.find(s);
  if (it != p.nodes.end()) {
    auto* n = static_cast<Node*>(it->second);
    n->refs.fetch_add(1, std::memory_order_relaxed);
    return n;
  }
  auto* n = new Node{std::string(s)};
  p.nodes.emplace(std::string_view(n->value), n);
  return n;
}

void SharedString::Release(Node* n) {
  if (!n) return;
  // Above one reference nothing can free the node: drop ours without the lock.
  uint32_t refs = n->refs.load(std::memory_order_relaxed);
  while (refs > 1)
    if (n->refs.compare_exchange_weak(refs, refs - 1, std::memory_order_acq_rel)) return;
  // Ours may be the last: decide under the lock, where Acquire takes new references.
  Pool& p = ThePool();
  std::lock_guard<std::mutex> lock(p.mu);
  if (n->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  p.nodes.erase(std::string_view(n->value));
  delete n;
}

size_t SharedString::PoolSize() {
  Pool& p = ThePool();
  std::lock_guard<std::mutex> lock(p.mu);
  return p.nodes.size();
}

}  // namespace tessera::ctld
