// Conversions between float and bf16 / fp16 / e4m3: exact values, round trips and
// nearest-even rounding checked against brute force.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "fusedmoe_ref/numeric.h"
#include "fusedmoe_ref/random.h"
#include "kernels/fp8_divide.h"

namespace fusedmoe::ref {
namespace {

TEST(NumericBF16, KnownValues) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xc000);
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(float_to_bf16(1.0f + 0x1.0p-8f), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even (1 + 2^-6).
  EXPECT_EQ(float_to_bf16(1.0f + 3 * 0x1.0p-8f), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
}

TEST(NumericFP16, AllCodesRoundTrip) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(f)))) << h;
      continue;
    }
    EXPECT_EQ(float_to_fp16(f), h) << "code " << h << " value " << f;
  }
}

TEST(NumericFP16, KnownValues) {
  EXPECT_EQ(float_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7c00);   // rounds to infinity
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16(0x1.0p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16(0x1.0p-25f), 0x0000);  // halfway to zero: ties to even
  EXPECT_EQ(float_to_fp16(0x1.8p-24f), 0x0002);  // 1.5 ulp: ties to even (2)
  EXPECT_EQ(fp16_to_float(0x0001), 0x1.0p-24f);
}

// Nearest representable value by brute force over all codes, ties to the even code.
template <typename Decode>
uint32_t brute_nearest(float f, uint32_t codes, Decode decode) {
  uint32_t best = 0;
  double best_d = INFINITY;
  for (uint32_t c = 0; c < codes; ++c) {
    const float v = decode(c);
    if (!std::isfinite(v)) continue;
    const double d = std::fabs(static_cast<double>(v) - f);
    if (d < best_d || (d == best_d && (c & 1u) == 0 && (best & 1u) == 1)) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

TEST(NumericFP16, RandomMatchesBruteForce) {
  Rng rng(7);
  for (int i = 0; i < 300; ++i) {
    const double magnitude = std::exp2(rng.uniform(-26, 16));  // two statements: a fixed draw order
    const float f = static_cast<float>(rng.normal() * magnitude);
    if (std::fabs(f) >= 65520.0f) {  // past the largest finite half plus half an ulp: infinity
      EXPECT_TRUE(std::isinf(fp16_to_float(float_to_fp16(f)))) << f;
      continue;
    }
    const uint32_t want = brute_nearest(f, 65536, [](uint32_t c) { return fp16_to_float(static_cast<uint16_t>(c)); });
    EXPECT_EQ(fp16_to_float(float_to_fp16(f)), fp16_to_float(static_cast<uint16_t>(want))) << f;
  }
}

TEST(NumericFP8, KnownValues) {
  EXPECT_EQ(fp8e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(fp8e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(fp8e4m3_to_float(0x01), 0x1.0p-9f);  // smallest subnormal
  EXPECT_EQ(fp8e4m3_to_float(0x08), 0x1.0p-6f);  // smallest normal
  EXPECT_TRUE(std::isnan(fp8e4m3_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(fp8e4m3_to_float(0xff)));
  EXPECT_EQ(float_to_fp8e4m3(1000.0f), 0x7e);  // saturates
  EXPECT_EQ(float_to_fp8e4m3(-1000.0f), 0xfe);
  EXPECT_EQ(float_to_fp8e4m3(1.0625f), 0x38);  // halfway between 1 and 1.125: even
  EXPECT_EQ(float_to_fp8e4m3(1.1875f), 0x3a);  // halfway between 1.125 and 1.25: even
  EXPECT_EQ(float_to_fp8e4m3(0x1.0p-10f), 0x00);  // half the smallest subnormal: even (0)
}

TEST(NumericFP8, EveryTieGoesToTheEvenCode) {
  // Midpoints of consecutive positive codes (subnormal, normal, across exponents), both signs.
  for (uint32_t c = 0; c + 1 < 0x7f; ++c) {
    const float lo = fp8e4m3_to_float(static_cast<uint8_t>(c)), hi = fp8e4m3_to_float(static_cast<uint8_t>(c + 1));
    const float mid = 0.5f * (lo + hi);  // exact: both are short binary fractions
    const uint8_t even = static_cast<uint8_t>(c % 2 == 0 ? c : c + 1);
    EXPECT_EQ(float_to_fp8e4m3(mid), even) << mid;
    EXPECT_EQ(float_to_fp8e4m3(-mid), even | 0x80) << -mid;
    EXPECT_EQ(float_to_fp8e4m3(std::nextafter(mid, 0.0f)), c) << mid;
    EXPECT_EQ(float_to_fp8e4m3(std::nextafter(mid, 1000.0f)), c + 1) << mid;
  }
  EXPECT_EQ(float_to_fp8e4m3(std::numeric_limits<float>::infinity()), 0x7e);
  EXPECT_EQ(float_to_fp8e4m3(-std::numeric_limits<float>::infinity()), 0xfe);
  EXPECT_EQ(float_to_fp8e4m3(std::nanf("")), 0x7f);
  EXPECT_EQ(float_to_fp8e4m3(std::nextafter(448.0f, 0.0f)), 0x7e);
}

TEST(NumericFP8, AllCodesRoundTripAndRandomNearest) {
  for (uint32_t c = 0; c < 256; ++c) {
    const float f = fp8e4m3_to_float(static_cast<uint8_t>(c));
    if (std::isnan(f)) continue;
    if (c == 0x80) {
      EXPECT_EQ(float_to_fp8e4m3(f), 0x80);  // -0
      continue;
    }
    EXPECT_EQ(float_to_fp8e4m3(f), c) << f;
  }
  Rng rng(11);
  for (int i = 0; i < 2000; ++i) {
    const double magnitude = std::exp2(rng.uniform(-12, 9));
    const float f = static_cast<float>(rng.normal() * magnitude);
    const uint32_t want = brute_nearest(std::fmin(std::fmax(f, -448.0f), 448.0f), 256,
                                        [](uint32_t c) { return fp8e4m3_to_float(static_cast<uint8_t>(c)); });
    EXPECT_EQ(fp8e4m3_to_float(float_to_fp8e4m3(f)), fp8e4m3_to_float(static_cast<uint8_t>(want))) << f;
  }
}

// The GPU quantizers' v / s (kernels/fp8_divide.h, the same code on the host): the division's
// e4m3 code for every value and scale (a zero's sign aside), and its quotient exactly away
// from underflow (|v / s| >= 2^-100: the step's remainder is exact; e4m3's code is 0 below
// 2^-10 anyway) and, for the static form, below its clamp.
void expect_division(float v, float s, float got, bool check_quotient, int64_t* exact) {
  const float want = v / s;
  const uint8_t code = float_to_fp8e4m3(got), want_code = float_to_fp8e4m3(want);
  // A zero may come out with the other sign (-0 through the remainder step is +0): the same
  // operand for the GEMM.
  ASSERT_TRUE(code == want_code || ((code & 0x7f) == 0 && (want_code & 0x7f) == 0)) << "v " << v << " s " << s;
  if (check_quotient && std::fabs(want) >= 0x1p-100f) {
    ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want)))
        << "v " << v << " s " << s << " got " << got << " want " << want;
    ++*exact;
  }
}

// StaticScale: finite scales from 2^-140 to 2^128, values from 2^-150 to 2^127, zeros,
// infinities and NaN (subnormal and huge scales: the prescale; quotients past 2^128: the clamp).
TEST(NumericFP8, StaticScaleDivisionMatchesTheDivision) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> scales = {1.0f, 448.0f, 1.0f / 448, 0x1p-120f, 0x1p120f, 0x1.fffffep-121f, 0x1p-126f,
                               0x1p-149f, 3.0e38f, std::numeric_limits<float>::max()};
  std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 448.0f, 449.0f, inf, -inf, std::nanf(""),
                               std::numeric_limits<float>::max(), 0x1p-149f, -0x1p-149f};
  Rng rng(23);
  for (int i = 0; i < 64; ++i) scales.push_back(static_cast<float>(std::exp2(rng.uniform(-140, 127.9))));
  for (int i = 0; i < 512; ++i) {
    const double v = rng.normal() * std::exp2(rng.uniform(-150, 127));
    if (std::fabs(v) < 3.0e38) values.push_back(static_cast<float>(v));  // a float cast in range
  }
  int64_t exact = 0;
  for (const float s : scales) {
    const kernels::StaticScale q(s);
    for (const float v : values) {
      expect_division(v, s, q.divide(v), std::fabs(v / s) <= 0x1p100f, &exact);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_GT(exact, 10000);
}

// DynamicScale over its range: every scale a dynamic one can be (amax / 448 at least
// kFp8MinDynamicScale, amax up to the largest float, and infinity: a span holding one, where
// every finite value gives 0) with values of at most amax in magnitude, including amax
// itself, its neighbour below, zeros, subnormals and NaN; and 200k random draws. Quotients bit for bit where v >= 2^-102 (below, the remainder may be inexact: e4m3's
// code is 0 there, as the code check shows).
TEST(NumericFP8, DynamicScaleDivisionMatchesTheDivision) {
  Rng rng(24);
  const float floor = kernels::kFp8MinDynamicScale;
  std::vector<float> amaxes = {448.0f, 1.0f, floor * 448, floor * 448 * 1.5f, floor, 0x1p-100f, 0x1p-126f,
                               std::numeric_limits<float>::max(), std::nextafter(std::numeric_limits<float>::max(), 0.0f),
                               std::numeric_limits<float>::infinity()};
  for (int i = 0; i < 64; ++i) amaxes.push_back(static_cast<float>(std::exp2(rng.uniform(-130, 127.9))));
  int64_t exact = 0;
  for (const float amax : amaxes) {
    const float s = std::fmax(amax / 448.0f, floor);
    const kernels::DynamicScale q(s);
    std::vector<float> values = {amax, -amax, std::nextafter(amax, 0.0f), 0.0f, -0.0f, 0x1p-149f, std::nanf(""),
                                 amax / 3, amax * 0x1p-12f};
    for (int i = 0; i < 256; ++i) values.push_back(static_cast<float>(rng.uniform(-1, 1)) * amax);
    if (std::isinf(amax)) values.insert(values.end(), {1.0f, -3.0f, 1e30f});  // finite values: 0
    // Next to e4m3's rounding ties (subnormal 2^-10 and 3 x 2^-10, normal 1.0625 and 272):
    // where a quotient an ulp off would change the code.
    for (const float tie : {0x1p-10f, 0x3p-10f, 1.0625f, 272.0f}) {
      const float v = tie * s;
      if (v > amax) continue;
      for (const float w : {v, std::nextafter(v, 0.0f), std::nextafter(v, amax), -v}) values.push_back(w);
    }
    for (const float v : values) {
      expect_division(v, s, q.divide(v), std::fabs(v) >= 0x1p-102f, &exact);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_GT(exact, 10000);
  for (int i = 0; i < 200000; ++i) {
    const float amax = static_cast<float>(std::exp2(rng.uniform(-30, 30)));
    const float v = static_cast<float>(rng.uniform(-1, 1)) * amax;
    const kernels::DynamicScale q(amax / 448.0f);
    const float want = v / q.s, got = q.divide(v);
    ASSERT_TRUE(got == want) << "v " << v << " amax " << amax << " got " << got << " want " << want;
  }
}

TEST(NumericRandom, SameSeedSameStream) {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 10; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
  Rng d(5);
  double sum = 0, sum2 = 0;
  for (int i = 0; i < 20000; ++i) {
    const double v = d.normal();
    sum += v;
    sum2 += v * v;
  }
  EXPECT_NEAR(sum / 20000, 0.0, 0.05);
  EXPECT_NEAR(sum2 / 20000, 1.0, 0.05);
}

}  // namespace
}  // namespace fusedmoe::ref
