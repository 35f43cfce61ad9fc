// bf16 instantiation of sm90_grouped_gemm (one kernel per translation unit: CUTLASS builds
// are slow and the CI machine has two cores).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE(grouped_gemm_bf16, cutlass::bfloat16_t, cutlass::bfloat16_t, 0, false, false)
