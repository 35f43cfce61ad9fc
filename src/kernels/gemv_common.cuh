// Pieces shared by the weight-streaming GEMV kernels (small_m_splitk.cu for dense weights,
// wna16_gemv.cu for int4/int8): the m16n8k16 MMA, the CTA geometry, and the end of a pass
// over an expert's weights (split-K reduction in shared memory and the epilogue).
//
// Fragment mapping both kernels use (swapped operands: weight rows on the MMA's M side, tokens
// on its N side): lane (g = lane / 4, q = lane % 4) feeds 8 consecutive k of weight rows g and
// g + 8 and of token g, k = k0 + 8q .. +7 of a 32-k step, as the fragment's logical k {2q,
// 2q+1, 2q+8, 2q+9} of two m16n8k16 steps (elements 0-3, then 4-7). Accumulator: c[0], c[1]
// = (row g, tokens 2q, 2q+1); c[2], c[3] = (row g + 8, same tokens). Gate-up puts gate rows
// j0..j0+7 at g and the matching up rows at g + 8 (gate_up_row(): in the checkpoint's order,
// or interleaved, where they are the 16 rows 2 j0..2 j0+15), so each lane holds gate and up of
// the same (j, token) and applies the activation in registers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "device_util.cuh"
#include "launch.h"

namespace fusedmoe::kernels::gemv {

constexpr int kWarps = kGemvWarps;
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

// A shared-memory pointer as the 32-bit address cp.async, mbarrier and wgmma take.
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// cp.async to a shared-memory address (as from __cvta_generic_to_shared).
__device__ __forceinline__ void cp_async16(uint32_t smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem));
}
__device__ __forceinline__ void cp_async8(uint32_t smem, const void* gmem) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// Streamed weights (read once): an L2 policy that evicts them first, as __ldcs does for loads.
__device__ __forceinline__ uint64_t evict_first_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}
// 16 bytes from gmem to shared memory under `policy`, or 16 zero bytes where !ok (gmem is not
// read then, but must still be a valid address expression).
__device__ __forceinline__ void cp_async16_stream(uint32_t smem, const void* gmem, bool ok, uint64_t policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(smem), "l"(gmem),
               "r"(ok ? 16 : 0), "l"(policy)
               : "memory");
}
// 16 bytes from gmem to shared memory, or 16 zero bytes where !ok (gmem is not read then, but
// must still be a valid address expression). Default caching: for activations, which the
// CTAs of one expert all read.
__device__ __forceinline__ void cp_async16_zfill(uint32_t smem, const void* gmem, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem), "r"(ok ? 16 : 0) : "memory");
}
// The same for 8 bytes (through L1: cp.async.cg copies 16 only).
__device__ __forceinline__ void cp_async8_zfill(uint32_t smem, const void* gmem, bool ok) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(smem), "l"(gmem), "r"(ok ? 8 : 0) : "memory");
}
// A 16-byte shared-memory load, volatile so that it stays after the cp.async wait before it
// and before the copy that refills its slot after it (all three are volatile asm).
__device__ __forceinline__ uint4 ld_shared16(uint32_t smem) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(smem));
  return v;
}

// The expert table is align's, or the pairs as their own instances where expert_offsets is
// nullptr (GroupedGemvParams: the direct table). Only the prologue
// (WarpPlace's init) asks: the passes read sorted_pairs either way (the direct table's is
// the identity), so that ptxas has no flag to specialize their loops on.
__device__ __forceinline__ bool direct_table(const GroupedGemvParams& p) { return p.expert_offsets == nullptr; }
// The direct table's instance s (< max_active): its local expert, or -1 where it is skipped.
__device__ __forceinline__ int direct_expert(const GroupedGemvParams& p, int s) {
  const int id = p.active_experts[s];
  return id >= 0 && id < p.num_experts ? id : -1;
}

// Where a warp of a CTA works: blockIdx.y is a slot of the active-expert list (the direct
// table: the instance), blockIdx.x a group of kWarps / kSplitK 16-row tiles; the warp owns one
// tile and one of kSplitK K slices. kDirect: the kernel takes the direct table too (false:
// align's only, the prologue compiled as before the direct table existed; fp8_gemv, whose
// kernels measured 1.00-1.04x slower at M = 2-16 with the direct table's prologue, v58).
template <int kSplitK, bool kGateUp, bool kDirect = true>
struct WarpPlace {
  int e = 0;            // local expert
  int64_t begin = 0;    // its first sorted position
  int count = 0;        // its pairs
  int warp = 0, lane = 0, g = 0, q = 0, tile = 0, split = 0;
  int64_t unit0 = 0;    // first output unit: gate-up column j0 (8 per tile), down row n0 (16)
  int64_t row_lo = 0;   // weight rows this lane feeds (within the expert, clamped to the end)
  int64_t row_hi = 0;

  // False for CTAs past the live expert count (a captured graph launches the host bound) and
  // for a skipped instance of the direct table.
  // gate_up_interleaved: w13's rows as gate_up_row() interleaves them (the dense GEMV only).
  __device__ bool init(const GroupedGemvParams& p, bool gate_up_interleaved = false) {
    const int slot = static_cast<int>(blockIdx.y);
    if (kDirect && direct_table(p)) {
      e = slot < p.max_active ? direct_expert(p, slot) : -1;
      if (e < 0) return false;
      begin = slot;
      count = 1;
    } else {
      if (slot >= p.active_experts[p.num_experts]) return false;
      e = p.active_experts[blockIdx.y];
      begin = p.expert_offsets[e];
      count = p.expert_counts[e];
    }
    warp = threadIdx.x >> 5;
    lane = threadIdx.x & 31;
    g = lane >> 2;
    q = lane & 3;
    tile = warp / kSplitK;
    split = warp % kSplitK;
    constexpr int kRowTiles = kWarps / kSplitK;
    place(p, (static_cast<int64_t>(blockIdx.x) * kRowTiles + tile) * (kGateUp ? 8 : 16), gate_up_interleaved);
    return true;
  }

  // The warp's output units from `first_unit` (unit0) and the weight rows this lane feeds there:
  // gate-up column unit0 + g's gate and up rows, down rows unit0 + g and unit0 + 8 + g, each
  // clamped to the last unit.
  __device__ void place(const GroupedGemvParams& p, int64_t first_unit, bool gate_up_interleaved = false) {
    unit0 = first_unit;
    int64_t u_lo = unit0 + g, u_hi = kGateUp ? unit0 + g : unit0 + 8 + g;
    u_lo = u_lo < p.n_out ? u_lo : p.n_out - 1;
    u_hi = u_hi < p.n_out ? u_hi : p.n_out - 1;
    row_lo = kGateUp ? gate_up_row(u_lo, false, p.n_out, gate_up_interleaved) : u_lo;
    row_hi = kGateUp ? gate_up_row(u_hi, true, p.n_out, gate_up_interleaved) : u_hi;
  }

  // The one-token places' lanes: one 16-row tile per CTA, warp w on K slice w % kSplitK.
  __device__ void one_token_lanes() {
    static_assert(!kGateUp, "one token: the down GEMV");
    warp = threadIdx.x >> 5;
    lane = threadIdx.x & 31;
    g = lane >> 2;
    q = lane & 3;
    tile = 0;
    split = warp % kSplitK;
  }

  // The one-token down GEMV's place (top-k 4-8: launch_one_token_down and
  // launch_wna16_one_token_down): the CTA covers the 16-row tile blockIdx.x for all of token
  // blockIdx.y's live experts; warp w runs live expert w / kSplitK (align's active list of one
  // token, complete before down starts: start(); the direct table: the token's instance
  // blockIdx.y * topk + w / kSplitK, the routing's ids, complete before the layer's first
  // kernel waits) on K slice w % kSplitK. A warp past the live experts, or on a skipped
  // instance, gets count 0 (an expert of the token that is not local adds nothing, as in the
  // combine). Align's experts are distinct, one pair each; a repeated expert's pairs are its
  // columns (the direct table: its instances).
  __device__ void init_one_token(const GroupedGemvParams& p) {
    one_token_lanes();
    const int which = warp / kSplitK;
    if (kDirect && direct_table(p)) {
      const int first = static_cast<int>(blockIdx.y) * p.topk;  // the token's first pair
      const int de = which < p.topk ? direct_expert(p, first + which) : -1;
      e = de >= 0 ? de : 0;
      begin = de >= 0 ? first + which : first;
      count = de >= 0 ? 1 : 0;
    } else {
      const bool live = which < p.active_experts[p.num_experts];
      e = live ? p.active_experts[which] : 0;
      begin = live ? p.expert_offsets[e] : 0;
      count = live ? min(p.expert_counts[e], 8) : 0;  // pairs of e: at most top-k <= 8
    }
    place(p, static_cast<int64_t>(blockIdx.x) * 16);
  }

  // The few-token down GEMV's place (fp8's one-token kernel for 2 to 4 tokens on align's
  // table: launch_fp8_one_token_down): the CTA covers the 16-row tile blockIdx.x for token
  // blockIdx.y; warp w runs the token's pair w / kSplitK, at sorted position `pos` of local
  // expert `expert` (count 0 where the pair is skipped: pos < 0), on K slice w % kSplitK.
  __device__ void init_token_pair(const GroupedGemvParams& p, int expert, int pos) {
    one_token_lanes();
    e = pos >= 0 ? expert : 0;
    begin = pos >= 0 ? pos : 0;
    count = pos >= 0 ? 1 : 0;
    place(p, static_cast<int64_t>(blockIdx.x) * 16);
  }

  // init() behind the programmatic dependent launch's wait where it must be. Gate-up reads
  // align's expert table, which its predecessor wrote: it waits first. Down reads the same
  // table, complete before down can start (its predecessor, the gate-up GEMV or the
  // intermediate's quantizer, waits in every CTA before it lets its successors launch, and
  // that wait covers align); only the activations (and their scales) come from the
  // predecessor, so down waits in wait_for_activations(), with its first weight loads in flight
  // under the predecessor's tail. An invariant for any kernel placed between align and down:
  // it waits before it triggers its successors (or is a plain launch).
  // Returns false for a CTA past the live expert count, which leaves; down's slot 0 waits
  // first (no live expert at all), so that the grid never ends before its predecessor. A
  // skipped instance of the direct table writes zeros to its rows of out (of T) first: down's
  // out (y by pair, or a top-1 layer's output where it does not overlap x) is nothing its
  // predecessor, the gate-up GEMV, reads or writes, and down starts after that kernel's wait.
  template <typename T>
  __device__ bool start(const GroupedGemvParams& p, bool gate_up_interleaved = false) {
    if (kGateUp) wait_for_predecessor();
    if (init(p, gate_up_interleaved)) return true;
    if constexpr (kDirect) {
      if (direct_table(p)) zero_instance<T>(p);
    }
    if (!kGateUp && blockIdx.y == 0) wait_for_predecessor();
    return false;
  }
  // The direct table's skipped instance blockIdx.y: zeros where its CTA would have written
  // (gate-up: a[s] at the CTA's 8-column tiles; down: y[s] at its 16-row tiles).
  template <typename T>
  __device__ static void zero_instance(const GroupedGemvParams& p) {
    constexpr int kUnits = kWarps / kSplitK * (kGateUp ? 8 : 16);
    static_assert(kUnits <= kThreads, "a thread per unit");
    const int s = static_cast<int>(blockIdx.y);
    const int64_t unit = static_cast<int64_t>(blockIdx.x) * kUnits + threadIdx.x;
    if (s < p.max_active && threadIdx.x < kUnits && unit < p.n_out) {
      static_cast<T*>(p.out)[s * p.n_out + unit] = Elem<T>::from_float(0.0f);
    }
  }
  // Down's wait (start()), before the first pass reads the activations.
  __device__ static void wait_for_activations(int c0) {
    if (!kGateUp && c0 == 0) wait_for_predecessor();
  }

  // [begin, end) of this warp's slice of `units` K units (32-k steps or 128-k blocks).
  __device__ void slice(int64_t units, int64_t* s_begin, int64_t* s_end) const {
    const int64_t per_split = (units + kSplitK - 1) / kSplitK;
    *s_begin = split * per_split;
    *s_end = *s_begin + per_split < units ? *s_begin + per_split : units;
  }

  // Activation rows of the tokens this lane feeds as B column g of each n-tile of the pass
  // starting at token c0 (gate-up: x by token; down: the intermediate by sorted position).
  template <typename T, int kNTiles>
  __device__ void token_rows(const GroupedGemvParams& p, int c0, const T* (&x_row)[kNTiles],
                             bool (&x_valid)[kNTiles]) const {
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt) {
      const int tok = c0 + nt * 8 + g;
      x_valid[nt] = tok < count;
      const int64_t pos = begin + (x_valid[nt] ? tok : 0);
      const int64_t xr = kGateUp ? p.sorted_pairs[pos] / p.topk : pos;
      x_row[nt] = static_cast<const T*>(p.x) + xr * p.k;
    }
  }
};

template <int kSplitK, int kNTiles>
using PartialSums = float[kSplitK > 1 ? kWarps : 1][kNTiles * 4][32];

// The end of one pass of 8 * kNTiles tokens from c0: split-K partial fragments meet in shared
// memory and are added in a fixed order (bitwise deterministic), then the epilogue by the lane
// that holds (row, token):
//   gate-up: a[pos, j] = act(g * s) * (u * s), s = routed weight if applied on input, else 1
//   down:    y[pair, n] = acc * routed weight (1 if it was applied on input)
template <typename T, int kSplitK, int kNTiles, bool kGateUp, bool kDirect>
__device__ __forceinline__ void finish_pass(const GroupedGemvParams& p, const WarpPlace<kSplitK, kGateUp, kDirect>& w,
                                            int c0, float (&acc)[kNTiles][4],
                                            PartialSums<kSplitK, kNTiles>& s_partial) {
  constexpr int kTokensPerPass = 8 * kNTiles;
  if (c0 + kTokensPerPass >= w.count) allow_successor();  // last pass: the next kernel may launch
  if (kSplitK > 1) {
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) s_partial[kSplitK > 1 ? w.warp : 0][nt * 4 + i][w.lane] = acc[nt][i];
    __syncthreads();
    if (w.split == 0) {
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          float sum = 0.0f;
#pragma unroll
          for (int s = 0; s < kSplitK; ++s) sum += s_partial[kSplitK > 1 ? w.tile * kSplitK + s : 0][nt * 4 + i][w.lane];
          acc[nt][i] = sum;
        }
    }
  }
  if (w.split == 0) {
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // tokens 2q and 2q + 1 of this n-tile
        const int tok = c0 + nt * 8 + 2 * w.q + h;
        if (tok >= w.count) continue;
        const int64_t pos = w.begin + tok;
        const int32_t pair = p.sorted_pairs[pos];
        const float w_pair = p.topk_weights[pair];
        if (kGateUp) {
          const int64_t j = w.unit0 + w.g;
          if (j < p.n_out) {
            const float scale = p.weight_on_input ? w_pair : 1.0f;
            static_cast<T*>(p.out)[pos * p.n_out + j] =
                Elem<T>::from_float(apply_act(p.act, acc[nt][h] * scale, acc[nt][2 + h] * scale));
          }
        } else {
          const float scale = p.weight_on_input ? 1.0f : w_pair;
          T* y = static_cast<T*>(p.out) + static_cast<int64_t>(pair) * p.n_out;
          if (w.unit0 + w.g < p.n_out) y[w.unit0 + w.g] = Elem<T>::from_float(acc[nt][h] * scale);
          if (w.unit0 + 8 + w.g < p.n_out) y[w.unit0 + 8 + w.g] = Elem<T>::from_float(acc[nt][2 + h] * scale);
        }
      }
    }
  }
  if (kSplitK > 1) __syncthreads();  // s_partial is rewritten by the next pass
}

// The one-token down GEMV's combine (init_one_token): each warp's products, times the routed
// weight, meet in shared memory by the pair's top-k slot and split, and are added slot by slot,
// splits in order (bitwise deterministic); the CTA writes out[t, n0 .. n0 + 15] of its token t
// = blockIdx.y. No y rows and no combine launch. zero() by every thread, then a __syncthreads
// before any add().
template <int kSplitK>
struct OneTokenSums {
  static constexpr int kExperts = kWarps / kSplitK;  // the token's live experts a CTA covers (>= top-k)
  float part[kExperts][kSplitK][16];                 // [top-k slot][split][row of the tile]

  __device__ void zero() {
    for (int i = threadIdx.x; i < kExperts * kSplitK * 16; i += kThreads) (&part[0][0][0])[i] = 0.0f;
  }
  // This warp's accumulator (lane (g, q): rows g, g + 8 of token columns 2q, 2q + 1).
  __device__ void add(const GroupedGemvParams& p, const WarpPlace<kSplitK, false>& w, const float (&acc)[4]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int col = 2 * w.q + h;
      if (col < w.count) {
        const int32_t pair = p.sorted_pairs[w.begin + col];
        const float scale = p.weight_on_input ? 1.0f : p.topk_weights[pair];
        const int slot = pair % p.topk;
        part[slot][w.split][w.g] = acc[h] * scale;
        part[slot][w.split][w.g + 8] = acc[2 + h] * scale;
      }
    }
  }
  // After every warp's add() and a __syncthreads: out's 16 rows from n0 of token blockIdx.y.
  template <typename T>
  __device__ void store(const GroupedGemvParams& p, int64_t n0) const {
    const int r = threadIdx.x;
    if (r < 16 && n0 + r < p.n_out) {
      float sum = 0.0f;
      for (int slot = 0; slot < p.topk; ++slot) {
        float s = 0.0f;
#pragma unroll
        for (int sp = 0; sp < kSplitK; ++sp) s += part[slot][sp][r];
        sum += s;
      }
      static_cast<T*>(p.out)[static_cast<int64_t>(blockIdx.y) * p.n_out + n0 + r] = Elem<T>::from_float(sum);
    }
  }
};

// The tokens the one-token down kernels sum, a CTA row each (0: none): the direct table's
// max_active / topk (gemv_table_ok: whole tokens), align's table one token of at most
// one_token_down_experts(topk) experts.
inline int32_t one_token_down_tokens(const GroupedGemvParams& p) {
  if (p.expert_offsets == nullptr) return p.topk > 0 ? p.max_active / p.topk : 0;
  return p.max_active <= one_token_down_experts(p.topk) ? 1 : 0;
}

// The grid of one GEMM: x = groups of row tiles, y = active-expert slots.
inline dim3 grid_for(const GroupedGemvParams& p) {
  const int64_t tiles = grouped_gemv_tiles(p.gate_up, p.n_out);
  const int row_tiles = kWarps / p.split_k;
  return dim3(static_cast<unsigned>((tiles + row_tiles - 1) / row_tiles), static_cast<unsigned>(p.max_active));
}

// CTAs of one GEMV instantiation (kThreads threads, dynamic_smem bytes of dynamic shared memory)
// that fit one SM: what grouped_gemv_resident_ctas and fp8_gemv_resident_ctas report for the
// GPU tests.
template <typename Kernel>
cudaError_t resident_ctas(Kernel kernel, int* ctas_per_sm, size_t dynamic_smem = 0) {
  if (kernel == nullptr || ctas_per_sm == nullptr) return cudaErrorInvalidValue;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas_per_sm, kernel, kThreads, dynamic_smem);
}

}  // namespace fusedmoe::kernels::gemv
