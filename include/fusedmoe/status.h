// fusedmoe public API: the result of every host call.
#pragma once

#include <string>
#include <utility>

namespace fusedmoe {

/// What went wrong, coarsely; the message says exactly what.
enum class StatusCode : int {
  kSuccess = 0,
  kInvalidArgument = 1,   ///< an argument is out of its valid range; the message names it
  kNotImplemented = 2,    ///< valid arguments, but this build has no kernel for the path
  kWorkspaceTooSmall = 3, ///< the caller's workspace is smaller than workspace_size()
  kCudaError = 4,         ///< a CUDA runtime call failed; the message carries its error string
  kInternal = 5,          ///< a bug in fusedmoe
};

/// A code and a message. The library never throws across its API and never prints:
/// every failure comes back as a Status naming the argument, the expected and the actual value.
class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == StatusCode::kSuccess; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kSuccess;
  std::string message_;
};

/// Human-readable name of a code ("invalid argument", ...).
const char* to_string(StatusCode code);

}  // namespace fusedmoe
