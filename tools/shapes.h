// The shapes file (shapes/models.json, the same content as the project's models.json):
// the bench shapes with their model's routing, and the batch sizes.
#pragma once

#include <string>
#include <vector>

#include "fusedmoe/moe.h"
#include "fusedmoe_ref/synthetic.h"

namespace fusedmoe::tools {

/// How a layer routes its tokens, by name (--routing). Model routings come from the router
/// logits; the synthetic ones place tokens directly.
struct RoutingSetup {
  std::string name;
  bool from_logits = true;           ///< false: synthetic topk ids (uniform, skewed, one_expert, balanced)
  RoutingConfig config;
  bool use_correction_bias = false;  ///< DeepSeek-V3 e_score_correction_bias
  bool weight_on_input = false;      ///< Llama-4: routed weight applied before the activation
};

/// Names: softmax_topk, softmax_topk_renormalize, sigmoid_topk, sigmoid_topk_renormalize,
/// sigmoid_topk_on_input (Llama-4), sigmoid_grouped_topk (DeepSeek-V3: groups of n_group /
/// topk_group, correction bias, renormalized, scaled), uniform, skewed, one_expert, balanced.
/// n_group, topk_group and scale only matter for the grouped routing.
Status routing_from_name(const std::string& name, int32_t n_group, int32_t topk_group, float scale,
                         RoutingSetup* out);
/// The synthetic inputs' routing mode for a routing: kRouter for the model routings (from
/// logits), else the synthetic mode of that name.
ref::RoutingMode synthetic_routing_mode(const RoutingSetup& routing);

struct ShapeSpec {
  std::string name;   ///< bench shape, e.g. deepseek_v3_tp8
  std::string model;
  int tp = 1;
  ProblemShape shape;  ///< m = 0
  RoutingSetup routing;
};

struct ShapesFile {
  std::vector<ShapeSpec> shapes;
  std::vector<int64_t> batch_sizes;
  const ShapeSpec* find(const std::string& name) const;
};

Status load_shapes(const std::string& path, ShapesFile* out);

}  // namespace fusedmoe::tools
