#include "base/status.h"

namespace hearth {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kCorruptFile:
      return "corrupt file";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kIo:
      return "i/o error";
    case ErrorCode::kOutOfRange:
      return "out of range";
    case ErrorCode::kResourceExhausted:
      return "resource exhausted";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "unknown error";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(error_code_name(code_)) + ": " + message_;
}

}  // namespace hearth
