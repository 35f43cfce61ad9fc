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

#include "device_util.cuh"
#include "launch.h"

namespace fusedmoe::kernels {

namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;

// One m16n8k16 tensor-core step, fp32 accumulate.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                          uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                                         uint32_t a3, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma_16816<__half>(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                                  uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Operand mapping (swap A and B: weight rows fill the MMA's M side, tokens its N side).
// Lane (g = lane / 4, q = lane % 4) loads 16 bytes = 8 consecutive k from weight rows g and
// g + 8 and from token g's activations, at k = k0 + 8q. The dot product does not care about
// the order of k, so those 8 values are fed as the fragment's logical k {2q, 2q+1, 2q+8,
// 2q+9} of two m16n8k16 steps (elements 0-3, then 4-7): A and B agree on the permutation,
// the loads are plain coalesced 16-byte loads, and no shared memory or ldmatrix is needed.
// Accumulator: c[0], c[1] = (row g, tokens 2q, 2q+1); c[2], c[3] = (row g + 8, same tokens).
// Gate-up puts gate rows j0..j0+7 at g and the matching up rows at g + 8, so each lane holds
// gate and up of the same (j, token) and applies the activation in registers.
template <typename T, int kSplitK, int kNTiles, bool kGateUp>
__global__ void __launch_bounds__(kThreads) grouped_gemv_kernel(GroupedGemvParams p) {
  constexpr int kRowTiles = kWarps / kSplitK;  // 16-row tiles per CTA
  constexpr int kTokensPerPass = 8 * kNTiles;
  // 32-k steps whose loads are in flight together (x2 with the software pipeline); fewer with
  // 4 n-tiles, whose accumulators need the registers.
  constexpr int kUnroll = kNTiles == 1 ? 4 : 2;
  __shared__ float s_partial[kSplitK > 1 ? kWarps : 1][kNTiles * 4][32];

  wait_for_predecessor();  // align (or gate-up) wrote everything read below
  if (static_cast<int>(blockIdx.y) >= p.active_experts[p.num_experts]) return;
  const int e = p.active_experts[blockIdx.y];
  const int64_t begin = p.expert_offsets[e];
  const int count = p.expert_counts[e];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, q = lane & 3;
  const int tile = warp / kSplitK, split = warp % kSplitK;
  const int64_t K = p.k;
  // First output unit of this warp: gate-up: column j0 (8 per tile); down: row n0 (16 per tile).
  const int64_t unit0 = (static_cast<int64_t>(blockIdx.x) * kRowTiles + tile) * (kGateUp ? 8 : 16);
  const int64_t rows_per_expert = kGateUp ? 2 * p.n_out : p.n_out;
  const T* w_expert = static_cast<const T*>(p.w) + static_cast<int64_t>(e) * rows_per_expert * K;
  // Rows of this lane: lo = fragment row g, hi = fragment row g + 8 (clamped past the end).
  int64_t u_lo = unit0 + g, u_hi = kGateUp ? unit0 + g : unit0 + 8 + g;
  u_lo = u_lo < p.n_out ? u_lo : p.n_out - 1;
  u_hi = u_hi < p.n_out ? u_hi : p.n_out - 1;
  const T* w_lo = w_expert + u_lo * K;
  const T* w_hi = w_expert + (kGateUp ? p.n_out + u_hi : u_hi) * K;
  // This warp's K slice, in 32-wide steps; a step's k past K loads zeros.
  const int64_t steps = (K + 31) / 32;
  const int64_t per_split = (steps + kSplitK - 1) / kSplitK;
  const int64_t s_begin = split * per_split;
  const int64_t s_end = s_begin + per_split < steps ? s_begin + per_split : steps;

  // Loads of one block of kUnroll 32-k steps of this lane's two weight rows (zeros past the
  // slice or past K).
  auto load_block = [&](int64_t s0, uint4 (&lo)[kUnroll], uint4 (&hi)[kUnroll]) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t k = (s0 + u) * 32 + 8 * q;
      const bool ok = s0 + u < s_end && k < K;
      lo[u] = ok ? load_weight(reinterpret_cast<const uint4*>(w_lo + k)) : make_uint4(0, 0, 0, 0);
      hi[u] = ok ? load_weight(reinterpret_cast<const uint4*>(w_hi + k)) : make_uint4(0, 0, 0, 0);
    }
  };

  for (int c0 = 0; c0 < count; c0 += kTokensPerPass) {
    // The first weight block goes out before the token rows are looked up (a chain of
    // dependent loads): the two latencies overlap.
    uint4 cur_lo[kUnroll], cur_hi[kUnroll];
    load_block(s_begin, cur_lo, cur_hi);
    // Activation rows of the tokens this lane feeds as B column g of each n-tile.
    const T* x_row[kNTiles];
    bool x_valid[kNTiles];
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt) {
      const int tok = c0 + nt * 8 + g;
      x_valid[nt] = tok < count;
      const int64_t pos = begin + (x_valid[nt] ? tok : 0);
      const int64_t xr = kGateUp ? p.sorted_pairs[pos] / p.topk : pos;
      x_row[nt] = static_cast<const T*>(p.x) + xr * K;
    }
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
        const int64_t k = (s0 + u) * 32 + 8 * q;
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
    if (c0 + kTokensPerPass >= count) allow_successor();  // last pass: the next kernel may launch
    // Split-K: partial fragments meet in shared memory and are added in a fixed order.
    if (kSplitK > 1) {
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) s_partial[kSplitK > 1 ? warp : 0][nt * 4 + i][lane] = acc[nt][i];
      __syncthreads();
      if (split == 0) {
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            float sum = 0.0f;
#pragma unroll
            for (int s = 0; s < kSplitK; ++s) sum += s_partial[kSplitK > 1 ? tile * kSplitK + s : 0][nt * 4 + i][lane];
            acc[nt][i] = sum;
          }
      }
    }
    if (split == 0) {
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // tokens 2q and 2q + 1 of this n-tile
          const int tok = c0 + nt * 8 + 2 * q + h;
          if (tok >= count) continue;
          const int64_t pos = begin + tok;
          const int32_t pair = p.sorted_pairs[pos];
          const float w_pair = p.topk_weights[pair];
          if (kGateUp) {
            const int64_t j = unit0 + g;
            if (j < p.n_out) {
              const float scale = p.weight_on_input ? w_pair : 1.0f;
              static_cast<T*>(p.out)[pos * p.n_out + j] =
                  Elem<T>::from_float(apply_act(p.act, acc[nt][h] * scale, acc[nt][2 + h] * scale));
            }
          } else {
            const float scale = p.weight_on_input ? 1.0f : w_pair;
            T* y = static_cast<T*>(p.out) + static_cast<int64_t>(pair) * p.n_out;
            if (unit0 + g < p.n_out) y[unit0 + g] = Elem<T>::from_float(acc[nt][h] * scale);
            if (unit0 + 8 + g < p.n_out) y[unit0 + 8 + g] = Elem<T>::from_float(acc[nt][2 + h] * scale);
          }
        }
      }
    }
    if (kSplitK > 1) __syncthreads();  // s_partial is rewritten by the next pass
  }
}


template <typename T, int kNTiles, bool kGateUp>
cudaError_t launch_gemv_tiles(const GroupedGemvParams& p, cudaStream_t stream) {
  const int64_t tiles = grouped_gemv_tiles(kGateUp, p.n_out);
  const int row_tiles = kWarps / p.split_k;
  const dim3 grid(static_cast<unsigned>((tiles + row_tiles - 1) / row_tiles), static_cast<unsigned>(p.max_active));
  switch (p.split_k) {
    case 1: return launch_with_pdl(grouped_gemv_kernel<T, 1, kNTiles, kGateUp>, grid, dim3(kThreads), stream, p);
    case 2: return launch_with_pdl(grouped_gemv_kernel<T, 2, kNTiles, kGateUp>, grid, dim3(kThreads), stream, p);
    case 4: return launch_with_pdl(grouped_gemv_kernel<T, 4, kNTiles, kGateUp>, grid, dim3(kThreads), stream, p);
    case 8: return launch_with_pdl(grouped_gemv_kernel<T, 8, kNTiles, kGateUp>, grid, dim3(kThreads), stream, p);
    default: return cudaErrorInvalidValue;
  }
}

template <typename T, bool kGateUp>
cudaError_t launch_gemv_typed(const GroupedGemvParams& p, cudaStream_t stream) {
  switch (p.n_tiles) {
    case 1: return launch_gemv_tiles<T, 1, kGateUp>(p, stream);
    case 4: return launch_gemv_tiles<T, 4, kGateUp>(p, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t launch_grouped_gemv(const GroupedGemvParams& p, cudaStream_t stream) {
  if (p.k % kVec != 0 || p.n_out <= 0 || p.max_active <= 0 || p.max_active > 65535) return cudaErrorInvalidValue;
  if (p.elem == ElemType::kBF16) {
    return p.gate_up ? launch_gemv_typed<__nv_bfloat16, true>(p, stream) : launch_gemv_typed<__nv_bfloat16, false>(p, stream);
  }
  return p.gate_up ? launch_gemv_typed<__half, true>(p, stream) : launch_gemv_typed<__half, false>(p, stream);
}

}  // namespace fusedmoe::kernels
