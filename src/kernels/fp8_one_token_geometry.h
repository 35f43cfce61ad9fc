// What the FP8 one-token down kernel (launch_fp8_one_token_down, fp8.cu) takes, without CUDA
// headers: the planner asks it on the host.
#pragma once

#include <cstdint>

#include "align_geometry.h"  // kWarpAlignPairs
#include "gemv_geometry.h"   // kOneTokenDownMinTopk, kOneTokenDownMaxTopk

namespace fusedmoe::kernels {

/// The shared memory the kernel holds the token's quantized rows in: top-k rows of k fp16
/// values (e4m3 codes; a row 16 bytes past a multiple of 128, so that the lanes of a repeated
/// expert's columns read different banks) and their scales (a row's, the tensor's, or with
/// group scales a row's per `group` columns).
inline constexpr int64_t kFp8OneTokenRowPad = 8;
inline int64_t fp8_one_token_down_smem(int64_t k, int64_t topk, bool group_scales, int64_t group) {
  const int64_t groups = group_scales && group > 0 ? (k + group - 1) / group : 1;
  return topk * (k + kFp8OneTokenRowPad) * 2 + topk * groups * 4;
}
/// At most this much (a launch's default limit, no opt-in).
inline constexpr int64_t kFp8OneTokenDownMaxSmem = 48 * 1024;
/// Whether the kernel takes an intermediate of K = k columns (a multiple of 16) at this top-k
/// and activation scaling (group scales: group / 8 lanes, 8 to 32, quantize a group together,
/// as the span quantizer's team).
inline bool fp8_one_token_down_supports(int64_t k, int64_t topk, bool group_scales, int64_t group) {
  if (group_scales && group != 64 && group != 128 && group != 256) return false;
  return topk >= kOneTokenDownMinTopk && topk <= kOneTokenDownMaxTopk && k > 0 && k % 16 == 0 &&
         fp8_one_token_down_smem(k, topk, group_scales, group) <= kFp8OneTokenDownMaxSmem;
}

/// Whether the kernel takes `tokens` tokens on align's table: one (its experts are at most top-k,
/// which one CTA's warps cover), or several whose pairs fit one warp's lookup (FewTokenPairs: at
/// most kWarpAlignPairs) and need no tensor amax over them all (not dynamic per-tensor scales).
inline bool fp8_one_token_down_takes_tokens(int64_t tokens, int64_t topk, bool dynamic_tensor_scale) {
  return tokens == 1 || (tokens > 1 && tokens * topk <= kWarpAlignPairs && !dynamic_tensor_scale);
}

}  // namespace fusedmoe::kernels
