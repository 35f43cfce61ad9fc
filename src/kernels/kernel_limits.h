// Bounds of the kernels that the public entry points validate against (validate.h's Limits;
// no CUDA headers: the CPU-only build validates too).
#pragma once

#include <cstdint>

namespace fusedmoe::kernels {

/// Experts per layer: smxx_align_tokens keeps one counter per expert in shared memory and gives
/// each a thread of its scans; routing_topk holds a token's scores E / 32 per lane. 1024 covers
/// every released MoE (Kimi-K2: 384, Qwen3-Next: 512).
inline constexpr int32_t kMaxExperts = 1024;
/// routing_topk: a token's top-k, one per lane of its warp.
inline constexpr int32_t kMaxTopk = 32;
/// The small-M GEMVs' direct table (launch.h, GroupedGemvParams): instances at most, the
/// length of its identity order.
inline constexpr int32_t kMaxDirectPairs = 32;
/// routing_topk's grouped top-k: one expert group per lane.
inline constexpr int32_t kMaxExpertGroups = 32;

}  // namespace fusedmoe::kernels
