// sm90_fp8_grouped_gemm, epilogue-scaled, fp16 D, on 64 x 192 x 128 pingpong tiles (planner.h,
// fp8_grouped_tile_cols; one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE_COLS(fp8_grouped_gemm_fp16_epi_m64_n192, cutlass::half_t, sm90::kEpilogueScales, 64, 192)
