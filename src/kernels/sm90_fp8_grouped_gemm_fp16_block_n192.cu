// sm90_fp8_grouped_gemm_blockscale, fp16 D, on 128 x 192 x 128 cooperative tiles, the weights'
// block scales per kFp8WideTileScaleCols columns (planner.h, fp8_grouped_tile_cols; one kernel
// per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE_COLS(fp8_grouped_gemm_fp16_block_n192, cutlass::half_t, 128, 128, 192)
