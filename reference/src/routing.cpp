// Reference routing: softmax / sigmoid scores, optional DeepSeek grouped top-k with a
// correction bias, renormalization and routed scaling.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "check.h"
#include "fusedmoe_ref/numeric.h"
#include "fusedmoe_ref/reference.h"
#include "validate.h"

namespace fusedmoe::ref {

namespace {

// Indices of the k largest values; ties go to the lower index. Entries with eligible[i] ==
// false are never chosen.
std::vector<int32_t> top_k(const std::vector<double>& v, const std::vector<char>& eligible, int k) {
  std::vector<int32_t> idx;
  for (int32_t i = 0; i < static_cast<int32_t>(v.size()); ++i) {
    if (eligible[i]) idx.push_back(i);
  }
  std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return v[a] > v[b]; });
  idx.resize(static_cast<size_t>(k));
  return idx;
}

}  // namespace

Status route(const ProblemShape& shape, const RoutingConfig& cfg, DType logits_dtype,
             const void* logits, Routing* out) {
  if (out == nullptr) return detail::invalid_argument("out", "non-null", "nullptr");
  FUSEDMOE_RETURN_IF_ERROR(validate_shape(shape));
  if (logits_dtype != DType::kFP32 && logits_dtype != DType::kBF16 && logits_dtype != DType::kFP16) {
    return detail::invalid_argument("router_dtype", "fp32, bf16 or fp16", to_string(logits_dtype));
  }
  FUSEDMOE_RETURN_IF_ERROR(validate_routing(shape, cfg));
  if (shape.m > 0 && logits == nullptr) {
    return detail::invalid_argument("router_logits", "a pointer to [m, global experts] data", "nullptr");
  }
  const int32_t global = global_experts(shape);
  const int32_t k = shape.topk;
  out->ids.assign(static_cast<size_t>(shape.m * k), 0);
  out->weights.assign(static_cast<size_t>(shape.m * k), 0.0f);

#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < shape.m; ++t) {
    std::vector<double> score(global), choice(global);
    const int64_t row = t * global;
    double mx = -INFINITY;
    for (int32_t j = 0; j < global; ++j) {
      score[j] = load_as_double(logits, logits_dtype, row + j);
      mx = std::max(mx, score[j]);
    }
    if (cfg.scoring == ScoringFunc::kSoftmax) {
      double sum = 0.0;
      for (double& s : score) sum += (s = std::exp(s - mx));
      for (double& s : score) s /= sum;
    } else {
      for (double& s : score) s = 1.0 / (1.0 + std::exp(-s));
    }
    for (int32_t j = 0; j < global; ++j) {
      choice[j] = score[j] + (cfg.correction_bias ? cfg.correction_bias[j] : 0.0);
    }
    std::vector<char> eligible(global, 1);
    if (cfg.n_group > 0) {
      const int32_t per_group = global / cfg.n_group;
      std::vector<double> group_score(cfg.n_group);
      for (int32_t g = 0; g < cfg.n_group; ++g) {
        std::vector<double> members(choice.begin() + g * per_group, choice.begin() + (g + 1) * per_group);
        std::sort(members.begin(), members.end(), std::greater<double>());
        group_score[g] = cfg.correction_bias ? members[0] + members[1] : members[0];
      }
      const std::vector<int32_t> groups =
          top_k(group_score, std::vector<char>(cfg.n_group, 1), cfg.topk_group);
      std::fill(eligible.begin(), eligible.end(), 0);
      for (int32_t g : groups) {
        std::fill(eligible.begin() + g * per_group, eligible.begin() + (g + 1) * per_group, 1);
      }
    }
    const std::vector<int32_t> chosen = top_k(choice, eligible, k);
    double sum = 0.0;
    for (int32_t i : chosen) sum += score[i];
    for (int32_t s = 0; s < k; ++s) {
      double w = score[chosen[s]];
      if (cfg.renormalize && sum > 0.0) w /= sum;
      out->ids[t * k + s] = chosen[s];
      out->weights[t * k + s] = static_cast<float>(w * cfg.routed_scaling_factor);
    }
  }
  return Status();
}

}  // namespace fusedmoe::ref
