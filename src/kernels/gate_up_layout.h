// Where w13's gate and up rows live (no CUDA headers: the CPU-only build sizes and tests
// the prepared layouts too).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define FUSEDMOE_GATE_UP_HD __host__ __device__
#else
#define FUSEDMOE_GATE_UP_HD
#endif

namespace fusedmoe::kernels {

/// Row of w13 [2I, K] that holds output column j's gate (up = false) or up (up = true) row.
/// Checkpoint layout: gate rows 0..I-1, then up rows. Interleaved (prepare_weights for dense
/// weights, wna16_dequant's output): blocks of 16 rows, gate rows 8b..8b+7 then the matching
/// up rows, so the gate and up of a column meet in one thread's registers in every GEMM1
/// (the wgmma accumulator holds columns n and n + 8 in one thread, and rows m and m + 8 with
/// swapped operands; the GEMV's m16n8k16 tile rows g and g + 8). I is a multiple of 8.
FUSEDMOE_GATE_UP_HD inline int64_t gate_up_row(int64_t j, bool up, int64_t inter, bool interleaved) {
  return interleaved ? (j / 8) * 16 + (up ? 8 : 0) + j % 8 : (up ? inter + j : j);
}
/// The inverse: where checkpoint row n of w13 goes in the interleaved layout.
FUSEDMOE_GATE_UP_HD inline int64_t interleaved_gate_up_row(int64_t n, int64_t inter) {
  return n < inter ? gate_up_row(n, false, inter, true) : gate_up_row(n - inter, true, inter, true);
}

}  // namespace fusedmoe::kernels
