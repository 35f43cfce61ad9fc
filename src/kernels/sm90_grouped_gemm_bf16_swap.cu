// bf16 instantiation of sm90_grouped_gemm with swapped operands (experts with few rows; one
// kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE(grouped_gemm_bf16_swap, cutlass::bfloat16_t, cutlass::bfloat16_t, 0, true, false)
