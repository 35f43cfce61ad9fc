// routing_topk: router logits -> (topk_ids, topk_weights), one warp per token.
//
// Scores: softmax over the experts or element-wise sigmoid (fp32). DeepSeek grouped top-k:
// experts form n_group contiguous groups; a group scores the sum of its two best biased
// scores (with a correction bias) or its best score (without); the topk_group best groups
// are eligible. Then k rounds of a warp argmax over the eligible biased scores pick the
// experts (ties to the lower index, as the reference); the weights are the unbiased scores,
// renormalized on request, times routed_scaling_factor.
//
// Layout: lane l holds experts [l * kPer, (l + 1) * kPer) in registers (kPer = E / 32 rounded
// up to a power of two, E <= 1024); group g's score ends in lane g (n_group <= 32). Round r's
// winner is known to every lane and lane r writes it, so nothing is indexed at run time.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cfloat>

#include "launch.h"

namespace fusedmoe::kernels {

namespace {

constexpr int kWarpsPerCta = 8;

__device__ __forceinline__ float load_logit(const void* base, RoutingLogits dtype, int64_t i) {
  switch (dtype) {
    case RoutingLogits::kBF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    case RoutingLogits::kFP16: return __half2float(static_cast<const __half*>(base)[i]);
    case RoutingLogits::kFP32: break;
  }
  return static_cast<const float*>(base)[i];
}

// Warp argmax of (value, index): larger value wins, equal values go to the lower index.
__device__ __forceinline__ void warp_argmax(float& value, int& index) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const float v = __shfl_xor_sync(0xffffffffu, value, off);
    const int i = __shfl_xor_sync(0xffffffffu, index, off);
    if (v > value || (v == value && i < index)) {
      value = v;
      index = i;
    }
  }
}

template <int kPer>
__global__ void __launch_bounds__(kWarpsPerCta * 32) routing_topk_kernel(RoutingParams p) {
  const int lane = threadIdx.x & 31;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + (threadIdx.x >> 5);
  if (t >= p.m) return;
  const int E = p.num_experts;
  float score[kPer], choice[kPer];
  float mx = -FLT_MAX;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int j = lane * kPer + i;
    score[i] = j < E ? load_logit(p.logits, p.logits_dtype, t * E + j) : -FLT_MAX;
    mx = fmaxf(mx, score[i]);
  }
  if (p.softmax) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      score[i] = lane * kPer + i < E ? expf(score[i] - mx) : 0.0f;
      sum += score[i];
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
#pragma unroll
    for (int i = 0; i < kPer; ++i) score[i] /= sum;
  } else {
#pragma unroll
    for (int i = 0; i < kPer; ++i) score[i] = 1.0f / (1.0f + expf(-score[i]));
  }
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int j = lane * kPer + i;
    choice[i] = j < E ? score[i] + (p.correction_bias ? p.correction_bias[j] : 0.0f) : -FLT_MAX;
  }

  // Grouped top-k: mark the experts of groups outside the best topk_group as ineligible.
  if (p.n_group > 0) {
    const int per_group = E / p.n_group;
    float my_group_score = -FLT_MAX;  // lane g: group g's score
    for (int g = 0; g < p.n_group; ++g) {
      // Best two of group g, per lane, then across the warp.
      float b1 = -FLT_MAX, b2 = -FLT_MAX;
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        const int j = lane * kPer + i;
        if (j < E && j / per_group == g) {
          if (choice[i] > b1) {
            b2 = b1;
            b1 = choice[i];
          } else if (choice[i] > b2) {
            b2 = choice[i];
          }
        }
      }
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        const float o1 = __shfl_xor_sync(0xffffffffu, b1, off), o2 = __shfl_xor_sync(0xffffffffu, b2, off);
        const float hi = fmaxf(b1, o1);
        const float lo = fmaxf(fminf(b1, o1), fmaxf(b2, o2));
        b1 = hi;
        b2 = lo;
      }
      if (lane == g) my_group_score = p.correction_bias ? b1 + b2 : b1;
    }
    bool group_selected = false;  // lane g: whether group g is eligible
    for (int r = 0; r < p.topk_group; ++r) {
      float v = group_selected || lane >= p.n_group ? -FLT_MAX : my_group_score;
      int idx = lane;
      warp_argmax(v, idx);
      if (lane == idx) group_selected = true;
    }
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int j = lane * kPer + i;
      const bool ok = __shfl_sync(0xffffffffu, static_cast<int>(group_selected), (j < E ? j : 0) / per_group) != 0;
      if (!ok) choice[i] = -FLT_MAX;
    }
  }

  // k rounds of argmax; lane r keeps round r's expert and score.
  uint32_t taken = 0;
  int my_id = 0;
  float my_score = 0.0f, chosen_sum = 0.0f;
  for (int r = 0; r < p.topk; ++r) {
    float v = -FLT_MAX;
    int idx = 0x7fffffff;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int j = lane * kPer + i;
      if (!(taken & (1u << i)) && j < E && (choice[i] > v || idx == 0x7fffffff)) {
        v = choice[i];
        idx = j;
      }
    }
    warp_argmax(v, idx);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      if (lane * kPer + i == idx) {
        taken |= 1u << i;
        s = score[i];
      }
    }
    s = __shfl_sync(0xffffffffu, s, idx / kPer);  // the owner lane broadcasts the unbiased score
    chosen_sum += s;
    if (lane == r) {
      my_id = idx;
      my_score = s;
    }
  }
  if (lane < p.topk) {
    float w = my_score;
    if (p.renormalize && chosen_sum > 0.0f) w /= chosen_sum;
    p.topk_ids[t * p.topk + lane] = my_id;
    p.topk_weights[t * p.topk + lane] = w * p.routed_scaling_factor;
  }
}

}  // namespace

cudaError_t launch_routing_topk(const RoutingParams& p, cudaStream_t stream) {
  if (p.m == 0) return cudaSuccess;
  if (p.num_experts <= 0 || p.num_experts > kMaxExperts || p.topk <= 0 || p.topk > kMaxTopk ||
      p.n_group > kMaxExpertGroups) {
    return cudaErrorInvalidValue;
  }
  const unsigned blocks = static_cast<unsigned>((p.m + kWarpsPerCta - 1) / kWarpsPerCta);
  const int per_lane = (p.num_experts + 31) / 32;
  const dim3 block(kWarpsPerCta * 32);
  if (per_lane <= 1) routing_topk_kernel<1><<<blocks, block, 0, stream>>>(p);
  else if (per_lane <= 2) routing_topk_kernel<2><<<blocks, block, 0, stream>>>(p);
  else if (per_lane <= 4) routing_topk_kernel<4><<<blocks, block, 0, stream>>>(p);
  else if (per_lane <= 8) routing_topk_kernel<8><<<blocks, block, 0, stream>>>(p);
  else if (per_lane <= 16) routing_topk_kernel<16><<<blocks, block, 0, stream>>>(p);
  else routing_topk_kernel<32><<<blocks, block, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace fusedmoe::kernels
