// Helpers shared by the GPU tests (label gpu): the CUDA call check, the sm_90 skip and a
// device buffer.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fusedmoe/build_info.h"

namespace fusedmoe::testing_util {

#define CUDA_OK(expr)                                                         \
  do {                                                                        \
    const cudaError_t _e = (expr);                                            \
    ASSERT_EQ(_e, cudaSuccess) << #expr << ": " << cudaGetErrorString(_e);   \
  } while (0)

// An sm_90 GPU on which this build's kernels load.
inline bool have_hopper() {
  if (device_count() == 0) return false;
  DeviceInfo d;
  return device_info(0, &d).ok() && d.cc_major == 9 && d.kernels_run;
}

#define REQUIRE_GPU()                         \
  if (!fusedmoe::testing_util::have_hopper()) \
  GTEST_SKIP() << "needs an sm_90 GPU (none found, or this build's kernels do not load)"

// Device 0's SMs (0 where it cannot be read: a launch sized by it refuses).
inline int sm_count() {
  int sms = 0;
  return cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess ? sms : 0;
}

// n elements copied from device memory p.
template <typename T>
std::vector<T> to_host(const T* p, int64_t n) {
  std::vector<T> h(static_cast<size_t>(n));
  EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// n elements of device memory (at least one), freed on scope exit.
template <typename T>
struct DeviceBuffer {
  T* p = nullptr;
  explicit DeviceBuffer(size_t n) { EXPECT_EQ(cudaMalloc(&p, (n > 0 ? n : 1) * sizeof(T)), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

}  // namespace fusedmoe::testing_util
