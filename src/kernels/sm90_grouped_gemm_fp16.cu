// fp16 instantiation of sm90_grouped_gemm (one kernel per translation unit).
#include <cuda_fp16.h>

#include "sm90_grouped_gemm.cuh"

namespace fusedmoe::kernels {

size_t grouped_gemm_workspace_bytes_fp16(int32_t num_groups, int32_t sm_count) {
  return sm90::workspace_bytes<cutlass::half_t>(num_groups, sm_count);
}
cudaError_t launch_grouped_gemm_fp16(const GroupedGemmParams& p, cudaStream_t stream) {
  return sm90::run<cutlass::half_t>(p, stream);
}

}  // namespace fusedmoe::kernels
