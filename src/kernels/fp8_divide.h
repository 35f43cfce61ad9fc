// v / s for the FP8 activation quantizers (fp8.cu), without a division per value. No CUDA
// headers: the CPU tests check it against the division on the host.
#pragma once

#include <math.h>
#include <string.h>

#if defined(__CUDACC__)
#define FUSEDMOE_FP8_HD __host__ __device__
#else
#define FUSEDMOE_FP8_HD
#endif

namespace fusedmoe::kernels {

/// A span's scale s, for v / s without a division per value (div.rn.f32 took a dozen
/// instructions and a slow-path branch per value and made the many-row quantizer
/// issue-bound, PERF.md v23). Two forms, each a first quotient and one Markstein correction.
/// That the correction lands on the division's rounding is checked, not proven (q = v r is
/// within about 1.5 ulp of v / s, past the 1 ulp of the textbook argument): the CPU tests
/// compare both forms with the division, the e4m3 codes for every value in their range and
/// the quotients bit for bit away from underflow (e4m3's code is 0 there anyway; the step gives
/// +0 for -0), on targeted values (e4m3's rounding ties) and 200k random ones.

/// The smallest dynamic scale (amax / 448 below it takes it: docs/FORMATS.md). DynamicScale
/// needs s >= 2^-91: wherever |v / s| >= 2^-11 (e4m3's code is 0 below the tie at 2^-10, also
/// off by an ulp), v >= 2^-102, so the remainder fma(-q, s, v) is exact; below, it can fall
/// under the float subnormals and the step pulls q an ulp off (the CPU test found it at s =
/// 4e-38). 2^-64 is far below any real activation's scale.
constexpr float kFp8MinDynamicScale = 0x1p-64f;

/// A dynamic scale: s >= kFp8MinDynamicScale and every value of the span at most 448 s (1 +
/// 2^-20) in magnitude, so that v r cannot overflow: fp8.cu's dynamic_scale over values of at
/// most amax. q = v r (r = 1 / s) and one Markstein step with the exact remainder fma(-q, sr,
/// v): three instructions. sr is s, or the largest float for s = inf (a span holding an
/// infinity): there r = 0, and the remainder with s itself would be 0 * inf = NaN for every
/// finite value, where the division gives 0 (the infinity itself gives NaN either way).
struct DynamicScale {
  float s, r, sr;
  FUSEDMOE_FP8_HD explicit DynamicScale(float scale) : s(scale), r(1.0f / scale), sr(fminf(scale, 0x1.fffffep127f)) {}
  FUSEDMOE_FP8_HD float divide(float v) const {
    const float q = v * r;
    return fmaf(fmaf(-q, sr, v), r, q);
  }
};

/// A static scale: any positive finite s and any v. v and s are first scaled by k = 2^(127 -
/// s's exponent) (exact), so that s k lies in [1, 2) (subnormal s: below) and its reciprocal
/// never overflows; then q = (v k) rk, clamped to +-2^100 before the step: where v k rk
/// overflows (s far below |v| / 448) inf - inf would give NaN, while the clamped quotient
/// saturates to +-448 as the division's does. Six instructions, which cost the per-tensor
/// and block layers 1-5% at prefill where they served the dynamic scales too (v24); a NaN v
/// stays NaN through the remainder.
struct StaticScale {
  float s, k, sk, rk;
  FUSEDMOE_FP8_HD explicit StaticScale(float scale) : s(scale) {
    const int e = static_cast<int>(bits(scale) >> 23 & 0xffu);
    k = ldexpf(1.0f, 127 - e);
    sk = scale * k;
    rk = 1.0f / sk;
  }
  FUSEDMOE_FP8_HD float divide(float v) const {
    const float vk = v * k;
    const float q = fminf(fmaxf(vk * rk, -0x1p100f), 0x1p100f);
    return fmaf(fmaf(-q, sk, vk), rk, q);
  }

 private:
  FUSEDMOE_FP8_HD static unsigned bits(float f) {
    unsigned u;
    memcpy(&u, &f, sizeof u);
    return u;
  }
};

}  // namespace fusedmoe::kernels
