#pragma once
// SharedString: an immutable string value that costs one pointer (8 bytes) per field and is
// stored once per distinct text, for the job fields whose values repeat across thousands of
// jobs (user, submit host, partition, job name, working directory, output pattern). A
// std::string costs 32 bytes per field, plus a heap copy when longer than 15 characters (a
// working directory usually is), per job (issue #6: ctld memory per pending job).
//
// Reads like a const std::string (implicit conversion, empty(), size(), c_str(), ==); is set
// from any string. Values live in a process-wide pool keyed by their text; a value leaves the
// pool when its last holder goes. Copies, moves and destruction are thread-safe (an atomic count;
// the pool's mutex only when a value is looked up or may be freed). Encoded to and from JSON as
// a plain string, so persisted records are unchanged.
#include <boost/json.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::ctld {

class SharedString {
 public:
  SharedString() = default;
  SharedString(std::string_view s) : n_(Acquire(s)) {}                 // NOLINT: implicit
  SharedString(const std::string& s) : n_(Acquire(s)) {}               // NOLINT
  SharedString(const char* s) : n_(Acquire(s)) {}                      // NOLINT
  SharedString(const SharedString& o) : n_(o.n_) { Ref(n_); }
  SharedString(SharedString&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
  SharedString& operator=(const SharedString& o) {
    if (n_ != o.n_) {
      Ref(o.n_);
      Release(n_);
      n_ = o.n_;
    }
    return *this;
  }
  SharedString& operator=(SharedString&& o) noexcept {
    if (this != &o) {
      Release(n_);
      n_ = o.n_;
      o.n_ = nullptr;
    }
    return *this;
  }
  ~SharedString() { Release(n_); }

  const std::string& str() const;
  operator const std::string&() const { return str(); }  // NOLINT: implicit by design
  operator std::string_view() const { return str(); }     // NOLINT
  bool empty() const { return !n_; }
  size_t size() const { return str().size(); }
  const char* c_str() const { return str().c_str(); }
  const char* data() const { return str().data(); }
  char operator[](size_t i) const { return str()[i]; }
  void clear() { *this = SharedString(); }

  friend bool operator==(const SharedString& a, const SharedString& b) {
    return a.n_ == b.n_;  // one node per distinct text
  }
  friend bool operator==(const SharedString& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedString& a, const char* b) { return a.str() == b; }
  friend bool operator==(const SharedString& a, std::string_view b) { return a.str() == b; }
  friend bool operator<(const SharedString& a, const SharedString& b) { return a.str() < b.str(); }
  friend std::string operator+(const SharedString& a, const std::string& b) { return a.str() + b; }
  friend std::string operator+(const std::string& a, const SharedString& b) { return a + b.str(); }
  friend std::string operator+(const SharedString& a, const char* b) { return a.str() + b; }
  friend std::string operator+(const char* a, const SharedString& b) { return a + b.str(); }

  // Distinct values in the pool (tests, diagnostics).
  static size_t PoolSize();

 private:
  struct Node {
    std::string value;
    std::atomic<uint32_t> refs{1};
  };
  static Node* Acquire(std::string_view s);  // nullptr for ""
  static void Ref(Node* n) {
    if (n) n->refs.fetch_add(1, std::memory_order_relaxed);
  }
  static void Release(Node* n);

  Node* n_ = nullptr;
};

inline void tag_invoke(const boost::json::value_from_tag&, boost::json::value& v,
                       const SharedString& s) {
  v = s.str();
}

inline SharedString tag_invoke(const boost::json::value_to_tag<SharedString>&,
                               const boost::json::value& v) {
  const auto& s = v.as_string();
  return SharedString(std::string_view(s.data(), s.size()));
}

}  // namespace tessera::ctld
