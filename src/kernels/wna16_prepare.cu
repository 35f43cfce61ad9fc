// wna16_repack: GPTQ / AWQ / moe_wna16 checkpoint tensors -> the prepared integer layout
// (launch.h, QuantWeightsView; docs/FORMATS.md), once at load time.
// wna16_dequant: prepared weights of a range of experts -> dense activation-dtype weights, for
// the tensor-core path at large batches (the grouped GEMM then reads them like bf16 weights).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "device_util.cuh"
#include "launch.h"

namespace fusedmoe::kernels {

namespace {

constexpr int kThreadsPerCta = 256;

// Nibble i of a prepared int4 word holds k offset kNibbleK[i] of its 8-k step.
__constant__ int kNibbleK[8] = {0, 2, 4, 6, 1, 3, 5, 7};
// AWQ: column c of a group of 8 sits in nibble kAwqNibble[c].
__constant__ int kAwqNibble[8] = {0, 4, 1, 5, 2, 6, 3, 7};

__device__ __forceinline__ uint32_t field(uint32_t word, int index, int bits) {
  return (word >> (index * bits)) & ((1u << bits) - 1u);
}

// Code of (e, n, k) in the checkpoint (k < K).
__device__ uint32_t source_code(const QuantRepackParams& p, int64_t e, int64_t n, int64_t k) {
  const int64_t N = p.n, K = p.k;
  switch (p.source) {
    case QuantSource::kGPTQ: {
      const int pack = 32 / p.bits;
      const auto* qw = static_cast<const uint32_t*>(p.qweight);
      return field(qw[(e * (K / pack) + k / pack) * N + n], static_cast<int>(k % pack), p.bits);
    }
    case QuantSource::kAWQ: {
      const auto* qw = static_cast<const uint32_t*>(p.qweight);
      return field(qw[(e * K + k) * (N / 8) + n / 8], kAwqNibble[n % 8], 4);
    }
    case QuantSource::kMoeWNA16: break;
  }
  const int pack = 8 / p.bits;
  const auto* qw = static_cast<const uint8_t*>(p.qweight);
  return field(qw[(e * N + n) * (K / pack) + k / pack], static_cast<int>(k % pack), p.bits);
}

// True zero point of (e, g, n) in the checkpoint (qzeros set).
__device__ uint32_t source_zero(const QuantRepackParams& p, int64_t e, int64_t g, int64_t n) {
  const int64_t N = p.n, G = p.groups;
  switch (p.source) {
    case QuantSource::kGPTQ: {
      const int pack = 32 / p.bits;
      const auto* qz = static_cast<const uint32_t*>(p.qzeros);
      return field(qz[(e * G + g) * (N / pack) + n / pack], static_cast<int>(n % pack), p.bits) +
             (p.gptq_zeros_minus_one ? 1u : 0u);
    }
    case QuantSource::kAWQ: {
      const auto* qz = static_cast<const uint32_t*>(p.qzeros);
      return field(qz[(e * G + g) * (N / 8) + n / 8], kAwqNibble[n % 8], 4);
    }
    case QuantSource::kMoeWNA16: break;
  }
  const int pack = 8 / p.bits;
  const auto* qz = static_cast<const uint8_t*>(p.qzeros);
  return field(qz[(e * (N / pack) + n / pack) * G + g], static_cast<int>(n % pack), p.bits);
}

// The checkpoint's row of prepared row n and its column of prepared column k (act-order:
// k_order, row_order; QuantRepackParams).
__device__ __forceinline__ int64_t source_row(const QuantRepackParams& p, int64_t e, int64_t n) {
  if (p.row_order == nullptr) return n;
  const int64_t half = p.n / 2;
  const bool up = n >= half;
  return (up ? half : 0) + p.row_order[e * half + (up ? n - half : n)];
}
__device__ __forceinline__ int64_t source_col(const QuantRepackParams& p, int64_t e, int64_t k) {
  return p.k_order == nullptr ? k : p.k_order[e * p.k + k];
}

// One thread per prepared code word.
__global__ void repack_codes_kernel(QuantRepackParams p) {
  const int64_t row_words = quant_row_words(p.k, p.bits);
  const int64_t total = p.experts * p.n * row_words;
  const int words_per_block = 4 * p.bits;  // 128 codes
  const int words_per_quarter = p.bits;    // 4 steps of 8 codes
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / row_words;  // e * N + n
    const int64_t e = row / p.n, n = source_row(p, e, row % p.n);
    const int64_t wi = i % row_words;
    const int64_t j = wi / words_per_block;
    const int in_block = static_cast<int>(wi % words_per_block);
    const int q = in_block / words_per_quarter;
    const int r = in_block % words_per_quarter;
    uint32_t word = 0;
    if (p.bits == 4) {  // word r = step u
      const int64_t k0 = j * 128 + 32 * r + 8 * q;
      for (int i8 = 0; i8 < 8; ++i8) {
        const int64_t k = k0 + kNibbleK[i8];
        if (k < p.k) word |= source_code(p, e, n, source_col(p, e, k)) << (4 * i8);
      }
    } else {  // words 2u, 2u + 1 of step u: bytes in k order
      const int64_t k0 = j * 128 + 32 * (r / 2) + 8 * q + 4 * (r % 2);
      for (int b = 0; b < 4; ++b) {
        const int64_t k = k0 + b;
        if (k < p.k) word |= source_code(p, e, n, source_col(p, e, k)) << (8 * b);
      }
    }
    p.codes[i] = word;
  }
}

// One thread per (e, g, n): scales (same type) and zeros in [E, G, N].
__global__ void repack_groups_kernel(QuantRepackParams p) {
  const int64_t total = p.experts * p.groups * p.n;
  const int scale_bytes = p.scale_type == ScaleType::kFP32 ? 4 : 2;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = i / (p.groups * p.n);
    const int64_t g = (i / p.n) % p.groups;
    const int64_t n = source_row(p, e, i % p.n);
    // moe_wna16 keeps scales as [E, N, G]; GPTQ and AWQ as [E, G, N].
    const int64_t src = p.source == QuantSource::kMoeWNA16 ? (e * p.n + n) * p.groups + g : (e * p.groups + g) * p.n + n;
    if (scale_bytes == 4) {
      static_cast<float*>(p.scales_out)[i] = static_cast<const float*>(p.scales)[src];
    } else {
      static_cast<uint16_t*>(p.scales_out)[i] = static_cast<const uint16_t*>(p.scales)[src];
    }
    if (p.qzeros != nullptr) {
      const uint32_t z = source_zero(p, e, g, n);
      if (p.bits == 4) {
        static_cast<uint8_t*>(p.zeros_out)[i] = static_cast<uint8_t>(z);
      } else {
        static_cast<uint16_t*>(p.zeros_out)[i] = static_cast<uint16_t>(z);
      }
    }
  }
}

unsigned grid_for(int64_t total) {
  const int64_t ctas = (total + kThreadsPerCta - 1) / kThreadsPerCta;
  return static_cast<unsigned>(ctas < 65536 * 8 ? (ctas > 0 ? ctas : 1) : 65536 * 8);
}

__device__ __forceinline__ float scale_at(const QuantWeightsView& w, int64_t index) {
  switch (w.scale_type) {
    case ScaleType::kFP16: return __half2float(static_cast<const __half*>(w.scales)[index]);
    case ScaleType::kBF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(w.scales)[index]);
    case ScaleType::kFP32: break;
  }
  return static_cast<const float*>(w.scales)[index];
}

// A thread per (weight row, 128-k block, quarter): 32 codes -> 4 runs of 8 outputs. A CTA
// covers rows_per_cta whole rows (short rows, e.g. DeepSeek-V3 TP8's w2 with K = 256, share a
// CTA); rows of experts without pairs are skipped. Index math is 32-bit below a row's base
// (launch_wna16_dequant checks the bounds).
constexpr int kDequantThreads = 128;

inline int dequant_rows_per_cta(int64_t k) {
  const int units = static_cast<int>((k + 127) / 128) * 4;
  return units >= kDequantThreads ? 1 : kDequantThreads / units;
}

// 2^23 as a float: the float whose bits are 0x4B000000 | c is 2^23 + c for c < 2^23, so a code
// becomes a float with one OR, and (2^23 + c) - (2^23 + zero) = c - zero exactly.
constexpr uint32_t kMagicBits = 0x4B000000u;
constexpr float kMagic = 8388608.0f;

// Code i (k offset i of the 8-k run) of a run's words: int4 nibble kNibbleK^-1[i] of one word
// (even k in the low half-word, odd in the high), int8 byte i & 3 of word i >> 2.
template <int kBits>
__device__ __forceinline__ uint32_t run_code(const uint32_t* words, int i) {
  return kBits == 4 ? field(words[0], (i & 1) ? 4 + (i >> 1) : (i >> 1), 4) : field(words[i >> 2], i & 3, 8);
}

template <typename T>
__device__ __forceinline__ uint32_t pack2(float a, float b) {
  uint32_t r;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
    memcpy(&r, &v, sizeof r);
  } else {
    const __half2 v = __floats2half2_rn(a, b);
    memcpy(&r, &v, sizeof r);
  }
  return r;
}

// Scale and zero of (group g) at scale_base + g * N; zero_bias = 2^23 + zero.
__device__ __forceinline__ void group_params(const QuantWeightsView& w, int64_t base, int64_t g_offset,
                                             int32_t midpoint, int bits, float* scale, float* zero_bias) {
  const int64_t at = base + g_offset;
  int32_t zero = midpoint;
  if (w.zeros != nullptr) {
    zero = bits == 4 ? static_cast<int32_t>(static_cast<const uint8_t*>(w.zeros)[at])
                     : static_cast<int32_t>(static_cast<const uint16_t*>(w.zeros)[at]);
  }
  *scale = scale_at(w, at);
  *zero_bias = kMagic + static_cast<float>(zero);
}

template <typename T, int kBits>
__global__ void __launch_bounds__(kDequantThreads) dequant_kernel(QuantDequantParams p, int rows_per_cta) {
  const QuantWeightsView& w = p.w;
  const int N = static_cast<int>(w.n), K = static_cast<int>(w.k);
  const int units = (K + 127) / 128 * 4;
  const int total_rows = p.experts * N;
  const int64_t row_words = quant_row_words(K, kBits);
  const int32_t midpoint = 1 << (kBits - 1);
  const int gs = static_cast<int>(w.group_size < K ? w.group_size : K);  // a multiple of 8
  for (int t = threadIdx.x; t < rows_per_cta * units; t += kDequantThreads) {
    const int r = rows_per_cta == 1 ? 0 : t / units;
    const int unit = t - r * units;
    const int row = static_cast<int>(blockIdx.x) * rows_per_cta + r;  // (expert in range) * N + n
    if (row >= total_rows) break;
    const int le = row / N, n = row - le * N;
    const int e = p.e0 + le;
    if (p.expert_counts[e] == 0) continue;
    const int j = unit >> 2, q = unit & 3;
    const uint4* src = reinterpret_cast<const uint4*>(w.codes + (static_cast<int64_t>(e) * N + n) * row_words +
                                                      j * 4 * kBits + q * kBits);
    uint32_t words[kBits];
#pragma unroll
    for (int v = 0; v < kBits / 4; ++v) {
      const uint4 c = load_weight(src + v);
      words[4 * v] = c.x;
      words[4 * v + 1] = c.y;
      words[4 * v + 2] = c.z;
      words[4 * v + 3] = c.w;
    }
    const int out_n = p.interleave_gate_up ? static_cast<int>(interleaved_gate_up_row(n, N / 2)) : n;
    T* out = static_cast<T*>(p.out) + (static_cast<int64_t>(le) * N + out_n) * K;
    const int64_t param_base = static_cast<int64_t>(e) * w.groups * N + n;  // (e, group 0, n)
    // The group of run u (k0 = 128 j + 32 u + 8 q): divided once, then stepped by 32.
    int k0 = j * 128 + 8 * q;
    int g = k0 / gs, rem = k0 - g * gs;
    float scale = 0.0f, zero_bias = 0.0f;
    const int last_group = static_cast<int>(w.groups) - 1;  // g stays in range even for a bad group size
    group_params(w, param_base, static_cast<int64_t>(min(g, last_group)) * N, midpoint, kBits, &scale, &zero_bias);
#pragma unroll
    for (int u = 0; u < 4; ++u, k0 += 32) {
      if (k0 >= K) break;
      if (u > 0) {
        const int g_was = g;
        for (rem += 32; rem >= gs; rem -= gs) ++g;
        if (g != g_was) {
          group_params(w, param_base, static_cast<int64_t>(min(g, last_group)) * N, midpoint, kBits, &scale, &zero_bias);
        }
      }
      const uint32_t* run = kBits == 4 ? &words[u] : &words[2 * u];
      float vals[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) vals[i] = (__uint_as_float(kMagicBits | run_code<kBits>(run, i)) - zero_bias) * scale;
      const uint4 packed = make_uint4(pack2<T>(vals[0], vals[1]), pack2<T>(vals[2], vals[3]),
                                      pack2<T>(vals[4], vals[5]), pack2<T>(vals[6], vals[7]));
      *reinterpret_cast<uint4*>(out + k0) = packed;
    }
  }
}

template <typename T>
cudaError_t launch_dequant_typed(const QuantDequantParams& p, cudaStream_t stream) {
  const int rows_per_cta = dequant_rows_per_cta(p.w.k);
  const int64_t ctas = (static_cast<int64_t>(p.experts) * p.w.n + rows_per_cta - 1) / rows_per_cta;
  if (ctas > 0x7fffffff) return cudaErrorInvalidValue;
  if (p.w.bits == 4) {
    dequant_kernel<T, 4><<<static_cast<unsigned>(ctas), kDequantThreads, 0, stream>>>(p, rows_per_cta);
  } else {
    dequant_kernel<T, 8><<<static_cast<unsigned>(ctas), kDequantThreads, 0, stream>>>(p, rows_per_cta);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_wna16_repack(const QuantRepackParams& p, cudaStream_t stream) {
  if ((p.bits != 4 && p.bits != 8) || p.experts <= 0 || p.n <= 0 || p.k <= 0 || p.groups <= 0 ||
      (p.row_order != nullptr && p.n % 2 != 0)) {
    return cudaErrorInvalidValue;
  }
  const int64_t words = p.experts * p.n * quant_row_words(p.k, p.bits);
  repack_codes_kernel<<<grid_for(words), kThreadsPerCta, 0, stream>>>(p);
  repack_groups_kernel<<<grid_for(p.experts * p.groups * p.n), kThreadsPerCta, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_wna16_dequant(const QuantDequantParams& p, cudaStream_t stream) {
  // 32-bit rows (experts * N, with the last CTA's overshoot of fewer than kDequantThreads rows)
  // and k; at least one group, of a size that is a multiple of 8 (one scale per run).
  if (p.w.k % kVec != 0 || p.w.k >= (int64_t{1} << 30) || p.experts <= 0 || (p.w.bits != 4 && p.w.bits != 8) ||
      p.w.n <= 0 || p.experts * p.w.n >= (int64_t{1} << 31) - kDequantThreads || p.w.groups < 1 ||
      p.w.group_size <= 0 || p.w.group_size % kVec != 0 ||
      (p.interleave_gate_up && p.w.n % 16 != 0)) {
    return cudaErrorInvalidValue;
  }
  return p.elem == ElemType::kBF16 ? launch_dequant_typed<__nv_bfloat16>(p, stream)
                                   : launch_dequant_typed<__half>(p, stream);
}

}  // namespace fusedmoe::kernels
