// fp16 instantiation of sm90_grouped_gemm for GEMM1 on interleaved w13 with swapped operands
// (experts with few rows: 128 weight rows x 64 tokens per tile) reading x's rows in token order
// itself as B (sm90_gather_mainloop.cuh; no gathered copy), the gated activation in its
// epilogue (one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE_GATHER(grouped_gemm_fp16_gated_swap_gather, cutlass::half_t, 128, true)
