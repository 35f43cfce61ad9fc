// Geometry of the small-M GEMV kernels (small_m_splitk, wna16_gemv) that the planner sizes its
// launches by: no CUDA headers, so that the CPU-only build plans with the kernels' own numbers.
#pragma once

#include <cstdint>

// Helpers that device code calls too.
#ifndef FUSEDMOE_HOST_DEVICE
#if defined(__CUDACC__)
#define FUSEDMOE_HOST_DEVICE __host__ __device__
#else
#define FUSEDMOE_HOST_DEVICE
#endif
#endif

namespace fusedmoe::kernels {

/// Warps of a GEMV CTA; a warp owns one 16-row tile and one K slice.
inline constexpr int32_t kGemvWarps = 8;

/// 16-row MMA tiles of one expert's output: gate-up pairs 8 gate with 8 up rows, down takes 16.
FUSEDMOE_HOST_DEVICE constexpr int64_t grouped_gemv_tiles(bool gate_up, int64_t n_out) {
  return gate_up ? (n_out + 7) / 8 : (n_out + 15) / 16;
}

/// The one-token down GEMVs (launch_one_token_down, launch_wna16_one_token_down): top-k range,
/// the token's live experts one CTA covers, and the ways its warps split K (8 / experts).
inline constexpr int32_t kOneTokenDownMinTopk = 4;
inline constexpr int32_t kOneTokenDownMaxTopk = 8;
constexpr int32_t one_token_down_experts(int64_t topk) { return topk <= 4 ? 4 : 8; }
constexpr int32_t one_token_down_split(int64_t topk) { return kGemvWarps / one_token_down_experts(topk); }

/// Whether a group spans whole 128-k blocks (one group per row, or group_size a multiple of
/// 128): wna16_gemv then keeps one scale and zero per row and block, else one per 32-k step.
FUSEDMOE_HOST_DEVICE constexpr bool wna16_block_groups(int64_t groups, int64_t group_size) {
  return groups == 1 || group_size % 128 == 0;
}

/// 128-k blocks per pipeline stage of wna16_gemv (32 bytes of codes per lane and row in
/// flight): int4 2, int8 1; int4 1 for groups shorter than a block (their scales cost registers).
FUSEDMOE_HOST_DEVICE constexpr int wna16_stage_blocks(int bits, bool block_groups) {
  return bits == 4 && block_groups ? 2 : 1;
}

}  // namespace fusedmoe::kernels
