// smxx_align_tokens: groups the m * topk (token, slot) pairs by local expert, on the device,
// with no host synchronization (CUDA-graph safe).
//
// Up to kWarpAlignPairs pairs: one warp (align_warp.cuh: a bitonic sort over the lanes, no
// barriers; it zeroes skipped rows too). Up to kSingleCtaPairs pairs: one CTA (256 threads for
// E <= 256 and at most 2048 pairs, else 1024), E <= 1024 counters in shared memory.
//   pass 1  count pairs per local expert (shared atomics); pairs whose id is out of range or
//           whose expert is absent (expert_map = -1) are skipped
//   scan    exclusive prefix sum of the counts -> expert_offsets; a second scan over
//           "count > 0" flags -> active_experts in ascending order, their number at [E]
//   pass 2  scatter: each pair takes the next slot of its expert (shared atomic cursor); where
//           the layer asks (skipped_rows: top-1, the down GEMV writing the output rows), the
//           rows of skipped pairs are zeroed, a warp per row (the one-warp and one-CTA
//           kernels only, up to kZeroSkippedMaxPairs pairs)
// More pairs: the same steps in one cooperative launch over chunks of kGridPerThread pairs per
// thread (a CTA each, at most one CTA per SM), so that no single CTA walks all pairs (one CTA
// took 90 us for 32768 pairs, bound by the latency of its strided loads): each chunk counts
// into block_counts[chunk][E], a grid barrier, then every CTA reads all chunks' counts (its
// chunks' starts per expert; CTA 0 writes the expert table) and scatters its chunks from
// their starts. It replaced three kernels (count, a one-CTA scan, scatter) in v46: alone
// (ncu, cold L2) 18.8 -> 8.8 us at 8192 pairs (Qwen3 M = 1024), 20 -> 11.4 at 32768; the
// layer 0.981-0.994 where topk 8 gives more than kSingleCtaPairs pairs (bf16 and FP8).
// The order of pairs inside an expert depends on atomic order; nothing downstream depends on
// it (each pair's GEMM rows are computed independently and the combine sums in slot order),
// so the layer's output is bitwise deterministic.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "align_warp.cuh"
#include "device_util.cuh"
#include "launch.h"

namespace fusedmoe::kernels {

namespace {

constexpr int kMaxThreads = 1024;
static_assert(kMaxExperts <= kMaxThreads, "the scans give each expert one thread");

// Block-wide exclusive scan of one int per thread; returns the total through *total.
__device__ int block_exclusive_scan(int v, int* s_warp, int* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int inclusive = v;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int n = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += n;
  }
  if (lane == 31) s_warp[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    int w = lane < static_cast<int>(blockDim.x >> 5) ? s_warp[lane] : 0;
    int wi = w;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const int n = __shfl_up_sync(0xffffffffu, wi, d);
      if (lane >= d) wi += n;
    }
    s_warp[lane] = wi - w;  // exclusive prefix of the warps
    if (lane == 31) s_warp[32] = wi;
  }
  __syncthreads();
  const int result = s_warp[warp] + inclusive - v;
  *total = s_warp[32];
  __syncthreads();  // s_warp is reused by the next scan
  return result;
}

__device__ __forceinline__ int local_expert(const AlignParams& p, int64_t pair) {
  return local_expert_of(p.topk_ids[pair], p.expert_map, p.global_experts, p.num_experts);
}

// The next slot of local expert e (-1 where the pair is skipped, e < 0).
__device__ __forceinline__ int claim_slot(int* s_cursor, int e) { return e >= 0 ? atomicAdd(&s_cursor[e], 1) : -1; }

// Pair i into slot pos (claim_slot's): sorted_pairs and, where asked, row_of_pair (-1 for a
// skipped pair).
__device__ __forceinline__ void store_pair(const AlignParams& p, int pos, int64_t i) {
  if (pos >= 0) p.sorted_pairs[pos] = static_cast<int>(i);
  if (p.row_of_pair != nullptr) p.row_of_pair[i] = pos;
}

// A thread's pairs (kN, the first at base, then every stride; kNoPair-like values below -1
// where there is none): every slot claimed before any is stored, so that the claims' shared
// round trips overlap (a claim and its stores pair by pair waited out each claim in turn).
template <int kN>
__device__ __forceinline__ void place_pairs(const AlignParams& p, int* s_cursor, const int (&e)[kN], int64_t base,
                                            int64_t stride) {
  int pos[kN];
#pragma unroll
  for (int j = 0; j < kN; ++j) pos[j] = claim_slot(s_cursor, e[j]);
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    if (e[j] >= -1) store_pair(p, pos[j], base + static_cast<int64_t>(j) * stride);
  }
}

// Zeroes the rows of the n skipped pairs listed in s_skipped (AlignParams::skipped_rows), a
// warp per row, 16 bytes per lane and store (all threads call, after a barrier).
__device__ void zero_skipped_rows(const AlignParams& p, const int* s_skipped, int n) {
  const int lane = threadIdx.x & 31, warps = static_cast<int>(blockDim.x >> 5);
  const int64_t vecs = p.skipped_row_bytes / 16;
  for (int s = static_cast<int>(threadIdx.x >> 5); s < n; s += warps) {
    uint4* row = reinterpret_cast<uint4*>(static_cast<char*>(p.skipped_rows) + s_skipped[s] * p.skipped_row_bytes);
    for (int64_t v = lane; v < vecs; v += 32) row[v] = make_uint4(0, 0, 0, 0);
  }
}

// Pair i, skipped (e < 0), onto the CTA's list of rows to zero when the layer asks for it.
__device__ __forceinline__ void list_skipped(const AlignParams& p, int e, int64_t i, int* s_skipped, int* s_nskipped) {
  if (e < 0 && p.skipped_rows != nullptr) s_skipped[atomicAdd(s_nskipped, 1)] = static_cast<int>(i);
}

// Expert tid's offset (exclusive scan of the counts, one thread per expert; all threads
// call). write: also the table (counts, offsets and the active list).
__device__ int expert_table(const AlignParams& p, int count, int* s_warp, bool write) {
  const int tid = threadIdx.x;
  int total = 0;
  const int offset = block_exclusive_scan(count, s_warp, &total);
  if (!write) return offset;  // uniform over the CTA
  int active_total = 0;
  const int active_slot = block_exclusive_scan(count > 0 ? 1 : 0, s_warp, &active_total);
  if (tid < p.num_experts) {
    p.expert_counts[tid] = count;
    p.expert_offsets[tid] = offset;
    if (count > 0) p.active_experts[active_slot] = tid;
  }
  if (tid == 0) {
    p.expert_offsets[p.num_experts] = total;
    p.active_experts[p.num_experts] = active_total;
  }
  return offset;
}

// Local experts of a thread's pairs base + j * stride (j < kN); past_end where there is no
// pair. Every id load is in flight before any is used (local_experts_of: v71, 8 lookups in
// turn at 2048 pairs had made align 9.4 us against 5.5 at 512 in `bench --stage routing`).
template <int kN>
__device__ __forceinline__ void load_experts(const AlignParams& p, int64_t base, int64_t stride, int past_end,
                                             int (&e)[kN]) {
  int32_t id[kN];
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    const int64_t i = base + static_cast<int64_t>(j) * stride;
    id[j] = i < p.pairs ? p.topk_ids[i] : -1;
  }
  local_experts_of(id, p.expert_map, p.global_experts, p.num_experts, e);
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    if (base + static_cast<int64_t>(j) * stride >= p.pairs) e[j] = past_end;
  }
}

// One thread per expert: blockDim.x is 256 for E <= 256 up to 2048 pairs (fewer warps in each
// barrier and scan), else 1024. kPer = 0: a thread walks its pairs in a strided loop, in each
// pass (at most one pair per thread); kPer > 0: a thread's pairs (at most kPer) are looked up
// once, every load in flight together, and both passes reuse them (the loop pays two dependent
// round trips, id and map, per pair and pass: 8.2 us at 2048 pairs in v22's ncu).
constexpr int kNoPair = -2;  // kPer's unused slots (-1: a skipped pair)
constexpr int kOneCtaPerThread = 8;
static_assert(kSingleCtaPairs <= int64_t{kOneCtaPerThread} * kMaxThreads, "one CTA's threads hold its pairs");
static_assert(kZeroSkippedMaxPairs <= kSingleCtaPairs, "only the one-CTA kernel zeroes skipped rows");
template <int kPer>
__global__ void __launch_bounds__(kMaxThreads) align_tokens_kernel(AlignParams p) {
  __shared__ int s_count[kMaxExperts];
  __shared__ int s_cursor[kMaxExperts];
  __shared__ int s_warp[33];
  __shared__ int s_skipped[kZeroSkippedMaxPairs];
  __shared__ int s_nskipped;
  const int tid = threadIdx.x;
  const int threads = blockDim.x;
  for (int e = tid; e < p.num_experts; e += threads) s_count[e] = 0;
  if (tid == 0) s_nskipped = 0;
  int ex[kPer > 0 ? kPer : 1];
  if (p.ids_from_predecessor) wait_for_predecessor();  // uniform: the router's ids
  if constexpr (kPer > 0) load_experts(p, tid, threads, kNoPair, ex);
  __syncthreads();
  if constexpr (kPer > 0) {
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      if (ex[j] >= 0) atomicAdd(&s_count[ex[j]], 1);
    }
  } else {
    for (int64_t i = tid; i < p.pairs; i += threads) {
      const int e = local_expert(p, i);
      if (e >= 0) atomicAdd(&s_count[e], 1);
    }
  }
  __syncthreads();
  const int offset = expert_table(p, tid < p.num_experts ? s_count[tid] : 0, s_warp, true);
  if (tid < p.num_experts) s_cursor[tid] = offset;
  __syncthreads();
  if constexpr (kPer > 0) {
    place_pairs(p, s_cursor, ex, tid, threads);
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      if (ex[j] != kNoPair) list_skipped(p, ex[j], tid + static_cast<int64_t>(j) * threads, s_skipped, &s_nskipped);
    }
  } else {
    for (int64_t i = tid; i < p.pairs; i += threads) {
      const int e = local_expert(p, i);
      store_pair(p, claim_slot(s_cursor, e), i);
      list_skipped(p, e, i, s_skipped, &s_nskipped);
    }
  }
  if (p.skipped_rows != nullptr) {  // uniform
    __syncthreads();
    zero_skipped_rows(p, s_skipped, s_nskipped);
  }
  // Launched beside its predecessor (launch_align_tokens' beside_predecessor: it reads nothing
  // that kernel writes), this grid ends only after that one: the successor's wait below then
  // covers both. Launched in stream order, the wait returns at once. Keep it reachable: an
  // early return of the whole CTA above would let the grid end before its predecessor.
  wait_for_predecessor();
  // The GEMM launched after this one (programmatic dependent launch) may start; it waits for
  // this grid's completion before reading the alignment.
  allow_successor();
}

// Up to kWarpAlignPairs pairs: one warp, the same end as align_tokens_kernel's.
__global__ void __launch_bounds__(32) align_warp_kernel(AlignParams p) {
  __shared__ int s_sorted[32];
  if (p.ids_from_predecessor) wait_for_predecessor();  // the router's ids
  align_warp(p, s_sorted);
  wait_for_predecessor();  // beside its predecessor: ends after it (align_tokens_kernel)
  allow_successor();
}

// Multi-CTA, one cooperative launch, blockDim.x threads (>= num_experts: one per expert) and
// kGridPerThread pairs each per chunk; CTA c takes chunks c, c + gridDim.x, ... (one each
// unless the chunks outnumber the SMs).
constexpr int kGridPerThread = 4;
static_assert(256 * kGridPerThread == kChunk, "align_block_counts_size's chunk is the 256-thread CTA's");

__global__ void __launch_bounds__(kMaxThreads) align_grid_kernel(AlignParams p, int64_t chunks) {
  __shared__ int s_count[kMaxExperts];  // a chunk's counts, then its cursors
  __shared__ int s_warp[33];
  const int tid = threadIdx.x, threads = static_cast<int>(blockDim.x);
  const int64_t chunk = int64_t{threads} * kGridPerThread;
  const int64_t first = blockIdx.x;
  const int experts = p.num_experts;
  int kept[kGridPerThread] = {};  // the first chunk's experts, for its scatter
  for (int64_t b = first; b < chunks; b += gridDim.x) {
    if (tid < experts) s_count[tid] = 0;
    int e[kGridPerThread];
    load_experts(p, b * chunk + tid, threads, kNoPair, e);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kGridPerThread; ++j) {
      if (e[j] >= 0) atomicAdd(&s_count[e[j]], 1);
      if (b == first) kept[j] = e[j];
    }
    __syncthreads();
    if (tid < experts) p.block_counts[b * experts + tid] = s_count[tid];
    __syncthreads();  // s_count is zeroed for the next chunk
  }
  cooperative_groups::this_grid().sync();  // every chunk's counts written
  // Expert tid: its total over the chunks and its pairs in the chunks before the first one.
  // Loads bypass L1 (__ldcg): other CTAs wrote these lines in this grid.
  int total = 0, before = 0;
  if (tid < experts) {
#pragma unroll 4
    for (int64_t b = 0; b < chunks; ++b) {
      const int c = __ldcg(p.block_counts + b * experts + tid);
      total += c;
      before += b < first ? c : 0;
    }
  }
  const int offset = expert_table(p, total, s_warp, blockIdx.x == 0);
  for (int64_t b = first; b < chunks; b += gridDim.x) {
    if (tid < experts) {
      for (int64_t x = b - gridDim.x; b != first && x < b; ++x) before += __ldcg(p.block_counts + x * experts + tid);
      s_count[tid] = offset + before;
    }
    int e[kGridPerThread];
    if (b == first) {
#pragma unroll
      for (int j = 0; j < kGridPerThread; ++j) e[j] = kept[j];
    } else {
      load_experts(p, b * chunk + tid, threads, kNoPair, e);
    }
    __syncthreads();
    // Past the end e[j] is -2: nothing to place.
    place_pairs(p, s_count, e, b * chunk + tid, threads);
    __syncthreads();  // the cursors are rewritten for the next chunk
  }
  // The GEMM launched after this one (programmatic dependent launch) may start; it waits for
  // this grid's completion before reading the alignment.
  allow_successor();
}

}  // namespace

cudaError_t launch_align_tokens(const AlignParams& p, cudaStream_t stream, bool beside_predecessor) {
  // Skipped rows are zeroed by the one-warp and one-CTA kernels only (their CTA lists them).
  if (!align_params_ok(p, false)) return cudaErrorInvalidValue;
  const bool pdl = beside_predecessor || p.ids_from_predecessor;
  if (p.pairs <= kWarpAlignPairs) return launch_maybe_pdl(pdl, align_warp_kernel, 1, 32, stream, p);
  if (p.pairs <= kSingleCtaPairs) {
    // More than one pair per thread: the batched lookups (at most kOneCtaPerThread each).
    const int threads = p.num_experts <= 256 && p.pairs <= 256 * kOneCtaPerThread ? 256 : kMaxThreads;
    if (p.pairs <= threads) return launch_maybe_pdl(pdl, align_tokens_kernel<0>, 1, threads, stream, p);
    return launch_maybe_pdl(pdl, align_tokens_kernel<kOneCtaPerThread>, 1, threads, stream, p);
  }
  // One thread per expert; chunks of kGridPerThread pairs per thread.
  const int threads = p.num_experts <= 256 ? 256 : kMaxThreads;
  if (p.block_counts == nullptr) return cudaErrorInvalidValue;
  const int64_t chunks = (p.pairs + int64_t{threads} * kGridPerThread - 1) / (int64_t{threads} * kGridPerThread);
  // At most one CTA per SM: a cooperative launch needs every CTA resident at once, and one
  // CTA of this kernel fits any SM (__launch_bounds__). The CTAs loop over further chunks.
  int device = 0, sms = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) return err;
  cudaLaunchAttribute cooperative = {};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(chunks, std::max(sms, 1))));
  return launch_with_attribute(cooperative, align_grid_kernel, grid, dim3(threads), 0, stream, p, chunks);
}

}  // namespace fusedmoe::kernels
