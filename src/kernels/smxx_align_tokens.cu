// smxx_align_tokens: groups the m * topk (token, slot) pairs by local expert, on the device,
// with no host synchronization (CUDA-graph safe).
//
// One CTA (256 threads for E <= 256, else 1024); E <= 1024 counters in shared memory.
//   pass 1  count pairs per local expert (shared atomics); pairs whose id is out of range or
//           whose expert is absent (expert_map = -1) are skipped
//   scan    exclusive prefix sum of the counts -> expert_offsets; a second scan over
//           "count > 0" flags -> active_experts in ascending order, their number at [E]
//   pass 2  scatter: each pair takes the next slot of its expert (shared atomic cursor)
// The order of pairs inside an expert depends on atomic order; nothing downstream depends on
// it (each pair's GEMM rows are computed independently and the combine sums in slot order),
// so the layer's output is bitwise deterministic.
#include <cuda_runtime.h>

#include "launch.h"

namespace fusedmoe::kernels {

namespace {

constexpr int kMaxThreads = 1024;
constexpr int kMaxExperts = 1024;
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
  const int id = p.topk_ids[pair];
  if (id < 0 || id >= p.global_experts) return -1;
  return p.expert_map ? p.expert_map[id] : id;
}

// One thread per expert: blockDim.x is 256 for E <= 256 (fewer warps in each barrier and
// scan), else 1024.
__global__ void __launch_bounds__(kMaxThreads) align_tokens_kernel(AlignParams p) {
  __shared__ int s_count[kMaxExperts];
  __shared__ int s_cursor[kMaxExperts];
  __shared__ int s_warp[33];
  const int tid = threadIdx.x;
  const int threads = blockDim.x;
  for (int e = tid; e < p.num_experts; e += threads) s_count[e] = 0;
  __syncthreads();
  for (int64_t i = tid; i < p.pairs; i += threads) {
    const int e = local_expert(p, i);
    if (e >= 0 && e < p.num_experts) atomicAdd(&s_count[e], 1);
  }
  __syncthreads();
  const int count = tid < p.num_experts ? s_count[tid] : 0;
  int total = 0;
  const int offset = block_exclusive_scan(count, s_warp, &total);
  int active_total = 0;
  const int active_slot = block_exclusive_scan(count > 0 ? 1 : 0, s_warp, &active_total);
  if (tid < p.num_experts) {
    p.expert_counts[tid] = count;
    p.expert_offsets[tid] = offset;
    s_cursor[tid] = offset;
    if (count > 0) p.active_experts[active_slot] = tid;
  }
  if (tid == 0) {
    p.expert_offsets[p.num_experts] = total;
    p.active_experts[p.num_experts] = active_total;
  }
  __syncthreads();
  for (int64_t i = tid; i < p.pairs; i += threads) {
    const int e = local_expert(p, i);
    if (e >= 0 && e < p.num_experts) p.sorted_pairs[atomicAdd(&s_cursor[e], 1)] = static_cast<int>(i);
  }
  // The GEMM launched after this one (programmatic dependent launch) may start; it waits for
  // this grid's completion before reading the alignment.
  asm volatile("griddepcontrol.launch_dependents;" :::);
}

}  // namespace

cudaError_t launch_align_tokens(const AlignParams& p, cudaStream_t stream) {
  if (p.num_experts <= 0 || p.num_experts > kMaxExperts) return cudaErrorInvalidValue;
  align_tokens_kernel<<<1, p.num_experts <= 256 ? 256 : kMaxThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace fusedmoe::kernels
