// One way to report errors across the engine: Status and Result<T>.
// Codes follow gRPC's numbering so the server maps them one to one.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace zarrd {

enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message"
  std::string ToString() const;
  // Returns a status with the same code and reason and `context + ": " + message`.
  Status WithContext(const std::string& context) const;
  // What a client can act on, for the errors that have one (proto/zarrd/v1/error.proto lists
  // them); empty otherwise.
  const std::string& reason() const { return reason_; }
  Status WithReason(std::string reason) const {
    Status s = *this;
    s.reason_ = std::move(reason);
    return s;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string reason_;
};

// The reasons of proto/zarrd/v1/error.proto.
namespace reason {
inline constexpr char kHostRegionNotRegistered[] = "HOST_REGION_NOT_REGISTERED";
inline constexpr char kDeviceRegionNotRegistered[] = "DEVICE_REGION_NOT_REGISTERED";
inline constexpr char kUnaryResultTooLarge[] = "UNARY_RESULT_TOO_LARGE";
inline constexpr char kShuttingDown[] = "SHUTTING_DOWN";
}  // namespace reason

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
// An errno-carrying failure of a system call on `what`.
Status ErrnoStatus(int err, const std::string& what);

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok());
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

namespace internal {
// By value: `expr` is often a temporary that dies before the status is inspected.
inline Status GetStatus(const Status& s) { return s; }
template <typename T>
Status GetStatus(const Result<T>& r) {
  return r.status();
}
}  // namespace internal

}  // namespace zarrd

#define ZARRD_CONCAT_INNER(a, b) a##b
#define ZARRD_CONCAT(a, b) ZARRD_CONCAT_INNER(a, b)

// Returns from the calling function when `expr` (a Status or Result) failed.
#define ZARRD_RETURN_IF_ERROR(expr)                                       \
  do {                                                                    \
    ::zarrd::Status zarrd_status_ = ::zarrd::internal::GetStatus((expr)); \
    if (!zarrd_status_.ok()) return zarrd_status_;                        \
  } while (0)

// `lhs = value of expr`, or returns its Status from the calling function.
#define ZARRD_ASSIGN_OR_RETURN(lhs, expr) \
  ZARRD_ASSIGN_OR_RETURN_IMPL(ZARRD_CONCAT(zarrd_result_, __LINE__), lhs, expr)
#define ZARRD_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
