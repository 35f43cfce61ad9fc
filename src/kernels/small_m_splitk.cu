// small_m_splitk: both expert GEMMs at small and moderate batch.
//
// At decode each hit expert has a few tokens, and the layer is bound by reading the hit
// experts' weights once. This kernel streams weight rows with 16-byte loads straight into
// tensor-core MMAs (mma.sync m16n8k16, fp32 accumulate) with swapped operands: 16 weight
// rows fill the MMA's M side and 8 of the expert's tokens its N side, so a token costs one
// 16-byte activation load per 16 weight rows and no FFMA work. An expert's rows are read once
// per pass of 8 (n_tiles = 1) or 32 (n_tiles = 4) of its tokens.
//
// Grid: x = row-tile blocks of the output, y = slots of the active-expert list (the host only
// knows the bound min(E, pairs); CTAs past the live count exit at once, so a captured graph
// stays valid for any routing).
// CTA: 8 warps = kRowTiles x kSplitK. A warp owns one 16-row tile (gate-up: gate rows
// j0..j0+7 and up rows I+j0..I+j0+7; down: rows n0..n0+15) and one of kSplitK slices of K.
// Split-K is inside the CTA: partial fragments meet in shared memory and are added in a
// fixed order (bitwise deterministic, any dtype), which gives few-row problems (Llama-4
// Scout at M = 1: one expert, I = 1024) enough warps without a global workspace or atomics.
// Shared memory: kWarps x (4 n_tiles) x 32 floats of partial sums when split (up to 16 KiB).
//
// Epilogue, by the lane that holds (row, token) of the accumulator:
//   gate-up: a[pos, j] = act(g * s) * (u * s), s = routed weight if applied on input, else 1
//   down:    y[pair, n] = acc * routed weight (1 if it was applied on input)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemv_common.cuh"

namespace fusedmoe::kernels {

namespace {

using gemv::kThreads;
using gemv::kWarps;
using gemv::mma_16816;

// Lane (g, q) loads 16 bytes = 8 consecutive k of its two weight rows per 32-k step, plain
// coalesced 16-byte loads fed straight to the MMAs (mapping in gemv_common.cuh).
template <typename T, int kSplitK, int kNTiles, bool kGateUp>
__device__ __forceinline__ void grouped_gemv(const GroupedGemvParams& p, bool interleaved) {
  constexpr int kTokensPerPass = 8 * kNTiles;
  // 32-k steps whose loads are in flight together (x2 with the software pipeline); fewer with
  // 4 n-tiles, whose accumulators need the registers.
  constexpr int kUnroll = kNTiles == 1 ? 4 : 2;
  __shared__ gemv::PartialSums<kSplitK, kNTiles> s_partial;

  gemv::WarpPlace<kSplitK, kGateUp> w;
  if (!w.start(p, interleaved)) return;  // waits for the predecessor where it must (down: later)
  const int64_t K = p.k;
  const int64_t rows_per_expert = kGateUp ? 2 * p.n_out : p.n_out;
  const T* w_expert = static_cast<const T*>(p.w) + static_cast<int64_t>(w.e) * rows_per_expert * K;
  const T* w_lo = w_expert + w.row_lo * K;
  const T* w_hi = w_expert + w.row_hi * K;
  // This warp's K slice, in 32-wide steps; a step's k past K loads zeros.
  int64_t s_begin = 0, s_end = 0;
  w.slice((K + 31) / 32, &s_begin, &s_end);

  // Loads of one block of kUnroll 32-k steps of this lane's two weight rows (zeros past the
  // slice or past K).
  auto load_block = [&](int64_t s0, uint4 (&lo)[kUnroll], uint4 (&hi)[kUnroll]) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t k = (s0 + u) * 32 + 8 * w.q;
      const bool ok = s0 + u < s_end && k < K;
      lo[u] = ok ? load_weight(reinterpret_cast<const uint4*>(w_lo + k)) : make_uint4(0, 0, 0, 0);
      hi[u] = ok ? load_weight(reinterpret_cast<const uint4*>(w_hi + k)) : make_uint4(0, 0, 0, 0);
    }
  };

  for (int c0 = 0; c0 < w.count; c0 += kTokensPerPass) {
    // The first weight block goes out before the token rows are looked up (a chain of
    // dependent loads): the two latencies overlap.
    uint4 cur_lo[kUnroll], cur_hi[kUnroll];
    load_block(s_begin, cur_lo, cur_hi);
    w.wait_for_activations(c0);
    const T* x_row[kNTiles];
    bool x_valid[kNTiles];
    w.template token_rows<T, kNTiles>(p, c0, x_row, x_valid);
    float acc[kNTiles][4];
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[nt][i] = 0.0f;

    // Software pipeline: block s0 + kUnroll is in flight while block s0 feeds the MMAs.
    for (int64_t s0 = s_begin; s0 < s_end; s0 += kUnroll) {
      uint4 nxt_lo[kUnroll], nxt_hi[kUnroll];
      load_block(s0 + kUnroll, nxt_lo, nxt_hi);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t k = (s0 + u) * 32 + 8 * w.q;
        const bool ok = s0 + u < s_end && k < K;
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          const uint4 b = ok && x_valid[nt] ? load_act(reinterpret_cast<const uint4*>(x_row[nt] + k)) : make_uint4(0, 0, 0, 0);
          mma_16816<T>(acc[nt], cur_lo[u].x, cur_hi[u].x, cur_lo[u].y, cur_hi[u].y, b.x, b.y);
          mma_16816<T>(acc[nt], cur_lo[u].z, cur_hi[u].z, cur_lo[u].w, cur_hi[u].w, b.z, b.w);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        cur_lo[u] = nxt_lo[u];
        cur_hi[u] = nxt_hi[u];
      }
    }
    gemv::finish_pass<T, kSplitK, kNTiles, kGateUp>(p, w, c0, acc, s_partial);
  }
}

// Split kernels are compiled for kGemvCtasPerSm resident CTAs, which the planner's one-wave
// rule counts on: unbounded, ptxas gave split 2 at one n-tile 136 registers, one CTA per SM
// (PERF.md v21). Unsplit kernels stay unbounded (66-80 registers, 3 CTAs per SM): under a
// bound ptxas takes every register it allows.
template <typename T, int kNTiles, bool kGateUp>
__global__ void __launch_bounds__(kThreads) grouped_gemv_kernel(GroupedGemvParams p, bool interleaved) {
  grouped_gemv<T, 1, kNTiles, kGateUp>(p, interleaved);
}
template <typename T, int kSplitK, int kNTiles, bool kGateUp>
__global__ void __launch_bounds__(kThreads, kGemvCtasPerSm) grouped_gemv_split_kernel(GroupedGemvParams p,
                                                                                    bool interleaved) {
  grouped_gemv<T, kSplitK, kNTiles, kGateUp>(p, interleaved);
}

using GemvKernel = void (*)(GroupedGemvParams, bool);

template <typename T, int kNTiles, bool kGateUp>
GemvKernel kernel_for_split(int32_t split_k) {
  switch (split_k) {
    case 1: return grouped_gemv_kernel<T, kNTiles, kGateUp>;
    case 2: return grouped_gemv_split_kernel<T, 2, kNTiles, kGateUp>;
    case 4: return grouped_gemv_split_kernel<T, 4, kNTiles, kGateUp>;
    case 8: return grouped_gemv_split_kernel<T, 8, kNTiles, kGateUp>;
    default: return nullptr;
  }
}

template <typename T, bool kGateUp>
GemvKernel kernel_for_tiles(int32_t split_k, int32_t n_tiles) {
  switch (n_tiles) {
    case 1: return kernel_for_split<T, 1, kGateUp>(split_k);
    case 4: return kernel_for_split<T, 4, kGateUp>(split_k);
    default: return nullptr;
  }
}

// The instantiation for (dtype, projection, split, n-tiles); nullptr for unsupported values.
GemvKernel kernel_for(ElemType elem, bool gate_up, int32_t split_k, int32_t n_tiles) {
  if (elem == ElemType::kBF16) {
    return gate_up ? kernel_for_tiles<__nv_bfloat16, true>(split_k, n_tiles)
                   : kernel_for_tiles<__nv_bfloat16, false>(split_k, n_tiles);
  }
  return gate_up ? kernel_for_tiles<__half, true>(split_k, n_tiles) : kernel_for_tiles<__half, false>(split_k, n_tiles);
}

}  // namespace

cudaError_t launch_grouped_gemv(const GroupedGemvParams& p, bool gate_up_interleaved, cudaStream_t stream) {
  if (p.k % kVec != 0 || p.n_out <= 0 || p.max_active <= 0 || p.max_active > 65535) return cudaErrorInvalidValue;
  const GemvKernel kernel = kernel_for(p.elem, p.gate_up, p.split_k, p.n_tiles);
  if (kernel == nullptr) return cudaErrorInvalidValue;
  return launch_with_pdl(kernel, gemv::grid_for(p), dim3(kThreads), stream, p, gate_up_interleaved);
}

cudaError_t grouped_gemv_resident_ctas(ElemType elem, bool gate_up, int32_t split_k, int32_t n_tiles, int* ctas_per_sm) {
  return gemv::resident_ctas(kernel_for(elem, gate_up, split_k, n_tiles), ctas_per_sm);
}

}  // namespace fusedmoe::kernels
