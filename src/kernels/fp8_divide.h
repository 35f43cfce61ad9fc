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

/// A span's scale s, for v / s without a division per value: v and s are first scaled by
/// k = 2^(127 - s's exponent) (exact), so that s * k lies in [1, 2) (subnormal s: below) and
/// its reciprocal r never overflows; then q = (v k) r and one Markstein step with the exact
/// remainder fma(-q, s k, v k). Six instructions where div.rn.f32 took a dozen and a
/// slow-path branch, once per value, and made the many-row quantizer issue-bound (PERF.md
/// v23). q is clamped to +-2^100 before the step: where v k r overflows (a static scale far
/// below |v| / 448) inf - inf would give NaN, while the clamped quotient saturates to +-448
/// as the division's does; a NaN v stays NaN through the remainder. The CPU tests check the
/// e4m3 codes against the division's for every value and scale, and the quotient bit for bit
/// away from underflow (the step gives +0 for -0).
struct QuantScale {
  float s, k, sk, rk;
  FUSEDMOE_FP8_HD explicit QuantScale(float scale) : s(scale) {
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
