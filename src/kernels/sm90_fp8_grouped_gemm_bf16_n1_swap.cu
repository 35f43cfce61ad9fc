// sm90_fp8_grouped_gemm with swapped operands (experts with few rows): e4m3 A and B, bf16 D,
// weight scales per 1 output column(s) (one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE(fp8_grouped_gemm_bf16_n1_swap, cutlass::float_e4m3_t, cutlass::bfloat16_t, 1, true)
