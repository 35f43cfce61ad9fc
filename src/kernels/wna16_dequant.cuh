// Pieces of the integer kernels' dequantization in registers (wna16_gemv.cu at decode,
// wna16_one_token_layer.cu for one token, wna16_grouped_gemm.cu at large batch): codes become
// (magic + q) in both halves of a packed pair of the activation type by a few bit operations,
// then exact integers q - zero by one packed subtraction, and, where the weights are scaled
// before the MMA, (q - zero) * scale rounded once (mul2_split).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "device_util.cuh"

namespace fusedmoe::kernels::wna16 {

template <typename T>
struct IntMagic;
template <>
struct IntMagic<__nv_bfloat16> {
  static constexpr uint32_t kHalf = 0x4300;      // 128.0
  static constexpr uint32_t kOne = 0x3F803F80u;  // 1.0 in both halves
};
template <>
struct IntMagic<__half> {
  static constexpr uint32_t kHalf = 0x6400;  // 1024.0 (no kOne: fp16 does not fold, see kFold)
};

// a - b on two packed 16-bit values of type T.
template <typename T>
__device__ __forceinline__ uint32_t sub2(uint32_t a, uint32_t b) {
  using T2 = std::conditional_t<std::is_same<T, __half>::value, __half2, __nv_bfloat162>;
  T2 x, y;
  memcpy(&x, &a, 4);
  memcpy(&y, &b, 4);
  const T2 r = __hsub2(x, y);
  uint32_t out;
  memcpy(&out, &r, 4);
  return out;
}

// v in both halves of a packed pair of T, as hi + lo: hi = v rounded to T, lo = the rest
// rounded (v to about 16 bits).
template <typename T>
__device__ __forceinline__ void pack2_split(float v, uint32_t* hi, uint32_t* lo) {
  const T h = Elem<T>::from_float(v);
  const T l = Elem<T>::from_float(v - Elem<T>::to_float(h));
  uint16_t hb, lb;
  memcpy(&hb, &h, 2);
  memcpy(&lb, &l, 2);
  *hi = hb | (static_cast<uint32_t>(hb) << 16);
  *lo = lb | (static_cast<uint32_t>(lb) << 16);
}

// a * (hi + lo) on two packed 16-bit values of type T, rounded once where a is an integer
// (q - zero): a * lo is far below a * hi's last bit, and the fma rounds the sum.
template <typename T>
__device__ __forceinline__ uint32_t mul2_split(uint32_t a, uint32_t hi, uint32_t lo) {
  using T2 = std::conditional_t<std::is_same<T, __half>::value, __half2, __nv_bfloat162>;
  T2 x, h, l;
  memcpy(&x, &a, 4);
  memcpy(&h, &hi, 4);
  memcpy(&l, &lo, 4);
  const T2 r = __hfma2(x, h, __hmul2(x, l));
  uint32_t out;
  memcpy(&out, &r, 4);
  return out;
}

// (a & b) | c in one instruction (ptxas otherwise splits it when both constants are immediates).
__device__ __forceinline__ uint32_t and_or(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// The zero operand of a row: (magic + zero) in both halves (int8 + bf16: 2^23 + zero as fp32).
template <typename T, int kBits>
__device__ __forceinline__ uint32_t zero_operand(int zero) {
  if (kBits == 8 && std::is_same<T, __nv_bfloat16>::value) return __float_as_uint(8388608.0f + zero);
  const uint32_t h = IntMagic<T>::kHalf + static_cast<uint32_t>(zero);
  return h | (h << 16);
}

// The 8 codes of one 32-k step of one row -> 4 registers of (q - zero) pairs in k order
// (kFold, int4 only: (magic + q) pairs, the zero left to the group's end).
template <typename T, int kBits, bool kFold = false>
__device__ __forceinline__ void dequant_step(const uint32_t (&words)[kBits / 4], uint32_t zop, uint32_t (&r)[4]) {
  static_assert(!kFold || kBits == 4, "only int4 folds its zero points");
  if constexpr (kBits == 4) {
    const uint32_t magic = IntMagic<T>::kHalf | (IntMagic<T>::kHalf << 16);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t v = and_or(words[0] >> (4 * i), 0x000F000Fu, magic);
      r[i] = kFold ? v : sub2<T>(v, zop);
    }
  } else if constexpr (std::is_same<T, __half>::value) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t v = __byte_perm(words[i >> 1], 0x64646464u, (i & 1) ? 0x4342 : 0x4140);
      r[i] = sub2<T>(v, zop);
    }
  } else {
    const float z = __uint_as_float(zop);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t w = words[i >> 1];
      const float lo = __uint_as_float(__byte_perm(w, 0x4B000000u, (i & 1) ? 0x7542 : 0x7540)) - z;
      const float hi = __uint_as_float(__byte_perm(w, 0x4B000000u, (i & 1) ? 0x7543 : 0x7541)) - z;
      const __nv_bfloat162 b = __floats2bfloat162_rn(lo, hi);
      memcpy(&r[i], &b, 4);
    }
  }
}

}  // namespace fusedmoe::kernels::wna16
