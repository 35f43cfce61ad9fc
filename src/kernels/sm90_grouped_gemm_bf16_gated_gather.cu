// bf16 instantiation of sm90_grouped_gemm for GEMM1 on interleaved w13 reading x's rows in token
// order itself (sm90_gather_mainloop.cuh; no gathered copy), on 128 x 256 cooperative tiles, the
// gated activation in its epilogue (one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE_GATHER(grouped_gemm_bf16_gated_gather, cutlass::bfloat16_t, 128, false)
