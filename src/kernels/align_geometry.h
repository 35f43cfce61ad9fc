// Geometry of smxx_align_tokens shared with the planner (no CUDA headers: the CPU-only build
// sizes workspaces too).
#pragma once

#include <cstdint>

namespace fusedmoe::kernels {

/// Pairs up to which one warp aligns (align_warp.cuh): a sort over its lanes, no barriers.
inline constexpr int64_t kWarpAlignPairs = 32;
/// Pairs up to which one CTA aligns (256 threads up to 2048 pairs and 256 experts, else 1024;
/// at most 8 pairs each); above, one cooperative launch whose CTAs take chunks of 4 pairs per
/// thread, kChunk at 256 threads (E <= 256), 4 * kChunk at 1024. Measured (v35, bf16 and
/// fp8_channel, one binary, two rounds, the layer's time with the one CTA up to 8192 / 16384
/// pairs against 2048, then three chunked kernels of 2048 pairs): 0.988-0.995 at 4096 pairs
/// (Qwen2 / Qwen3 / DeepSeek-V3 TP8 M = 512, Mixtral M = 2048), 1.003-1.011 at 8192,
/// 1.018-1.042 at 16384. The cooperative kernel from 1024 or 2048 pairs on against one CTA
/// up to 4096 (v46, bf16, M = 256 / 384 / 512, two rounds): within 0.5% everywhere.
inline constexpr int64_t kSingleCtaPairs = 4096;
inline constexpr int64_t kChunk = 1024;
/// Pairs up to which the one-CTA kernel also zeroes the rows of skipped pairs
/// (AlignParams::skipped_rows; its CTA lists them in shared memory).
inline constexpr int64_t kZeroSkippedMaxPairs = 2048;

/// Elements of AlignParams::block_counts for this many pairs (0: the one-CTA kernel).
inline int64_t align_block_counts_size(int64_t pairs, int32_t num_experts) {
  return pairs <= kSingleCtaPairs ? 0 : (pairs + kChunk - 1) / kChunk * num_experts;
}

}  // namespace fusedmoe::kernels
