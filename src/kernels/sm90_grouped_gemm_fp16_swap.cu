// fp16 instantiation of sm90_grouped_gemm with swapped operands (experts with few rows; one
// kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE(grouped_gemm_fp16_swap, cutlass::half_t, cutlass::half_t, 0, true, false)
