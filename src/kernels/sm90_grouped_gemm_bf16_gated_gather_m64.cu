// bf16 instantiation of sm90_grouped_gemm for GEMM1 on interleaved w13 reading x's rows in token
// order itself (sm90_gather_mainloop.cuh; no gathered copy), on 64 x 256 pingpong tiles (planner.h,
// grouped_tile_rows), the gated activation in its epilogue.
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE_GATHER(grouped_gemm_bf16_gated_gather_m64, cutlass::bfloat16_t, 64, false)
