// Internal helpers for argument checks: every failure names the argument, what was
// expected and what was given.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "fusedmoe/status.h"

namespace fusedmoe::detail {

template <typename T>
std::string str(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

/// "<arg>: expected <expected>, got <actual>"
inline Status invalid_argument(const std::string& arg, const std::string& expected,
                               const std::string& actual) {
  return Status(StatusCode::kInvalidArgument, arg + ": expected " + expected + ", got " + actual);
}

inline Status not_implemented(const std::string& what) {
  return Status(StatusCode::kNotImplemented, what);
}

/// a * b into *out; false when the product leaves int64 (or an operand is negative).
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  if (a < 0 || b < 0) return false;
  return !__builtin_mul_overflow(a, b, out);
}

inline bool checked_add(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

#define FUSEDMOE_RETURN_IF_ERROR(expr)            \
  do {                                            \
    ::fusedmoe::Status _fusedmoe_s = (expr);      \
    if (!_fusedmoe_s.ok()) return _fusedmoe_s;    \
  } while (0)

}  // namespace fusedmoe::detail
