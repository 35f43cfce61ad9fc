// Geometry of smxx_align_tokens shared with the planner (no CUDA headers: the CPU-only build
// sizes workspaces too).
#pragma once

#include <cstdint>

namespace fusedmoe::kernels {

/// Pairs up to which one CTA aligns; above, chunks of kChunk pairs take a CTA each.
inline constexpr int64_t kSingleCtaPairs = 2048;
inline constexpr int64_t kChunk = 2048;

/// Elements of AlignParams::block_counts for this many pairs (0: the one-CTA kernel).
inline int64_t align_block_counts_size(int64_t pairs, int32_t num_experts) {
  return pairs <= kSingleCtaPairs ? 0 : (pairs + kChunk - 1) / kChunk * num_experts;
}

}  // namespace fusedmoe::kernels
