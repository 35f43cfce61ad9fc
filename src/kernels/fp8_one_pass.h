// The one-pass per-tensor quantizer's launcher (fp8.cu; declared apart from launch.h, whose
// every change rebuilds each CUTLASS translation unit). Geometry: fp8_one_pass_geometry.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "fp8_one_pass_geometry.h"
#include "launch.h"

namespace fusedmoe::kernels {

/// launch_fp8_quantize under a dynamic per-tensor scale (p.kind kTensor, no tensor_scale, no
/// amax pass before it: p.amax unused) in one cooperative launch of fp8_one_pass_plan(p.rows,
/// p.cols, sms).ctas CTAs: the amax of every value read (kRows: the live rows; kGatedAct: the activation of
/// the live rows, rounded to p.elem, as gated_act stores it; kScatterTokens: every token, as
/// the two-pass form's amax over x) and the codes and scales exactly as the two-pass form
/// writes them. The amax is stored at p.amax_out (where launch_fp8_amax leaves it) unless that
/// is nullptr; partials: kFp8OnePassMaxCtas floats of workspace, the CTAs' amaxes. Views
/// kRows, kGatedAct and kScatterTokens (not kGatherTokens, whose amax is over x's tokens,
/// not its rows), no align table. The launch waits for the stream's previous work (no
/// programmatic dependent launch) and lets its successor launch at once.
/// cudaErrorInvalidValue where that plan does not fit or the parameters are not ones
/// launch_fp8_quantize takes.
cudaError_t launch_fp8_quantize_one_pass(const Fp8QuantParams& p, float* partials, int32_t sms, cudaStream_t stream);

}  // namespace fusedmoe::kernels
