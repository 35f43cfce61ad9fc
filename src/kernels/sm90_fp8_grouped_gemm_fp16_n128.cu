// sm90_fp8_grouped_gemm: e4m3 A and B, fp16 D, 128 x 128 block weight scales (DeepSeek; per-expert scales expanded to blocks)
// (one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE(fp8_grouped_gemm_fp16_n128, cutlass::float_e4m3_t, cutlass::half_t, 128, false)
