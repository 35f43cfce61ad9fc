// sm90_fp8_grouped_gemm_blockscale with swapped operands (experts with few rows): e4m3 A and B,
// fp16 D, DeepSeek's 128 x 128 weight blocks and 1 x 128 activation groups scaled in the
// mainloop (one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE(fp8_grouped_gemm_fp16_block_swap, cutlass::float_e4m3_t, cutlass::half_t, 128, true, false)
