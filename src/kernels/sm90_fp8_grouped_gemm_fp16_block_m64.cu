// sm90_fp8_grouped_gemm, 128 x 128 block scales, fp16 D, on 64 x 128 x 128 pingpong tiles of 64
// token rows (planner.h, fp8_grouped_tile_rows; one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE_ROWS(fp8_grouped_gemm_fp16_block_m64, cutlass::float_e4m3_t, cutlass::half_t, 128, false, false, 64)
