// fp16 instantiation of sm90_grouped_gemm (one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE(grouped_gemm_fp16, cutlass::half_t, cutlass::half_t, 0, false, false)
