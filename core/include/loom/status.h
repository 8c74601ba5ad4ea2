// Status and Expected<T>: how every fallible core call reports failure.
// Messages carry context (model, node, input, plugin) so that a user can act
// on them without a debugger.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace loom {

enum class StatusCode : int32_t {
  kOk = 0,
  kFail = 1,
  kInvalidArgument = 2,
  kNotFound = 3,
  kNotImplemented = 4,
  kInvalidGraph = 5,
  kOutOfMemory = 6,
  kCancelled = 7,  // a run stopped by its RunOptions::cancel (host-side only)
  kTimedOut = 8,   // a run stopped by its deadline, config limits.run_timeout_ms (host-side only)
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Returns a copy whose message is "context: message".
  Status with_context(const std::string& context) const {
    if (is_ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status invalid_graph(std::string m) { return {StatusCode::kInvalidGraph, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status not_implemented(std::string m) { return {StatusCode::kNotImplemented, std::move(m)}; }
inline Status fail(std::string m) { return {StatusCode::kFail, std::move(m)}; }

const char* status_code_name(StatusCode code);

// A value or the Status that explains its absence.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Status status) : v_(std::move(status)) {}

  bool has_value() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  // OK when a value is held. On an lvalue, a reference into this Expected
  // (so `const std::string& m = e.status().message();` stays valid while `e`
  // lives); on a temporary, a copy.
  const Status& status() const& {
    static const Status kOk;
    return has_value() ? kOk : std::get<Status>(v_);
  }
  Status status() && { return has_value() ? Status() : std::get<Status>(std::move(v_)); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace loom

// Returns early from a Status- or Expected-returning function.
#define LOOM_RETURN_IF_ERROR(expr)            \
  do {                                        \
    ::loom::Status loom_status_ = (expr);     \
    if (!loom_status_.is_ok()) return loom_status_; \
  } while (0)

#define LOOM_CONCAT_INNER(a, b) a##b
#define LOOM_CONCAT(a, b) LOOM_CONCAT_INNER(a, b)
#define LOOM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.has_value()) return tmp.status();       \
  lhs = std::move(tmp).value()
// LOOM_ASSIGN_OR_RETURN(auto x, f()) declares x from f()'s value or returns its status.
#define LOOM_ASSIGN_OR_RETURN(lhs, expr) \
  LOOM_ASSIGN_OR_RETURN_IMPL(LOOM_CONCAT(loom_expected_, __LINE__), lhs, expr)
