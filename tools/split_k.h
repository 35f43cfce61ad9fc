// The tools' forced split-K of the small-M GEMVs (`--split-k N` or `--split-k G,D`), for
// MoeArguments::split_k_gate_up / split_k_down, and the integer down GEMV's tiles per warp
// (`--tiles-per-warp N`, MoeArguments::tiles_per_warp_down).
#pragma once

#include <cstdint>
#include <string>

#include "fusedmoe/moe.h"

namespace fusedmoe::tools {

struct SplitK {
  int32_t gate_up = 0;  ///< 0: the planner's
  int32_t down = 0;
  int32_t tiles_down = 0;  ///< MoeArguments::tiles_per_warp_down (0: the planner's)

  bool forced() const { return gate_up > 0 || down > 0 || tiles_down > 0; }
  /// "" when nothing is forced, "N" when both GEMVs take N, else "G,D"; then " tiles T" where
  /// the tiles per warp are forced.
  std::string to_string() const {
    std::string s;
    if (gate_up > 0 || down > 0) {
      s = gate_up == down ? std::to_string(gate_up) : std::to_string(gate_up) + "," + std::to_string(down);
    }
    if (tiles_down > 0) s += (s.empty() ? "tiles " : " tiles ") + std::to_string(tiles_down);
    return s;
  }
};

/// Parses `--split-k`'s value: "N" (both GEMVs) or "G,D" (gate-up, down), each 1, 2, 4 or 8.
/// On error returns false with `*error` naming the option, the expected and the actual value.
inline bool parse_split_k(const std::string& text, SplitK* out, std::string* error) {
  auto one = [](const std::string& s, int32_t* v) {
    if (s.size() != 1 || s[0] < '1' || s[0] > '8') return false;
    *v = s[0] - '0';
    return *v > 0 && is_valid_split_k(*v);
  };
  const size_t comma = text.find(',');
  SplitK k;
  const bool ok = comma == std::string::npos
                      ? one(text, &k.gate_up) && one(text, &k.down)
                      : one(text.substr(0, comma), &k.gate_up) && one(text.substr(comma + 1), &k.down);
  if (!ok) {
    *error = "--split-k: expected 1, 2, 4 or 8, or two of them as G,D (gate-up, down), got '" + text + "'";
    return false;
  }
  *out = k;
  return true;
}

}  // namespace fusedmoe::tools
