// fp16 instantiation of sm90_grouped_gemm for GEMM1 on interleaved w13 with swapped operands
// (experts with few rows), the gated activation in its epilogue (one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE(grouped_gemm_fp16_gated_swap, cutlass::half_t, cutlass::half_t, 0, true, true)
