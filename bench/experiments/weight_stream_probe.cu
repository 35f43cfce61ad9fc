// weight_stream_probe: how fast TMA streams an expert weight tensor into shared memory in the
// order a persistent grouped GEMM reads it, with nothing else running (no MMA, no epilogue,
// no activations). PERF.md v37's question: the FP8 grouped GEMMs stream their weights at
// 2.8-3.5 TB/s where a plain read reaches 4.4-4.5; is that the access pattern (each 128-row x
// 128-byte box touches 128 rows k bytes apart, the rest of each row read by later boxes) or
// the pipeline?
//
// One CTA per SM walks tiles t = blockIdx.x, + gridDim.x, ... (CUTLASS's static persistent
// order); tile t is expert e = t / NB's weight rows nb * 128 .. + 127 (NB = N / 128), read as
// K / 128 boxes of 128 rows x 128 bytes through a ring of `stages` shared-memory stages: one
// producer lane issues the TMA loads, one consumer warp waits for each stage and frees it.
// Layouts of the same bytes:
//   rows:  [E][N][K], row-major (the checkpoint's, what the GEMMs read today): box (kb, nb)
//          is 128 segments of 128 bytes, K bytes apart;
//   tiles: [E][NB][KB][128][128] (each box 16 KB contiguous, in the order the tile reads them).
// And a plain read of the same bytes (read_kernel), for reference. Prints the median time of `reps` runs (L2 flushed before each) and the rate in TB/s.
//
// Build: the CMake target fusedmoe_weight_stream_probe (CUDA builds), or by hand:
//   nvcc -O3 -std=c++17 -arch=sm_90a bench/experiments/weight_stream_probe.cu -o probe
// Run:   ./probe [reps]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_check.h"

namespace {

constexpr int kBoxRows = 128;
constexpr int kBoxBytes = 128;
constexpr int kStageBytes = kBoxRows * kBoxBytes;
constexpr int kMaxStages = 13;

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void bar_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void bar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}\n" ::"r"(
          smem_addr(bar)),
      "r"(parity));
}
__device__ __forceinline__ void bar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)));
}
__device__ __forceinline__ void bar_expect(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes));
}
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, uint64_t* bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
          smem_addr(dst)),
      "l"(map), "r"(smem_addr(bar)), "r"(x), "r"(y)
      : "memory");
}

struct Problem {
  int experts, n, k;  // k in bytes (FP8 weights)
};

// tiles_layout: the box of (tile, kb) at row ((tile * KB + kb) * 128) of a [*, 128] view.
__global__ void __launch_bounds__(64) stream_kernel(const __grid_constant__ CUtensorMap map, Problem p, int stages,
                                                    bool tiles_layout, unsigned* sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ uint64_t full[kMaxStages], empty[kMaxStages];
  const int nb_count = p.n / kBoxRows, kb_count = p.k / kBoxBytes;
  const int64_t tiles = static_cast<int64_t>(p.experts) * nb_count;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      bar_init(&full[s], 1);
      bar_init(&empty[s], 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned char* ring = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem) + 1023) & ~uintptr_t{1023});
  int stage = 0;
  uint32_t phase = 0;
  unsigned acc = 0;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int e = static_cast<int>(t / nb_count), nb = static_cast<int>(t % nb_count);
    for (int kb = 0; kb < kb_count; ++kb) {
      if (warp == 0) {
        if (lane == 0) {
          bar_wait(&empty[stage], phase ^ 1);
          bar_expect(&full[stage], kStageBytes);
          const int x = tiles_layout ? 0 : kb * kBoxBytes;
          const int y = tiles_layout ? static_cast<int>((t * kb_count + kb) * kBoxRows)
                                     : e * p.n + nb * kBoxRows;
          tma_load(ring + stage * kStageBytes, &map, &full[stage], x, y);
        }
      } else {
        bar_wait(&full[stage], phase);
        acc += ring[stage * kStageBytes + lane * 4];
        __syncwarp();
        if (lane == 0) bar_arrive(&empty[stage]);
      }
      if (++stage == stages) {
        stage = 0;
        phase ^= 1;
      }
    }
  }
  if (warp == 1 && acc == 0x7fffffff) sink[blockIdx.x] = acc;  // keeps the reads
}

// The reference: a plain read of the same bytes (16-byte loads, four in flight per thread).
__global__ void __launch_bounds__(256) read_kernel(const uint4* __restrict__ w, int64_t vecs, unsigned* sink) {
  unsigned acc = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < vecs; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = __ldcs(w + i + j * stride);
#pragma unroll
    for (int j = 0; j < 4; ++j) acc ^= v[j].x ^ v[j].w;
  }
  for (; i < vecs; i += stride) acc ^= __ldcs(w + i).y;
  if (acc == 0x7fffffff) sink[blockIdx.x % 1024] = acc;
}

using EncodeFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

CUtensorMap make_map(EncodeFn encode, void* base, uint64_t rows, uint64_t cols) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols};
  const cuuint32_t box[2] = {kBoxBytes, kBoxRows};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, base, dims, strides, box, elem,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed: %d\n", static_cast<int>(r));
    std::exit(1);
  }
  return map;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
  if (fn == nullptr || q != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "no cuTensorMapEncodeTiled\n");
    return 1;
  }
  const EncodeFn encode = reinterpret_cast<EncodeFn>(fn);
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const struct {
    const char* name;
    Problem p;
  } problems[] = {
      {"qwen3 gemm1 (E 128, n 1536, k 2048)", {128, 1536, 2048}},
      {"qwen3 gemm2 (E 128, n 2048, k 768)", {128, 2048, 768}},
      {"deepseek gemm1 (E 256, n 512, k 7168)", {256, 512, 7168}},
      {"mixtral gemm2 (E 8, n 4096, k 14336)", {8, 4096, 14336}},
  };
  size_t max_bytes = 0;
  for (const auto& pr : problems) max_bytes = std::max(max_bytes, size_t(pr.p.experts) * pr.p.n * pr.p.k);
  unsigned char* w = nullptr;
  unsigned char* flush = nullptr;
  unsigned* sink = nullptr;
  const size_t flush_bytes = size_t{256} << 20;
  CHECK(cudaMalloc(&w, max_bytes));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&sink, sizeof(unsigned) * 1024));
  CHECK(cudaMemset(w, 1, max_bytes));
  CHECK(cudaFuncSetAttribute(stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxStages * kStageBytes + 1024));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::printf("%-40s %-6s %6s %10s %8s\n", "problem", "layout", "stages", "median_us", "TB/s");
  for (const auto& pr : problems) {
    const Problem p = pr.p;
    const size_t bytes = size_t(p.experts) * p.n * p.k;
    {
      std::vector<float> times;
      for (int r = 0; r < reps + 2; ++r) {
        CHECK(cudaMemsetAsync(flush, r, flush_bytes));
        CHECK(cudaEventRecord(a));
        read_kernel<<<sms * 8, 256>>>(reinterpret_cast<const uint4*>(w), static_cast<int64_t>(bytes / 16), sink);
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 2) times.push_back(ms * 1000.0f);
      }
      std::sort(times.begin(), times.end());
      const float us = times[times.size() / 2];
      std::printf("%-40s %-6s %6s %10.1f %8.2f\n", pr.name, "ldg", "-", us, bytes / (us * 1e-6) / 1e12);
    }
    for (int tiles_layout = 0; tiles_layout < 2; ++tiles_layout) {
      // Same bytes; the map views them as [E * N, K] rows or as [E * N * K / 128, 128] boxes.
      const CUtensorMap map = tiles_layout ? make_map(encode, w, bytes / kBoxBytes, kBoxBytes)
                                           : make_map(encode, w, uint64_t(p.experts) * p.n, p.k);
      for (int stages : {4, 9, 13}) {
        std::vector<float> times;
        for (int r = 0; r < reps + 2; ++r) {
          CHECK(cudaMemsetAsync(flush, r, flush_bytes));
          CHECK(cudaEventRecord(a));
          stream_kernel<<<sms, 64, kMaxStages * kStageBytes + 1024>>>(map, p, stages, tiles_layout != 0, sink);
          CHECK(cudaEventRecord(b));
          CHECK(cudaEventSynchronize(b));
          float ms = 0;
          CHECK(cudaEventElapsedTime(&ms, a, b));
          if (r >= 2) times.push_back(ms * 1000.0f);
        }
        CHECK(cudaGetLastError());
        std::sort(times.begin(), times.end());
        const float us = times[times.size() / 2];
        std::printf("%-40s %-6s %6d %10.1f %8.2f\n", pr.name, tiles_layout ? "tiles" : "rows", stages, us,
                    bytes / (us * 1e-6) / 1e12);
      }
    }
  }
  return 0;
}
