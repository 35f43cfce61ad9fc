// Internal argument checks shared by the public entry points and the CPU reference.
#pragma once

#include <string>

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

/// GPTQ act-order: the input-channel order that makes one expert's groups contiguous, from
/// its g_idx[k] (the group of channel k, k < `k`): order[j] = the channel at position j,
/// groups in turn, channels ascending within a group. GPTQ puts channel perm[i] in group
/// i / group_len (every group then holds group_len channels), which the prepared layout needs
/// (position j is in group j / group_len); a g_idx that does not has an error naming `name`
/// (e.g. "w13.g_idx[3]") and the group. groups * group_len == k.
Status act_order_columns(const int32_t* g_idx, int64_t k, int64_t group_len, const std::string& name,
                         int32_t* order);

}  // namespace fusedmoe
