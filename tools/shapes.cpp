#include "shapes.h"

#include <fstream>
#include <sstream>

#include "json.h"

namespace fusedmoe::tools {

namespace {

Status bad(const std::string& what, const std::string& expected, const std::string& got) {
  return Status(StatusCode::kInvalidArgument, what + ": expected " + expected + ", got " + got);
}

Status number(const Json& obj, const std::string& where, const char* key, double* out) {
  const Json* v = obj.get(key);
  if (v == nullptr || v->type != Json::Type::kNumber) return bad(where + "." + key, "a number", v ? "another type" : "nothing");
  *out = v->number;
  return Status();
}

}  // namespace

Status routing_from_name(const std::string& name, int32_t n_group, int32_t topk_group, float scale,
                         RoutingSetup* out) {
  RoutingSetup r;
  r.name = name;
  if (name == "softmax_topk" || name == "softmax_topk_renormalize") {
    r.config.scoring = ScoringFunc::kSoftmax;
    r.config.renormalize = name == "softmax_topk_renormalize";
  } else if (name == "sigmoid_topk" || name == "sigmoid_topk_renormalize" || name == "sigmoid_topk_on_input") {
    r.config.scoring = ScoringFunc::kSigmoid;
    r.config.renormalize = name == "sigmoid_topk_renormalize";
    r.weight_on_input = name == "sigmoid_topk_on_input";
  } else if (name == "sigmoid_grouped_topk") {
    r.config.scoring = ScoringFunc::kSigmoid;
    r.config.renormalize = true;  // DeepSeek-V3 norm_topk_prob
    r.config.n_group = n_group;
    r.config.topk_group = topk_group;
    r.config.routed_scaling_factor = scale;
    r.use_correction_bias = true;
  } else if (name == "uniform" || name == "skewed" || name == "one_expert" || name == "balanced") {
    r.from_logits = false;
  } else {
    return bad("routing", "softmax_topk, softmax_topk_renormalize, sigmoid_topk, sigmoid_topk_renormalize, "
                          "sigmoid_topk_on_input, sigmoid_grouped_topk, uniform, skewed, one_expert or balanced",
               "'" + name + "'");
  }
  *out = r;
  return Status();
}

ref::RoutingMode synthetic_routing_mode(const RoutingSetup& routing) {
  if (routing.from_logits) return ref::RoutingMode::kRouter;
  if (routing.name == "skewed") return ref::RoutingMode::kSkewed;
  if (routing.name == "one_expert") return ref::RoutingMode::kOneExpert;
  if (routing.name == "balanced") return ref::RoutingMode::kBalanced;
  return ref::RoutingMode::kUniform;
}

const ShapeSpec* ShapesFile::find(const std::string& name) const {
  for (const ShapeSpec& s : shapes) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Status load_shapes(const std::string& path, ShapesFile* out) {
  std::ifstream f(path);
  if (!f) return bad("shapes file", "a readable file", "'" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  Json root;
  Status st = parse_json(ss.str(), &root);
  if (!st.ok()) return Status(st.code(), path + ": " + st.message());
  const Json* models = root.get("models");
  const Json* bench = root.get("bench_shapes");
  const Json* batches = root.get("batch_sizes");
  if (!models || models->type != Json::Type::kObject || !bench || bench->type != Json::Type::kObject ||
      !batches || batches->type != Json::Type::kArray) {
    return bad(path, "objects 'models' and 'bench_shapes' and an array 'batch_sizes'", "something else");
  }
  *out = ShapesFile();
  for (const Json& b : batches->array) out->batch_sizes.push_back(static_cast<int64_t>(b.number));
  for (const auto& kv : bench->object) {
    ShapeSpec s;
    s.name = kv.first;
    const Json& b = kv.second;
    const std::string where = "bench_shapes." + s.name;
    double e, h, i, topk, tp;
    for (auto [key, dst] : {std::pair{"E", &e}, {"H", &h}, {"I", &i}, {"topk", &topk}, {"tp", &tp}}) {
      st = number(b, where, key, dst);
      if (!st.ok()) return st;
    }
    const Json* model_name = b.get("model");
    if (!model_name || model_name->type != Json::Type::kString) return bad(where + ".model", "a string", "nothing");
    s.model = model_name->string;
    const Json* model = models->get(s.model);
    if (!model) return bad(where + ".model", "a key of 'models'", "'" + s.model + "'");
    s.tp = static_cast<int>(tp);
    s.shape.num_experts = static_cast<int32_t>(e);
    s.shape.hidden = static_cast<int64_t>(h);
    s.shape.inter = static_cast<int64_t>(i);
    s.shape.topk = static_cast<int32_t>(topk);
    const Json* routing = model->get("routing");
    std::string rname = routing && routing->type == Json::Type::kString ? routing->string : "softmax_topk";
    if (rname.find("weight applied to input") != std::string::npos) rname = "sigmoid_topk_on_input";
    double n_group = 0, topk_group = 0, scale = 1.0;
    if (const Json* v = model->get("n_group")) n_group = v->number;
    if (const Json* v = model->get("topk_group")) topk_group = v->number;
    if (const Json* v = model->get("routed_scaling_factor")) scale = v->number;
    st = routing_from_name(rname, static_cast<int32_t>(n_group), static_cast<int32_t>(topk_group),
                           static_cast<float>(scale), &s.routing);
    if (!st.ok()) return Status(st.code(), "models." + s.model + ": " + st.message());
    out->shapes.push_back(s);
  }
  return Status();
}

}  // namespace fusedmoe::tools
