// The FP8 one-token down GEMV's launcher (fp8.cu; declared apart from launch.h, whose every
// change rebuilds each CUTLASS translation unit).
#pragma once

#include <cuda_runtime_api.h>

#include "launch.h"

namespace fusedmoe::kernels {

/// fp8_gemv's down GEMV for one token (M = 1, top-k kOneTokenDownMinTopk to
/// kOneTokenDownMaxTopk, align's table) with the combine folded in, as launch_one_token_down is
/// for dense weights: p.out is out's row [n_out], the sum over the token's local experts of
/// their rows times the routed weight (1 where it was applied on the input); no y rows and no
/// combine launch. A token with no local expert gets zeros. p.split_k and p.n_tiles unused
/// (one_token_down_split(topk) K slices); the weights, scales and activations as
/// launch_fp8_gemv takes them.
cudaError_t launch_fp8_one_token_down(const GroupedGemvParams& p, const Fp8WeightsView& w, const Fp8ActView& x,
                                      cudaStream_t stream);

}  // namespace fusedmoe::kernels
