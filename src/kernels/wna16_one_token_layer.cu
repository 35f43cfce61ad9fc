// wna16_one_token_layer: the whole int4 MoE layer of one token (M = 1) in one cooperative launch,
// one 512-thread CTA per SM (geometry and shared-memory plan: one_token_layer_geometry.h).
//
// Why: at M = 1 the layer's two GEMVs are latency-bound, not byte-bound (PERF.md v57-v61: on
// the H100 Qwen3's gate-up GEMV moved its 12.6 MB at 29% of DRAM's peak, and the down GEMV's
// first loads wait for the gate-up kernel to leave the SMs). Here every CTA issues all of its
// weight bytes, of both GEMMs, into shared memory at its start, so that HBM sees the whole
// layer's weights at once and the down weights arrive while the gate-up GEMM computes. The
// copies are 16-byte cp.async from every thread, one mbarrier per unit that each thread
// arrives on as its copies land (cp.async.mbarrier.arrive.noinc): v60 measured one thread's
// cp.async.bulk copies of whole 8-row runs no faster than the GEMVs, and v61 (phase stamps)
// found the rest of the time in the per-item instruction count and in the serial tail after
// the gate-up GEMM (grid barrier 0.9 us, the intermediate 0.7-1.1 us, the down GEMM 1.5-3 us).
//
// 1. Start: the token's top-k ids (skipped where outside [0, E)) and weights; every thread
//    copies its share of the units' group parameters (one 80-byte record per unit and group:
//    scales, zero points) and of x's row (the first cp.async group), then of the codes of the
//    CTA's gate-up units (16 rows of w13: 8 gate rows 8 j.., 8 up rows I + 8 j..; H / 2 bytes
//    each) and down tiles (16 rows of w2 per slot; I / 2 bytes each), unit by unit (the
//    second; dn_after_gu: the down tiles' once the gate-up GEMM is done, into the gate-up
//    codes' place). Once the parameters have landed, each record's scales become fp32 in
//    place, and each warp sums x over the 128-k blocks it takes (int4 in bf16 folds its zero
//    points out: kFoldZeros).
// 2. Gate-up: the units in order, each waited for once; warp w takes blocks w, w + 16, ... of
//    each, with m16n8k16 MMAs on the codes (wna16::dequant_step, as wna16_gemv: lane (g, q)
//    reads chunk q of rows g and g + 8), two MMA chains per block, its fp32 sums times the
//    rows' scales. The warps' sums meet in shared memory and are added in warp order (bitwise
//    deterministic); act(g) * u is stored to the intermediate [topk, I] in the activation type.
// 3. A grid barrier (cooperative_groups). The intermediate comes into shared memory (L2, __ldcg),
//    with its sums over each 128-k block.
// 4. Down: tile i's (slot, block) items go round the warps as in 2, each product times the
//    slot's routed weight; the warps' sums are added in warp order into out's 16 rows.
// out may be x (in place): every CTA has read x before the barrier and writes out after it.
// Bitwise the same from run to run on one GPU; which warp adds which block depends on the CTA
// count (the SMs), and the sums differ in their last bits from the GEMVs' (scales applied per
// 128-k block, the routed weight per block, the zero points folded per block).
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gemv_common.cuh"
#include "one_token_layer.h"
#include "wna16_dequant.cuh"

namespace fusedmoe::kernels {

namespace {

namespace cg = cooperative_groups;

using gemv::cp_async16;
using gemv::cp_async8;
using gemv::cp_async_commit;
using gemv::cp_async_wait;
using gemv::mma_16816;
using gemv::smem_u32;
using wna16::dequant_step;
using wna16::zero_operand;

constexpr int kWarps = kOneTokenLayerWarps;
constexpr int kThreads = kOneTokenLayerThreads;
constexpr int kRecBytes = static_cast<int>(kOneTokenLayerGroupBytes);
constexpr int kZeroAt = static_cast<int>(kOneTokenLayerZeroOffset);

// A unit's barrier: one arrival per thread (cp_async_arrive).
__device__ __forceinline__ void mbar_init(uint32_t bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "n"(kThreads) : "memory");
}
// An arrival on bar once every cp.async this thread has issued so far has landed.
__device__ __forceinline__ void cp_async_arrive(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}
// The "memory" clobbers keep the codes' plain shared-memory loads after the wait (CUTLASS's
// ClusterBarrier::wait has none: its users read through asm).
__device__ __forceinline__ void mbar_wait(uint32_t bar) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\tselp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(bar)
        : "memory");
  } while (done == 0);
}

// int4 in bf16 folds the zero points out of the dequantization (as wna16_gemv's kFold): the
// MMAs take (128 + q) straight from the and-or, and the block's sum becomes
// P - (128 + zero) * X with X the activations' sum over the block. The sum is over one 128-k
// block only, so P stays small; fp16 (magic 1024) keeps the packed subtraction.
template <typename T>
constexpr bool kFoldZeros = std::is_same<T, __nv_bfloat16>::value;

// One 128-k block b of a unit's 16 rows against one token's activations: lane (g, q) takes
// its 16-byte chunk q of rows g (lo_row: the unit's codes + g * row_bytes + 16 q) and g + 8
// (hi_row) and x's 8 k of each 32-k step (xq: the activations + 8 q); every MMA column is the
// same token, so the lane's c[0] / c[2] are rows g / g + 8. rec: the block's group record
// (fp32 scales, uint8 zero points); xsum: the activations' sum over the block (kFoldZeros).
// Adds weight * scale * sum to acc[0] (row g) and acc[1] (row g + 8).
template <typename T>
__device__ __forceinline__ void block_product(const unsigned char* lo_row, const unsigned char* hi_row, int b,
                                              const unsigned char* rec, bool zeros, const T* xq, float xsum,
                                              float weight, int g, float (&acc)[2]) {
  constexpr bool kFold = kFoldZeros<T>;
  const uint4 lo = *reinterpret_cast<const uint4*>(lo_row + 64 * b);
  const uint4 hi = *reinterpret_cast<const uint4*>(hi_row + 64 * b);
  const int zl = zeros ? rec[kZeroAt + g] : 8, zh = zeros ? rec[kZeroAt + g + 8] : 8;
  const uint32_t z_lo = kFold ? 0u : zero_operand<T, 4>(zl), z_hi = kFold ? 0u : zero_operand<T, 4>(zh);
  const uint32_t w_lo[4] = {lo.x, lo.y, lo.z, lo.w}, w_hi[4] = {hi.x, hi.y, hi.z, hi.w};
  // Two independent MMA chains (u even / odd), four MMAs deep each.
  float sum[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    const uint32_t word_lo[1] = {w_lo[u]}, word_hi[1] = {w_hi[u]};
    uint32_t a_lo[4], a_hi[4];
    dequant_step<T, 4, kFold>(word_lo, z_lo, a_lo);
    dequant_step<T, 4, kFold>(word_hi, z_hi, a_hi);
    const uint4 x = *reinterpret_cast<const uint4*>(xq + 128 * b + 32 * u);
    mma_16816<T>(sum[u & 1], a_lo[0], a_hi[0], a_lo[1], a_hi[1], x.x, x.y);
    mma_16816<T>(sum[u & 1], a_lo[2], a_hi[2], a_lo[3], a_hi[3], x.z, x.w);
  }
  float p_lo = sum[0][0] + sum[1][0], p_hi = sum[0][2] + sum[1][2];
  if constexpr (kFold) {
    p_lo = fmaf(-static_cast<float>(128 + zl), xsum, p_lo);
    p_hi = fmaf(-static_cast<float>(128 + zh), xsum, p_hi);
  }
  const float* scale = reinterpret_cast<const float*>(rec);
  acc[0] = fmaf(weight * scale[g], p_lo, acc[0]);
  acc[1] = fmaf(weight * scale[g + 8], p_hi, acc[1]);
}

// The sum of 8 activations (one 16-byte chunk) in fp32, in a fixed order.
template <typename T>
__device__ __forceinline__ float chunk_sum(const uint4& v) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    s += Elem<T>::to_float(reinterpret_cast<const T*>(&w[i])[0]);
    s += Elem<T>::to_float(reinterpret_cast<const T*>(&w[i])[1]);
  }
  return s;
}

// The group of 128-k block b: 2^shift blocks per group (shift < 0: one group per row).
__device__ __forceinline__ int group_of(int b, int shift) { return shift >= 0 ? b >> shift : 0; }
// log2 of the blocks per group of w (-1: one group per row; the launch checks a power of two).
__host__ __device__ inline int group_shift(const QuantWeightsView& w) {
  if (w.groups == 1) return -1;
  int shift = 0;
  while ((128LL << shift) < w.group_size) ++shift;
  return shift;
}

// This warp's sums of a unit's rows into partial[unit][warp][16] (lanes with q = 0 hold them).
__device__ __forceinline__ void store_partial(float* partial, int unit, int warp, int g, int q, const float (&acc)[2]) {
  if (q == 0) {
    partial[(unit * kWarps + warp) * 16 + g] = acc[0];
    partial[(unit * kWarps + warp) * 16 + g + 8] = acc[1];
  }
}
// Row r of a unit: its warps' sums added in warp order.
__device__ __forceinline__ float unit_sum(const float* partial, int unit, int r) {
  float s = 0.0f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) s += partial[(unit * kWarps + w) * 16 + r];
  return s;
}

// kDnAfterGu: plan.dn_after_gu, as its own kernel, so that the resident plans' code stays as
// it was measured (v62: the runtime branches cost DeepSeek-V3 TP8 and Qwen3 1-3% at M = 1).
template <typename T, bool kDnAfterGu>
__global__ void __launch_bounds__(kThreads, 1) wna16_one_token_layer_kernel(const OneTokenLayerParams p,
                                                                             const OneTokenLayerPlan plan) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, q = lane & 3;
  const int64_t H = p.hidden, I = p.inter;
  const int topk = p.topk;
  const int64_t gu0 = one_token_layer_first(blockIdx.x, plan.gu_units, gridDim.x);
  const int n_gu = static_cast<int>(one_token_layer_first(blockIdx.x + 1, plan.gu_units, gridDim.x) - gu0);
  const int64_t dn0 = one_token_layer_first(blockIdx.x, plan.dn_tiles, gridDim.x);
  const int n_dn = static_cast<int>(one_token_layer_first(blockIdx.x + 1, plan.dn_tiles, gridDim.x) - dn0);
  const int units_per_slot = static_cast<int>(I / 8);
  const int gu_row_bytes = static_cast<int>(H / 2), dn_row_bytes = static_cast<int>(I / 2);
  const int groups13 = static_cast<int>(p.w13.groups), groups2 = static_cast<int>(p.w2.groups);

  unsigned char* const gu_codes = smem + plan.gu_codes;
  unsigned char* const dn_codes = smem + plan.dn_codes;
  unsigned char* const gu_params = smem + plan.gu_params;
  unsigned char* const dn_params = smem + plan.dn_params;
  T* const xs = reinterpret_cast<T*>(smem + plan.x);
  float* const partial = reinterpret_cast<float*>(smem + plan.partial);
  int* const s_expert = reinterpret_cast<int*>(smem + plan.slots);
  float* const s_weight = reinterpret_cast<float*>(smem + plan.slots) + kMaxTopk;
  const uint32_t bars = smem_u32(smem + plan.bars);

  if (tid < topk) {
    const int id = p.topk_ids[tid];
    s_expert[tid] = id >= 0 && id < p.num_experts ? id : -1;
    s_weight[tid] = p.topk_weights[tid];
  }
  if (tid == 0) {
    for (int i = 0; i < n_gu + n_dn; ++i) mbar_init(bars + 8 * i);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  const int gu_partials = plan.gu_max * kWarps * 16;
  for (int i = tid; i < gu_partials; i += kThreads) partial[i] = 0.0f;
  __syncthreads();

  // The group parameters (cp.async, every thread): gate-up and down records and x's row, the
  // first commit group; the codes after them, the second.
  const ScaleType type13 = p.w13.scale_type, type2 = p.w2.scale_type;
  const int sb13 = type13 == ScaleType::kFP32 ? 4 : 2, sb2 = type2 == ScaleType::kFP32 ? 4 : 2;
  const bool zeros13 = p.w13.zeros != nullptr, zeros2 = p.w2.zeros != nullptr;
  {
    // A gate-up record: sb13 16-byte scale copies (gate run, then up run: 8 rows each), then
    // (zero points) two 8-byte copies.
    const int parts = sb13 + (zeros13 ? 2 : 0), per_unit = groups13 * parts;
    const int runs = sb13 / 2;  // 16-byte copies per 8-row scale run
    for (int t = tid; t < n_gu * per_unit; t += kThreads) {
      const int i = t / per_unit, grp = (t % per_unit) / parts, part = t % parts;
      const int64_t u = gu0 + i;
      const int e = s_expert[u / units_per_slot];
      if (e < 0) continue;
      const int64_t j0 = 8 * (u % units_per_slot);
      const int64_t elem0 = (static_cast<int64_t>(e) * groups13 + grp) * 2 * I;  // (e, grp, row 0)
      unsigned char* rec = gu_params + (i * groups13 + grp) * kRecBytes;
      if (part < sb13) {
        const int up = part / runs, sub = part % runs;
        const char* src = static_cast<const char*>(p.w13.scales) + (elem0 + (up ? I : 0) + j0) * sb13 + 16 * sub;
        cp_async16(smem_u32(rec + 8 * sb13 * up + 16 * sub), src);
      } else {
        const int up = part - sb13;
        cp_async8(smem_u32(rec + kZeroAt + 8 * up), static_cast<const uint8_t*>(p.w13.zeros) + elem0 + (up ? I : 0) + j0);
      }
    }
  }
  {
    // A down record: the tile's 16 rows' scales (sb2 16-byte copies), then (zero points) one.
    const int parts = sb2 + (zeros2 ? 1 : 0), per_slot = groups2 * parts;
    for (int t = tid; t < n_dn * topk * per_slot; t += kThreads) {
      const int is = t / per_slot, grp = (t % per_slot) / parts, part = t % parts;
      const int i = is / topk, s = is % topk;
      const int e = s_expert[s];
      if (e < 0) continue;
      const int64_t elem0 = (static_cast<int64_t>(e) * groups2 + grp) * H + 16 * (dn0 + i);
      unsigned char* rec = dn_params + (is * groups2 + grp) * kRecBytes;
      if (part < sb2) {
        cp_async16(smem_u32(rec + 16 * part), static_cast<const char*>(p.w2.scales) + elem0 * sb2 + 16 * part);
      } else {
        cp_async16(smem_u32(rec + kZeroAt), static_cast<const uint8_t*>(p.w2.zeros) + elem0);
      }
    }
  }
  for (int t = tid; t < H / 8; t += kThreads) cp_async16(smem_u32(xs + 8 * t), static_cast<const T*>(p.x) + 8 * t);
  cp_async_commit();
  // 1. Every code byte of the CTA's units, unit by unit: each thread copies every 512th 16-byte
  // chunk (a warp 512 contiguous bytes), then arrives on the unit's barrier, which completes
  // once every thread's copies so far have landed. The down tiles' here too, or (dn_after_gu)
  // once the gate-up GEMM is done with the place they take.
  const uint64_t policy = gemv::evict_first_policy();
  auto issue_down = [&] {
    const unsigned char* w2 = reinterpret_cast<const unsigned char*>(p.w2.codes);
    const int slot_chunks = static_cast<int>(plan.dn_slot_bytes / 16);
    for (int i = 0; i < n_dn; ++i) {
      const int64_t n0 = 16 * (dn0 + i);
      for (int s = 0; s < topk; ++s) {
        const int e = s_expert[s];
        if (e < 0) continue;
        const unsigned char* rows = w2 + (static_cast<int64_t>(e) * H + n0) * dn_row_bytes;  // 16 rows, contiguous
        const uint32_t dst = smem_u32(dn_codes + (static_cast<int64_t>(i) * topk + s) * plan.dn_slot_bytes);
        for (int c = tid; c < slot_chunks; c += kThreads) gemv::cp_async16_stream(dst + 16 * c, rows + 16 * c, true, policy);
      }
      cp_async_arrive(bars + 8 * (n_gu + i));
    }
  };
  {
    const unsigned char* w13 = reinterpret_cast<const unsigned char*>(p.w13.codes);
    const int run_chunks = 8 * gu_row_bytes / 16;  // one 8-row run of a gate-up unit
    const int64_t run_bytes = 8LL * gu_row_bytes, up_offset = I * gu_row_bytes;
    // Unit i is columns 8 j.. of slot `slot`, stepped along without a division per unit.
    int slot = static_cast<int>(gu0 / units_per_slot), j = static_cast<int>(gu0 % units_per_slot);
    uint32_t dst = smem_u32(gu_codes) + 16 * tid;
    for (int i = 0; i < n_gu; ++i, dst += static_cast<uint32_t>(plan.gu_unit_bytes)) {
      const int e = s_expert[slot];
      if (e >= 0) {
        // rows 8 j.. of gate (and I + 8 j.. of up), this thread's first chunk
        const unsigned char* gate = w13 + (static_cast<int64_t>(e) * 2 * I + 8 * j) * gu_row_bytes + 16 * tid;
        for (int c = tid; c < run_chunks; c += kThreads, gate += 16 * kThreads) {
          const uint32_t d = dst + 16 * (c - tid);
          gemv::cp_async16_stream(d, gate, true, policy);
          gemv::cp_async16_stream(d + static_cast<uint32_t>(run_bytes), gate + up_offset, true, policy);
        }
      }
      cp_async_arrive(bars + 8 * i);
      if (++j == units_per_slot) j = 0, ++slot;
    }
    if constexpr (!kDnAfterGu) issue_down();
    cp_async_commit();  // the second group: wait<1> below waits for the parameters only
  }
  cp_async_wait<1>();
  __syncthreads();
  // Every record's scales to fp32 in place (16 of them fill its first 64 bytes), one thread per
  // record; a skipped slot's records hold stale bytes, never read.
  {
    const int n13 = n_gu * groups13, n2 = n_dn * topk * groups2;
    for (int t = tid; t < n13 + n2; t += kThreads) {
      const ScaleType type = t < n13 ? type13 : type2;
      if (type == ScaleType::kFP32) continue;
      uint4* rec = reinterpret_cast<uint4*>(t < n13 ? gu_params + t * kRecBytes : dn_params + (t - n13) * kRecBytes);
      const uint4 in[2] = {rec[0], rec[1]};
      const uint16_t* bits = reinterpret_cast<const uint16_t*>(in);
      float out[16];
#pragma unroll
      for (int r = 0; r < 16; ++r) {
        out[r] = type == ScaleType::kBF16 ? __uint_as_float(static_cast<uint32_t>(bits[r]) << 16)
                                         : __half2float(__ushort_as_half(bits[r]));
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) rec[k] = reinterpret_cast<const uint4*>(out)[k];
    }
  }
  // x's sums over the 128-k blocks this warp takes in the gate-up GEMM (kFoldZeros).
  float* const x_sums = reinterpret_cast<float*>(smem + plan.sums);
  float* const h_sums = x_sums + H / 128;  // [topk][I / 128]
  const int nb1 = static_cast<int>(H / 128), shift13 = group_shift(p.w13);
  if constexpr (kFoldZeros<T>) {
    for (int b = warp; b < nb1; b += kWarps) {
      const uint2 v = *reinterpret_cast<const uint2*>(xs + 128 * b + 4 * lane);
      float sum = Elem<T>::to_float(reinterpret_cast<const T*>(&v)[0]) + Elem<T>::to_float(reinterpret_cast<const T*>(&v)[1]) +
                  Elem<T>::to_float(reinterpret_cast<const T*>(&v)[2]) + Elem<T>::to_float(reinterpret_cast<const T*>(&v)[3]);
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
      if (lane == 0) x_sums[b] = sum;
    }
  }
  __syncthreads();

  // 2. Gate-up: the units in order (as their copies land); warp w takes blocks w, w + 16, ...
  // of each (a warp past the last block leaves its zeroed partial sums).
  if (warp < nb1) {
    int slot = static_cast<int>(gu0 / units_per_slot), j = static_cast<int>(gu0 % units_per_slot);
    for (int i = 0; i < n_gu; ++i) {
      const bool live = s_expert[slot] >= 0;
      if (++j == units_per_slot) j = 0, ++slot;
      if (!live) continue;
      mbar_wait(bars + 8 * i);
      float acc[2] = {0.0f, 0.0f};
      const unsigned char* lo_row = gu_codes + i * plan.gu_unit_bytes + g * gu_row_bytes + 16 * q;
      const unsigned char* recs = gu_params + i * groups13 * kRecBytes;
      for (int b = warp; b < nb1; b += kWarps) {
        block_product<T>(lo_row, lo_row + 8 * gu_row_bytes, b, recs + group_of(b, shift13) * kRecBytes, zeros13,
                         xs + 8 * q, kFoldZeros<T> ? x_sums[b] : 0.0f, 1.0f, g, acc);
      }
      store_partial(partial, i, warp, g, q, acc);
    }
  }
  __syncthreads();
  // dn_after_gu: every gate-up unit's copies have landed (warp 0 waited for each live one) and
  // no warp reads them any more: the down codes take their place, a third commit group.
  if constexpr (kDnAfterGu) {
    issue_down();
    cp_async_commit();
  }
  T* const inter = static_cast<T*>(p.intermediate);
  for (int t = tid; t < n_gu * 8; t += kThreads) {
    const int i = t >> 3, r = t & 7;
    const int64_t u = gu0 + i;
    const int slot = static_cast<int>(u / units_per_slot);
    if (s_expert[slot] < 0) continue;
    const float gate = unit_sum(partial, i, r), up = unit_sum(partial, i, 8 + r);
    inter[slot * I + 8 * (u % units_per_slot) + r] = Elem<T>::from_float(apply_act(p.act, gate, up));
  }

  // 3. Every CTA's intermediate columns written.
  cg::this_grid().sync();
  // The intermediate into its place: the gate-up codes' (their copies have all landed, each
  // was waited for above), or with dn_after_gu its own; a skipped slot's columns are zeros,
  // never read.
  // With it, the intermediate's sums over each 128-k block (16 chunks: a half-warp's, whole
  // half-warps in range since I / 8 is a multiple of 16).
  T* const hs = reinterpret_cast<T*>(kDnAfterGu ? smem + plan.inter : gu_codes);
  {
    const int chunks = static_cast<int>(topk * I / 8), slot_chunks = static_cast<int>(I / 8);
    for (int t = tid; t - lane < chunks; t += kThreads) {
      const bool ok = t < chunks;
      uint4 v = make_uint4(0, 0, 0, 0);
      if (ok && s_expert[t / slot_chunks] >= 0) v = __ldcg(reinterpret_cast<const uint4*>(inter) + t);
      if (ok) reinterpret_cast<uint4*>(hs)[t] = v;
      if constexpr (kFoldZeros<T>) {
        float sum = chunk_sum<T>(v);
#pragma unroll
        for (int o = 8; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        if (ok && (lane & 15) == 0) h_sums[t >> 4] = sum;
      }
    }
  }
  allow_successor();  // nothing of ours is read after this: the next kernel may start its prologue
  const int dn_partials = plan.dn_max * kWarps * 16;
  for (int i = tid; i < dn_partials; i += kThreads) partial[i] = 0.0f;
  cp_async_wait<0>();
  __syncthreads();

  // 4. Down: tile i's items (slot s, block b) in order s * nb + b; warp w takes items w, w + 16, ...
  const int nb2 = static_cast<int>(I / 128), shift2 = group_shift(p.w2);
  if (warp < topk * nb2) {
    const int s_first = warp / nb2, b_first = warp % nb2;
    for (int i = 0; i < n_dn; ++i) {
      mbar_wait(bars + 8 * (n_gu + i));
      float acc[2] = {0.0f, 0.0f};
      for (int s = s_first, b = b_first; s < topk;) {
        if (s_expert[s] >= 0) {
          const int is = i * topk + s;
          const unsigned char* lo_row = dn_codes + is * plan.dn_slot_bytes + g * dn_row_bytes + 16 * q;
          block_product<T>(lo_row, lo_row + 8 * dn_row_bytes, b, dn_params + (is * groups2 + group_of(b, shift2)) * kRecBytes,
                           zeros2, hs + s * I + 8 * q, kFoldZeros<T> ? h_sums[s * nb2 + b] : 0.0f,
                           s_weight[s], g, acc);
        }
        for (b += kWarps; b >= nb2; b -= nb2) ++s;
      }
      store_partial(partial, i, warp, g, q, acc);
    }
  }
  __syncthreads();
  for (int t = tid; t < n_dn * 16; t += kThreads) {
    const int i = t >> 4, r = t & 15;
    static_cast<T*>(p.out)[16 * (dn0 + i) + r] = Elem<T>::from_float(unit_sum(partial, i, r));
  }
}

// The layouts the kernel reads: int4, prepared codes, groups of a power-of-two count of whole
// 128-k blocks or one per row, the projections' shapes as the layer's.
bool view_ok(const QuantWeightsView& w, int64_t n, int64_t k) {
  if (w.codes == nullptr || w.scales == nullptr || w.bits != 4 || w.n != n || w.k != k || w.groups < 1) return false;
  return w.groups == 1 ||
         (one_token_layer_group_ok(w.group_size) && w.groups == (k + w.group_size - 1) / w.group_size);
}

// One cooperative launch of plan.ctas CTAs. Shared memory: the plan's, and at least more than
// half an SM's, so that a small plan too runs one CTA per SM (each CTA's copies its own share
// of the SM's bandwidth).
template <auto kKernel>
cudaError_t launch_layer(const OneTokenLayerParams& p, const OneTokenLayerPlan& plan, cudaStream_t stream) {
  // Above 48 KiB of dynamic shared memory a kernel must opt in (once per kernel, at the most
  // any plan takes).
  static const cudaError_t opt_in =
      cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kOneTokenLayerMaxSmem));
  if (opt_in != cudaSuccess) return opt_in;
  constexpr int64_t kOneCtaPerSm = kOneTokenLayerMaxSmem / 2 + 1024;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(plan.ctas));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = static_cast<size_t>(plan.smem_bytes > kOneCtaPerSm ? plan.smem_bytes : kOneCtaPerSm);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;
  attr[0].val.cooperative = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kKernel, p, plan);
}

}  // namespace

OneTokenLayerPlan one_token_layer_plan_for(const OneTokenLayerParams& p) {
  return one_token_layer_plan(p.hidden, p.inter, p.topk, p.ctas, p.w13.groups, p.w2.groups, kMaxTopk);
}

cudaError_t launch_wna16_one_token_layer(const OneTokenLayerParams& p, cudaStream_t stream) {
  const OneTokenLayerPlan plan = one_token_layer_plan_for(p);
  if (!plan.fits || p.x == nullptr || p.out == nullptr || p.intermediate == nullptr || p.topk_ids == nullptr ||
      p.topk_weights == nullptr || p.num_experts <= 0 || !view_ok(p.w13, 2 * p.inter, p.hidden) ||
      !view_ok(p.w2, p.hidden, p.inter) || reinterpret_cast<uintptr_t>(p.x) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(p.intermediate) % 16 != 0) {
    return cudaErrorInvalidValue;
  }
  if (plan.dn_after_gu) {
    return p.elem == ElemType::kBF16 ? launch_layer<wna16_one_token_layer_kernel<__nv_bfloat16, true>>(p, plan, stream)
                                     : launch_layer<wna16_one_token_layer_kernel<__half, true>>(p, plan, stream);
  }
  return p.elem == ElemType::kBF16 ? launch_layer<wna16_one_token_layer_kernel<__nv_bfloat16, false>>(p, plan, stream)
                                   : launch_layer<wna16_one_token_layer_kernel<__half, false>>(p, plan, stream);
}

}  // namespace fusedmoe::kernels
