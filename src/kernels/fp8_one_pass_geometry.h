// What the one-pass per-tensor quantizer (launch_fp8_quantize_one_pass, fp8.cu) takes, without
// CUDA headers: the planner asks it on the host, and the CPU tests check it.
//
// A dynamic per-tensor scale needs the amax of every value before any value is quantized. The
// two-pass form reads the tensor twice (an amax kernel, then the quantizer; for the gated
// activation, gated_act writes it in the activation dtype with its amax and the quantizer
// reads that back). The one-pass kernel is one cooperative launch of at most a few CTAs per
// SM: each warp takes units (a row's segment of at most kFp8OnePassSegmentVecs 16-byte vectors,
// so that a few long rows still spread over many warps), each CTA holds its units' values in
// shared memory (as the activation dtype: the values the two-pass form would have read back)
// while the CTAs' amaxes meet at a grid barrier, then quantizes what it holds. So it takes a
// tensor whose units fit the CTAs' shared memory.
#pragma once

#include <cstdint>

namespace fusedmoe::kernels {

/// Warps per CTA (256 threads), CTAs per SM at most, and the shared memory each holds units in.
inline constexpr int64_t kFp8OnePassWarps = 8;
inline constexpr int64_t kFp8OnePassCtasPerSm = 2;
inline constexpr int64_t kFp8OnePassHeldBytes = 100 * 1024;
/// A unit's vectors (8 values of 16 bits each) at most: one batch of loads per lane.
inline constexpr int64_t kFp8OnePassSegmentVecs = 256;
/// The CTAs' amax slots (the layer's workspace "amax_partials"): at most this many CTAs.
inline constexpr int64_t kFp8OnePassMaxCtas = 1024;

struct Fp8OnePassPlan {
  bool fits = false;      // every CTA's units fit kFp8OnePassHeldBytes
  int64_t segments = 0;   // units per row
  int64_t seg_vecs = 0;   // vectors per unit (a row's last unit may have fewer)
  int64_t units = 0;      // rows * segments
  int64_t ctas = 0;       // about a unit per warp, at most kFp8OnePassCtasPerSm per SM and kFp8OnePassMaxCtas
  int64_t held_bytes = 0;  // shared memory of one CTA: ceil(units / ctas) units of seg_vecs vectors
};

/// The launch for `rows` (a bound: the live rows may be fewer) rows of `cols` 16-bit values (a
/// multiple of 8) on `sms` SMs. fits is false for no rows, or where a CTA's units do not fit.
constexpr Fp8OnePassPlan fp8_one_pass_plan(int64_t rows, int64_t cols, int64_t sms) {
  Fp8OnePassPlan p;
  if (rows <= 0 || cols <= 0 || cols % 8 != 0 || sms <= 0) return p;
  const int64_t vecs = cols / 8;
  p.segments = (vecs + kFp8OnePassSegmentVecs - 1) / kFp8OnePassSegmentVecs;
  p.seg_vecs = (vecs + p.segments - 1) / p.segments;
  p.units = rows * p.segments;
  const int64_t full = sms * kFp8OnePassCtasPerSm < kFp8OnePassMaxCtas ? sms * kFp8OnePassCtasPerSm : kFp8OnePassMaxCtas;
  const int64_t wanted = (p.units + kFp8OnePassWarps - 1) / kFp8OnePassWarps;
  p.ctas = wanted < full ? wanted : full;
  p.held_bytes = (p.units + p.ctas - 1) / p.ctas * p.seg_vecs * 16;
  p.fits = p.held_bytes <= kFp8OnePassHeldBytes;
  return p;
}

}  // namespace fusedmoe::kernels
