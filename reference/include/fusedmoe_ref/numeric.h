// Bit-exact conversions between float and the storage types of the API (bf16, fp16,
// float8_e4m3fn), written out so that the reference does not depend on a compiler's
// half-precision support. Every float -> narrow conversion rounds to nearest, ties to even.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "fusedmoe/types.h"

namespace fusedmoe::ref {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float bf16_to_float(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

inline uint16_t float_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even on the 16 dropped bits
  return static_cast<uint16_t>(u >> 16);
}

inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));  // inf / NaN
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t float_to_fp16(float f) {
  uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  u &= 0x7fffffffu;
  if (u >= 0x7f800000u) return sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (u >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to infinity
  if (u >= 0x38800000u) {                        // normal half (>= 2^-14)
    // rebias the exponent by -112 and round the 13 dropped bits to nearest even
    u += 0xc8000fffu + ((u >> 13) & 1u);
    return static_cast<uint16_t>(sign | (u >> 13));
  }
  // subnormal half: a multiple of 2^-24; the float product is exact, nearbyint rounds to even
  const float scaled = bits_float(u) * 16777216.0f;
  return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
}

namespace numeric_detail {

/// float8_e4m3fn decoded by its definition (the table below is built from it).
inline float fp8e4m3_decode(uint8_t v) {
  const float sign = (v & 0x80u) ? -1.0f : 1.0f;
  const int exp = (v >> 3) & 0xf;
  const int mant = v & 0x7;
  if (exp == 15 && mant == 7) return std::nanf("");
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -9);
  return sign * std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, exp - 7);
}

struct Fp8E4M3Table {
  float value[256];
  Fp8E4M3Table() {
    for (int i = 0; i < 256; ++i) value[i] = fp8e4m3_decode(static_cast<uint8_t>(i));
  }
};
inline const Fp8E4M3Table kFp8E4M3Table;

}  // namespace numeric_detail

/// float8_e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; 0x7f is NaN.
/// A table lookup (the reference dequantizes billions of weights).
inline float fp8e4m3_to_float(uint8_t v) { return numeric_detail::kFp8E4M3Table.value[v]; }

constexpr float kFP8E4M3Max = 448.0f;

/// Saturating: finite values beyond +-448 become +-448 (the convention of every FP8 GEMM
/// recipe, which clamps before converting). NaN stays NaN. Rounds to nearest, ties to even.
inline uint8_t float_to_fp8e4m3(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  const uint32_t mag = bits & 0x7fffffffu;
  if (mag > 0x7f800000u) return 0x7f;            // NaN
  if (mag >= 0x43e00000u) return sign | 0x7eu;    // >= 448 (and infinity): saturate
  if (mag < 0x3c800000u) {                        // below 2^-6: subnormal, a multiple of 2^-9
    float a;
    std::memcpy(&a, &mag, sizeof(a));
    return sign | static_cast<uint8_t>(std::nearbyint(a * 512.0f));  // 8 rounds up to 0x08, the smallest normal
  }
  // Normal: keep 3 of the 23 mantissa bits (and the 8 exponent bits), rounding the 20 dropped
  // ones to nearest even without a branch: adding 0x7ffff plus the kept lsb carries into the
  // kept bits exactly when the dropped part is above half, or half with an odd lsb (the old
  // compare-and-increment, identical on all 2^32 floats; its branch mispredicted on random
  // data). A carry out of the mantissa moves into the exponent, as the bit layout makes it.
  const uint32_t kept = (mag + 0x7ffffu + ((mag >> 20) & 1u)) >> 20;
  // Rebias the exponent from 127 to 7: (e - 120) << 3 off the kept bits.
  return static_cast<uint8_t>(sign | (kept - (120u << 3)));
}

/// Reads element i of a buffer of the given floating dtype as a double.
inline double load_as_double(const void* base, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::kBF16: return bf16_to_float(static_cast<const uint16_t*>(base)[i]);
    case DType::kFP16: return fp16_to_float(static_cast<const uint16_t*>(base)[i]);
    case DType::kFP32: return static_cast<const float*>(base)[i];
    case DType::kFP8E4M3: return fp8e4m3_to_float(static_cast<const uint8_t*>(base)[i]);
    default: return std::nan("");
  }
}

/// Rounds a value to what storing it in `dtype` keeps (bf16, fp16, fp32).
inline double round_to(DType dtype, double v) {
  switch (dtype) {
    case DType::kBF16: return bf16_to_float(float_to_bf16(static_cast<float>(v)));
    case DType::kFP16: return fp16_to_float(float_to_fp16(static_cast<float>(v)));
    case DType::kFP32: return static_cast<float>(v);
    default: return v;
  }
}

/// Writes v into element i of a bf16/fp16/fp32 buffer.
inline void store_from_double(void* base, DType dtype, int64_t i, double v) {
  switch (dtype) {
    case DType::kBF16: static_cast<uint16_t*>(base)[i] = float_to_bf16(static_cast<float>(v)); break;
    case DType::kFP16: static_cast<uint16_t*>(base)[i] = float_to_fp16(static_cast<float>(v)); break;
    case DType::kFP32: static_cast<float*>(base)[i] = static_cast<float>(v); break;
    case DType::kFP8E4M3: static_cast<uint8_t*>(base)[i] = float_to_fp8e4m3(static_cast<float>(v)); break;
    default: break;
  }
}

}  // namespace fusedmoe::ref
