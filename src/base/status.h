// Error handling at module boundaries: a typed error code plus a message that names the
// problem, carried by Status (no value) or Result<T> (a value or an error).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace hearth {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,    // caller passed something malformed or out of range
  kNotFound,           // a named thing (file, key, tensor) does not exist
  kCorruptFile,        // a file's content violates its format
  kUnsupported,        // well-formed but not implemented (e.g. an unknown architecture)
  kIo,                 // the operating system refused (open, mmap, read, write)
  kOutOfRange,         // a position or size beyond a limit (context full, ...)
  kResourceExhausted,  // a memory or capacity limit was reached
  kInternal,           // a broken invariant; a bug
};

const char* error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == ErrorCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "<code name>: <message>", for logs and CLI output.
  std::string to_string() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status error(ErrorCode code, std::string message) {
  return Status(code, std::move(message));
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : data_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool is_ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return is_ok(); }

  // The error; Status::ok() when a value is held.
  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(data_); }

  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace hearth

#define HEARTH_CONCAT_INNER(a, b) a##b
#define HEARTH_CONCAT(a, b) HEARTH_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` is an error.
#define HEARTH_RETURN_IF_ERROR(expr)                    \
  do {                                                  \
    ::hearth::Status hearth_status_ = (expr);           \
    if (!hearth_status_.is_ok()) return hearth_status_; \
  } while (0)

// `HEARTH_ASSIGN_OR_RETURN(auto x, make_x());` binds the value or returns the error.
#define HEARTH_ASSIGN_OR_RETURN(lhs, expr) \
  HEARTH_ASSIGN_OR_RETURN_IMPL(HEARTH_CONCAT(hearth_result_, __LINE__), lhs, expr)
#define HEARTH_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.is_ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
