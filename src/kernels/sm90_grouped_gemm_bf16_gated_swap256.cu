// bf16 instantiation of sm90_grouped_gemm for GEMM1 on interleaved w13 with swapped operands on
// tiles of 256 weight rows, the gated activation in its epilogue.
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE_ROWS(grouped_gemm_bf16_gated_swap256, cutlass::bfloat16_t, cutlass::bfloat16_t, 0, true, true, 256)
