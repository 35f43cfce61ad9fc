// Internal argument checks shared by the public entry points and the CPU reference.
#pragma once

#include "fusedmoe/moe.h"
#include "kernels/kernel_limits.h"

namespace fusedmoe {

/// Limits of this build, each with the reason it exists.
struct Limits {
  /// The kernels' bounds (kernels/kernel_limits.h says why).
  static constexpr int32_t kMaxExperts = kernels::kMaxExperts;
  static constexpr int32_t kMaxTopk = kernels::kMaxTopk;
  static constexpr int32_t kMaxExpertGroups = kernels::kMaxExpertGroups;
  /// Pair indices (token * topk + slot) are int32 in the alignment buffers.
  static constexpr int64_t kMaxPairs = (int64_t{1} << 31) - 1;
};

Status validate_shape(const ProblemShape& shape);
Status validate_quant(const ProblemShape& shape, DType act_dtype, const QuantParams& quant);
/// Routing configuration against the shape (groups divide the experts, topk fits, ...).
Status validate_routing(const ProblemShape& shape, const RoutingConfig& routing);
/// GPTQ, AWQ or moe_wna16 (weight-only int4/int8).
bool is_integer_format(WeightFormat format);
/// FP8 per-tensor, per-channel or block.
bool is_fp8_format(WeightFormat format);
/// global_num_experts with the 0 default resolved.
int32_t global_experts(const ProblemShape& shape);

}  // namespace fusedmoe
