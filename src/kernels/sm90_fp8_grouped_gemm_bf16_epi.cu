// sm90_fp8_grouped_gemm: e4m3 A and B, bf16 D, scales that do not vary
// along k (per-row activations; weights per column or per expert) applied in the epilogue
// (one kernel per translation unit).
#include "sm90_grouped_gemm.cuh"

FUSEDMOE_GROUPED_GEMM_INSTANCE(fp8_grouped_gemm_bf16_epi, cutlass::float_e4m3_t, cutlass::bfloat16_t, sm90::kEpilogueScales, false, false)
