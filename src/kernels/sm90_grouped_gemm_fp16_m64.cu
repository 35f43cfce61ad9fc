// fp16 instantiation of sm90_grouped_gemm on 64 x 256 pingpong tiles, 64 token rows each
// (planner.h, grouped_tile_rows; one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE_ROWS(grouped_gemm_fp16_m64, cutlass::half_t, cutlass::half_t, 0, false, false, 64)
