#include "bench_kernels.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fusedmoe::tools {

namespace {

__global__ void __launch_bounds__(512) read_kernel(const uint4* src, size_t n, float* sink) {
  uint32_t acc = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Four independent 16-byte loads in flight per thread.
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = __ldcs(src + i), b = __ldcs(src + i + stride), c = __ldcs(src + i + 2 * stride),
                d = __ldcs(src + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride) {
    const uint4 a = __ldcs(src + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x12345678u) sink[blockIdx.x] = static_cast<float>(acc);  // practically never: keeps the loads
}

}  // namespace

cudaError_t launch_read_bandwidth(const void* src, size_t bytes, float* sink, int blocks, cudaStream_t stream) {
  read_kernel<<<blocks, 512, 0, stream>>>(static_cast<const uint4*>(src), bytes / 16, sink);
  return cudaGetLastError();
}

}  // namespace fusedmoe::tools
