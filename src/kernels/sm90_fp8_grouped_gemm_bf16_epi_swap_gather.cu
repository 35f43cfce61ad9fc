// sm90_fp8_grouped_gemm, epilogue-scaled, bf16 D, GEMM1 with swapped operands reading x's e4m3 rows
// in token order itself as B (sm90_gather_mainloop.cuh; planner.h, fp8_gemm1_gathers) on 128 x 64 x
// 128 pingpong tiles (one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE_FP8_GATHER(fp8_grouped_gemm_bf16_epi_swap_gather, cutlass::bfloat16_t, true, 128, 0)
