// bf16 instantiation of sm90_grouped_gemm (one kernel per translation unit: CUTLASS builds
// are slow and the CI machine has two cores).
#include <cuda_bf16.h>

#include "sm90_grouped_gemm.cuh"

namespace fusedmoe::kernels {

size_t grouped_gemm_workspace_bytes_bf16(int32_t num_groups, int32_t sm_count) {
  return sm90::workspace_bytes<cutlass::bfloat16_t>(num_groups, sm_count);
}
cudaError_t launch_grouped_gemm_bf16(const GroupedGemmParams& p, cudaStream_t stream) {
  return sm90::run<cutlass::bfloat16_t>(p, stream);
}

}  // namespace fusedmoe::kernels
