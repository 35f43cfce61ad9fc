// The dense (bf16/fp16) layer on the small-M path: align -> gate-up GEMV with the activation
// -> down GEMV with the routed weight -> combine. CUDA builds only.
#pragma once

#include <cstddef>

#include "fusedmoe/moe.h"

namespace fusedmoe {

/// Enqueues routing_topk (arguments already validated).
Status gpu_route(const ProblemShape& shape, const RoutingConfig& routing, DType logits_dtype, const void* logits,
                 int32_t* topk_ids, float* topk_weights, cudaStream_t stream);

/// Constraints of this path beyond the common validation (16-byte rows and pointers).
Status small_m_can_implement(const MoeArguments& args);
/// Enqueues the layer; the workspace holds plan_workspace(inputs, quant, 1).
Status small_m_run(const MoeArguments& args, void* workspace, size_t workspace_bytes, cudaStream_t stream);

}  // namespace fusedmoe
