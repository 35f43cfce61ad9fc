// sm90_fp8_grouped_gemm_blockscale: e4m3 A and B, bf16 D, DeepSeek's 128 x 128 weight blocks and
// 1 x 128 activation groups scaled in the mainloop (one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE(fp8_grouped_gemm_bf16_block, cutlass::float_e4m3_t, cutlass::bfloat16_t, 128, false, false)
