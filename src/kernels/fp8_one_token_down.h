// The FP8 one-token down GEMV's launcher (fp8.cu; declared apart from launch.h, whose every
// change rebuilds each CUTLASS translation unit).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "fp8_one_token_geometry.h"
#include "launch.h"

namespace fusedmoe::kernels {

/// fp8_gemv's down GEMV for one token (M = 1, top-k kOneTokenDownMinTopk to
/// kOneTokenDownMaxTopk, align's table of that one token) with the intermediate's quantizer and
/// the combine folded in; for `tokens` 2 to 4 (at most kWarpAlignPairs pairs on align's table,
/// and not under dynamic per-tensor scales, whose amax spans every token's rows) the same per
/// token, a CTA row each. p.x is the gated activation (p.elem values, a row per sorted
/// position, as the gate-up GEMV writes it): each CTA first quantizes its token's live rows
/// into shared memory exactly as launch_fp8_quantize would (x.kind: a scale per row, per
/// x.group columns of a row, or for the tensor: x.scales[0], static, or at one token where
/// x.scales is nullptr the amax of the live rows, which it also stores at amax_out unless that
/// is nullptr, as the whole-tensor quantizer does), then streams its 16 output rows' weights
/// over those rows. p.out is out's rows [tokens, n_out], each the sum over the token's local
/// experts of their rows times the routed weight (1 where it was applied on the input); no y
/// rows, no quantized intermediate and no combine launch. A token with no local expert gets
/// zeros. p.split_k and p.n_tiles unused (one_token_down_split(topk) K slices); the weights as
/// launch_fp8_gemv takes them. Refused (cudaErrorInvalidValue) where fp8_one_token_down_supports
/// does not hold (x.kind kGroup: group scales).
cudaError_t launch_fp8_one_token_down(const GroupedGemvParams& p, const Fp8WeightsView& w, const Fp8ActView& x,
                                      float* amax_out, int32_t tokens, cudaStream_t stream);

}  // namespace fusedmoe::kernels
