// FP8 e4m3 (W8A8) pieces: activation quantization (amax, quantize), the decode GEMV and the
// weight scales in the layout of the tensor-core path (sm90_fp8_grouped_gemm).
//
// Quantization (docs/FORMATS.md, "FP8 e4m3"): q = e4m3(v / s), round to nearest even,
// saturating at +-448, s = max(amax / 448, 2^-64) over the span (the tensor, a row, or a
// row's group), 1 for an all-zero span. The quantizer reads its input through a view (Fp8QuantIn): plain
// rows, x's rows gathered in expert order, or the gated activation of GEMM1's gate/up halves,
// so the grouped path need not write the gathered rows or the activation in bf16. The GEMV
// reads the quantized activations as fp16 holding the e4m3 values exactly (every e4m3 value
// is an fp16 value), so its fp16 MMAs multiply the same operands an fp8 MMA would, with fp32
// accumulation.
//
// fp8_gemv: small_m_splitk's grid, split-K and epilogue (gemv_common.cuh). Lane (g, q) loads
// 16 consecutive k of its two weight rows per 64-k step (one 16-byte load each) and the same
// 16 k of its token's quantized row (two 16-byte loads), converts the weight bytes pairwise
// to fp16 (cvt e4m3x2 -> f16x2) and feeds four m16n8k16 MMAs: MMA m takes the lane's k
// 16 q + 4 m + {0, 1} as the fragment's logical k {2q, 2q + 1} and 16 q + 4 m + {2, 3} as
// {2q + 8, 2q + 9}, for the weights and the activations alike, so each MMA sums 16 distinct k.
// Scales: block weights with per-group activations multiply each block_k's partial sums by
// the row's block scale and the token's group scale; per-tensor/per-row scales multiply the
// sums once at the end.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "align_warp.cuh"
#include "fp8_divide.h"
#include "fp8_one_pass.h"
#include "fp8_one_token_down.h"
#include "gemv_common.cuh"

namespace fusedmoe::kernels {

namespace {

using gemv::kThreads;
using gemv::kWarps;
using gemv::mma_16816;

constexpr float kE4M3Max = 448.0f;

// At least kFp8MinDynamicScale (fp8_divide.h: what keeps DynamicScale's three instructions
// exact).
__device__ __forceinline__ float dynamic_scale(float amax) {
  const float s = amax / kE4M3Max;
  return s > 0.0f ? fmaxf(s, kFp8MinDynamicScale) : 1.0f;
}

template <typename T>
__global__ void fp8_amax_kernel(const T* in, int64_t rows, int64_t cols, const int64_t* live_rows,
                                unsigned int* amax_bits) {
  const int64_t live = live_rows != nullptr ? min(rows, *live_rows) : rows;
  const int64_t vecs = live * cols / kVec;
  unsigned int m = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float f[kVec];
    Elem<T>::unpack(reinterpret_cast<const uint4*>(in)[i], f);
#pragma unroll
    for (int j = 0; j < kVec; ++j) m = max(m, abs_bits(f[j]));
  }
  // One atomic per warp: at most 8192 of them here, and no barrier (cta_atomic_max's cost
  // showed at decode, where this kernel runs on one row).
  m = warp_max_bits(m);
  if ((threadIdx.x & 31) == 0 && m != 0) atomicMax(amax_bits, m);
}

// The max of v over aligned teams of 1 << shift lanes (shift 0 to 5; every lane of the warp
// takes part): five shuffles and no branch for a run-time team too (a loop over a run-time
// team's offsets compiled to 32 guarded shuffles, v67).
__device__ __forceinline__ float team_max(float v, int shift) {
#pragma unroll
  for (int b = 4; b >= 0; --b) {
    const float o = __shfl_xor_sync(0xffffffffu, v, 1 << b);
    if (b < shift) v = fmaxf(v, o);
  }
  return v;
}

__device__ __forceinline__ float warp_max(float v) { return team_max(v, 5); }

// m folded with the largest |value| of one vector.
__device__ __forceinline__ float fold_amax(float m, const float (&f)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) m = fmaxf(m, fabsf(f[j]));
  return m;
}

constexpr int kQuantThreads = 256;

__device__ __forceinline__ int64_t live_row_count(const Fp8QuantParams& p) {
  return p.live_rows != nullptr ? min(p.rows, *p.live_rows) : p.rows;
}

__device__ __forceinline__ uint32_t bits16(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
__device__ __forceinline__ uint32_t bits16(__half v) { return __half_as_ushort(v); }

// Row `row` of the matrix being quantized, read through the input view kIn (Fp8QuantIn).
// fetch issues a vector's loads (predicated, so that a kernel can issue what it holds before
// it uses any), convert turns them into floats. kAct: the gated activation, a template
// parameter so that each kernel inlines one activation (a switch per value inlined all three
// into every vector of a batch, and the per-row kernel stalled on instruction fetch, v23).
template <typename T, Fp8QuantIn kIn, GatedAct kAct>
struct QuantRow {
  static constexpr bool kGated = kIn == Fp8QuantIn::kGatedAct;
  static constexpr int kLoads = kGated ? 2 : 1;
  const uint4* in = nullptr;  // the row's first 16-byte vector (the gate half's when kGated)
  int64_t up = 0;             // kGated: vectors from a gate vector to its up vector
  float weight = 1.0f;        // kGated: the routed weight applied on the input

  __device__ __forceinline__ void fetch(int64_t v, bool ok, uint4 (&raw)[kLoads]) const {
    raw[0] = load_act_if(in + v, ok);
    if constexpr (kGated) raw[1] = load_act_if(in + v + up, ok);
  }
  // kGated: what gated_act would store (the activation rounded to T), as floats.
  __device__ __forceinline__ void convert(const uint4 (&raw)[kLoads], float (&f)[kVec]) const {
    Elem<T>::unpack(raw[0], f);
    if constexpr (kGated) {
      float u[kVec];
      Elem<T>::unpack(raw[1], u);
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        f[k] = Elem<T>::to_float(Elem<T>::from_float(act_of<kAct>(f[k] * weight, u[k] * weight)));
      }
    }
  }
  // Vector v fetched and converted at once (loops that use each vector as it arrives).
  __device__ __forceinline__ void load(int64_t v, float (&f)[kVec]) const {
    uint4 raw[kLoads];
    fetch(v, true, raw);
    convert(raw, f);
  }
  // A converted vector as 8 T values (exact: convert's values are T values) and back by
  // Elem<T>::unpack: what a kernel holds of a row between its passes.
  __device__ __forceinline__ static uint4 hold(const uint4 (&raw)[kLoads], const float (&f)[kVec]) {
    if constexpr (kGated) {
      uint32_t w[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        w[i] = bits16(Elem<T>::from_float(f[2 * i])) | (bits16(Elem<T>::from_float(f[2 * i + 1])) << 16);
      }
      return make_uint4(w[0], w[1], w[2], w[3]);
    } else {
      return raw[0];
    }
  }
};

// A live row's view; `record`: the one thread that writes a gathered row's row_of_pair entry.
template <typename T, Fp8QuantIn kIn, GatedAct kAct>
__device__ __forceinline__ QuantRow<T, kIn, kAct> quant_row(const Fp8QuantParams& p, int64_t row, bool record) {
  QuantRow<T, kIn, kAct> r;
  const T* in = static_cast<const T*>(p.in);
  if constexpr (kIn == Fp8QuantIn::kGatedAct) {
    r.in = reinterpret_cast<const uint4*>(in + row * 2 * p.cols);
    r.up = p.cols / kVec;
    if (p.topk_weights != nullptr) r.weight = p.topk_weights[p.sorted_pairs[row]];
  } else if constexpr (kIn == Fp8QuantIn::kGatherTokens) {
    const int32_t pair = p.sorted_pairs[row];
    if (record) p.row_of_pair[pair] = static_cast<int32_t>(row);
    r.in = reinterpret_cast<const uint4*>(in + pair / p.topk * p.cols);
  } else {
    r.in = reinterpret_cast<const uint4*>(in + row * p.cols);
  }
  return r;
}

// kScatterTokens: whether token `token` has a local pair (expert parallelism leaves some
// without; false without a read where `live` is false: a thread past the tokens), and f(row)
// for the row of each of its local pairs (align's row_of_pair).
__device__ __forceinline__ bool token_has_local_pair(const Fp8QuantParams& p, int64_t token, bool live = true) {
  bool any = false;
  for (int32_t k = 0; live && k < p.topk; ++k) any |= p.row_of_pair[token * p.topk + k] >= 0;
  return any;
}
template <typename F>
__device__ __forceinline__ void for_each_pair_row(const Fp8QuantParams& p, int64_t token, F&& f) {
  for (int32_t k = 0; k < p.topk; ++k) {
    const int32_t dest = p.row_of_pair[token * p.topk + k];
    if (dest >= 0) f(static_cast<int64_t>(dest));
  }
}

// Where row's scale of 128-column block kb goes in kE4M3Grouped's layout: sfa0 + kb * stride
// ([kb][rows_e] within its expert's stretch of the scales; sm90_grouped_gemm.cuh's SFA).
__device__ __forceinline__ void grouped_scale_slot(const Fp8QuantParams& p, int64_t row, int64_t* sfa0,
                                                   int64_t* stride) {
  int lo = 0, hi = p.num_experts;  // the expert e with offsets[e] <= row < offsets[e + 1]
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (p.expert_offsets[mid] <= row) lo = mid; else hi = mid;
  }
  const int64_t row0 = p.expert_offsets[lo];
  *stride = p.expert_offsets[lo + 1] - row0;
  *sfa0 = row0 * ((p.cols + kFp8ScaleBlock - 1) / kFp8ScaleBlock) + (row - row0);
}

// A vector (8 columns) quantized with scale q.s (a DynamicScale or a StaticScale): 8 e4m3
// bytes (o[0..1]) or 8 fp16 holding them (o[0..3]).
template <typename Scale>
__device__ __forceinline__ void quantize_vector(bool e4m3_bytes, const float (&f)[kVec], const Scale& q,
                                                uint32_t (&o)[4]) {
#pragma unroll
  for (int j = 0; j < kVec; j += 2) {
    const __nv_fp8_storage_t q0 = __nv_cvt_float_to_fp8(q.divide(f[j]), __NV_SATFINITE, __NV_E4M3);
    const __nv_fp8_storage_t q1 = __nv_cvt_float_to_fp8(q.divide(f[j + 1]), __NV_SATFINITE, __NV_E4M3);
    if (e4m3_bytes) {
      const uint32_t two = static_cast<uint32_t>(q0) | (static_cast<uint32_t>(q1) << 8);
      if (j % 4 == 0) o[j / 4] = two; else o[j / 4] |= two << 16;
    } else {
      const __half_raw h0 = __nv_cvt_fp8_to_halfraw(q0, __NV_E4M3);
      const __half_raw h1 = __nv_cvt_fp8_to_halfraw(q1, __NV_E4M3);
      o[j / 2] = static_cast<uint32_t>(h0.x) | (static_cast<uint32_t>(h1.x) << 16);
    }
  }
}
template <typename Scale>
__device__ __forceinline__ void quantize_vector(const Fp8QuantParams& p, const float (&f)[kVec], const Scale& q,
                                                uint32_t (&o)[4]) {
  quantize_vector(p.out_kind == Fp8QuantOut::kE4M3Grouped, f, q, o);
}

// Vector v of row `row`: quantize_vector's words.
__device__ __forceinline__ void store_vector(const Fp8QuantParams& p, int64_t row, int64_t v, const uint32_t (&o)[4]) {
  if (p.out_kind == Fp8QuantOut::kE4M3Grouped) {
    reinterpret_cast<uint2*>(static_cast<uint8_t*>(p.out) + row * p.cols)[v] = make_uint2(o[0], o[1]);
  } else {
    reinterpret_cast<uint4*>(static_cast<uint16_t*>(p.out) + row * p.cols)[v] = make_uint4(o[0], o[1], o[2], o[3]);
  }
}

template <typename Scale>
__device__ __forceinline__ void store_quantized(const Fp8QuantParams& p, int64_t row, int64_t v,
                                                const float (&f)[kVec], const Scale& q) {
  uint32_t o[4];
  quantize_vector(p, f, q, o);
  store_vector(p, row, v, o);
}

// The extra last CTA of a plain-rows launch that also writes align's table (launch_fp8_quantize's
// `table`: the small-M path's x, at most kWarpAlignPairs pairs): its first warp aligns, and the
// CTA quantizes nothing. True on that CTA (uniform).
template <Fp8QuantIn kIn>
__device__ __forceinline__ bool table_cta(const AlignParams& table) {
  if constexpr (kIn == Fp8QuantIn::kRows) {
    if (table.topk_ids != nullptr && blockIdx.x == gridDim.x - 1) {
      __shared__ int s_sorted[32];
      if (threadIdx.x < 32) align_warp(table, s_sorted);
      return true;
    }
  }
  return false;
}

// Per-group and per-tensor scales: a team of `team` lanes quantizes `per_team` consecutive
// spans of a row (a span: a group, or 128 columns of a per-tensor row), one 16-byte vector
// per lane and pass. The launcher picks per_team so that the teams about fill the GPU once: 1
// at decode sizes (a row spread over as many teams as it has spans: one warp per row took
// 58 us for DeepSeek-V3's 7168 columns in 56 serial groups), more for many rows (the expert
// lookup of kE4M3Grouped once per team, not per span). team: the span's vectors when they
// divide 32 (each lane then holds its one vector of a span from the amax to the store: read
// once, a gated activation computed once), else 32 (a loop that reads the span twice).
// kScatterTokens: the row is token `row`; each lane's codes are stored at the rows of the
// token's local pairs, and lane k of the team stores the span's scale at its k-th pair's row.
template <typename T, Fp8QuantIn kIn, GatedAct kAct>
__global__ void __launch_bounds__(kQuantThreads) fp8_quantize_spans_kernel(Fp8QuantParams p, int64_t span, int team,
                                                                           int64_t per_team, AlignParams table) {
  wait_for_predecessor();  // launched after_predecessor; else returns at once
  allow_successor();       // a successor waits for this grid's end before it reads
  if (table_cta<kIn>(table)) return;
  const int lane = threadIdx.x & 31;
  const int64_t t = (static_cast<int64_t>(blockIdx.x) * (kQuantThreads / 32) + (threadIdx.x >> 5)) * (32 / team) + lane / team;
  const int tl = lane % team;
  const int64_t spans = (p.cols + span - 1) / span;
  const int64_t teams_per_row = (spans + per_team - 1) / per_team;
  const int64_t row = t / teams_per_row, sp0 = t % teams_per_row * per_team;
  const bool group = p.kind == Fp8ActScale::kGroup;
  const bool grouped_out = p.out_kind == Fp8QuantOut::kE4M3Grouped;
  const bool one_vector = span / kVec <= team;  // each lane holds at most one vector of a span
  const bool static_tensor = !group && p.tensor_scale != nullptr;
  float tensor_s = 1.0f;
  if (!group) {
    tensor_s = static_tensor ? *p.tensor_scale : dynamic_scale(*p.amax);
    if (blockIdx.x == 0 && threadIdx.x == 0 && p.scales != nullptr && !grouped_out) p.scales[0] = tensor_s;
  }
  // A per-tensor scale's reciprocal once, not per span (the dynamic form's is unused under a
  // static scale, and may be infinite there).
  const StaticScale static_q(tensor_s);
  const DynamicScale tensor_q(tensor_s);
  constexpr bool kScatter = kIn == Fp8QuantIn::kScatterTokens;
  bool active = row < live_row_count(p);
  if constexpr (kScatter) {  // a token with no local pair (expert parallelism) is not read
    active = token_has_local_pair(p, row, active);  // uniform over the team
  }
  // The scales' slot in kE4M3Grouped's layout: the row's (lane 0), or (kScatter) lane k's
  // destination's, k < topk (valid_input: topk <= team), each lane's lookup in parallel.
  int64_t sfa0 = 0, stride = 0;
  bool dest_slot = false;  // kScatter: this lane holds a destination's slot
  if constexpr (kScatter) {
    if (active && tl < p.topk) {
      const int32_t dest = p.row_of_pair[row * p.topk + tl];
      dest_slot = dest >= 0;
      if (dest_slot) grouped_scale_slot(p, dest, &sfa0, &stride);
    }
  } else {
    if (active && grouped_out && tl == 0) grouped_scale_slot(p, row, &sfa0, &stride);
  }
  QuantRow<T, kIn, kAct> src;  // read only by active rows (their loads are predicated off otherwise)
  if (active) src = quant_row<T, kIn, kAct>(p, row, sp0 == 0 && tl == 0);
  uint4 raw[QuantRow<T, kIn, kAct>::kLoads];
  // The same trip count on every lane: the shuffles below need the whole warp.
  for (int64_t i = 0; i < per_team; ++i) {
    const int64_t sp = sp0 + i;
    const bool valid = active && sp < spans;
    const int64_t v0 = sp * span / kVec, v1 = valid ? min(p.cols, (sp + 1) * span) / kVec : v0;
    const bool mine = one_vector && v0 + tl < v1;
    float f[kVec];
    float m = 0.0f;
    if (one_vector) {
      src.fetch(v0 + tl, mine, raw);
      src.convert(raw, f);
      if (mine) m = fold_amax(m, f);
    } else if (group) {
      for (int64_t v = v0 + tl; v < v1; v += team) {
        src.load(v, f);
        m = fold_amax(m, f);
      }
    }
    if (group) m = team_max(m, 31 - __clz(team));
    if (!valid) continue;
    const DynamicScale q = group ? DynamicScale(dynamic_scale(m)) : tensor_q;
    // kE4M3Grouped: every block's scale for groups; a tensor scale in the first block only
    // (the epilogue-scaled GEMM reads no other).
    const bool block_scale = group || sp == 0;
    if constexpr (kScatter) {
      if (dest_slot && block_scale) p.scales[sfa0 + sp * stride] = q.s;
    } else if (tl == 0 && grouped_out) {
      if (block_scale) p.scales[sfa0 + sp * stride] = q.s;  // span = kFp8ScaleBlock: sp is the block
    } else if (tl == 0 && group) {
      p.scales[row * spans + sp] = q.s;
    }
    const auto store = [&](int64_t v) {
      if constexpr (kScatter) {  // the codes once, stored at each destination row (or the token's)
        uint32_t o[4];
        if (static_tensor) {
          quantize_vector(p, f, static_q, o);
        } else {
          quantize_vector(p, f, q, o);
        }
        if (p.codes_by_token) {
          store_vector(p, row, v, o);
        } else {
          for_each_pair_row(p, row, [&](int64_t dest) { store_vector(p, dest, v, o); });
        }
      } else if (static_tensor) {
        store_quantized(p, row, v, f, static_q);
      } else {
        store_quantized(p, row, v, f, q);
      }
    };
    if (kScatter || one_vector) {  // kScatter: 128-column spans, one vector per lane (valid_input)
      if (mine) store(v0 + tl);
      continue;
    }
    if constexpr (!kScatter) {
      for (int64_t v = v0 + tl; v < v1; v += team) {
        src.load(v, f);
        store(v);
      }
    }
  }
}

// Per-row scales: kRowThreads threads per row (256: a CTA, the row's amax reduced through
// shared memory, for few rows; 32: a warp, for many), the amax, then the row's values. Each
// pass issues a batch of vectors' loads per thread before it uses any (one load at a time
// made the many-row case latency-bound: 1.1-1.7 TB/s, v22). With a warp per row, a row that
// fits one batch (x's rows up to 8 x 8 x 32 columns, a gated activation's up to 4 x 8 x 32)
// is held in registers as T values from the amax to the stores: read once, its activation
// computed once. Longer rows, and the CTA per row (decode: held rows made M = 1 0.3-0.9 us
// slower, v24), read the row again (a gated activation computed again). kScatterTokens: the
// row is token `row`, quantized once and stored at the rows of its local pairs.
// kWhole: one CTA over the whole tensor (whole_tensor: its live rows are contiguous, one
// "row" of live_rows * cols values under one per-tensor scale).
template <typename T, int kRowThreads, Fp8QuantIn kIn, GatedAct kAct, bool kWhole = false>
__global__ void __launch_bounds__(kQuantThreads) fp8_quantize_rows_kernel(Fp8QuantParams p, AlignParams table) {
  static_assert(kRowThreads == 32 || kRowThreads == kQuantThreads, "a warp or the CTA per row");
  static_assert(!kWhole || (kRowThreads == kQuantThreads && kIn == Fp8QuantIn::kRows), "one CTA, plain rows");
  wait_for_predecessor();  // launched after_predecessor; else returns at once
  allow_successor();       // a successor waits for this grid's end before it reads
  if (table_cta<kIn>(table)) return;
  using Row = QuantRow<T, kIn, kAct>;
  constexpr bool kHold = kRowThreads == 32;
  constexpr int kBatch = Row::kGated || !kHold ? 4 : 8;  // 32 registers of loads (the CTA's: 16 or 32)
  __shared__ float s_max[kQuantThreads / 32];
  const int tid = threadIdx.x % kRowThreads;
  const int64_t row = kWhole ? 0 : static_cast<int64_t>(blockIdx.x) * (kQuantThreads / kRowThreads) + threadIdx.x / kRowThreads;
  // Uniform over the row's threads (a warp or the CTA). The whole tensor writes its scale
  // even with no live rows (1, as the amax pass's zero gives).
  if (!kWhole && row >= live_row_count(p)) return;
  constexpr bool kScatter = kIn == Fp8QuantIn::kScatterTokens;
  // Where the quantized row goes: `row`, or (kScatter) the rows of the token's local pairs
  // (with codes_by_token, its codes to `row` and only its scales to those rows).
  const auto for_each_dest = [&](auto&& store_at) {
    if constexpr (kScatter) {
      if (!p.codes_by_token) {
        for_each_pair_row(p, row, store_at);
        return;
      }
    }
    store_at(row);
  };
  if constexpr (kScatter) {  // a token with no local pair (expert parallelism) is not read
    if (!token_has_local_pair(p, row)) return;  // uniform over the row's threads
  }
  const int64_t vecs = kWhole ? live_row_count(p) * p.cols / kVec : p.cols / kVec;
  const Row src = quant_row<T, kIn, kAct>(p, row, tid == 0);
  uint4 held[kHold ? kBatch : 1];  // the last batch as T values (the whole row when it fits one batch)
  const auto fetch_batch = [&](int64_t v0, uint4(&raw)[kBatch][Row::kLoads]) {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) src.fetch(v0 + b * kRowThreads, v0 + b * kRowThreads < vecs, raw[b]);
  };
  float f[kVec];
  float m = 0.0f;
  for (int64_t v0 = tid; v0 < vecs; v0 += kBatch * kRowThreads) {
    uint4 raw[kBatch][Row::kLoads];
    fetch_batch(v0, raw);
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      src.convert(raw[b], f);  // vectors past the row are zeros: no effect on the amax
      m = fold_amax(m, f);
      if constexpr (kHold) held[b] = Row::hold(raw[b], f);
    }
  }
  m = warp_max(m);
  if constexpr (kRowThreads > 32) {
    if ((threadIdx.x & 31) == 0) s_max[threadIdx.x >> 5] = m;
    __syncthreads();
#pragma unroll
    for (int w = 0; w < kRowThreads / 32; ++w) m = fmaxf(m, s_max[w]);
  }
  // The whole tensor's amax, where a reader expects what launch_fp8_amax leaves: the same
  // float (NaN ignored by both, infinity kept).
  if (kWhole && tid == 0 && p.amax_out != nullptr) *p.amax_out = m;
  const DynamicScale q(dynamic_scale(m));
  if (p.out_kind == Fp8QuantOut::kE4M3Grouped) {
    // The row's scale in its first block's slot: per-row scales are applied in the GEMM's
    // epilogue, which reads no other block (launch.h, Fp8QuantOut).
    if constexpr (kScatter) {
      // The destinations spread over the row's threads: each one's expert lookup (a binary
      // search, 7 dependent loads at E = 128) in parallel, not topk of them in turn (measured
      // in turn: 2-3% slower at M = 64-1024, v24).
      for (int64_t i = tid; i < p.topk; i += kRowThreads) {
        const int32_t dest = p.row_of_pair[row * p.topk + i];
        if (dest < 0) continue;
        int64_t sfa0 = 0, stride = 0;
        grouped_scale_slot(p, dest, &sfa0, &stride);
        p.scales[sfa0] = q.s;
      }
    } else if (tid == 0) {
      int64_t sfa0 = 0, stride = 0;
      grouped_scale_slot(p, row, &sfa0, &stride);
      p.scales[sfa0] = q.s;
    }
  } else if (tid == 0) {
    p.scales[row] = q.s;
  }
  uint32_t o[4];
  if constexpr (kHold) {
    if (vecs <= kBatch * kRowThreads) {
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (tid + b * kRowThreads >= vecs) break;
        Elem<T>::unpack(held[b], f);
        quantize_vector(p, f, q, o);
        for_each_dest([&](int64_t dest) { store_vector(p, dest, tid + b * kRowThreads, o); });
      }
      return;
    }
  }
  for (int64_t v0 = tid; v0 < vecs; v0 += kBatch * kRowThreads) {
    uint4 raw[kBatch][Row::kLoads];
    fetch_batch(v0, raw);
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (v0 + b * kRowThreads >= vecs) break;
      src.convert(raw[b], f);
      quantize_vector(p, f, q, o);
      for_each_dest([&](int64_t dest) { store_vector(p, dest, v0 + b * kRowThreads, o); });
    }
  }
}

// The one-pass per-tensor quantizer (fp8_one_pass.h, fp8_one_pass_plan): a warp per unit
// (segment s of row u / segments: vectors [s * seg_vecs, (s + 1) * seg_vecs) of it), CTA c
// taking the live units [c * live_units / ctas, (c + 1) * live_units / ctas), each unit's
// values held in shared memory as T values (QuantRow::hold: what the two-pass form reads back)
// from the amax to the stores; the CTAs' amaxes meet in `partials` across a grid barrier
// (every CTA then reduces them all, so nothing is zeroed first). The amax, scale, codes and
// scale slots are the two-pass form's: fold_amax ignores a NaN and keeps an infinity as the
// amax kernel does; the span kernel's scale slots (the first block's of each destination row
// under kE4M3Grouped, scales[0] otherwise). kScatterTokens: every token's values count in the
// amax (the two-pass amax runs over all of x), only tokens with a local pair are stored.
template <typename T, Fp8QuantIn kIn, GatedAct kAct>
__global__ void __launch_bounds__(kQuantThreads, kFp8OnePassCtasPerSm)
    fp8_quantize_one_pass_kernel(Fp8QuantParams p, float* partials, int64_t segments, int64_t seg_vecs) {
  static_assert(kIn != Fp8QuantIn::kGatherTokens, "the gathered view's amax is over x's tokens, not its rows");
  static_assert(kQuantThreads == 32 * kFp8OnePassWarps, "a warp per unit, kFp8OnePassWarps per CTA");
  allow_successor();  // a successor waits for this grid's end before it reads
  using Row = QuantRow<T, kIn, kAct>;
  constexpr bool kScatter = kIn == Fp8QuantIn::kScatterTokens;
  constexpr int kBatch = Row::kGated ? 4 : 8;  // 16-byte loads in flight per lane (32 registers)
  constexpr int kWarpsPerCta = static_cast<int>(kFp8OnePassWarps);
  extern __shared__ uint4 s_held[];
  __shared__ float s_max[kWarpsPerCta];
  const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
  const int64_t live_units = live_row_count(p) * segments;
  const int64_t u0 = blockIdx.x * live_units / gridDim.x, u1 = (blockIdx.x + 1) * live_units / gridDim.x;
  const int64_t vecs = p.cols / kVec;
  float m = 0.0f;
  for (int64_t u = u0 + warp; u < u1; u += kWarpsPerCta) {
    const int64_t row = u / segments, v_begin = (u - row * segments) * seg_vecs;
    const int64_t v_end = min(vecs, v_begin + seg_vecs);
    const Row src = quant_row<T, kIn, kAct>(p, row, false);
    uint4* held = s_held + (u - u0) * seg_vecs;  // vector v at held[v - v_begin]
    for (int64_t v0 = v_begin + lane; v0 < v_end; v0 += kBatch * 32) {
      uint4 raw[kBatch][Row::kLoads];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) src.fetch(v0 + 32 * b, v0 + 32 * b < v_end, raw[b]);
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (v0 + 32 * b >= v_end) break;
        float f[kVec];
        src.convert(raw[b], f);
        m = fold_amax(m, f);
        held[v0 + 32 * b - v_begin] = Row::hold(raw[b], f);
      }
    }
  }
  m = warp_max(m);
  if (lane == 0) s_max[warp] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
#pragma unroll
    for (int w = 1; w < kWarpsPerCta; ++w) m = fmaxf(m, s_max[w]);
    partials[blockIdx.x] = m;
  }
  cooperative_groups::this_grid().sync();
  float g = 0.0f;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kQuantThreads) g = fmaxf(g, __ldcg(partials + i));
  g = warp_max(g);
  if (lane == 0) s_max[warp] = g;  // every read of s_max above came before the grid barrier
  __syncthreads();
#pragma unroll
  for (int w = 0; w < kWarpsPerCta; ++w) g = fmaxf(g, s_max[w]);
  const DynamicScale q(dynamic_scale(g));
  const bool grouped_out = p.out_kind == Fp8QuantOut::kE4M3Grouped;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    if (p.amax_out != nullptr) *p.amax_out = g;
    if (!grouped_out && p.scales != nullptr) p.scales[0] = q.s;
  }
  for (int64_t u = u0 + warp; u < u1; u += kWarpsPerCta) {
    const int64_t row = u / segments, v_begin = (u - row * segments) * seg_vecs;
    const int64_t v_end = min(vecs, v_begin + seg_vecs);
    // kScatter: lane k holds the row of the token's k-th pair (-1: none, or k >= topk).
    int32_t dest = -1;
    if constexpr (kScatter) {
      if (lane < p.topk) dest = p.row_of_pair[row * p.topk + lane];
      if (__ballot_sync(0xffffffffu, dest >= 0) == 0u) continue;  // no local pair: not stored
    }
    if (grouped_out && v_begin == 0) {  // the tensor's scale in the first block's slot of each destination row
      const int64_t slot_row = kScatter ? dest : row;
      if (kScatter ? dest >= 0 : lane == 0) {
        int64_t sfa0 = 0, stride = 0;
        grouped_scale_slot(p, slot_row, &sfa0, &stride);
        p.scales[sfa0] = q.s;
      }
    }
    const uint4* held = s_held + (u - u0) * seg_vecs;
    // The same trip count on every lane: the destinations' shuffles need the whole warp.
    for (int64_t v0 = v_begin; v0 < v_end; v0 += 32) {
      const int64_t v = v0 + lane;
      const bool mine = v < v_end;
      uint32_t o[4] = {0u, 0u, 0u, 0u};
      if (mine) {
        float f[kVec];
        Elem<T>::unpack(held[v - v_begin], f);
        quantize_vector(p, f, q, o);
      }
      if constexpr (kScatter) {
        if (p.codes_by_token) {
          if (mine) store_vector(p, row, v, o);
        } else {
          for (int k = 0; k < p.topk; ++k) {
            const int32_t d = __shfl_sync(0xffffffffu, dest, k);
            if (mine && d >= 0) store_vector(p, d, v, o);
          }
        }
      } else if (mine) {
        store_vector(p, row, v, o);
      }
    }
  }
}

// Two e4m3 bytes (low byte first) -> f16x2 (low half first).
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint32_t two) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(two & 0xffffu), __NV_E4M3);
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}

// 16 e4m3 bytes -> 8 f16x2 registers in k order.
__device__ __forceinline__ void e4m3x16_to_f16(const uint4& v, uint32_t (&r)[8]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    r[2 * i] = e4m3x2_to_f16x2(w[i]);
    r[2 * i + 1] = e4m3x2_to_f16x2(w[i] >> 16);
  }
}

// Only the kernels without block scales call it; the block-scale ones find their scales' rows
// by fp8_gemv's weight_scale_rows. The block case below is not reached, but it stays: without
// it ptxas laid out the per-tensor / per-row GEMVs 220-360 instructions shorter, and those ran
// 1.02-1.04x slower at M = 1-16 (v69, H100, two ABBA rounds, Qwen3 per-channel and per-tensor).
__device__ __forceinline__ float weight_scale(const Fp8WeightsView& wv, int e, int64_t row, int64_t kb) {
  switch (wv.kind) {
    case Fp8WeightScale::kTensor: return wv.scales[e];
    case Fp8WeightScale::kRow: return wv.scales[static_cast<int64_t>(e) * wv.n + row];
    default: {
      const int64_t nb = (wv.n + wv.block_n - 1) / wv.block_n, kbs = (wv.k + wv.block_k - 1) / wv.block_k;
      return wv.scales[(static_cast<int64_t>(e) * nb + row / wv.block_n) * kbs + kb];
    }
  }
}

__device__ __forceinline__ float act_scale(const Fp8ActView& xv, int64_t xrow, int64_t k_groups, int64_t kb) {
  switch (xv.kind) {
    case Fp8ActScale::kTensor: return xv.scales[0];
    case Fp8ActScale::kRow: return xv.scales[xrow];
    default: return xv.scales[xrow * k_groups + kb];
  }
}

// The one-token down GEMV's intermediate quantizer (launch_fp8_one_token_down): the token's
// live rows (at one token, sorted positions 0 .. rows - 1 of p.x, T values) quantized into
// shared memory as launch_fp8_quantize quantizes them (the same amax, scale, division and
// codes: the rows kernel's per-row and whole-tensor dynamic scales, the spans kernel's
// per-group and static ones), fp16 holding the e4m3 codes at codes[r * stride ...], the
// scales at scales[r] (per row), scales[r * groups + group] (per group) or scales[0] (the
// tensor). Warp r takes row r (rows <= top-k <= kWarps), its lanes 16-byte vectors lane + 32 j
// in batches of loads. Every thread of the CTA calls it (the tensor's amax meets in shared
// memory); the caller's __syncthreads follows before the codes are read. kGroups: group
// scales (block weights; xv.kind kGroup), else per-row or per-tensor ones. amax_out (dynamic
// per-tensor scales): the live rows' amax, as the whole-tensor quantizer leaves it.
// kFewTokens (2 to 4 tokens, FewTokenPairs): warp r takes the row of its token's slot r, at
// sorted position row_pos (-1: none, the slot skipped or past top-k), into shared row r;
// dynamic per-tensor scales are not taken (the tensor's amax spans every token's rows).
template <typename T, bool kGroups, bool kFewTokens = false>
__device__ __forceinline__ void quantize_token_rows(const GroupedGemvParams& p, const Fp8ActView& xv, int64_t stride,
                                                    __half* codes, float* scales, float* amax_out, int row_pos = -1) {
  constexpr int kBatch = 4;  // 16-byte loads in flight per lane
  __shared__ float s_amax[kWarps];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  bool live = false;
  int src_row = 0;
  if constexpr (kFewTokens) {
    live = row_pos >= 0;
    src_row = live ? row_pos : 0;
  } else {
    live = warp < static_cast<int>(min(p.expert_offsets[p.num_experts], static_cast<int64_t>(p.topk)));
    src_row = live ? warp : 0;
  }
  // 32-bit indices, shifts for the groups (a 64-bit division per vector cost more than the
  // rest of the pass): K fits the kernel's shared memory (fp8_one_token_down_supports).
  const int K = static_cast<int>(p.k), vecs = K / kVec;
  const uint4* src = reinterpret_cast<const uint4*>(static_cast<const T*>(p.x) + src_row * K);
  uint4* dst = reinterpret_cast<uint4*>(codes + (live ? warp : 0) * stride);
  const bool static_tensor = !kGroups && xv.kind == Fp8ActScale::kTensor && xv.scales != nullptr;
  const bool dynamic_tensor = !kGroups && xv.kind == Fp8ActScale::kTensor && !static_tensor;
  // visit(v, raw, f) for each of the lane's vectors v of the row, raw and as floats, in
  // batches of loads (past the row: v >= vecs, zeros), on every lane alike (shuffles may
  // follow); a load wholly past the row is not visited (DeepSeek-V3's K = 256 fills one of a
  // batch's four: the group path's scale for each of the other three cost 3 us a layer, v67).
  const auto for_each_vector = [&](auto&& visit) {
    for (int j0 = 0; j0 < vecs; j0 += 32 * kBatch) {
      uint4 raw[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) raw[b] = load_act_if(src + j0 + 32 * b + lane, live && j0 + 32 * b + lane < vecs);
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (j0 + 32 * b >= vecs) break;  // uniform over the warp
        float f[kVec];
        Elem<T>::unpack(raw[b], f);
        visit(j0 + 32 * b + lane, raw[b], f);
      }
    }
  };
  const auto store = [&](int v, const float (&f)[kVec], const auto& q) {
    uint32_t o[4];
    quantize_vector(false, f, q, o);
    dst[v] = make_uint4(o[0], o[1], o[2], o[3]);
  };
  if (kGroups || static_tensor) {
    // One pass: a group's vectors lie in one load of a team of xv.group / kVec lanes (8, 16
    // or 32: fp8_one_token_down_supports), the span kernel's team. kFewTokens: the static
    // scale stored before warp 0 leaves, whose slot may be skipped (at one token row 0 is the
    // first live one).
    if (kFewTokens && static_tensor && threadIdx.x == 0) scales[0] = __ldg(xv.scales);
    if (!live) return;
    const int team_shift = kGroups ? 31 - __clz(xv.group / kVec) : 5;
    const int team = 1 << team_shift;
    const int groups = (vecs + team - 1) >> team_shift;  // K's groups (K and the group: whole vectors)
    const StaticScale static_q(static_tensor ? __ldg(xv.scales) : 1.0f);
    if (!kFewTokens && static_tensor && threadIdx.x == 0) scales[0] = static_q.s;
    for_each_vector([&](int v, const uint4&, const float (&f)[kVec]) {
      if (!kGroups) {  // the static tensor scale
        if (v < vecs) store(v, f, static_q);
        return;
      }
      // Zeros past K: no effect on a partial last group's amax.
      const DynamicScale q(dynamic_scale(team_max(fold_amax(0.0f, f), team_shift)));
      if (v < vecs) {
        store(v, f, q);
        if ((lane & (team - 1)) == 0) scales[warp * groups + (v >> team_shift)] = q.s;
      }
    });
    return;
  }
  if constexpr (kGroups) return;
  // Per-row and dynamic per-tensor scales: the amax as the row is read (its T values kept in
  // its codes' place), then the codes in place, each lane over its own vectors.
  if (!live && !dynamic_tensor) return;
  float m = 0.0f;
  for_each_vector([&](int v, const uint4& raw, const float (&f)[kVec]) {
    m = fold_amax(m, f);
    if (live && v < vecs) dst[v] = raw;
  });
  m = warp_max(m);
  if (dynamic_tensor) {  // the live rows' amax (the whole-tensor quantizer's)
    if (lane == 0) s_amax[warp] = m;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kWarps; ++i) m = fmaxf(m, s_amax[i]);
    if (amax_out != nullptr && blockIdx.x == 0 && threadIdx.x == 0) *amax_out = m;
  }
  const DynamicScale q(dynamic_scale(m));
  if (lane == 0 && (warp == 0 || !dynamic_tensor)) scales[dynamic_tensor ? 0 : warp] = q.s;
  if (!live) return;
  for (int v = lane; v < vecs; v += 32) {
    float f[kVec];
    Elem<T>::unpack(dst[v], f);
    store(v, f, q);
  }
}

// The few-token down GEMV's lookups (kFewTokens: 2 to 4 tokens, at most kWarpAlignPairs pairs
// on align's table): lane i holds the pair at sorted position i and active expert i with its
// first position, so that a warp finds its token's pair's position and that position's
// expert with a ballot each, no search. Read before the wait, as init_one_token reads the
// table: complete before down starts (WarpPlace::start).
struct FewTokenPairs {
  int pair_at = -1;  // the pair at sorted position `lane` (-1 past the local pairs)
  int expert = 0;    // active expert `lane`
  int64_t first = INT64_MAX;  // its first sorted position (past the active experts: never below a position)

  __device__ explicit FewTokenPairs(const GroupedGemvParams& p) {
    const int lane = threadIdx.x & 31;
    const int64_t live = p.expert_offsets[p.num_experts];
    const int active = p.active_experts[p.num_experts];
    if (lane < live) pair_at = p.sorted_pairs[lane];
    if (lane < active) {
      expert = p.active_experts[lane];
      first = p.expert_offsets[expert];
    }
  }
  // The sorted position of token blockIdx.y's pair in `slot` (warp-uniform), -1 where the pair
  // is skipped (no local expert) or slot >= top-k.
  __device__ int position(const GroupedGemvParams& p, int slot) const {
    const int want = static_cast<int>(blockIdx.y) * p.topk + slot;
    const unsigned hit = __ballot_sync(0xffffffffu, slot < p.topk && pair_at == want);
    return hit != 0u ? __ffs(static_cast<int>(hit)) - 1 : -1;
  }
  // The local expert of sorted position pos >= 0 (warp-uniform): the last active expert that
  // starts at or before it (the active experts ascend, and so do their first positions).
  __device__ int expert_at(int pos) const {
    const unsigned starts = __ballot_sync(0xffffffffu, first <= pos);
    return __shfl_sync(0xffffffffu, expert, 31 - __clz(static_cast<int>(starts)));
  }
};

// fp8_gemv's kernels, the body inlined into each (kOneToken's takes one more parameter).
// kOneToken (down, one n-tile: launch_fp8_one_token_down): one token's down GEMV with the
// intermediate's quantizer and the top-k combine folded in, as small_m_splitk's
// one_token_down_kernel: the CTA covers one 16-row tile of out for all of the token's experts
// (WarpPlace::init_one_token, a warp per expert and K slice). Every warp issues its first
// weight loads, waits, and the CTA quantizes the token's rows into shared memory
// (quantize_token_rows), where the passes read them and their scales; the experts' sums are
// added in shared memory (gemv::OneTokenSums). No quantized rows in memory, no y rows, no
// combine launch. kFewTokens (with kOneToken): the same for 2 to 4 tokens, a CTA row per token
// (blockIdx.y), warp w on its token's pair w / kSplitK (FewTokenPairs, init_token_pair).
template <typename TOut, int kSplitK, int kNTiles, bool kGateUp, bool kBlock, bool kOneToken, bool kFewTokens = false>
__device__ __forceinline__ void fp8_gemv(const GroupedGemvParams& p, const Fp8WeightsView& wv, const Fp8ActView& xv,
                                         float* amax_out) {
  static_assert(!kOneToken || (!kGateUp && kNTiles == 1), "one token: the down GEMV, one pass of 8 columns");
  static_assert(!kFewTokens || kOneToken, "a few tokens: the one-token kernel's form");
  constexpr int kTokensPerPass = 8 * kNTiles;
  // 64-k steps in flight (x2 with the pipeline): 64 bytes per lane and row, 128 for a split
  // grid with one n-tile and per-tensor/row scales (those variants run 2 CTAs per SM at 128
  // registers; unsplit, 76 registers run 3, and four steps there measured 3-17% slower at
  // M = 4-16 on the small experts, v17).
  constexpr int kUnroll = kSplitK > 1 && kNTiles == 1 && !kBlock ? 4 : 2;
  using Shared = std::conditional_t<kOneToken, gemv::OneTokenSums<kSplitK>, gemv::PartialSums<kSplitK, kNTiles>>;
  __shared__ Shared s_shared;
  extern __shared__ __align__(16) unsigned char s_token_rows[];  // kOneToken: quantize_token_rows's

  // Align's table only (planner.h, direct_table); the one-token place takes the type
  // OneTokenSums adds from (its direct-table branch never taken here).
  gemv::WarpPlace<kSplitK, kGateUp, kOneToken> w;
  int row_pos = -1;  // kFewTokens: the sorted position of the row this warp quantizes (slot `warp`)
  if constexpr (kOneToken) {
    s_shared.zero();
    __syncthreads();
    if constexpr (kFewTokens) {
      const FewTokenPairs pairs(p);
      const int warp = static_cast<int>(threadIdx.x >> 5);
      row_pos = pairs.position(p, warp);
      const int pos = pairs.position(p, warp / kSplitK);
      w.init_token_pair(p, pos >= 0 ? pairs.expert_at(pos) : 0, pos);
    } else {
      w.init_one_token(p);  // reads align's table, complete before down starts (WarpPlace::start)
    }
  } else {
    if (!w.template start<TOut>(p)) return;  // waits for the predecessor where it must (down: later)
  }
  const int64_t K = p.k;
  const int64_t rows = kGateUp ? 2 * p.n_out : p.n_out;
  const uint8_t* w_expert = wv.w + static_cast<int64_t>(w.e) * rows * K;
  // The lane's 16 bytes of 64-k step s: w_lo[4 s] and w_hi[4 s].
  const uint4* w_lo = reinterpret_cast<const uint4*>(w_expert + w.row_lo * K + 16 * w.q);
  const uint4* w_hi = reinterpret_cast<const uint4*>(w_expert + w.row_hi * K + 16 * w.q);
  // Step and block counts in 32 bits (K <= kFp8GemvMaxK by launch_fp8_gemv): registers are short here.
  const int steps = static_cast<int>((K + 63) / 64);
  const int64_t k_groups = (K + xv.group - 1) / xv.group;
  // The warp's steps [s_begin, s_end): whole block_k blocks for block scales, so that each
  // slice scales its own blocks' sums.
  int s_begin = 0, s_end = 0, kb0 = 0, kb_last = 0, steps_per_block = 1;
  {
    int64_t b = 0, e = 0;
    if constexpr (kBlock) {
      steps_per_block = wv.block_k / 64;
      const int kbs = static_cast<int>((K + wv.block_k - 1) / wv.block_k);
      w.slice(kbs, &b, &e);
      kb0 = static_cast<int>(b);
      s_begin = kb0 * steps_per_block;
      s_end = min(static_cast<int>(e) * steps_per_block, steps);
      kb_last = kbs - 1;
    } else {
      w.slice(steps, &b, &e);
      s_begin = static_cast<int>(b);
      s_end = static_cast<int>(e);
    }
  }
  // Block scales: the rows of the warp's two weight rows' scales. The one-token kernel sets
  // them before its wait (three 64-bit divisions that sat after it, in front of the first
  // activation loads: M = 1 0.97-0.99, v68); the others in their pass (set before the wait,
  // the general down kernels measured 1.01 slower at DeepSeek-V3 M = 16 and Qwen3 M = 8, v68).
  const float* ws_p[2] = {nullptr, nullptr};
  const auto weight_scale_rows = [&]() {
    const int64_t kbs = kb_last + 1;
    const float* ws_e = wv.scales + static_cast<int64_t>(w.e) * ((wv.n + wv.block_n - 1) / wv.block_n) * kbs;
    ws_p[0] = ws_e + (w.row_lo / wv.block_n) * kbs;
    ws_p[1] = ws_e + (w.row_hi / wv.block_n) * kbs;
  };
  if constexpr (kBlock && kOneToken) weight_scale_rows();
  // kOneToken: every warp runs the one pass (the CTA quantizes the rows, with a barrier); one
  // without an expert loads no weights and adds nothing.
  if (kOneToken && w.count == 0) s_end = s_begin;
  // The lane loads steps below `lim`: its 16 k of a partial last step may lie past K.
  const int lim = min(s_end, static_cast<int>((K - 16 * w.q + 63) / 64));
  // kOneToken: the token's quantized rows (stride kFp8OneTokenRowPad past K) and their scales.
  const int64_t x_stride = K + kFp8OneTokenRowPad;
  __half* const s_codes = reinterpret_cast<__half*>(s_token_rows);
  float* const s_scales = reinterpret_cast<float*>(s_token_rows + p.topk * x_stride * 2);

  auto load_steps = [&](int s0, uint4 (&lo)[kUnroll], uint4 (&hi)[kUnroll]) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const bool ok = s0 + u < lim;
      lo[u] = load_weight_if(w_lo + 4 * (s0 + u), ok);
      hi[u] = load_weight_if(w_hi + 4 * (s0 + u), ok);
    }
  };

  for (int c0 = 0; kOneToken ? c0 == 0 : c0 < w.count; c0 += kTokensPerPass) {
    uint4 cur_lo[kUnroll], cur_hi[kUnroll];
    load_steps(s_begin, cur_lo, cur_hi);
    if constexpr (kOneToken) {
      wait_for_predecessor();
      quantize_token_rows<TOut, kBlock, kFewTokens>(p, xv, x_stride, s_codes, s_scales, amax_out, row_pos);
      __syncthreads();
    } else {
      w.wait_for_activations(c0);
    }
    // kOneToken: the shared-memory row of token column `tok` (its sorted position; columns
    // past the expert's tokens take token 0's, unused), at most top-k - 1 whatever the table
    // holds; kFewTokens: the warp's slot's row (one column).
    const auto token_row = [&](int tok) {
      if constexpr (kFewTokens) return static_cast<int64_t>(w.warp / kSplitK);
      return min(w.begin + (tok < w.count ? tok : 0), static_cast<int64_t>(p.topk - 1));
    };
    // The lane's 16 k of step s of token column g of each n-tile: x_q[nt][8 s], [8 s + 1]
    // (fp16 holding e4m3); kOneToken: at shared address x_s[nt] + 128 s, + 16.
    const uint4* x_q[kNTiles];
    uint32_t x_s[kNTiles];
    if constexpr (kOneToken) {
      x_s[0] = gemv::smem_u32(s_codes + token_row(w.g) * x_stride + 16 * w.q);
    } else {
      const __half* x_row[kNTiles];
      bool x_valid[kNTiles];
      w.template token_rows<__half, kNTiles>(p, c0, x_row, x_valid);
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) x_q[nt] = reinterpret_cast<const uint4*>(x_row[nt] + 16 * w.q);
    }
    // The activation rows of the accumulator's tokens (2q, 2q + 1 of each n-tile), for scales.
    int64_t s_row[kNTiles][2];
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int tok = c0 + nt * 8 + 2 * w.q + h;
        if constexpr (kOneToken) {
          s_row[nt][h] = token_row(tok);
        } else {
          const int64_t pos = w.begin + (tok < w.count ? tok : 0);
          s_row[nt][h] = kGateUp ? p.sorted_pairs[pos] / p.topk : pos;
        }
      }
    float acc[kNTiles][4], part[kNTiles][4];
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[nt][i] = part[nt][i] = 0.0f;
    // Block scales: the warp's two weight rows' and its tokens' scales of block kb (cur) and
    // of the next block (nxt), loaded one block ahead so the loads land during the MMAs.
    const float* xs_p[kNTiles][2];
    float cur_w[2] = {0.0f, 0.0f}, nxt_w[2] = {0.0f, 0.0f}, cur_x[kNTiles][2], nxt_x[kNTiles][2];
    int kb = kb0;
    int in_block = 0;  // steps of block kb summed into part
    auto load_scales = [&](int b, float (&ws)[2], float (&xs)[kNTiles][2]) {
      b = b < kb_last ? b : kb_last;  // (a split past the last block has an empty slice)
      // One token: coherent loads, as the activations' (sass_pdl_check), so that ptxas keeps
      // them after the wait when their rows are set before it (it moved `__ldg` ones above it
      // in the 4-tile down kernels, v68).
      ws[0] = kOneToken ? load_act(ws_p[0] + b) : __ldg(ws_p[0] + b);
      ws[1] = kOneToken ? load_act(ws_p[1] + b) : __ldg(ws_p[1] + b);
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h) xs[nt][h] = kOneToken ? xs_p[nt][h][b] : load_act(xs_p[nt][h] + b);
    };
    // acc += part * (weight row scale * token scale) of block kb; the next block's scales.
    auto scale_block = [&]() {
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          acc[nt][h] += part[nt][h] * (cur_w[0] * cur_x[nt][h]);
          acc[nt][2 + h] += part[nt][2 + h] * (cur_w[1] * cur_x[nt][h]);
          part[nt][h] = part[nt][2 + h] = 0.0f;
          cur_x[nt][h] = nxt_x[nt][h];
        }
      cur_w[0] = nxt_w[0];
      cur_w[1] = nxt_w[1];
      in_block = 0;
      ++kb;
      load_scales(kb + 1, nxt_w, nxt_x);
    };
    if constexpr (kBlock) {
      if constexpr (!kOneToken) weight_scale_rows();
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h) xs_p[nt][h] = (kOneToken ? s_scales : xv.scales) + s_row[nt][h] * k_groups;
      load_scales(kb, cur_w, cur_x);
      load_scales(kb + 1, nxt_w, nxt_x);
    }

    for (int s0 = s_begin; s0 < s_end; s0 += kUnroll) {
      uint4 nxt_lo[kUnroll], nxt_hi[kUnroll];
      load_steps(s0 + kUnroll, nxt_lo, nxt_hi);
      // This block's activations, issued before the conversions so their latency overlaps
      // them (one n-tile with per-tensor/row scales; the others load per step, registers).
      constexpr int kXAhead = kNTiles == 1 && !kBlock ? kUnroll : 1;
      uint4 xa[kXAhead][kNTiles][2];
      auto load_x = [&](int u, uint4 (&x)[kNTiles][2]) {
        const int s = s0 + u;
        const bool ok = s < lim;
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          if constexpr (kOneToken) {
            x[nt][0] = load_shared_if(x_s[nt] + 128 * s, ok);
            x[nt][1] = load_shared_if(x_s[nt] + 128 * s + 16, ok);
          } else {
            x[nt][0] = load_act_if(x_q[nt] + 8 * s, ok);
            x[nt][1] = load_act_if(x_q[nt] + 8 * s + 1, ok);
          }
        }
      };
      if constexpr (kXAhead > 1) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) load_x(u, xa[u]);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        uint4(&x)[kNTiles][2] = xa[kXAhead > 1 ? u : 0];
        if constexpr (kXAhead == 1) load_x(u, x);
        uint32_t a_lo[8], a_hi[8];
        e4m3x16_to_f16(cur_lo[u], a_lo);
        e4m3x16_to_f16(cur_hi[u], a_hi);
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          const uint32_t b[8] = {x[nt][0].x, x[nt][0].y, x[nt][0].z, x[nt][0].w,
                                 x[nt][1].x, x[nt][1].y, x[nt][1].z, x[nt][1].w};
          float(&c)[4] = kBlock ? part[nt] : acc[nt];
#pragma unroll
          for (int m = 0; m < 4; ++m) {
            mma_16816<__half>(c, a_lo[2 * m], a_hi[2 * m], a_lo[2 * m + 1], a_hi[2 * m + 1], b[2 * m], b[2 * m + 1]);
          }
        }
        // Block scales: the end of a block_k block scales its sums (steps past the slice
        // are zeros and do not count).
        if (kBlock && s0 + u < s_end && ++in_block == steps_per_block) scale_block();
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        cur_lo[u] = nxt_lo[u];
        cur_hi[u] = nxt_hi[u];
      }
    }
    if (kBlock && in_block != 0) scale_block();  // the partial last block of K
    if (!kBlock) {  // per-tensor / per-row scales, once
      const float ws_lo = weight_scale(wv, w.e, w.row_lo, 0), ws_hi = weight_scale(wv, w.e, w.row_hi, 0);
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float xs =
              kOneToken ? s_scales[xv.kind == Fp8ActScale::kRow ? s_row[nt][h] : 0] : act_scale(xv, s_row[nt][h], k_groups, 0);
          acc[nt][h] *= ws_lo * xs;
          acc[nt][2 + h] *= ws_hi * xs;
        }
    }
    if constexpr (kOneToken) {
      s_shared.add(p, w, acc[0]);  // one pass: at most 8 pairs
    } else {
      gemv::finish_pass<TOut, kSplitK, kNTiles, kGateUp>(p, w, c0, acc, s_shared);
    }
  }
  if constexpr (kOneToken) {
    allow_successor();
    __syncthreads();
    s_shared.template store<TOut>(p, w.unit0);
  }
}

// kMinBlocks: the resident CTAs per SM a variant is compiled for (__launch_bounds__), 0 for
// no bound (ptxas takes what the code needs: 2 CTAs for the one-n-tile kernels, 1-2 for four).
// Block scales at one n-tile come in both: 3 (80 registers, a few spills) for full waves,
// none (126-128 registers) for grids within one wave of 2 and for bound grids that would
// leave a short second wave (launch_fp8_gemv's ctas_per_sm, chosen by the planner, v18).
// A bound of 1 is not the same as none: it raised 110 -> 176 registers (ptxas -v).
template <typename TOut, int kSplitK, int kNTiles, bool kGateUp, bool kBlock, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks) fp8_gemv_kernel(GroupedGemvParams p, Fp8WeightsView wv, Fp8ActView xv) {
  fp8_gemv<TOut, kSplitK, kNTiles, kGateUp, kBlock, false>(p, wv, xv, nullptr);
}

// launch_fp8_one_token_down's kernels (fp8_gemv's kOneToken; kFewTokens for 2 to 4 tokens).
template <typename TOut, int kSplitK, bool kBlock, bool kFewTokens>
__global__ void __launch_bounds__(kThreads) fp8_one_token_down_kernel(GroupedGemvParams p, Fp8WeightsView wv, Fp8ActView xv,
                                                                      float* amax_out) {
  fp8_gemv<TOut, kSplitK, 1, false, kBlock, true, kFewTokens>(p, wv, xv, amax_out);
}

using Fp8GemvKernel = void (*)(GroupedGemvParams, Fp8WeightsView, Fp8ActView);

template <typename TOut, int kNTiles, bool kGateUp, bool kBlock, int kMinBlocks>
Fp8GemvKernel fp8_kernel_for_split(int32_t split_k) {
  switch (split_k) {
    case 1: return fp8_gemv_kernel<TOut, 1, kNTiles, kGateUp, kBlock, kMinBlocks>;
    case 2: return fp8_gemv_kernel<TOut, 2, kNTiles, kGateUp, kBlock, kMinBlocks>;
    case 4: return fp8_gemv_kernel<TOut, 4, kNTiles, kGateUp, kBlock, kMinBlocks>;
    case 8: return fp8_gemv_kernel<TOut, 8, kNTiles, kGateUp, kBlock, kMinBlocks>;
    default: return nullptr;
  }
}

template <typename TOut, int kNTiles, bool kBlock, int kMinBlocks>
Fp8GemvKernel fp8_kernel_for_projection(bool gate_up, int32_t split_k) {
  return gate_up ? fp8_kernel_for_split<TOut, kNTiles, true, kBlock, kMinBlocks>(split_k)
                 : fp8_kernel_for_split<TOut, kNTiles, false, kBlock, kMinBlocks>(split_k);
}

template <typename TOut, bool kBlock>
Fp8GemvKernel fp8_kernel_for_tiles(bool gate_up, int32_t split_k, int32_t n_tiles, int32_t ctas_per_sm) {
  if (n_tiles == 4) return fp8_kernel_for_projection<TOut, 4, kBlock, 0>(gate_up, split_k);
  if (n_tiles != 1) return nullptr;
  if constexpr (kBlock) {
    if (ctas_per_sm == kFp8GemvBoundCtasPerSm) {
      return fp8_kernel_for_projection<TOut, 1, kBlock, kFp8GemvBoundCtasPerSm>(gate_up, split_k);
    }
  }
  return fp8_kernel_for_projection<TOut, 1, kBlock, 0>(gate_up, split_k);
}

// The fp8_gemv instantiation for these values (ctas_per_sm as launch_fp8_gemv takes it);
// nullptr for unsupported ones.
Fp8GemvKernel fp8_kernel_for(ElemType elem, bool block, bool gate_up, int32_t split_k, int32_t n_tiles,
                             int32_t ctas_per_sm) {
  if (elem == ElemType::kBF16) {
    return block ? fp8_kernel_for_tiles<__nv_bfloat16, true>(gate_up, split_k, n_tiles, ctas_per_sm)
                 : fp8_kernel_for_tiles<__nv_bfloat16, false>(gate_up, split_k, n_tiles, ctas_per_sm);
  }
  return block ? fp8_kernel_for_tiles<__half, true>(gate_up, split_k, n_tiles, ctas_per_sm)
               : fp8_kernel_for_tiles<__half, false>(gate_up, split_k, n_tiles, ctas_per_sm);
}

// One CTA row per expert: the 128 x 128 block scales in sm90_grouped_gemm.cuh's SFB layout,
// [kb][ceil(n / g)] per expert for g columns per scale (the checkpoint's [nb][kb] transposed,
// each block's scale 128 / g times).
__global__ void fp8_weight_scales_kernel(Fp8WeightScalesParams p) {
  const int e = static_cast<int>(blockIdx.y);
  if (p.expert_counts != nullptr && p.expert_counts[e] == 0) return;
  const Fp8WeightsView& wv = p.w;
  const int64_t g = p.n_granularity;
  const int64_t nbs = (wv.n + kFp8ScaleBlock - 1) / kFp8ScaleBlock, kbs = (wv.k + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
  const int64_t ngs = (wv.n + g - 1) / g;
  const float* in = wv.scales + static_cast<int64_t>(e) * nbs * kbs;
  float* out = p.out + static_cast<int64_t>(e) * ngs * kbs;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < ngs * kbs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t kb = i / ngs, ng = i % ngs;
    out[i] = in[ng * g / kFp8ScaleBlock * kbs + kb];
  }
}

}  // namespace

namespace {

// The input view's own requirements (Fp8QuantIn).
bool valid_input(const Fp8QuantParams& p) {
  if (p.rows < 0 || p.cols % kVec != 0 || (p.in == nullptr && p.rows > 0)) return false;
  if (p.codes_by_token && p.in_kind != Fp8QuantIn::kScatterTokens) return false;
  switch (p.in_kind) {
    case Fp8QuantIn::kRows: return true;
    case Fp8QuantIn::kGatherTokens: return p.sorted_pairs != nullptr && p.row_of_pair != nullptr && p.topk > 0;
    case Fp8QuantIn::kGatedAct: return p.topk_weights == nullptr || p.sorted_pairs != nullptr;
    case Fp8QuantIn::kScatterTokens:
      // Group and tensor scales: 128-column spans, a team of one vector per lane holding one
      // destination's scale slot per lane (fp8_quantize_spans_kernel).
      static_assert(kFp8ScaleBlock / kVec >= kFp8ScatterSpanMaxTopk, "a span team's lanes hold every destination's slot");
      return p.row_of_pair != nullptr && p.topk > 0 && p.out_kind == Fp8QuantOut::kE4M3Grouped &&
             (p.kind == Fp8ActScale::kRow ||
              (p.topk <= kFp8ScatterSpanMaxTopk && (p.kind == Fp8ActScale::kTensor || p.group == kFp8ScaleBlock)));
  }
  return false;
}

template <typename T, Fp8QuantIn kIn, GatedAct kAct>
cudaError_t launch_fp8_quantize_typed(const Fp8QuantParams& p, const AlignParams& table, cudaStream_t stream, bool pdl) {
  constexpr int64_t kMaxBlocks = 0x7fffffff;
  // Threads the H100/H200 hold at once (132 SMs x 2048): the mappings below spread a few rows
  // over about this many threads and give many rows fewer threads each.
  constexpr int64_t kResidentThreads = 132 * 2048;
  const unsigned extra = table.topk_ids != nullptr ? 1 : 0;  // the table's CTA (table_cta), last
  if constexpr (kIn == Fp8QuantIn::kRows) {
    if (p.whole_tensor) {
      return launch_maybe_pdl(pdl, fp8_quantize_rows_kernel<T, kQuantThreads, kIn, kAct, true>, 1 + extra, kQuantThreads,
                              stream, p, table);
    }
  }
  if (p.kind == Fp8ActScale::kRow) {
    // A warp per row from 512 rows of fewer vectors than a CTA has threads (a CTA per row
    // leaves some idle), except x's scatter (each vector stored at its token's pair rows: a
    // warp per row ran 1.15-2.2x longer alone, v70). v71 (H100): the activation's quantizer
    // alone 0.63-0.80 (Scout M = 512-1024, Qwen3 M = 128); the layer Scout M = 1024
    // 0.978-0.980, Qwen3 / Qwen2 TP4 M = 128 0.984-0.988, the other points even.
    const bool short_rows = kIn != Fp8QuantIn::kScatterTokens && p.rows >= 512 && p.cols / kVec < kQuantThreads;
    const bool cta_per_row = p.rows * kQuantThreads <= kResidentThreads && !short_rows;
    const int64_t blocks = cta_per_row ? p.rows : (p.rows + kQuantThreads / 32 - 1) / (kQuantThreads / 32);
    if (blocks > kMaxBlocks) return cudaErrorInvalidValue;
    const unsigned grid = static_cast<unsigned>(blocks) + extra;
    return cta_per_row ? launch_maybe_pdl(pdl, fp8_quantize_rows_kernel<T, kQuantThreads, kIn, kAct>, grid, kQuantThreads,
                                          stream, p, table)
                       : launch_maybe_pdl(pdl, fp8_quantize_rows_kernel<T, 32, kIn, kAct>, grid, kQuantThreads, stream, p,
                                          table);
  }
  // Spans: the groups, or 128 columns per span for a per-tensor scale (kE4M3Grouped's block).
  const int64_t span = p.kind == Fp8ActScale::kGroup ? p.group : kFp8ScaleBlock;
  const int64_t span_vecs = span / kVec;
  const int team = span_vecs <= 32 && 32 % span_vecs == 0 ? static_cast<int>(span_vecs) : 32;
  const int64_t spans = std::max<int64_t>(1, (p.cols + span - 1) / span);
  const int64_t per_team = std::min(spans, std::max<int64_t>(1, p.rows * spans * team / kResidentThreads));
  const int64_t teams = p.rows * ((spans + per_team - 1) / per_team);
  const int64_t teams_per_cta = kQuantThreads / 32 * (32 / team);
  const int64_t blocks = (teams + teams_per_cta - 1) / teams_per_cta;
  if (blocks > kMaxBlocks) return cudaErrorInvalidValue;
  return launch_maybe_pdl(pdl, fp8_quantize_spans_kernel<T, kIn, kAct>, static_cast<unsigned>(blocks) + extra,
                          kQuantThreads, stream, p, span, team, per_team, table);
}

// f(view, act) with the input view (Fp8QuantIn) and the gated activation (GatedAct) as
// compile-time constants: the plain views have no activation, one instantiation (kSilu, unused).
template <typename F>
cudaError_t dispatch_view(const Fp8QuantParams& p, F&& f) {
  using In = Fp8QuantIn;
  const auto plain = [&](auto in) { return f(in, std::integral_constant<GatedAct, GatedAct::kSilu>{}); };
  switch (p.in_kind) {
    case In::kRows: return plain(std::integral_constant<In, In::kRows>{});
    case In::kGatherTokens: return plain(std::integral_constant<In, In::kGatherTokens>{});
    case In::kScatterTokens: return plain(std::integral_constant<In, In::kScatterTokens>{});
    case In::kGatedAct:
      return dispatch_act(p.act, [&](auto a) { return f(std::integral_constant<In, In::kGatedAct>{}, a); });
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t launch_fp8_quantize_view(const Fp8QuantParams& p, const AlignParams& table, cudaStream_t stream, bool pdl) {
  return dispatch_view(p, [&](auto in, auto act) {
    return launch_fp8_quantize_typed<T, decltype(in)::value, decltype(act)::value>(p, table, stream, pdl);
  });
}

}  // namespace

cudaError_t launch_fp8_amax(ElemType elem, const void* in, int64_t rows, int64_t cols, const int64_t* live_rows,
                            float* amax, cudaStream_t stream) {
  if (rows < 0 || cols % kVec != 0 || amax == nullptr) return cudaErrorInvalidValue;
  cudaError_t err = cudaMemsetAsync(amax, 0, sizeof(float), stream);
  if (err != cudaSuccess || rows == 0 || cols == 0) return err;
  const int64_t vecs = rows * cols / kVec;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((vecs + 255) / 256, 1024));
  unsigned int* bits = reinterpret_cast<unsigned int*>(amax);
  if (elem == ElemType::kBF16) {
    fp8_amax_kernel<__nv_bfloat16><<<blocks, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(in), rows, cols,
                                                                live_rows, bits);
  } else {
    fp8_amax_kernel<__half><<<blocks, 256, 0, stream>>>(static_cast<const __half*>(in), rows, cols, live_rows, bits);
  }
  return cudaGetLastError();
}

cudaError_t launch_fp8_quantize(const Fp8QuantParams& p, cudaStream_t stream, bool after_predecessor,
                                const AlignParams* table) {
  if (!valid_input(p) || p.out == nullptr) return cudaErrorInvalidValue;
  if (table != nullptr && (!align_params_ok(*table, true) || p.in_kind != Fp8QuantIn::kRows || p.rows == 0)) {
    return cudaErrorInvalidValue;
  }
  if (p.kind == Fp8ActScale::kGroup && (p.group <= 0 || p.group % kVec != 0)) return cudaErrorInvalidValue;
  if (p.whole_tensor && (p.kind != Fp8ActScale::kTensor || p.tensor_scale != nullptr || p.in_kind != Fp8QuantIn::kRows ||
                         p.out_kind != Fp8QuantOut::kF16Values || p.scales == nullptr ||
                         p.cols <= 0 || p.rows > kFp8WholeTensorValues / p.cols)) {
    return cudaErrorInvalidValue;
  }
  if (p.kind == Fp8ActScale::kTensor && p.tensor_scale == nullptr && p.amax == nullptr && !p.whole_tensor) {
    return cudaErrorInvalidValue;
  }
  if (p.kind != Fp8ActScale::kTensor && p.scales == nullptr) return cudaErrorInvalidValue;
  if (p.out_kind == Fp8QuantOut::kE4M3Grouped &&
      (p.scales == nullptr || p.expert_offsets == nullptr || p.num_experts <= 0 ||
       (p.kind == Fp8ActScale::kGroup && p.group != kFp8ScaleBlock))) {
    return cudaErrorInvalidValue;
  }
  if (p.rows == 0) return cudaSuccess;
  const AlignParams none;  // topk_ids nullptr: no table's CTA
  const AlignParams& t = table != nullptr ? *table : none;
  return p.elem == ElemType::kBF16 ? launch_fp8_quantize_view<__nv_bfloat16>(p, t, stream, after_predecessor)
                                   : launch_fp8_quantize_view<__half>(p, t, stream, after_predecessor);
}

namespace {

template <typename T, Fp8QuantIn kIn, GatedAct kAct>
cudaError_t launch_one_pass_typed(const Fp8QuantParams& p, float* partials, const Fp8OnePassPlan& plan,
                                  cudaStream_t stream) {
  constexpr auto kKernel = fp8_quantize_one_pass_kernel<T, kIn, kAct>;
  // Above 48 KiB of dynamic shared memory a kernel must opt in (once, at the most a launch takes).
  static const cudaError_t opt_in = cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                         static_cast<int>(kFp8OnePassHeldBytes));
  if (opt_in != cudaSuccess) return opt_in;
  cudaLaunchAttribute cooperative = {};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  return launch_with_attribute(cooperative, kKernel, dim3(static_cast<unsigned>(plan.ctas)), dim3(kQuantThreads),
                               static_cast<size_t>(plan.held_bytes), stream, p, partials, plan.segments, plan.seg_vecs);
}

template <typename T>
cudaError_t launch_one_pass_view(const Fp8QuantParams& p, float* partials, const Fp8OnePassPlan& plan,
                                 cudaStream_t stream) {
  return dispatch_view(p, [&](auto in, auto act) {
    constexpr Fp8QuantIn kIn = decltype(in)::value;
    if constexpr (kIn == Fp8QuantIn::kGatherTokens) {
      return cudaErrorInvalidValue;  // its amax is over x's tokens, not its rows
    } else {
      return launch_one_pass_typed<T, kIn, decltype(act)::value>(p, partials, plan, stream);
    }
  });
}

}  // namespace

cudaError_t launch_fp8_quantize_one_pass(const Fp8QuantParams& p, float* partials, int32_t sms, cudaStream_t stream) {
  if (!valid_input(p) || p.out == nullptr || partials == nullptr || p.kind != Fp8ActScale::kTensor ||
      p.tensor_scale != nullptr || p.whole_tensor || p.in_kind == Fp8QuantIn::kGatherTokens || p.topk > 32) {
    return cudaErrorInvalidValue;
  }
  if (p.out_kind == Fp8QuantOut::kE4M3Grouped &&
      (p.scales == nullptr || p.expert_offsets == nullptr || p.num_experts <= 0)) {
    return cudaErrorInvalidValue;
  }
  if (p.rows == 0) return cudaSuccess;
  const Fp8OnePassPlan plan = fp8_one_pass_plan(p.rows, p.cols, sms);
  if (!plan.fits) return cudaErrorInvalidValue;
  return p.elem == ElemType::kBF16 ? launch_one_pass_view<__nv_bfloat16>(p, partials, plan, stream)
                                   : launch_one_pass_view<__half>(p, partials, plan, stream);
}

namespace {

// The checks both fp8_gemv launchers share: K, the weights and their scales, align's table
// (WarpPlace's kDirect), and block weights with per-group activations of the same block_k
// (docs/FORMATS.md), other weights without.
bool fp8_gemv_args_ok(const GroupedGemvParams& p, const Fp8WeightsView& w, const Fp8ActView& x) {
  if (p.k <= 0 || p.k % 16 != 0 || p.k > kFp8GemvMaxK || p.n_out <= 0 || w.w == nullptr || w.scales == nullptr ||
      p.expert_offsets == nullptr || !gemv_table_ok(p)) {
    return false;
  }
  if (w.kind == Fp8WeightScale::kBlock) {
    return w.block_k % 64 == 0 && w.block_n > 0 && x.kind == Fp8ActScale::kGroup && x.group == w.block_k;
  }
  return x.kind != Fp8ActScale::kGroup;
}

}  // namespace

cudaError_t launch_fp8_gemv(const GroupedGemvParams& p, const Fp8WeightsView& w, const Fp8ActView& x,
                            int32_t ctas_per_sm, cudaStream_t stream) {
  if (!fp8_gemv_args_ok(p, w, x) || x.scales == nullptr || p.max_active <= 0 || p.max_active > 65535 ||
      (ctas_per_sm != 0 && ctas_per_sm != kFp8GemvBoundCtasPerSm)) {
    return cudaErrorInvalidValue;
  }
  const bool block = w.kind == Fp8WeightScale::kBlock;
  const Fp8GemvKernel kernel = fp8_kernel_for(p.elem, block, p.gate_up, p.split_k, p.n_tiles, ctas_per_sm);
  if (kernel == nullptr) return cudaErrorInvalidValue;
  return launch_with_pdl(kernel, gemv::grid_for(p), dim3(kThreads), stream, p, w, x);
}

cudaError_t launch_fp8_one_token_down(const GroupedGemvParams& p, const Fp8WeightsView& w, const Fp8ActView& x,
                                      float* amax_out, int32_t tokens, cudaStream_t stream) {
  // The token counts fp8_one_token_down_takes_tokens names (one token: align's table as the
  // one-token GEMVs read it); the rows fit shared memory.
  const bool few = tokens > 1;
  const bool table_ok =
      fp8_one_token_down_takes_tokens(tokens, p.topk, x.kind == Fp8ActScale::kTensor && x.scales == nullptr) &&
      (few || gemv::one_token_down_tokens(p) > 0);
  if (!fp8_gemv_args_ok(p, w, x) || p.gate_up || p.x == nullptr || p.num_experts <= 0 || !table_ok ||
      !fp8_one_token_down_supports(p.k, p.topk, x.kind == Fp8ActScale::kGroup, x.group)) {
    return cudaErrorInvalidValue;
  }
  const bool block = w.kind == Fp8WeightScale::kBlock;
  const dim3 grid(static_cast<unsigned>((p.n_out + 15) / 16), static_cast<unsigned>(tokens));
  const bool split = one_token_down_split(p.topk) == 2;
  const size_t smem = static_cast<size_t>(fp8_one_token_down_smem(p.k, p.topk, x.kind == Fp8ActScale::kGroup, x.group));
  auto launch = [&](auto out, auto is_block) -> cudaError_t {
    using T = decltype(out);
    constexpr bool kB = decltype(is_block)::value;
    const auto kernel = few ? (split ? fp8_one_token_down_kernel<T, 2, kB, true> : fp8_one_token_down_kernel<T, 1, kB, true>)
                            : (split ? fp8_one_token_down_kernel<T, 2, kB, false> : fp8_one_token_down_kernel<T, 1, kB, false>);
    return launch_with_pdl_smem(kernel, grid, dim3(kThreads), smem, stream, p, w, x, amax_out);
  };
  using Block = std::true_type;
  using Scaled = std::false_type;
  if (p.elem == ElemType::kBF16) return block ? launch(__nv_bfloat16(), Block()) : launch(__nv_bfloat16(), Scaled());
  return block ? launch(__half(), Block()) : launch(__half(), Scaled());
}

cudaError_t fp8_gemv_resident_ctas(ElemType elem, bool block, bool gate_up, int32_t split_k, int32_t n_tiles,
                                   int32_t ctas_per_sm, int* resident) {
  if (ctas_per_sm != 0 && ctas_per_sm != kFp8GemvBoundCtasPerSm) return cudaErrorInvalidValue;
  return gemv::resident_ctas(fp8_kernel_for(elem, block, gate_up, split_k, n_tiles, ctas_per_sm), resident);
}

cudaError_t launch_fp8_weight_scales(const Fp8WeightScalesParams& p, cudaStream_t stream) {
  if (p.w.n <= 0 || p.w.k <= 0 || p.experts <= 0 || p.experts > 65535 || p.out == nullptr || p.w.scales == nullptr ||
      p.w.kind != Fp8WeightScale::kBlock || p.w.block_n != kFp8ScaleBlock || p.w.block_k != kFp8ScaleBlock ||
      (p.n_granularity != kFp8ScaleBlock && p.n_granularity != kFp8WideTileScaleCols)) {
    return cudaErrorInvalidValue;
  }
  const int64_t entries = (p.w.n + p.n_granularity - 1) / p.n_granularity * ((p.w.k + kFp8ScaleBlock - 1) / kFp8ScaleBlock);
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>((entries + 255) / 256, 64)), static_cast<unsigned>(p.experts));
  fp8_weight_scales_kernel<<<grid, 256, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace fusedmoe::kernels
