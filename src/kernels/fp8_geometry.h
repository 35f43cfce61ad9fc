// Geometry of the FP8 grouped GEMMs shared with the planner (no CUDA headers: the CPU-only
// build sizes workspaces too).
#pragma once

#include <cstdint>

namespace fusedmoe::kernels {

inline constexpr int kFp8ScaleBlock = 128;  // the grouped GEMM's k (and block-weight n) scale block

/// fp8_quantize's kScatterTokens with group or tensor scales: a 128-column span's team of 16
/// lanes (a 16-byte vector each) holds one destination row's scale slot per lane, so a token
/// has at most this many pairs.
inline constexpr int32_t kFp8ScatterSpanMaxTopk = 16;

/// Weight columns per block scale of the block-scaled grouped GEMM on 192-column tiles:
/// fp8_weight_scales writes each 128 x 128 block's scale twice along n, so that a tile, which
/// starts at a multiple of 64 columns, spans three whole scale blocks
/// (sm90_block_scale_mainloop.cuh).
inline constexpr int32_t kFp8WideTileScaleCols = 64;

/// Weight columns per scale in the block-scaled grouped GEMM's layout (its mainloop's scale
/// granularity along n, fp8_weight_scales' n_granularity) for tiles of tile_cols weight
/// columns: kFp8WideTileScaleCols on 192, else the checkpoint's kFp8ScaleBlock.
constexpr int32_t fp8_weight_scale_cols(int64_t tile_cols) {
  return tile_cols == 192 ? kFp8WideTileScaleCols : kFp8ScaleBlock;
}

}  // namespace fusedmoe::kernels
