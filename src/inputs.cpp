// Checks of the layer's sizes, routing description and input pointers.
#include <cmath>

#include "check.h"
#include "validate.h"

namespace fusedmoe {

using detail::invalid_argument;
using detail::str;

int32_t global_experts(const ProblemShape& s) {
  return s.global_num_experts == 0 ? s.num_experts : s.global_num_experts;
}

Status validate_shape(const ProblemShape& s) {
  if (s.m < 0) return invalid_argument("shape.m", ">= 0", str(s.m));
  if (s.hidden <= 0) return invalid_argument("shape.hidden", "> 0", str(s.hidden));
  if (s.inter <= 0) return invalid_argument("shape.inter", "> 0", str(s.inter));
  if (s.num_experts <= 0 || s.num_experts > Limits::kMaxExperts) {
    return invalid_argument("shape.num_experts", "1.." + str(Limits::kMaxExperts), str(s.num_experts));
  }
  const int32_t global = global_experts(s);
  if (global < s.num_experts || global > Limits::kMaxExperts) {
    return invalid_argument("shape.global_num_experts",
                            "0 or num_experts (" + str(s.num_experts) + ").." + str(Limits::kMaxExperts),
                            str(s.global_num_experts));
  }
  if (s.topk <= 0 || s.topk > global || s.topk > Limits::kMaxTopk) {
    return invalid_argument("shape.topk",
                            "1..min(global experts = " + str(global) + ", " + str(Limits::kMaxTopk) + ")",
                            str(s.topk));
  }
  int64_t pairs = 0;
  if (!detail::checked_mul(s.m, s.topk, &pairs) || pairs > Limits::kMaxPairs) {
    return invalid_argument("shape.m * shape.topk", "< 2^31 (int32 pair indices)",
                            str(s.m) + " * " + str(s.topk));
  }
  return Status();
}

Status validate_routing(const ProblemShape& s, const RoutingConfig& r) {
  const int32_t global = global_experts(s);
  if (r.scoring != ScoringFunc::kSoftmax && r.scoring != ScoringFunc::kSigmoid) {
    return invalid_argument("routing.scoring", "softmax or sigmoid", str(static_cast<int>(r.scoring)));
  }
  if (!(std::isfinite(r.routed_scaling_factor) && r.routed_scaling_factor > 0.0f)) {
    return invalid_argument("routing.routed_scaling_factor", "finite and > 0",
                            str(r.routed_scaling_factor));
  }
  if (r.n_group == 0) {
    if (r.topk_group != 0) {
      return invalid_argument("routing.topk_group", "0 when n_group is 0", str(r.topk_group));
    }
    return Status();
  }
  if (r.n_group < 0 || global % r.n_group != 0) {
    return invalid_argument("routing.n_group",
                            "a positive divisor of the global expert count " + str(global), str(r.n_group));
  }
  if (r.n_group > Limits::kMaxExpertGroups) {
    return invalid_argument("routing.n_group", "<= " + str(Limits::kMaxExpertGroups) + " (one group per lane)",
                            str(r.n_group));
  }
  if (r.topk_group < 1 || r.topk_group > r.n_group) {
    return invalid_argument("routing.topk_group", "1..n_group (" + str(r.n_group) + ")", str(r.topk_group));
  }
  const int64_t eligible = static_cast<int64_t>(r.topk_group) * (global / r.n_group);
  if (s.topk > eligible) {
    return invalid_argument("shape.topk",
                            "<= topk_group * experts per group = " + str(eligible), str(s.topk));
  }
  if (r.correction_bias != nullptr && global / r.n_group < 2) {
    return invalid_argument("routing.n_group",
                            "groups of >= 2 experts with a correction bias (group score = top-2 sum)",
                            str(global / r.n_group) + " expert(s) per group");
  }
  return Status();
}

Status validate_inputs(const MoeInputs& in) {
  FUSEDMOE_RETURN_IF_ERROR(validate_shape(in.shape));
  if (in.act_dtype != DType::kBF16 && in.act_dtype != DType::kFP16) {
    return invalid_argument("act_dtype", "bf16 or fp16", to_string(in.act_dtype));
  }
  if (in.activation != Activation::kSiluAndMul && in.activation != Activation::kGeluAndMul &&
      in.activation != Activation::kGeluTanhAndMul) {
    return invalid_argument("activation", "silu_and_mul, gelu_and_mul or gelu_tanh_and_mul",
                            str(static_cast<int>(in.activation)));
  }
  if (in.apply_router_weight_on_input && in.shape.topk != 1) {
    return invalid_argument("apply_router_weight_on_input", "only with topk = 1",
                            "topk = " + str(in.shape.topk));
  }
  if (in.shape.global_num_experts != 0 && in.shape.global_num_experts != in.shape.num_experts &&
      in.expert_map == nullptr) {
    return invalid_argument("expert_map", "a map when global_num_experts (" +
                                              str(in.shape.global_num_experts) +
                                              ") differs from num_experts (" + str(in.shape.num_experts) + ")",
                            "nullptr");
  }
  const bool have_logits = in.router_logits != nullptr;
  const bool have_topk = in.topk_ids != nullptr || in.topk_weights != nullptr;
  if (have_logits && have_topk) {
    return invalid_argument("router_logits / topk_ids", "exactly one routing source", "both");
  }
  if (have_logits) {
    if (in.router_dtype != DType::kFP32 && in.router_dtype != DType::kBF16 &&
        in.router_dtype != DType::kFP16) {
      return invalid_argument("router_dtype", "fp32, bf16 or fp16", to_string(in.router_dtype));
    }
    FUSEDMOE_RETURN_IF_ERROR(validate_routing(in.shape, in.routing));
  }
  if (in.shape.m == 0) return Status();  // an empty batch reads nothing
  if (in.x == nullptr) return invalid_argument("x", "a pointer to [m, hidden] data", "nullptr");
  if (!have_logits) {
    if (in.topk_ids == nullptr) {
      return invalid_argument("topk_ids", "a pointer to [m, topk] int32 (or router_logits)", "nullptr");
    }
    if (in.topk_weights == nullptr) {
      return invalid_argument("topk_weights", "a pointer to [m, topk] fp32", "nullptr");
    }
  }
  return Status();
}

}  // namespace fusedmoe
