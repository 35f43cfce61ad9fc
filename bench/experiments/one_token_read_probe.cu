// one_token_read_probe: the floor of the one-token layer's weight read (PERF.md v61). At M = 1
// the int4 layer reads 2.5-180 MB of codes spread over the token's experts; the one-launch
// layer (v60's lds) reads Qwen3's 19 MB in a 21.7 us kernel, at 27% of DRAM's peak. How fast
// can one kernel of one CTA per SM read those bytes at all, and how much of an event-timed
// launch is the launch itself?
//
// The bytes: `segments` runs of `seg_bytes` each (the experts' w13 and w2 code blocks), run s
// at s * 3 * seg_bytes in a 1 GiB buffer (not contiguous, as the experts are not). CTA c of
// `ctas` reads the slice [c * n / ctas, (c + 1) * n / ctas) of every run (n: the run's 16-byte
// chunks), 512 threads, as the layer does. Ways to read:
//   ldg:    each thread 16-byte loads, 8 in flight per thread (ld.global.nc, evict-first in
//           spirit: no reuse), XOR-reduced so that nothing is optimized away;
//   cpasync: 16-byte cp.async into shared memory (a 192 KB window reused round by round, all
//           of a round's copies in flight, then a wait), as lds does;
//   bulk:   one thread's cp.async.bulk of each run's slice in 16 KB pieces into the same
//           window, completion on an mbarrier per round (otl's copies);
//   empty:  the kernel with nothing to read (the launch's own cost).
// Each point: L2 flushed (a 512 MB memset) before each of 30 launches, the median of the
// event-timed launch and of the in-kernel span (the earliest CTA's first %globaltimer stamp to
// the latest CTA's last), microseconds, and TB/s of the span.
//
// Build: the CMake target fusedmoe_one_token_read_probe (CUDA builds). Run: ./probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_check.h"

namespace {

constexpr int kThreads = 512;
constexpr int kWindow = 192 * 1024;  // shared-memory window of the copying variants
constexpr int kBulkPiece = 16 * 1024;

enum Mode : int { kLdg = 0, kCpAsync = 1, kBulk = 2, kEmpty = 3 };

struct Span {
  unsigned long long start;
  unsigned long long end;
};

__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__global__ void __launch_bounds__(kThreads, 1)
    read_kernel(const unsigned char* base, int segments, long long seg_bytes, int mode, Span* span, unsigned* sink) {
  extern __shared__ __align__(128) unsigned char smem[];
  if (threadIdx.x == 0) atomicMin(&span->start, gtime());
  const long long chunks = seg_bytes / 16;
  const long long c0 = blockIdx.x * chunks / gridDim.x, c1 = (blockIdx.x + 1) * chunks / gridDim.x;
  const long long per_cta = c1 - c0;
  unsigned acc = 0;
  if (mode == kLdg) {
    for (int s = 0; s < segments; ++s) {
      const uint4* src = reinterpret_cast<const uint4*>(base + 3LL * s * seg_bytes) + c0;
      long long i = threadIdx.x;
      for (; i + 7 * kThreads < per_cta; i += 8 * kThreads) {
        uint4 v[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) v[u] = __ldcs(src + i + u * kThreads);
#pragma unroll
        for (int u = 0; u < 8; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
      }
      for (; i < per_cta; i += kThreads) {
        const uint4 v = __ldcs(src + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
      }
    }
  } else if (mode == kCpAsync) {
    long long at = 0;  // bytes placed in the window this round
    for (int s = 0; s < segments; ++s) {
      const unsigned char* src = base + 3LL * s * seg_bytes + 16 * c0;
      for (long long i = threadIdx.x; i < per_cta; i += kThreads) {
        long long off = at + 16 * i;
        if (off + 16 > kWindow) off %= kWindow;  // a later round: reuse (the probe reads nothing back)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(smem + off)), "l"(src + 16 * i)
                     : "memory");
      }
      at = (at + 16 * per_cta) % kWindow;
    }
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    acc = smem[threadIdx.x];
  } else if (mode == kBulk) {
    __shared__ __align__(8) unsigned long long bar;
    const uint32_t b = smem_u32(&bar);
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\nfence.mbarrier_init.release.cluster;" ::"r"(b) : "memory");
      uint32_t phase = 0;
      long long at = 0, round = 0;
      auto flush_round = [&] {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(static_cast<uint32_t>(round))
                     : "memory");
        uint32_t done = 0;
        do {
          asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                       : "=r"(done)
                       : "r"(b), "r"(phase)
                       : "memory");
        } while (!done);
        phase ^= 1;
        at = 0;
        round = 0;
      };
      for (int s = 0; s < segments; ++s) {
        const unsigned char* src = base + 3LL * s * seg_bytes + 16 * c0;
        for (long long o = 0; o < 16 * per_cta; o += kBulkPiece) {
          const uint32_t n = static_cast<uint32_t>(16 * per_cta - o < kBulkPiece ? 16 * per_cta - o : kBulkPiece);
          if (at + n > kWindow) flush_round();
          asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                           smem_u32(smem + at)),
                       "l"(src + o), "r"(n), "r"(b)
                       : "memory");
          at += n;
          round += n;
        }
      }
      if (round > 0) flush_round();
    }
    __syncthreads();
    acc = smem[threadIdx.x];
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(&span->end, gtime());
}

struct Shape {
  const char* name;
  int segments;        // runs of codes: w13 then w2 per expert, taken as equal runs of the mean size
  long long seg_bytes;
};

}  // namespace

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs\n", prop.name, sms);
  const size_t buf_bytes = size_t(1) << 30, flush_bytes = size_t(512) << 20;
  unsigned char *buf = nullptr, *flush = nullptr;
  Span* span = nullptr;
  unsigned* sink = nullptr;
  CHECK(cudaMalloc(&buf, buf_bytes));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&span, sizeof(Span)));
  CHECK(cudaMalloc(&sink, 4));
  CHECK(cudaMemset(buf, 0x5a, buf_bytes));
  CHECK(cudaFuncSetAttribute(read_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kWindow));
  // The int4 codes of the bench shapes' M = 1 layers (w13: 2I x H / 2 bytes, w2: H x I / 2,
  // per routed expert), as 2 * topk runs of their mean size.
  const Shape shapes[] = {
      {"scout_tp8 (top-1, 7.9 MB)", 2, (2LL * 1024 * 5120 / 2 + 5120LL * 1024 / 2) / 2},
      {"qwen3 (top-8, 18.9 MB)", 16, (2LL * 768 * 2048 / 2 + 2048LL * 768 / 2) / 2},
      {"deepseek_v3_tp8 (top-8, 22 MB)", 16, (2LL * 256 * 7168 / 2 + 7168LL * 256 / 2) / 2},
      {"qwen2_tp4 (top-8, 28 MB)", 16, (2LL * 640 * 3584 / 2 + 3584LL * 640 / 2) / 2},
      {"mixtral (top-2, 176 MB)", 4, (2LL * 14336 * 4096 / 2 + 4096LL * 14336 / 2) / 2},
  };
  const char* mode_names[] = {"ldg", "cpasync", "bulk", "empty"};
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::printf("%-32s %-8s %10s %10s %8s\n", "shape", "read", "event_us", "kernel_us", "TB/s");
  for (const Shape& s : shapes) {
    const long long seg = s.seg_bytes / 16 * 16;
    if (3LL * s.segments * seg > static_cast<long long>(buf_bytes)) continue;
    for (int mode : {kEmpty, kLdg, kCpAsync, kBulk}) {
      std::vector<double> ev, kn;
      for (int r = 0; r < 32; ++r) {
        CHECK(cudaMemsetAsync(flush, r, flush_bytes));
        const Span init = {~0ull, 0ull};
        CHECK(cudaMemcpyAsync(span, &init, sizeof(init), cudaMemcpyHostToDevice));
        CHECK(cudaEventRecord(a));
        read_kernel<<<sms, kThreads, kWindow>>>(buf, s.segments, seg, mode, span, sink);
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaGetLastError());
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        Span h;
        CHECK(cudaMemcpy(&h, span, sizeof(h), cudaMemcpyDeviceToHost));
        if (r < 2) continue;
        ev.push_back(ms * 1e3);
        kn.push_back((h.end - h.start) / 1e3);
      }
      std::sort(ev.begin(), ev.end());
      std::sort(kn.begin(), kn.end());
      const double bytes = static_cast<double>(s.segments) * seg;
      const double k_us = kn[kn.size() / 2];
      std::printf("%-32s %-8s %10.2f %10.2f %8.2f\n", s.name, mode_names[mode], ev[ev.size() / 2], k_us,
                  mode == kEmpty ? 0.0 : bytes / (k_us * 1e-6) / 1e12);
    }
  }
  return 0;
}
