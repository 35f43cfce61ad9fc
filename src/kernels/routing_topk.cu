// routing_topk: router logits -> (topk_ids, topk_weights), one warp per token.
//
// Scores: softmax over the experts or element-wise sigmoid (fp32). DeepSeek grouped top-k:
// experts form n_group contiguous groups; a group scores the sum of its two best biased
// scores (with a correction bias) or its best score (without); the topk_group best groups
// are eligible. Then the k best eligible biased scores pick the experts (ties to the lower
// index, as the reference); the weights are the unbiased scores, renormalized on request,
// times routed_scaling_factor.
//
// Layout: lane l holds experts [l * kPer, (l + 1) * kPer) in registers (kPer = E / 32 rounded
// up to a power of two, E <= 1024). At one token a warp's path is the layer's latency, so it
// is kept short (v71: DeepSeek-V3's router took 16.6 us at M = 1 in `bench --stage routing`,
// its warp walking the groups one by one and each of the k picks in a 10-shuffle argmax):
// - every load is issued before any is used (the logits' type is a template parameter);
// - where a group fills whole lanes (a power of two of them: DeepSeek-V3's 32 experts are 4
//   lanes of 8), the groups' top-2 come from two shuffle steps, all groups at once; else
//   group g's score is gathered in lane g, a group after another;
// - a group is eligible when fewer than topk_group groups beat it (higher score, or equal at
//   a lower index): the topk_group rounds of argmax, without their rounds;
// - each of the k picks is one warp max (redux.sync) over the lanes' best untaken
//   candidates as order-preserving keys, the lowest lane holding it (a ballot) the winner;
//   only that lane then moves to its next candidate. Up to 8 per lane the candidates are
//   sorted once (a sorting network), so a pick's chain is the max, the ballot and a shift
//   (v71's count: the rescan per pick was about 45% of DeepSeek-V3's); wider lanes
//   rescan their untaken candidates;
// - the successor may launch at once (griddepcontrol.launch_dependents first): align, launched
//   as its programmatic dependent, is resident and waiting when the ids land;
// - sigmoid with the fast exponential and reciprocal (a few ulp: the weights' tolerance is
//   2e-6, and only near ties can order differently), softmax with the accurate exponential
//   (its arguments reach -20 and beyond) and one reciprocal of the sum.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "device_util.cuh"
#include "launch.h"

namespace fusedmoe::kernels {

namespace {

constexpr int kWarpsPerCta = 8;
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ float logit_to_float(float v) { return v; }
__device__ __forceinline__ float logit_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float logit_to_float(__half v) { return __half2float(v); }

// A float's bits, mapped so that unsigned order is float order (-0 taken as +0, so that the
// two zeros tie as they compare). Every float maps above 0: key 0 is "no candidate".
__device__ __forceinline__ uint32_t order_key(float f) {
  const uint32_t u = __float_as_uint(f + 0.0f);
  return (u & 0x80000000u) != 0 ? ~u : u | 0x80000000u;
}

// (b1, b2): the two largest of the values offered so far (min / max, not branches; a NaN
// is never kept, as with comparisons).
__device__ __forceinline__ void keep_top2(float v, float& b1, float& b2) {
  b2 = fmaxf(b2, fminf(b1, v));
  b1 = fmaxf(b1, v);
}

// Merges the top-2 of the lanes lane ^ off into this lane's.
__device__ __forceinline__ void merge_top2(int off, float& b1, float& b2) {
  const float o1 = __shfl_xor_sync(kFull, b1, off), o2 = __shfl_xor_sync(kFull, b2, off);
  const float hi = fmaxf(b1, o1);
  const float lo = fmaxf(fminf(b1, o1), fmaxf(b2, o2));
  b1 = hi;
  b2 = lo;
}

// A lane's candidates, best first: keys (order_key of the biased score; 0: none), their slots
// and unbiased scores. head_*() is the best untaken one; pop_if(true) takes it (init and
// pop_if are given the lane's scores).
//
// Sorted: a bitonic network, once, over (key, kPer - 1 - slot) as one 64-bit value descending
// (ties to the lower slot, as the reference), each compare-exchange one compare and selects
// (v72's first form swapped under an `if`, which ptxas kept as branches: ~350 of its 1355
// instructions at DeepSeek-V3); pop_if shifts the arrays, so a pick's chain does not rescan.
template <int kPer>
struct SortedCandidates {
  uint64_t key[kPer];  // order_key << 32 | (kPer - 1 - slot)
  float score[kPer];

  __device__ __forceinline__ void init(const uint32_t (&k)[kPer], const float (&s)[kPer]) {
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      key[i] = static_cast<uint64_t>(k[i]) << 32 | static_cast<uint32_t>(kPer - 1 - i);
      score[i] = s[i];
    }
#pragma unroll
    for (int size = 2; size <= kPer; size <<= 1) {
#pragma unroll
      for (int stride = size >> 1; stride > 0; stride >>= 1) {
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
          const int j = i ^ stride;
          if (j > i) {
            // i holds the larger where (i & size) == 0 (a descending run), else the smaller
            const bool swap = (i & size) == 0 ? key[j] > key[i] : key[i] > key[j];
            const uint64_t ki = key[i], kj = key[j];
            const float si = score[i], sj = score[j];
            key[i] = swap ? kj : ki;
            key[j] = swap ? ki : kj;
            score[i] = swap ? sj : si;
            score[j] = swap ? si : sj;
          }
        }
      }
    }
  }
  __device__ __forceinline__ uint32_t head_key() const { return static_cast<uint32_t>(key[0] >> 32); }
  __device__ __forceinline__ int head_slot() const { return kPer - 1 - static_cast<int>(static_cast<uint32_t>(key[0])); }
  __device__ __forceinline__ float head_score() const { return score[0]; }
  // Takes the head where `take` (selects on every lane: as a branch, ptxas renamed the arrays
  // with moves on each pick).
  __device__ __forceinline__ void pop_if(bool take, const float (&)[kPer]) {
#pragma unroll
    for (int i = 0; i + 1 < kPer; ++i) {
      key[i] = take ? key[i + 1] : key[i];
      score[i] = take ? score[i + 1] : score[i];
    }
    key[kPer - 1] = take ? 0 : key[kPer - 1];
  }
};

// Scanned: the best untaken key found again after each pop (ties to the lower slot); the
// scores stay in the caller's array, which init and pop are given.
template <int kPer>
struct ScannedCandidates {
  uint32_t key[kPer];
  uint32_t best = 0;
  int at = 0;
  float at_score = 0.0f;

  __device__ __forceinline__ void scan(const float (&score)[kPer]) {
    best = 0;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      if (key[i] > best) {  // strictly: ties to the lower slot
        best = key[i];
        at = i;
        at_score = score[i];
      }
    }
  }
  __device__ __forceinline__ void init(const uint32_t (&k)[kPer], const float (&score)[kPer]) {
#pragma unroll
    for (int i = 0; i < kPer; ++i) key[i] = k[i];
    scan(score);
  }
  __device__ __forceinline__ uint32_t head_key() const { return best; }
  __device__ __forceinline__ int head_slot() const { return at; }
  __device__ __forceinline__ float head_score() const { return at_score; }
  __device__ __forceinline__ void pop_if(bool take, const float (&score)[kPer]) {
    if (!take) return;
#pragma unroll
    for (int i = 0; i < kPer; ++i) key[i] = at == i ? 0u : key[i];
    scan(score);
  }
};

template <int kPer>
using LaneCandidates = std::conditional_t<(kPer <= 8), SortedCandidates<kPer>, ScannedCandidates<kPer>>;

template <typename TLogit, int kPer>
__global__ void __launch_bounds__(kWarpsPerCta * 32) routing_topk_kernel(RoutingParams p) {
  // A successor launched as a programmatic dependent (align: AlignParams::ids_from_predecessor)
  // may start now; it waits for this grid before it reads the ids.
  allow_successor();
  const int lane = threadIdx.x & 31;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + (threadIdx.x >> 5);
  if (t >= p.m) return;
  const int E = p.num_experts;
  const int first = lane * kPer;
  const TLogit* row = static_cast<const TLogit*>(p.logits) + t * E;
  float score[kPer], choice[kPer];
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const bool live = first + i < E;
    score[i] = live ? logit_to_float(row[first + i]) : -FLT_MAX;
    choice[i] = live && p.correction_bias != nullptr ? p.correction_bias[first + i] : 0.0f;
  }
  if (p.softmax) {
    float mx = -FLT_MAX;
#pragma unroll
    for (int i = 0; i < kPer; ++i) mx = fmaxf(mx, score[i]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, off));
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      score[i] = first + i < E ? expf(score[i] - mx) : 0.0f;
      sum += score[i];
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(kFull, sum, off);
    const float inv = 1.0f / sum;
#pragma unroll
    for (int i = 0; i < kPer; ++i) score[i] *= inv;
  } else {
#pragma unroll
    for (int i = 0; i < kPer; ++i) score[i] = __fdividef(1.0f, 1.0f + __expf(-score[i]));
  }
#pragma unroll
  for (int i = 0; i < kPer; ++i) choice[i] = first + i < E ? score[i] + choice[i] : -FLT_MAX;

  // Grouped top-k: the experts of groups outside the best topk_group made ineligible.
  if (p.n_group > 0) {
    const int per_group = E / p.n_group;
    const int span = per_group / kPer;  // lanes per group, where groups fill whole lanes
    const bool lanes_hold_groups = per_group % kPer == 0 && (span & (span - 1)) == 0;  // uniform
    float group_score = -FLT_MAX;  // of this lane's group (whole lanes), or of group `lane`
    int my_group = lane, stride = 1;
    int group_of[kPer];  // where groups do not fill whole lanes: each slot's group (-1: none)
    if (lanes_hold_groups) {
      float b1 = -FLT_MAX, b2 = -FLT_MAX;
#pragma unroll
      for (int i = 0; i < kPer; ++i) keep_top2(choice[i], b1, b2);
      for (int off = 1; off < span; off <<= 1) merge_top2(off, b1, b2);
      group_score = p.correction_bias != nullptr ? b1 + b2 : b1;
      my_group = lane / span;
      stride = span;
    } else {
#pragma unroll
      for (int i = 0; i < kPer; ++i) group_of[i] = first + i < E ? (first + i) / per_group : -1;
      for (int g = 0; g < p.n_group; ++g) {
        float b1 = -FLT_MAX, b2 = -FLT_MAX;
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
          if (group_of[i] == g) keep_top2(choice[i], b1, b2);
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) merge_top2(off, b1, b2);
        if (lane == g) group_score = p.correction_bias != nullptr ? b1 + b2 : b1;
      }
    }
    int beaten_by = 0;
    for (int h = 0; h < p.n_group; ++h) {
      const float o = __shfl_sync(kFull, group_score, h * stride);
      beaten_by += o > group_score || (o == group_score && h < my_group) ? 1 : 0;
    }
    const bool eligible = my_group < p.n_group && beaten_by < p.topk_group;
    if (lanes_hold_groups) {
#pragma unroll
      for (int i = 0; i < kPer; ++i) choice[i] = eligible ? choice[i] : -FLT_MAX;
    } else {
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        if (__shfl_sync(kFull, static_cast<int>(eligible), max(group_of[i], 0)) == 0) choice[i] = -FLT_MAX;
      }
    }
  }

  // k picks over the lanes' candidates; lane r keeps pick r's expert and score.
  LaneCandidates<kPer> cand;
  {
    uint32_t keys[kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i) keys[i] = first + i < E ? order_key(choice[i]) : 0u;
    cand.init(keys, score);
  }
  int my_id = 0;
  float my_score = 0.0f, chosen_sum = 0.0f;
  for (int r = 0; r < p.topk; ++r) {
    const uint32_t key = cand.head_key();
    const uint32_t best = __reduce_max_sync(kFull, key);
    const int owner = __ffs(__ballot_sync(kFull, key == best)) - 1;  // the lowest index holding it
    const int idx = owner * kPer + __shfl_sync(kFull, cand.head_slot(), owner);
    const float s = __shfl_sync(kFull, cand.head_score(), owner);
    chosen_sum += s;
    if (lane == r) {
      my_id = idx;
      my_score = s;
    }
    cand.pop_if(lane == owner, score);
  }
  if (lane < p.topk) {
    float w = my_score;
    if (p.renormalize && chosen_sum > 0.0f) w /= chosen_sum;
    p.topk_ids[t * p.topk + lane] = my_id;
    p.topk_weights[t * p.topk + lane] = w * p.routed_scaling_factor;
  }
}

template <typename TLogit>
void launch_typed(const RoutingParams& p, unsigned blocks, cudaStream_t stream) {
  const int per_lane = (p.num_experts + 31) / 32;
  const dim3 block(kWarpsPerCta * 32);
  if (per_lane <= 1) routing_topk_kernel<TLogit, 1><<<blocks, block, 0, stream>>>(p);
  else if (per_lane <= 2) routing_topk_kernel<TLogit, 2><<<blocks, block, 0, stream>>>(p);
  else if (per_lane <= 4) routing_topk_kernel<TLogit, 4><<<blocks, block, 0, stream>>>(p);
  else if (per_lane <= 8) routing_topk_kernel<TLogit, 8><<<blocks, block, 0, stream>>>(p);
  else if (per_lane <= 16) routing_topk_kernel<TLogit, 16><<<blocks, block, 0, stream>>>(p);
  else routing_topk_kernel<TLogit, 32><<<blocks, block, 0, stream>>>(p);
}

}  // namespace

cudaError_t launch_routing_topk(const RoutingParams& p, cudaStream_t stream) {
  if (p.m == 0) return cudaSuccess;
  if (p.num_experts <= 0 || p.num_experts > kMaxExperts || p.topk <= 0 || p.topk > kMaxTopk ||
      p.n_group > kMaxExpertGroups) {
    return cudaErrorInvalidValue;
  }
  const unsigned blocks = static_cast<unsigned>((p.m + kWarpsPerCta - 1) / kWarpsPerCta);
  switch (p.logits_dtype) {
    case RoutingLogits::kBF16: launch_typed<__nv_bfloat16>(p, blocks, stream); break;
    case RoutingLogits::kFP16: launch_typed<__half>(p, blocks, stream); break;
    case RoutingLogits::kFP32: launch_typed<float>(p, blocks, stream); break;
  }
  return cudaGetLastError();
}

}  // namespace fusedmoe::kernels
