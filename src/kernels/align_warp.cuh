// Align's table for at most kWarpAlignPairs pairs, written by one warp (smxx_align_tokens'
// kernel for so few pairs, and the small-M FP8 path's x quantizer, which then needs no align
// launch at all).
#pragma once

#include <cuda_runtime.h>

#include "device_util.cuh"
#include "launch.h"

namespace fusedmoe::kernels {

static_assert(kWarpAlignPairs == 32, "one pair per lane");
static_assert(kMaxExperts < 0x7ff, "a skipped pair's key sorts after every expert's");

// Every lane of one warp calls, with p.pairs <= kWarpAlignPairs; s_sorted: 32 ints of shared
// memory. Lane i holds pair i's key (local expert << 5 | i; a skipped pair's and an empty lane's
// expert 0x7ff) and a bitonic sort over the lanes orders them by expert, then pair index, so
// that lane j holds sorted position j (the skipped pairs and the empty lanes last). The table
// is align's (AlignParams): every expert's count and offset, the active experts ascending, the
// live count at [E], row_of_pair where asked, and the rows of skipped pairs zeroed where asked
// (skipped_rows). Bitwise deterministic: the order inside an expert is the pairs' order.
__device__ __forceinline__ void align_warp(const AlignParams& p, int* s_sorted) {
  constexpr unsigned kAll = 0xffffffffu;
  constexpr int kNone = 0x7ff;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int pairs = static_cast<int>(p.pairs);
  const int e = lane < pairs ? local_expert_of(p.topk_ids[lane], p.expert_map, p.global_experts, p.num_experts) : -1;
  int key = ((e >= 0 ? e : kNone) << 5) | lane;
#pragma unroll
  for (int k = 2; k <= 32; k <<= 1) {
#pragma unroll
    for (int j = k >> 1; j > 0; j >>= 1) {
      const int other = __shfl_xor_sync(kAll, key, j);
      const bool ascending = (lane & k) == 0;  // k = 32: the whole warp ascending
      const bool lower = (lane & j) == 0;
      key = lower == ascending ? min(key, other) : max(key, other);
    }
  }
  const int se = key >> 5, pair = key & 31;
  const bool valid = se != kNone;
  const int live = __popc(__ballot_sync(kAll, valid));  // positions [0, live) hold the local pairs
  const int prev = __shfl_up_sync(kAll, se, 1);
  const bool first = valid && (lane == 0 || prev != se);
  const unsigned firsts = __ballot_sync(kAll, first);
  if (valid) p.sorted_pairs[lane] = pair;
  if (p.row_of_pair != nullptr && pair < pairs) p.row_of_pair[pair] = valid ? lane : -1;
  if (first) p.active_experts[__popc(firsts & ((1u << lane) - 1u))] = se;
  s_sorted[lane] = se;
  // Lane L's experts [L c, L c + c): the first sorted position at or after its first expert
  // (a binary search over the lanes), then a walk along s_sorted.
  const int E = p.num_experts;
  const int c = (E + 31) / 32;
  const int lo = lane * c;
  int at = 0;
#pragma unroll
  for (int step = 16; step > 0; step >>= 1) {
    if (__shfl_sync(kAll, se, at + step - 1) < lo) at += step;
  }
  if (__shfl_sync(kAll, se, at) < lo) ++at;  // all 32 below lo
  __syncwarp();
  int next = at < 32 ? s_sorted[at] : kNone;
  for (int x = lo; x < lo + c && x < E; ++x) {
    const int start = at;
    while (next == x) {
      ++at;
      next = at < 32 ? s_sorted[at] : kNone;
    }
    p.expert_counts[x] = at - start;
    p.expert_offsets[x] = start;
  }
  if (lane == 0) {
    p.expert_offsets[E] = live;
    p.active_experts[E] = __popc(firsts);
  }
  if (p.skipped_rows != nullptr) {  // uniform: the skipped pairs' rows, a warp per row
    const int64_t vecs = p.skipped_row_bytes / 16;
    for (int j = live; j < 32; ++j) {
      const int skipped = __shfl_sync(kAll, pair, j);
      if (skipped >= pairs) break;  // the empty lanes (uniform)
      uint4* row = reinterpret_cast<uint4*>(static_cast<char*>(p.skipped_rows) + skipped * p.skipped_row_bytes);
      for (int64_t v = lane; v < vecs; v += 32) row[v] = make_uint4(0, 0, 0, 0);
    }
  }
}

}  // namespace fusedmoe::kernels
