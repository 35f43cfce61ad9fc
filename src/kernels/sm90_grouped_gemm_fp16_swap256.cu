// fp16 instantiation of sm90_grouped_gemm with swapped operands on tiles of 256 weight rows
// (planner.h, swapped_tile_rows; one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE_ROWS(grouped_gemm_fp16_swap256, cutlass::half_t, cutlass::half_t, 0, true, false, 256)
