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
// Weights between load and MMA: in registers (a two-block software pipeline), or, for the
// down GEMV where the planner's dense_down_ring() says so (short K slices), in a cp.async ring
// in shared memory that lets 3 CTAs per SM live instead of 2 (DenseRing below).
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

// The direct table's sorted order (GroupedGemvParams): position s holds pair s.
static_assert(kMaxDirectPairs == 32, "the identity below lists kMaxDirectPairs pairs");
__device__ const int32_t g_direct_pair_order[kMaxDirectPairs] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                                          11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                                          22, 23, 24, 25, 26, 27, 28, 29, 30, 31};

using gemv::kThreads;
using gemv::kWarps;
using gemv::mma_16816;

// The starts of this lane's two weight rows (w.row_lo, w.row_hi) of its expert: w13 [E, 2 I, K]
// in gate-up, w2 [E, H, K] in down.
template <typename T, int kSplitK, bool kGateUp>
__device__ __forceinline__ void weight_rows(const GroupedGemvParams& p, const gemv::WarpPlace<kSplitK, kGateUp>& w,
                                            const T** lo, const T** hi) {
  const int64_t rows_per_expert = kGateUp ? 2 * p.n_out : p.n_out;
  const T* w_expert = static_cast<const T*>(p.w) + static_cast<int64_t>(w.e) * rows_per_expert * p.k;
  *lo = w_expert + w.row_lo * p.k;
  *hi = w_expert + w.row_hi * p.k;
}

// Lane (g, q) loads 16 bytes = 8 consecutive k of its two weight rows per 32-k step, plain
// coalesced 16-byte loads fed straight to the MMAs (mapping in gemv_common.cuh).
template <typename T, int kSplitK, int kNTiles, bool kGateUp>
__device__ __forceinline__ void grouped_gemv_regs(const GroupedGemvParams& p, bool interleaved) {
  constexpr int kTokensPerPass = 8 * kNTiles;
  // 32-k steps whose loads are in flight together (x2 with the software pipeline); fewer with
  // 4 n-tiles, whose accumulators need the registers.
  constexpr int kUnroll = kNTiles == 1 ? 4 : 2;
  __shared__ gemv::PartialSums<kSplitK, kNTiles> s_partial;

  gemv::WarpPlace<kSplitK, kGateUp> w;
  if (!w.template start<T>(p, interleaved)) return;  // waits for the predecessor where it must (down: later)
  const int64_t K = p.k;
  const T* w_lo = nullptr;
  const T* w_hi = nullptr;
  weight_rows(p, w, &w_lo, &w_hi);
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

// One n-tile of grouped_gemv_regs's register pipeline over this lane's two weight rows (lo, hi)
// and the 32-k steps [s_begin, s_end) of K, for kernels with their own work split: kUnroll
// steps per block, two blocks in flight; steps past the slice or past K are zero.
// (grouped_gemv_regs keeps its own copy: moving it onto this struct changes the PTX of every
// register-pipeline kernel, which wants a GPU A/B first; the GPU test that failed with that
// build in v39 failed as v40's race on main does, at the same point.)
template <typename T>
struct RegisterStream {
  static constexpr int kUnroll = 4;
  const T* lo;
  const T* hi;
  int64_t s_begin, s_end, K;
  int q;
  uint4 cur_lo[kUnroll], cur_hi[kUnroll];

  __device__ __forceinline__ void load_block(int64_t s0, uint4 (&l)[kUnroll], uint4 (&h)[kUnroll]) const {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t k = (s0 + u) * 32 + 8 * q;
      const bool ok = s0 + u < s_end && k < K;
      l[u] = ok ? load_weight(reinterpret_cast<const uint4*>(lo + k)) : make_uint4(0, 0, 0, 0);
      h[u] = ok ? load_weight(reinterpret_cast<const uint4*>(hi + k)) : make_uint4(0, 0, 0, 0);
    }
  }
  // The first block: issued before the token rows are known, so that the latencies overlap.
  __device__ __forceinline__ void start() { load_block(s_begin, cur_lo, cur_hi); }
  // acc = the slice's products with the token row x_row (zeros where !x_valid).
  __device__ __forceinline__ void run(const T* x_row, bool x_valid, float (&acc)[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[i] = 0.0f;
    for (int64_t s0 = s_begin; s0 < s_end; s0 += kUnroll) {
      uint4 nxt_lo[kUnroll], nxt_hi[kUnroll];
      load_block(s0 + kUnroll, nxt_lo, nxt_hi);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t k = (s0 + u) * 32 + 8 * q;
        const bool ok = s0 + u < s_end && k < K;
        const uint4 b = ok && x_valid ? load_act(reinterpret_cast<const uint4*>(x_row + k)) : make_uint4(0, 0, 0, 0);
        mma_16816<T>(acc, cur_lo[u].x, cur_hi[u].x, cur_lo[u].y, cur_hi[u].y, b.x, b.y);
        mma_16816<T>(acc, cur_lo[u].z, cur_hi[u].z, cur_lo[u].w, cur_hi[u].w, b.z, b.w);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        cur_lo[u] = nxt_lo[u];
        cur_hi[u] = nxt_hi[u];
      }
    }
  }
};

// Down for one token with the combine folded in (M = 1, top-k 4-8, dense weights): out's row is
// the sum over the token's local experts e of w2[e] a[pos_e] times the routed weight, so a CTA
// takes one 16-row tile of it over all of them (gemv::WarpPlace::init_one_token), and the warps'
// sums meet in shared memory (gemv::OneTokenSums).
template <typename T, int kSplitK>
__global__ void __launch_bounds__(kThreads) one_token_down_kernel(GroupedGemvParams p) {
  __shared__ gemv::OneTokenSums<kSplitK> s_sums;
  s_sums.zero();
  __syncthreads();
  gemv::WarpPlace<kSplitK, false> w;
  w.init_one_token(p);
  RegisterStream<T> stream;
  const T* w_e = static_cast<const T*>(p.w) + static_cast<int64_t>(w.e) * p.n_out * p.k;
  stream.lo = w_e + w.row_lo * p.k;
  stream.hi = w_e + w.row_hi * p.k;
  stream.K = p.k;
  stream.q = w.q;
  int64_t s_begin = 0, s_end = 0;
  w.slice((p.k + 31) / 32, &s_begin, &s_end);
  stream.s_begin = s_begin;
  stream.s_end = w.count > 0 ? s_end : s_begin;  // no expert: no loads
  stream.start();
  wait_for_predecessor();
  // Token column g: the expert's pair g, at row begin + g of the intermediate.
  float acc[4];
  stream.run(static_cast<const T*>(p.x) + (w.begin + (w.g < w.count ? w.g : 0)) * p.k, w.g < w.count, acc);
  allow_successor();
  s_sums.add(p, w, acc);
  __syncthreads();
  s_sums.template store<T>(p, w.unit0);
}

// The ring variant: weights go through shared memory (cp.async), not registers, so that the
// bytes in flight do not bound the CTAs per SM (PERF.md v30): each lane copies the 16-byte
// chunks of its two weight rows that it will feed to the MMAs (mapping in gemv_common.cuh) into
// a ring of kStages slots of kUnroll 32-k steps of its own, waits for its own copies and reads
// them back; no lane reads another's, so the ring needs no barrier. The kStages - 1 slots ahead
// of the one being consumed are in flight. Three stages (48 KiB), not four: four were slower at
// 23 of 24 small-M points (v30; a reading, not profiled: cp.async stages its copies through L1,
// which a larger shared-memory carveout shrinks).
struct DenseRing {
  static constexpr int kStages = 3;
  static constexpr int kUnroll = 2;
  static constexpr uint32_t kChunkStride = kThreads * 16;  // bytes from one chunk of a lane to its next
  static constexpr uint32_t kSlotBytes = kUnroll * 2 * kChunkStride;
  static constexpr size_t kBytes = size_t{kStages} * kSlotBytes;  // dynamic shared memory per CTA
};

template <typename T, int kSplitK, int kNTiles, bool kGateUp>
__device__ __forceinline__ void grouped_gemv_ring(const GroupedGemvParams& p, bool interleaved) {
  constexpr int kTokensPerPass = 8 * kNTiles;
  constexpr int kStages = DenseRing::kStages;
  constexpr int kUnroll = DenseRing::kUnroll;
  constexpr uint32_t kStride = DenseRing::kChunkStride;
  __shared__ gemv::PartialSums<kSplitK, kNTiles> s_partial;
  extern __shared__ __align__(16) uint4 s_ring[];

  gemv::WarpPlace<kSplitK, kGateUp> w;
  if (!w.template start<T>(p, interleaved)) return;  // waits for the predecessor where it must (down: later)
  const int64_t K = p.k;
  const T* w_lo = nullptr;
  const T* w_hi = nullptr;
  weight_rows(p, w, &w_lo, &w_hi);
  // This warp's K slice, in 32-wide steps, consumed in blocks of kUnroll steps; a step's k
  // past K is zero in both operands.
  int64_t s_begin = 0, s_end = 0;
  w.slice((K + 31) / 32, &s_begin, &s_end);
  // 32-bit from here on, relative to this lane's first chunk: K < 2^30 (checked at launch).
  const int steps = s_end > s_begin ? static_cast<int>(s_end - s_begin) : 0;
  const int blocks = (steps + kUnroll - 1) / kUnroll;
  const int64_t k_first = s_begin * 32 + 8 * w.q;
  const int k_left = static_cast<int>(K - k_first);  // step i of the slice is inside K when 32 i < k_left
  const T* lo_first = w_lo + k_first;
  const T* hi_first = w_hi + k_first;
  const uint32_t ring = static_cast<uint32_t>(__cvta_generic_to_shared(s_ring + threadIdx.x));
  const uint64_t policy = gemv::evict_first_policy();

  // Copies of block b of the slice into slot b % kStages, one commit group per block (empty
  // past the slice, so that every iteration waits for the same count).
  auto issue = [&](int b) {
    const uint32_t slot = ring + static_cast<uint32_t>(b % kStages) * DenseRing::kSlotBytes;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = b * kUnroll + u;
      if (i < steps) {
        const bool ok = 32 * i < k_left;
        const int k = ok ? 32 * i : 0;
        gemv::cp_async16_stream(slot + 2 * u * kStride, lo_first + k, ok, policy);
        gemv::cp_async16_stream(slot + (2 * u + 1) * kStride, hi_first + k, ok, policy);
      }
    }
    gemv::cp_async_commit();
  };

  for (int c0 = 0; c0 < w.count; c0 += kTokensPerPass) {
    // The first blocks go out before the token rows are looked up (and, in down, before the
    // wait for the predecessor): the latencies overlap.
#pragma unroll
    for (int b = 0; b < kStages - 1; ++b) issue(b);
    w.wait_for_activations(c0);
    const T* x_row[kNTiles];
    bool x_valid[kNTiles];
    w.template token_rows<T, kNTiles>(p, c0, x_row, x_valid);
    const uint4* x_first[kNTiles];  // this lane's first 16 bytes of each token row in the slice
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt) x_first[nt] = reinterpret_cast<const uint4*>(x_row[nt] + k_first);
    float acc[kNTiles][4];
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[nt][i] = 0.0f;

    // A block's activations (L1/L2 hits, in registers) are loaded one block ahead with one
    // n-tile, so that their latency is not paid per block (four n-tiles: in the block itself;
    // ahead, they spill).
    constexpr bool kAhead = kNTiles == 1;
    auto load_x = [&](int b, uint4 (&xa)[kUnroll][kNTiles]) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = b * kUnroll + u;
        const bool ok = i < steps && 32 * i < k_left;
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) xa[u][nt] = load_act_if(x_first[nt] + 4 * i, ok && x_valid[nt]);
      }
    };
    uint4 xa[kUnroll][kNTiles];
    if (kAhead) load_x(0, xa);
    for (int b = 0; b < blocks; ++b) {
      issue(b + kStages - 1);  // into the slot block b - 1 was read from
      uint4 xn[kUnroll][kNTiles];
      load_x(kAhead ? b + 1 : b, kAhead ? xn : xa);
      gemv::cp_async_wait<kStages - 1>();  // this lane's copies of block b have landed
      const uint32_t slot = ring + static_cast<uint32_t>(b % kStages) * DenseRing::kSlotBytes;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (b * kUnroll + u >= steps) break;  // warp-uniform: the slice ends inside the block
        const uint4 lo = gemv::ld_shared16(slot + 2 * u * kStride);
        const uint4 hi = gemv::ld_shared16(slot + (2 * u + 1) * kStride);
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          mma_16816<T>(acc[nt], lo.x, hi.x, lo.y, hi.y, xa[u][nt].x, xa[u][nt].y);
          mma_16816<T>(acc[nt], lo.z, hi.z, lo.w, hi.w, xa[u][nt].z, xa[u][nt].w);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt)
          if (kAhead) xa[u][nt] = xn[u][nt];
    }
    gemv::finish_pass<T, kSplitK, kNTiles, kGateUp>(p, w, c0, acc, s_partial);
  }
}

// Register pipeline: split kernels are compiled for kGemvCtasPerSm resident CTAs, which the
// planner's one-wave rule counts on: unbounded, ptxas gave split 2 at one n-tile 136
// registers, one CTA per SM (PERF.md v21). Unsplit kernels stay unbounded (66-80 registers,
// 3 CTAs per SM): under a bound ptxas takes every register it allows.
template <typename T, int kNTiles, bool kGateUp>
__global__ void __launch_bounds__(kThreads) grouped_gemv_kernel(GroupedGemvParams p, bool interleaved) {
  grouped_gemv_regs<T, 1, kNTiles, kGateUp>(p, interleaved);
}
template <typename T, int kSplitK, int kNTiles, bool kGateUp>
__global__ void __launch_bounds__(kThreads, kGemvCtasPerSm) grouped_gemv_split_kernel(GroupedGemvParams p,
                                                                                    bool interleaved) {
  grouped_gemv_regs<T, kSplitK, kNTiles, kGateUp>(p, interleaved);
}
// Down through the shared-memory ring: compiled for kDenseRingCtasPerSm resident CTAs with one
// n-tile (2 with four), which the ring's shared memory allows.
template <typename T, int kSplitK, int kNTiles>
__global__ void __launch_bounds__(kThreads, kNTiles == 1 ? kDenseRingCtasPerSm : 2)
    grouped_gemv_down_ring_kernel(GroupedGemvParams p, bool interleaved) {
  grouped_gemv_ring<T, kSplitK, kNTiles, false>(p, interleaved);
}

using GemvKernel = void (*)(GroupedGemvParams, bool);

// An instantiation, its dynamic shared memory and the result of its opt-in to it (above the
// default 48 KiB a kernel must opt in; once per kernel, at its first use).
struct GemvEntry {
  GemvKernel kernel = nullptr;
  size_t smem = 0;
  cudaError_t opt_in = cudaErrorInvalidValue;
};
template <GemvKernel kKernel>
GemvEntry registers_entry() {
  return {kKernel, 0, cudaSuccess};
}
template <GemvKernel kKernel>
GemvEntry ring_entry() {
  static const cudaError_t opt_in = cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                         static_cast<int>(DenseRing::kBytes));
  return {kKernel, DenseRing::kBytes, opt_in};
}

template <typename T, int kNTiles, bool kGateUp>
GemvEntry kernel_for_split(int32_t split_k, GemvStaging staging) {
  if (staging == GemvStaging::kRegisters) {
    switch (split_k) {
      case 1: return registers_entry<grouped_gemv_kernel<T, kNTiles, kGateUp>>();
      case 2: return registers_entry<grouped_gemv_split_kernel<T, 2, kNTiles, kGateUp>>();
      case 4: return registers_entry<grouped_gemv_split_kernel<T, 4, kNTiles, kGateUp>>();
      case 8: return registers_entry<grouped_gemv_split_kernel<T, 8, kNTiles, kGateUp>>();
      default: return {};
    }
  }
  if (kGateUp || staging != GemvStaging::kSharedRing) return {};
  switch (split_k) {
    case 1: return ring_entry<grouped_gemv_down_ring_kernel<T, 1, kNTiles>>();
    case 2: return ring_entry<grouped_gemv_down_ring_kernel<T, 2, kNTiles>>();
    case 4: return ring_entry<grouped_gemv_down_ring_kernel<T, 4, kNTiles>>();
    case 8: return ring_entry<grouped_gemv_down_ring_kernel<T, 8, kNTiles>>();
    default: return {};
  }
}

template <typename T, bool kGateUp>
GemvEntry kernel_for_tiles(int32_t split_k, int32_t n_tiles, GemvStaging staging) {
  switch (n_tiles) {
    case 1: return kernel_for_split<T, 1, kGateUp>(split_k, staging);
    case 4: return kernel_for_split<T, 4, kGateUp>(split_k, staging);
    default: return {};
  }
}

// The instantiation for (dtype, projection, split, n-tiles, staging); no kernel for unsupported
// values (the ring exists for down only).
GemvEntry kernel_for(ElemType elem, bool gate_up, int32_t split_k, int32_t n_tiles, GemvStaging staging) {
  if (elem == ElemType::kBF16) {
    return gate_up ? kernel_for_tiles<__nv_bfloat16, true>(split_k, n_tiles, staging)
                   : kernel_for_tiles<__nv_bfloat16, false>(split_k, n_tiles, staging);
  }
  return gate_up ? kernel_for_tiles<__half, true>(split_k, n_tiles, staging)
                 : kernel_for_tiles<__half, false>(split_k, n_tiles, staging);
}

}  // namespace

cudaError_t launch_grouped_gemv(const GroupedGemvParams& p, bool gate_up_interleaved, GemvStaging staging,
                                cudaStream_t stream) {
  // K < 2^30: the ring kernel's step arithmetic is 32-bit.
  if (p.k % kVec != 0 || p.k >= (int64_t{1} << 30) || p.n_out <= 0 || p.max_active <= 0 || p.max_active > 65535 ||
      !gemv_table_ok(p)) {
    return cudaErrorInvalidValue;
  }
  const GemvEntry e = kernel_for(p.elem, p.gate_up, p.split_k, p.n_tiles, staging);
  if (e.kernel == nullptr) return cudaErrorInvalidValue;
  if (e.opt_in != cudaSuccess) return e.opt_in;
  return launch_with_pdl_smem(e.kernel, gemv::grid_for(p), dim3(kThreads), e.smem, stream, p, gate_up_interleaved);
}

cudaError_t launch_one_token_down(const GroupedGemvParams& p, cudaStream_t stream) {
  // One token: its experts are at most top-k, which one CTA's warps cover.
  if (p.gate_up || p.k % kVec != 0 || p.n_out <= 0 || p.topk < kOneTokenDownMinTopk || p.topk > kOneTokenDownMaxTopk || p.num_experts <= 0 ||
      !gemv_table_ok(p) || gemv::one_token_down_tokens(p) <= 0) {
    return cudaErrorInvalidValue;
  }
  const dim3 grid(static_cast<unsigned>((p.n_out + 15) / 16), static_cast<unsigned>(gemv::one_token_down_tokens(p)));
  const int split = one_token_down_split(p.topk);
  auto launch = [&](auto kernel) { return launch_with_pdl(kernel, grid, dim3(kThreads), stream, p); };
  if (p.elem == ElemType::kBF16) {
    return split == 1 ? launch(one_token_down_kernel<__nv_bfloat16, 1>) : launch(one_token_down_kernel<__nv_bfloat16, 2>);
  }
  return split == 1 ? launch(one_token_down_kernel<__half, 1>) : launch(one_token_down_kernel<__half, 2>);
}

cudaError_t direct_pair_order(const int32_t** order) {
  if (order == nullptr) return cudaErrorInvalidValue;
  void* at = nullptr;
  const cudaError_t err = cudaGetSymbolAddress(&at, g_direct_pair_order);
  *order = static_cast<const int32_t*>(at);
  return err;
}

cudaError_t grouped_gemv_resident_ctas(ElemType elem, bool gate_up, int32_t split_k, int32_t n_tiles,
                                       GemvStaging staging, int* ctas_per_sm) {
  const GemvEntry e = kernel_for(elem, gate_up, split_k, n_tiles, staging);
  if (e.kernel != nullptr && e.opt_in != cudaSuccess) return e.opt_in;
  return gemv::resident_ctas(e.kernel, ctas_per_sm, e.smem);
}

}  // namespace fusedmoe::kernels
