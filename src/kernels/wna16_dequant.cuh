// Pieces of the integer kernels' dequantization in registers (wna16_gemv.cu at decode,
// wna16_grouped_gemm.cu at large batch): codes become (magic + q) in both halves of a packed
// pair of the activation type by a few bit operations, then exact integers q - zero by one
// packed subtraction, and, where the weights are scaled before the MMA, (q - zero) * scale
// rounded once (mul2_split).
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

}  // namespace fusedmoe::kernels::wna16
