// Data movement around the expert GEMMs: the row gather in front of the tensor-core path
// (act-order weights: in front of every path, x's columns in each expert's order), its gated
// activation between the GEMMs, and the deterministic top-k combine both paths end
// with. All are bound by memory: 16-byte vectors, one per thread, grid sized by the host
// bound on rows; rows past the live count (known on the device only) exit at once. Also, once
// at load time, dense w13's gate and up rows interleaved (one 2-byte element per thread).
#include <algorithm>

#include "device_util.cuh"
#include "launch.h"

namespace fusedmoe::kernels {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t vectors) { return static_cast<unsigned>((vectors + kThreads - 1) / kThreads); }

// kGatherPerThread vectors per thread, kThreads apart: every position's sorted_pairs entry
// (with the live count) loaded at once, then every row's vector, then the stores. Positions
// below rows_bound are in bounds; those past the live count are stale and skipped. Against
// one vector per thread (v46, bf16, two rounds): Qwen2 M = 1024 / 2048 / 4096 0.995 / 0.990 /
// 0.990, Qwen3 0.998 / 0.997 / 0.993, Mixtral M = 1024 / 2048 1.003 / 1.002, M <= 256 within
// 0.2%; the kernel alone 25.9 -> 24.4 us at Qwen2 M = 1024 (58.7 MB written: bound by the
// stores more than by loads in flight). The same for the combine at top-1 / top-2 and the
// gated activation lost (Scout M = 64 / 256 1.010 / 1.006).
constexpr int kGatherPerThread = 4;

// Act-order: the 8 elements of x's row `x_row` at columns order[0..7] (16-byte aligned).
__device__ __forceinline__ uint4 gather_columns(const uint16_t* x_row, const int32_t* order) {
  const int4 lo = *reinterpret_cast<const int4*>(order);
  const int4 hi = *reinterpret_cast<const int4*>(order + 4);
  auto two = [&](int a, int b) { return static_cast<uint32_t>(x_row[a]) | static_cast<uint32_t>(x_row[b]) << 16; };
  return make_uint4(two(lo.x, lo.y), two(lo.z, lo.w), two(hi.x, hi.y), two(hi.z, hi.w));
}

template <typename T, bool kOrdered>
__global__ void __launch_bounds__(kThreads) gather_rows_kernel(GatherParams p) {
  const int64_t vecs_per_row = p.hidden / kVec;
  const int64_t total = p.rows_bound * vecs_per_row;
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * (kThreads * kGatherPerThread) + threadIdx.x;
  wait_for_predecessor();  // align wrote sorted_pairs and the live count
  const int64_t live = *p.live_rows;
  int64_t pos[kGatherPerThread], v[kGatherPerThread];
  int32_t pair[kGatherPerThread];
#pragma unroll
  for (int u = 0; u < kGatherPerThread; ++u) {
    const int64_t i = i0 + u * kThreads;
    pos[u] = i / vecs_per_row;
    v[u] = i % vecs_per_row;
    pair[u] = i < total ? p.sorted_pairs[pos[u]] : -1;
  }
  uint4 val[kGatherPerThread];
#pragma unroll
  for (int u = 0; u < kGatherPerThread; ++u) {
    if (pos[u] < live && pair[u] >= 0) {
      const int64_t token = pair[u] / p.topk;
      if (kOrdered) {  // a live position's pair has a local expert (align placed it)
        const int e = local_expert_of(p.topk_ids[pair[u]], p.expert_map, p.global_experts, p.num_experts);
        val[u] = gather_columns(static_cast<const uint16_t*>(p.x) + token * p.hidden,
                                p.x_order + static_cast<int64_t>(e < 0 ? 0 : e) * p.hidden + v[u] * kVec);
      } else {
        val[u] = load_act(reinterpret_cast<const uint4*>(static_cast<const T*>(p.x) + token * p.hidden) + v[u]);
      }
    }
  }
#pragma unroll
  for (int u = 0; u < kGatherPerThread; ++u) {
    if (pos[u] < live && pair[u] >= 0) {
      const int64_t row = p.by_pair ? pair[u] : pos[u];
      reinterpret_cast<uint4*>(static_cast<T*>(p.x_sorted) + row * p.hidden)[v[u]] = val[u];
      if (v[u] == 0 && p.row_of_pair != nullptr) p.row_of_pair[pair[u]] = static_cast<int32_t>(pos[u]);
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) gated_act_kernel(GatedActParams p) {
  const int64_t vecs_per_row = p.inter / kVec;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t pos = i / vecs_per_row, v = i % vecs_per_row;
  const bool live = pos < *p.live_rows;
  if (!live && p.amax_bits == nullptr) return;  // with an amax every lane reaches the warp's reduction
  unsigned int m = 0;
  if (live) {
    const T* h = static_cast<const T*>(p.h) + pos * 2 * p.inter;
    float g[kVec], u[kVec];
    Elem<T>::unpack(load_act(reinterpret_cast<const uint4*>(h) + v), g);
    Elem<T>::unpack(load_act(reinterpret_cast<const uint4*>(h + p.inter) + v), u);
    const float s = p.topk_weights != nullptr ? p.topk_weights[p.sorted_pairs[pos]] : 1.0f;
    T out[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      out[k] = Elem<T>::from_float(apply_act(p.act, g[k] * s, u[k] * s));
      m = max(m, abs_bits(Elem<T>::to_float(out[k])));  // of the stored (rounded) value
    }
    reinterpret_cast<uint4*>(static_cast<T*>(p.a) + pos * p.inter)[v] = *reinterpret_cast<const uint4*>(out);
  }
  if (p.amax_bits != nullptr) cta_atomic_max(p.amax_bits, m);  // uniform over the CTA
}

// One thread per element, grid-stride (a load-time copy of up to E * 2I * H elements).
__global__ void __launch_bounds__(kThreads) interleave_gate_up_kernel(InterleaveParams p) {
  const int64_t rows = 2 * p.inter;
  const int64_t total = p.experts * rows * p.hidden;
  const uint16_t* src = static_cast<const uint16_t*>(p.src);
  uint16_t* dst = static_cast<uint16_t*>(p.dst);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / p.hidden, k = i % p.hidden;
    const int64_t e = row / rows, n = row % rows;
    dst[(e * rows + interleaved_gate_up_row(n, p.inter)) * p.hidden + k] = src[i];
  }
}

// kTopk > 0: the slot count known at compile time; every slot's id, row and weight are loaded
// before the wait for the down GEMM (programmatic dependent launch), so that after it a token
// costs one round trip, for its rows. Those inputs are complete before this grid can start.
// Small-M path: only the ids and the map are read (row_of_pair and the weights are null),
// older than the layer's first kernel, a plain launch; the down GEMV's live CTAs wait for
// their predecessor before they let this grid launch. Grouped paths: the GEMM
// (pdl_gemm_kernel) lets this grid launch early only where release_successor, after its own
// wait for its predecessor has returned; row_of_pair (align, the gather or x's quantizer) and
// the weights are older still.
// kTopk = 0: any topk, everything after the wait.
template <typename T, int kTopk>
__global__ void __launch_bounds__(256) combine_kernel(CombineParams p) {
  const int64_t vecs_per_row = p.hidden / kVec;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool live = i < p.m * vecs_per_row;
  const int64_t t = live ? i / vecs_per_row : 0, v = i % vecs_per_row;
  const int topk = kTopk > 0 ? kTopk : p.topk;
  constexpr int kBatch = kTopk > 0 ? kTopk : 4;
  // The rows (-1: an expert on another GPU, no row) and weights of slots s0 .. s0 + kBatch - 1.
  int64_t row[kBatch];
  float scale[kBatch];
  // Every slot's id, row and weight loaded at once, then the map entries (local_experts_of):
  // the rows' loads no longer wait for each id's check in turn (v71).
  auto slots = [&](int s0) {
    int32_t id[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int64_t pair = t * topk + s0 + b;
      const bool in = live && s0 + b < topk;
      id[b] = in ? p.topk_ids[pair] : -1;
      row[b] = in && p.row_of_pair != nullptr ? p.row_of_pair[pair] : pair;
      scale[b] = in && p.topk_weights != nullptr ? p.topk_weights[pair] : 1.0f;
    }
    int e[kBatch];
    local_experts_of(id, p.expert_map, p.global_experts, p.num_experts, e);
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      row[b] = e[b] >= 0 ? row[b] : -1;
      scale[b] = e[b] >= 0 ? scale[b] : 1.0f;
    }
  };
  if (kTopk > 0) slots(0);
  wait_for_predecessor();  // the down GEMM wrote y
  if (!live) return;
  float sum[kVec] = {};
  for (int s0 = 0; s0 < topk; s0 += kBatch) {
    if (kTopk == 0) slots(s0);
    uint4 raw[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      raw[b] = row[b] >= 0 ? load_act(reinterpret_cast<const uint4*>(static_cast<const T*>(p.y) + row[b] * p.hidden) + v)
                           : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {  // slot order: deterministic
      float f[kVec];
      Elem<T>::unpack(raw[b], f);
#pragma unroll
      for (int k = 0; k < kVec; ++k) sum[k] += f[k] * scale[b];
    }
  }
  T out[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) out[k] = Elem<T>::from_float(sum[k]);
  reinterpret_cast<uint4*>(static_cast<T*>(p.out) + t * p.hidden)[v] = *reinterpret_cast<const uint4*>(out);
}

template <typename T>
cudaError_t launch_combine_typed(const CombineParams& p, unsigned blocks, cudaStream_t stream) {
  switch (p.topk) {
    case 1: return launch_with_pdl(combine_kernel<T, 1>, dim3(blocks), dim3(256), stream, p);
    case 2: return launch_with_pdl(combine_kernel<T, 2>, dim3(blocks), dim3(256), stream, p);
    case 4: return launch_with_pdl(combine_kernel<T, 4>, dim3(blocks), dim3(256), stream, p);
    case 6: return launch_with_pdl(combine_kernel<T, 6>, dim3(blocks), dim3(256), stream, p);
    case 8: return launch_with_pdl(combine_kernel<T, 8>, dim3(blocks), dim3(256), stream, p);
    default: return launch_with_pdl(combine_kernel<T, 0>, dim3(blocks), dim3(256), stream, p);
  }
}

}  // namespace

cudaError_t launch_gather_rows(const GatherParams& p, cudaStream_t stream) {
  if (p.hidden % kVec != 0 || p.topk <= 0 || (p.x_order != nullptr && (p.topk_ids == nullptr || p.num_experts <= 0))) {
    return cudaErrorInvalidValue;
  }
  const int64_t total = p.rows_bound * (p.hidden / kVec);
  if (total == 0) return cudaSuccess;
  const dim3 grid(blocks_for((total + kGatherPerThread - 1) / kGatherPerThread));
  if (p.x_order != nullptr) {
    return launch_with_pdl(gather_rows_kernel<__nv_bfloat16, true>, grid, dim3(kThreads), stream, p);  // 2-byte elements
  }
  return p.elem == ElemType::kBF16 ? launch_with_pdl(gather_rows_kernel<__nv_bfloat16, false>, grid, dim3(kThreads), stream, p)
                                   : launch_with_pdl(gather_rows_kernel<__half, false>, grid, dim3(kThreads), stream, p);
}

cudaError_t launch_gated_act(const GatedActParams& p, cudaStream_t stream) {
  if (p.inter % kVec != 0) return cudaErrorInvalidValue;
  const int64_t total = p.rows_bound * (p.inter / kVec);
  if (total == 0) return cudaSuccess;
  if (p.elem == ElemType::kBF16) {
    gated_act_kernel<__nv_bfloat16><<<blocks_for(total), kThreads, 0, stream>>>(p);
  } else {
    gated_act_kernel<__half><<<blocks_for(total), kThreads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

cudaError_t launch_interleave_gate_up(const InterleaveParams& p, cudaStream_t stream) {
  if (p.inter % 8 != 0 || p.experts < 0 || p.inter < 0 || p.hidden < 0 || p.src == p.dst) return cudaErrorInvalidValue;
  const int64_t total = p.experts * 2 * p.inter * p.hidden;
  if (total == 0) return cudaSuccess;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 20);
  interleave_gate_up_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_combine(const CombineParams& p, cudaStream_t stream) {
  if (p.hidden % kVec != 0 || p.num_experts <= 0) return cudaErrorInvalidValue;
  const int64_t total = p.m * (p.hidden / kVec);
  if (total == 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>((total + 255) / 256);
  return p.elem == ElemType::kBF16 ? launch_combine_typed<__nv_bfloat16>(p, blocks, stream)
                                   : launch_combine_typed<__half>(p, blocks, stream);
}

}  // namespace fusedmoe::kernels
