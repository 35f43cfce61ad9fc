// bf16 instantiation of sm90_grouped_gemm with swapped operands on tiles of 256 weight rows
// (planner.h, swapped_tile_rows; one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE_ROWS(grouped_gemm_bf16_swap256, cutlass::bfloat16_t, cutlass::bfloat16_t, 0, true, false, 256)
