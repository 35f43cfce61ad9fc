// Geometry of the one-token int4 layer (wna16_one_token_layer.cu): which CTA takes which work
// and where each piece sits in its shared memory. No CUDA headers: the planner (CPU-only build
// too) decides with the kernel's own numbers, and the CPU tests check them.
//
// One cooperative launch of `ctas` CTAs (one per SM) does the whole layer of one token:
//   gate-up units: 8 intermediate columns of one top-k slot, i.e. 16 rows of w13 (gate rows
//     j0..j0+7, up rows I+j0..), over K = H; topk * I / 8 of them;
//   down tiles: 16 rows of out, over every slot (the combine folded in), K = I; H / 16 of them.
// CTA c takes the units [c U / ctas, (c + 1) U / ctas) of each kind. At its start it copies
// every code byte of its units (both GEMMs) into shared memory at once, so that the whole
// layer's weights are in flight from the first microsecond; a grid barrier separates the GEMMs.
// Where both GEMMs' shares do not fit together (Qwen2 TP4), the down codes are copied once the
// CTA's gate-up GEMM is done, into the gate-up codes' place (dn_after_gu): they come in under
// the grid barrier and the other CTAs' gate-up tails instead of from the start.
#pragma once

#include <cstdint>

#include "gemv_geometry.h"  // FUSEDMOE_HOST_DEVICE

namespace fusedmoe::kernels {

inline constexpr int32_t kOneTokenLayerWarps = 16;
inline constexpr int32_t kOneTokenLayerThreads = 32 * kOneTokenLayerWarps;
/// One group's parameters of a unit's 16 rows in shared memory: the scales (up to fp32, row r
/// at r * scale_bytes) in the first 64 bytes, uint8 zero points (row r at 64 + r) after them.
inline constexpr int64_t kOneTokenLayerGroupBytes = 80;
inline constexpr int64_t kOneTokenLayerZeroOffset = 64;
/// Dynamic shared memory one CTA may have on sm_90 (227 KiB).
inline constexpr int64_t kOneTokenLayerMaxSmem = 232448;

struct OneTokenLayerPlan {
  bool fits = false;       // the shape is one this kernel takes and every CTA's share fits
  int32_t ctas = 0;
  int64_t gu_units = 0;    // topk * I / 8
  int64_t dn_tiles = 0;    // H / 16
  int64_t gu_max = 0;      // units of one CTA, at most
  int64_t dn_max = 0;
  int64_t gu_unit_bytes = 0;  // codes of a gate-up unit: 16 rows of H / 2 bytes
  int64_t dn_slot_bytes = 0;  // codes of a down tile's slot: 16 rows of I / 2 bytes
  // Byte offsets in dynamic shared memory (16-byte aligned), and its size.
  int64_t gu_codes = 0;    // [gu_max][16 rows][H / 2]
  int64_t dn_codes = 0;    // [dn_max][topk][16 rows][I / 2] (dn_after_gu: at gu_codes)
  int64_t gu_params = 0;   // [gu_max][groups13][kOneTokenLayerGroupBytes]
  int64_t dn_params = 0;   // [dn_max][topk][groups2][kOneTokenLayerGroupBytes]
  int64_t x = 0;           // x's row [H]
  int64_t partial = 0;     // [max(gu_max, dn_max)][warps][16] fp32: each warp's sums of a unit's rows
  int64_t sums = 0;        // fp32 sums of the activations over each 128-k block: x's [H / 128], then
                           // the intermediate's [topk][I / 128] (the folded zero points, bf16)
  int64_t slots = 0;       // [kMaxTopk] local expert ids (-1: skipped), then [kMaxTopk] routed weights
  int64_t bars = 0;        // [gu_max + dn_max] mbarriers, one per unit
  int64_t smem_bytes = 0;
  bool dn_after_gu = false;  // the down codes copied after the CTA's gate-up GEMM, into gu_codes
  int64_t inter = 0;         // the intermediate [topk][I] after the grid barrier (at gu_codes unless dn_after_gu)
};

/// Whether groups of `group_size` k are ones the kernel reads (besides one group per row): a
/// power-of-two count of whole 128-k blocks, since it finds a block's group by a shift.
constexpr bool one_token_layer_group_ok(int64_t group_size) {
  return group_size > 0 && group_size % 128 == 0 && ((group_size / 128) & (group_size / 128 - 1)) == 0;
}

/// The first unit of CTA c when `units` are shared by `ctas` CTAs.
FUSEDMOE_HOST_DEVICE constexpr int64_t one_token_layer_first(int64_t c, int64_t units, int64_t ctas) {
  return c * units / ctas;
}

/// The plan for hidden size h, intermediate size i, top-k `topk` on `ctas` CTAs, with
/// `groups13` / `groups2` scale groups per row of w13 / w2 (each a power-of-two count of whole
/// 128-k blocks, or one per row: the caller checks). Both GEMMs' codes resident from the start
/// where they fit, else dn_after_gu. fits is false where h or i is not a multiple of 128, topk is
/// outside [1, max_topk] or a CTA's share does not fit shared memory either way.
constexpr OneTokenLayerPlan one_token_layer_plan(int64_t h, int64_t i, int64_t topk, int64_t ctas, int64_t groups13,
                                                 int64_t groups2, int64_t max_topk = 32) {
  OneTokenLayerPlan p;
  if (h <= 0 || i <= 0 || h % 128 != 0 || i % 128 != 0 || topk < 1 || topk > max_topk || ctas < 1 ||
      groups13 < 1 || groups2 < 1) {
    return p;
  }
  p.ctas = static_cast<int32_t>(ctas);
  p.gu_units = topk * i / 8;
  p.dn_tiles = h / 16;
  p.gu_max = (p.gu_units + ctas - 1) / ctas;
  p.dn_max = (p.dn_tiles + ctas - 1) / ctas;
  p.gu_unit_bytes = 16 * h / 2;
  p.dn_slot_bytes = 16 * i / 2;
  const int64_t gu_codes = p.gu_max * p.gu_unit_bytes;
  const int64_t dn_codes = p.dn_max * topk * p.dn_slot_bytes;
  const int64_t inter = topk * i * 2;  // the intermediate, 16-bit
  const int64_t units = p.gu_max > p.dn_max ? p.gu_max : p.dn_max;
  for (int after = 0; after < 2; ++after) {
    p.dn_after_gu = after != 0;
    int64_t at = 0;
    p.gu_codes = at;
    if (p.dn_after_gu) {
      p.dn_codes = at;
      at += gu_codes > dn_codes ? gu_codes : dn_codes;
      p.inter = at;
      at += inter;
    } else {
      p.inter = at;
      at += gu_codes > inter ? gu_codes : inter;
      p.dn_codes = at;
      at += dn_codes;
    }
    p.gu_params = at;
    at += p.gu_max * groups13 * kOneTokenLayerGroupBytes;
    p.dn_params = at;
    at += p.dn_max * topk * groups2 * kOneTokenLayerGroupBytes;
    p.x = at;
    at += h * 2;
    p.partial = at;
    at += units * kOneTokenLayerWarps * 16 * 4;
    p.sums = at;
    at += ((h / 128 + topk * (i / 128)) * 4 + 15) / 16 * 16;
    p.slots = at;
    at += max_topk * 8;
    p.bars = at;
    at += (p.gu_max + p.dn_max) * 8;
    p.smem_bytes = (at + 15) / 16 * 16;
    p.fits = p.smem_bytes <= kOneTokenLayerMaxSmem;
    if (p.fits) break;
  }
  return p;
}

}  // namespace fusedmoe::kernels
