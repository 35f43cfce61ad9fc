// Device queries through the CUDA runtime, and a probe kernel compiled for this build's
// architecture: launching it tells whether the build's kernels can run on the device at all
// (a sm_90a binary fails to load on any other architecture with "no kernel image").
#include <cuda_runtime.h>

#include <string>

#include "check.h"
#include "fusedmoe/build_info.h"

namespace fusedmoe {

namespace {

__global__ void probe_kernel(int* out) {
#if defined(__CUDA_ARCH__)
  *out = __CUDA_ARCH__;
#endif
}

Status cuda_status(cudaError_t err, const char* what) {
  return Status(StatusCode::kCudaError, std::string(what) + ": " + cudaGetErrorString(err));
}

// Runs probe_kernel; on failure fills note with the reason.
bool run_probe(std::string* note) {
  int* d_out = nullptr;
  cudaError_t err = cudaMalloc(&d_out, sizeof(int));
  if (err != cudaSuccess) {
    *note = std::string("cudaMalloc: ") + cudaGetErrorString(err);
    return false;
  }
  probe_kernel<<<1, 1>>>(d_out);
  err = cudaGetLastError();
  int arch = 0;
  if (err == cudaSuccess) err = cudaMemcpy(&arch, d_out, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d_out);
  if (err != cudaSuccess) {
    *note = std::string("probe kernel: ") + cudaGetErrorString(err);
    cudaGetLastError();  // clear a sticky launch error of this thread
    return false;
  }
  *note = "probe kernel ran as __CUDA_ARCH__ " + detail::str(arch);
  return true;
}

}  // namespace

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

Status device_info(int index, DeviceInfo* out) {
  if (out == nullptr) return detail::invalid_argument("out", "non-null", "nullptr");
  const int n = device_count();
  if (index < 0 || index >= n) {
    return detail::invalid_argument("index", "0.." + detail::str(n - 1) + " (CUDA devices present)",
                                    detail::str(index));
  }
  cudaDeviceProp prop{};
  cudaError_t err = cudaGetDeviceProperties(&prop, index);
  if (err != cudaSuccess) return cuda_status(err, "cudaGetDeviceProperties");
  out->index = index;
  out->name = prop.name;
  out->cc_major = prop.major;
  out->cc_minor = prop.minor;
  out->sm_count = prop.multiProcessorCount;
  out->global_memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  out->l2_bytes = prop.l2CacheSize;
  out->smem_per_block_optin = static_cast<int64_t>(prop.sharedMemPerBlockOptin);
  int previous = 0;
  err = cudaGetDevice(&previous);
  if (err != cudaSuccess) return cuda_status(err, "cudaGetDevice");
  err = cudaSetDevice(index);
  if (err != cudaSuccess) return cuda_status(err, "cudaSetDevice");
  out->kernels_run = run_probe(&out->kernels_note);
  cudaSetDevice(previous);
  return Status();
}

}  // namespace fusedmoe
