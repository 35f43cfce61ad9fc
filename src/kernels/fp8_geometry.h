// Geometry of the FP8 grouped GEMMs shared with the planner (no CUDA headers: the CPU-only
// build sizes workspaces too).
#pragma once

#include <cstdint>

namespace fusedmoe::kernels {

/// Weight columns per block scale of the block-scaled grouped GEMM on 192-column tiles:
/// fp8_weight_scales writes each 128 x 128 block's scale twice along n, so that a tile, which
/// starts at a multiple of 64 columns, spans three whole scale blocks
/// (sm90_block_scale_mainloop.cuh).
inline constexpr int32_t kFp8WideTileScaleCols = 64;

}  // namespace fusedmoe::kernels
