#pragma once
// SparseString: a string field that costs one pointer (8 bytes) while empty, for the many job
// fields that most jobs leave unset (comment, constraint, dependency, GPU model...). A
// std::string costs 32 bytes even when empty; with 100k pending jobs in memory those empty
// fields were a quarter of the controller's memory per job (issue #6).
//
// Reads like a const std::string (implicit conversion, empty(), size(), c_str(), ==); is set
// from any string. Invariant: the pointer is null exactly when the value is empty. Encoded to
// and from JSON as a plain string (tag_invoke below), so persisted records are unchanged.
#include <boost/json.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace tessera::ctld {

class SparseString {
 public:
  SparseString() = default;
  SparseString(const std::string& s) { Set(s); }            // NOLINT: implicit by design
  SparseString(std::string&& s) { Set(std::move(s)); }      // NOLINT
  SparseString(const char* s) { Set(std::string(s)); }      // NOLINT
  SparseString(std::string_view s) { Set(std::string(s)); } // NOLINT
  SparseString(const SparseString& o) { if (o.p_) p_ = std::make_unique<std::string>(*o.p_); }
  SparseString(SparseString&&) noexcept = default;
  SparseString& operator=(const SparseString& o) {
    if (this != &o) Set(o.str());
    return *this;
  }
  SparseString& operator=(SparseString&&) noexcept = default;
  SparseString& operator=(const std::string& s) { Set(s); return *this; }
  SparseString& operator=(std::string&& s) { Set(std::move(s)); return *this; }
  SparseString& operator=(const char* s) { Set(std::string(s)); return *this; }

  const std::string& str() const { return p_ ? *p_ : Empty(); }
  operator const std::string&() const { return str(); }  // NOLINT: implicit by design
  operator std::string_view() const { return str(); }     // NOLINT
  bool empty() const { return !p_; }
  size_t size() const { return p_ ? p_->size() : 0; }
  const char* c_str() const { return str().c_str(); }
  const char* data() const { return str().data(); }
  void clear() { p_.reset(); }

  friend bool operator==(const SparseString& a, const SparseString& b) { return a.str() == b.str(); }
  friend bool operator==(const SparseString& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SparseString& a, const char* b) { return a.str() == b; }
  friend bool operator==(const SparseString& a, std::string_view b) { return a.str() == b; }
  friend bool operator<(const SparseString& a, const SparseString& b) { return a.str() < b.str(); }
  friend std::string operator+(const SparseString& a, const std::string& b) { return a.str() + b; }
  friend std::string operator+(const std::string& a, const SparseString& b) { return a + b.str(); }
  friend std::string operator+(const SparseString& a, const char* b) { return a.str() + b; }
  friend std::string operator+(const char* a, const SparseString& b) { return a + b.str(); }

 private:
  static const std::string& Empty() {
    static const std::string kEmpty;
    return kEmpty;
  }
  void Set(std::string s) {
    if (s.empty()) {
      p_.reset();
    } else if (p_) {
      *p_ = std::move(s);
    } else {
      p_ = std::make_unique<std::string>(std::move(s));
    }
  }

  std::unique_ptr<std::string> p_;
};

inline void tag_invoke(const boost::json::value_from_tag&, boost::json::value& v,
                       const SparseString& s) {
  v = s.str();
}

inline SparseString tag_invoke(const boost::json::value_to_tag<SparseString>&,
                               const boost::json::value& v) {
  return SparseString(std::string(v.as_string()));
}

}  // namespace tessera::ctld
