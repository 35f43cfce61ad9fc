// small_m_splitk: the decode path of both expert GEMMs, and the combine.
//
// At decode each hit expert has a few tokens, and the layer is bound by reading the hit
// experts' weights once. This kernel streams weight rows with 16-byte loads and multiplies
// them with up to kTokens = 8 of the expert's tokens held in registers (FFMA, fp32
// accumulation); an expert with more tokens is handled in chunks of 8, re-reading its rows.
//
// Grid: x = row blocks of the output, y = slots of the active-expert list (the host only
// knows the bound min(E, pairs); CTAs past the live count exit at once, so a captured graph
// stays valid for any routing).
// CTA: 8 warps = kRowGroups x kSplitK. A warp owns kRowsPerWarp = 4 weight rows (gate-up
// mode: gate rows j, j+1 and up rows I+j, I+1+j) and one of kSplitK slices of K. Split-K
// is inside the CTA: partial sums meet in shared memory and are added in a fixed order
// (bitwise deterministic, any dtype), which gives few-row problems (Llama-4 Scout at M = 1:
// one expert, I = 1024) enough CTAs without a global workspace or atomics.
// Shared memory: kRowGroups x kSplitK x 32 floats of partial sums (4 KiB).
//
// Epilogue, by the lane that owns (row, token) of the reduced sums:
//   gate-up: a[pos, j] = act(g * s) * (u * s), s = routed weight if applied on input, else 1
//   down:    y[pair, n] = acc * routed weight (1 if it was applied on input)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "launch.h"

namespace fusedmoe::kernels {

namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kRowsPerWarp = 4;
constexpr int kTokens = 8;
constexpr int kVec = 8;  // 16-bit elements per 16-byte load
static_assert(kRowsPerWarp * kTokens == 32, "one lane per (row, token) partial sum in the reduction");

template <typename T>
struct Elem;
template <>
struct Elem<__nv_bfloat16> {
  __device__ static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
  __device__ static void unpack(const uint4& raw, float (&f)[kVec]) {
    const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      f[2 * i] = __uint_as_float(w[i] << 16);
      f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
  }
};
template <>
struct Elem<__half> {
  __device__ static float to_float(__half v) { return __half2float(v); }
  __device__ static __half from_float(float v) { return __float2half_rn(v); }
  __device__ static void unpack(const uint4& raw, float (&f)[kVec]) {
    const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __half2 h;
      memcpy(&h, &w[i], sizeof h);
      const float2 v = __half22float2(h);
      f[2 * i] = v.x;
      f[2 * i + 1] = v.y;
    }
  }
};

__device__ __forceinline__ float apply_act(GatedAct act, float g, float u) {
  switch (act) {
    case GatedAct::kSilu: return g / (1.0f + __expf(-g)) * u;
    case GatedAct::kGelu: return 0.5f * g * (1.0f + erff(g * 0.70710678118654752f)) * u;
    case GatedAct::kGeluTanh: {
      const float c = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * g * (1.0f + tanhf(c * (g + 0.044715f * g * g * g))) * u;
    }
  }
  return 0.0f;
}

// Streamed once: keep weights out of L1 and low in L2's priority.
__device__ __forceinline__ uint4 load_weight(const uint4* p) { return __ldcs(p); }
__device__ __forceinline__ uint4 load_act(const uint4* p) { return __ldg(p); }

template <typename T, int kSplitK, bool kGateUp>
__global__ void __launch_bounds__(kThreads) grouped_gemv_kernel(GroupedGemvParams p) {
  constexpr int kRowGroups = kWarps / kSplitK;
  // Output units per warp: gate-up: 2 columns j (4 rows: 2 gate, 2 up); down: 4 rows.
  constexpr int kUnits = kGateUp ? 2 : 4;
  __shared__ float s_partial[kWarps][32];  // (warp, lane = row * kTokens + token)

  if (static_cast<int>(blockIdx.y) >= p.active_experts[p.num_experts]) return;
  const int e = p.active_experts[blockIdx.y];
  const int64_t begin = p.expert_offsets[e];
  const int count = p.expert_counts[e];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int group = warp / kSplitK, split = warp % kSplitK;
  const int64_t unit0 = (static_cast<int64_t>(blockIdx.x) * kRowGroups + group) * kUnits;
  const int64_t K = p.k;
  const int64_t rows_per_expert = kGateUp ? 2 * p.n_out : p.n_out;
  const T* w_expert = static_cast<const T*>(p.w) + static_cast<int64_t>(e) * rows_per_expert * K;
  const uint4* w_row[kRowsPerWarp];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    // gate-up rows: j0, j0 + 1, I + j0, I + j0 + 1; past the end: clamp (results unused)
    int64_t unit = unit0 + (kGateUp ? (r & 1) : r);
    unit = unit < p.n_out ? unit : p.n_out - 1;
    const int64_t row = kGateUp && r >= 2 ? p.n_out + unit : unit;
    w_row[r] = reinterpret_cast<const uint4*>(w_expert + row * K);
  }
  // This warp's slice of the K / 8 vectors.
  const int64_t nvec = K / kVec;
  const int64_t per_split = (nvec + kSplitK - 1) / kSplitK;
  const int64_t v_begin = split * per_split;
  const int64_t v_end = v_begin + per_split < nvec ? v_begin + per_split : nvec;

  for (int c0 = 0; c0 < count; c0 += kTokens) {
    const int nt = count - c0 < kTokens ? count - c0 : kTokens;
    const uint4* x_row[kTokens];
#pragma unroll
    for (int t = 0; t < kTokens; ++t) {
      const int64_t pos = begin + c0 + (t < nt ? t : 0);
      const int64_t xr = kGateUp ? p.sorted_pairs[pos] / p.topk : pos;
      x_row[t] = reinterpret_cast<const uint4*>(static_cast<const T*>(p.x) + xr * K);
    }
    float acc[kRowsPerWarp][kTokens];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
      for (int t = 0; t < kTokens; ++t) acc[r][t] = 0.0f;

#pragma unroll 2
    for (int64_t v = v_begin + lane; v < v_end; v += 32) {
      uint4 raw[kRowsPerWarp];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) raw[r] = load_weight(w_row[r] + v);
      float wf[kRowsPerWarp][kVec];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) Elem<T>::unpack(raw[r], wf[r]);
#pragma unroll
      for (int t = 0; t < kTokens; ++t) {
        if (t < nt) {
          float xf[kVec];
          Elem<T>::unpack(load_act(x_row[t] + v), xf);
#pragma unroll
          for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
            for (int i = 0; i < kVec; ++i) acc[r][t] = fmaf(wf[r][i], xf[i], acc[r][t]);
        }
      }
    }
    // Butterfly: every lane ends with all 32 sums; lane l keeps sum (l / kTokens, l % kTokens).
    float mine = 0.0f;
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
#pragma unroll
      for (int t = 0; t < kTokens; ++t) {
        float v = acc[r][t];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
        if (lane == r * kTokens + t) mine = v;
      }
    }
    s_partial[warp][lane] = mine;
    __syncthreads();
    if (split == 0) {
      const int r = lane / kTokens, t = lane % kTokens;
      // Split-K partials added in a fixed order: bitwise reproducible.
      float sum = 0.0f;
#pragma unroll
      for (int s = 0; s < kSplitK; ++s) sum += s_partial[group * kSplitK + s][lane];
      const int64_t pos = begin + c0 + t;
      if (kGateUp) {
        const int64_t j = unit0 + r;
        if (r < 2 && t < nt && j < p.n_out) {
          float up = 0.0f;
#pragma unroll
          for (int s = 0; s < kSplitK; ++s) up += s_partial[group * kSplitK + s][lane + 2 * kTokens];
          const int32_t pair = p.sorted_pairs[pos];
          const float scale = p.weight_on_input ? p.topk_weights[pair] : 1.0f;
          static_cast<T*>(p.out)[pos * p.n_out + j] = Elem<T>::from_float(apply_act(p.act, sum * scale, up * scale));
        }
      } else {
        const int64_t n = unit0 + r;
        if (t < nt && n < p.n_out) {
          const int32_t pair = p.sorted_pairs[pos];
          const float scale = p.weight_on_input ? 1.0f : p.topk_weights[pair];
          static_cast<T*>(p.out)[static_cast<int64_t>(pair) * p.n_out + n] = Elem<T>::from_float(sum * scale);
        }
      }
    }
    __syncthreads();  // s_partial is rewritten by the next chunk
  }
}

__device__ __forceinline__ int local_expert_of(const CombineParams& p, int32_t id) {
  if (id < 0 || id >= p.global_experts) return -1;
  return p.expert_map ? p.expert_map[id] : id;
}

template <typename T>
__global__ void __launch_bounds__(256) combine_kernel(CombineParams p) {
  const int64_t vecs_per_row = p.hidden / kVec;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= p.m * vecs_per_row) return;
  const int64_t t = i / vecs_per_row, v = i % vecs_per_row;
  float sum[kVec] = {};
  for (int s = 0; s < p.topk; ++s) {
    const int64_t pair = t * p.topk + s;
    if (local_expert_of(p, p.topk_ids[pair]) < 0) continue;  // expert on another GPU
    float f[kVec];
    Elem<T>::unpack(load_act(reinterpret_cast<const uint4*>(static_cast<const T*>(p.y) + pair * p.hidden) + v), f);
#pragma unroll
    for (int k = 0; k < kVec; ++k) sum[k] += f[k];
  }
  T out[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) out[k] = Elem<T>::from_float(sum[k]);
  reinterpret_cast<uint4*>(static_cast<T*>(p.out) + t * p.hidden)[v] = *reinterpret_cast<const uint4*>(out);
}

template <typename T, bool kGateUp>
cudaError_t launch_gemv_typed(const GroupedGemvParams& p, cudaStream_t stream) {
  const int64_t units = kGateUp ? (p.n_out + 1) / 2 : (p.n_out + 3) / 4;
  const int row_groups = kWarps / p.split_k;
  const dim3 grid(static_cast<unsigned>((units + row_groups - 1) / row_groups), static_cast<unsigned>(p.max_active));
  switch (p.split_k) {
    case 1: grouped_gemv_kernel<T, 1, kGateUp><<<grid, kThreads, 0, stream>>>(p); break;
    case 2: grouped_gemv_kernel<T, 2, kGateUp><<<grid, kThreads, 0, stream>>>(p); break;
    case 4: grouped_gemv_kernel<T, 4, kGateUp><<<grid, kThreads, 0, stream>>>(p); break;
    case 8: grouped_gemv_kernel<T, 8, kGateUp><<<grid, kThreads, 0, stream>>>(p); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_grouped_gemv(const GroupedGemvParams& p, cudaStream_t stream) {
  if (p.k % kVec != 0 || p.n_out <= 0 || p.max_active <= 0 || p.max_active > 65535) return cudaErrorInvalidValue;
  if (p.elem == ElemType::kBF16) {
    return p.gate_up ? launch_gemv_typed<__nv_bfloat16, true>(p, stream) : launch_gemv_typed<__nv_bfloat16, false>(p, stream);
  }
  return p.gate_up ? launch_gemv_typed<__half, true>(p, stream) : launch_gemv_typed<__half, false>(p, stream);
}

cudaError_t launch_combine(const CombineParams& p, cudaStream_t stream) {
  if (p.hidden % kVec != 0) return cudaErrorInvalidValue;
  const int64_t total = p.m * (p.hidden / kVec);
  if (total == 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>((total + 255) / 256);
  if (p.elem == ElemType::kBF16) {
    combine_kernel<__nv_bfloat16><<<blocks, 256, 0, stream>>>(p);
  } else {
    combine_kernel<__half><<<blocks, 256, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

}  // namespace fusedmoe::kernels
