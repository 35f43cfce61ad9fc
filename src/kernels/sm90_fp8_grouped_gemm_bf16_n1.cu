// sm90_fp8_grouped_gemm: e4m3 A and B, bf16 D, per-channel weight scales (one per output column)
// (one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE(fp8_grouped_gemm_bf16_n1, cutlass::float_e4m3_t, cutlass::bfloat16_t, 1, false)
