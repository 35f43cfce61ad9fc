// PyTorch custom ops over the C++ API (no kernel logic here): tensors in, Status out as a
// RuntimeError naming the argument, the expected and the actual value. The ops run on the
// current CUDA stream and take their workspace from PyTorch's caching allocator, so they
// work inside torch.cuda.graph captures. Loaded with torch.ops.load_library by the Python
// package, which also registers their fake (meta) implementations for torch.compile.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <vector>

#include "fusedmoe/moe.h"

namespace {

using fusedmoe::DType;
using fusedmoe::Status;

void ok_or_throw(const Status& st) { TORCH_CHECK(st.ok(), "fusedmoe: ", st.message()); }

DType act_dtype_of(const at::Tensor& t, const char* name) {
  if (t.scalar_type() == at::kBFloat16) return DType::kBF16;
  if (t.scalar_type() == at::kHalf) return DType::kFP16;
  TORCH_CHECK(false, "fusedmoe: ", name, ": expected dtype bfloat16 or float16, got ", t.scalar_type());
}

DType logits_dtype_of(const at::Tensor& t) {
  if (t.scalar_type() == at::kFloat) return DType::kFP32;
  if (t.scalar_type() == at::kBFloat16) return DType::kBF16;
  if (t.scalar_type() == at::kHalf) return DType::kFP16;
  TORCH_CHECK(false, "fusedmoe: router_logits: expected dtype float32, bfloat16 or float16, got ", t.scalar_type());
}

void check_tensor(const at::Tensor& t, const char* name, int64_t dim, const at::Device& device) {
  TORCH_CHECK(t.dim() == dim, "fusedmoe: ", name, ": expected ", dim, " dimensions, got ", t.dim(), " (shape ",
              t.sizes(), ")");
  TORCH_CHECK(t.device() == device, "fusedmoe: ", name, ": expected a tensor on ", device, ", got ", t.device());
  TORCH_CHECK(t.is_contiguous(), "fusedmoe: ", name, ": expected a contiguous tensor, got strides ", t.strides());
}

fusedmoe::Activation activation_of(const std::string& name) {
  if (name == "silu") return fusedmoe::Activation::kSiluAndMul;
  if (name == "gelu") return fusedmoe::Activation::kGeluAndMul;
  if (name == "gelu_tanh") return fusedmoe::Activation::kGeluTanhAndMul;
  TORCH_CHECK(false, "fusedmoe: activation: expected silu, gelu or gelu_tanh, got '", name, "'");
}

fusedmoe::ScoringFunc scoring_of(const std::string& name) {
  if (name == "softmax") return fusedmoe::ScoringFunc::kSoftmax;
  if (name == "sigmoid") return fusedmoe::ScoringFunc::kSigmoid;
  TORCH_CHECK(false, "fusedmoe: scoring_func: expected softmax or sigmoid, got '", name, "'");
}

// One call of the layer: dense weights w1 [E, 2I, H] (gate rows, then up rows) and w2 [E, H, I],
// or integer weights bound from prepare_quant's storage.
struct Layer {
  fusedmoe::MoeArguments args;
  fusedmoe::PreparedWeights prepared;
  at::Tensor out;
  std::optional<at::Tensor> expert_map;
};

// Everything but the weights: inputs, expert map, path and the output.
void setup_inputs(const at::Tensor& x, const fusedmoe::ProblemShape& s, const std::string& activation,
                  bool weight_on_input, const std::optional<at::Tensor>& expert_map, const std::string& path,
                  Layer* layer) {
  const at::Device device = x.device();
  fusedmoe::MoeInputs& in = layer->args.inputs;
  in.shape = s;
  in.activation = activation_of(activation);
  in.act_dtype = act_dtype_of(x, "hidden_states");
  in.x = x.data_ptr();
  in.apply_router_weight_on_input = weight_on_input;
  if (expert_map.has_value()) {
    const at::Tensor& map = *expert_map;
    check_tensor(map, "expert_map", 1, device);
    TORCH_CHECK(map.scalar_type() == at::kInt, "fusedmoe: expert_map: expected dtype int32, got ", map.scalar_type());
    in.shape.global_num_experts = static_cast<int32_t>(map.size(0));
    in.expert_map = map.data_ptr<int32_t>();
    layer->expert_map = map;
  }
  layer->args.weights = &layer->prepared;
  ok_or_throw(fusedmoe::parse_kernel_path(path, &layer->args.path));
  layer->out = at::empty_like(x);
  layer->args.out = layer->out.data_ptr();
}

void check_hidden_states(const at::Tensor& x) {
  TORCH_CHECK(x.device().is_cuda(), "fusedmoe: hidden_states: expected a CUDA tensor, got ", x.device());
  check_tensor(x, "hidden_states", 2, x.device());
  act_dtype_of(x, "hidden_states");
}

// The layer's sizes from hidden_states [M, H] and w1 [E, 2 * I, K] (K checked by the caller).
fusedmoe::ProblemShape shape_from_w1(const at::Tensor& x, const at::Tensor& w1, int64_t topk) {
  TORCH_CHECK(w1.size(1) % 2 == 0, "fusedmoe: w1: expected [E, 2 * I, H], got shape ", w1.sizes());
  fusedmoe::ProblemShape s;
  s.m = x.size(0);
  s.hidden = x.size(1);
  s.num_experts = static_cast<int32_t>(w1.size(0));
  s.inter = w1.size(1) / 2;
  s.topk = static_cast<int32_t>(topk);
  return s;
}

void setup_layer(const at::Tensor& x, const at::Tensor& w1, const at::Tensor& w2, int64_t topk,
                 const std::string& activation, bool weight_on_input, const std::optional<at::Tensor>& expert_map,
                 const std::string& path, Layer* layer) {
  const at::Device device = x.device();
  check_hidden_states(x);
  check_tensor(w1, "w1", 3, device);
  check_tensor(w2, "w2", 3, device);
  const DType act = act_dtype_of(x, "hidden_states");
  TORCH_CHECK(w1.scalar_type() == x.scalar_type() && w2.scalar_type() == x.scalar_type(),
              "fusedmoe: w1, w2: expected dtype ", x.scalar_type(), " as hidden_states, got ", w1.scalar_type(), " and ",
              w2.scalar_type());
  const fusedmoe::ProblemShape s = shape_from_w1(x, w1, topk);
  TORCH_CHECK(w1.size(2) == s.hidden, "fusedmoe: w1: expected [E, 2 * I, ", s.hidden, "] (H of hidden_states), got ",
              w1.sizes());
  TORCH_CHECK(w2.size(0) == s.num_experts && w2.size(1) == s.hidden && w2.size(2) == s.inter, "fusedmoe: w2: expected [",
              s.num_experts, ", ", s.hidden, ", ", s.inter, "], got ", w2.sizes());
  setup_inputs(x, s, activation, weight_on_input, expert_map, path, layer);
  fusedmoe::MoeWeights w;
  w.w13.weight = w1.data_ptr();
  w.w2.weight = w2.data_ptr();
  ok_or_throw(fusedmoe::prepare_weights(layer->args.inputs.shape, act, w, nullptr, 0, at::cuda::getCurrentCUDAStream(),
                                        &layer->prepared));
}

// Prepared weights travel as an int list (op schemas have no structs):
// [format (WeightFormat: 0 dense, 4 gptq, 5 awq, 6 moe_wna16), bits, group_size, has_zeros, has_g_idx,
//  scale dtype (DType: 0 bf16, 1 fp16, 2 fp32), gptq_zeros_minus_one, num_experts, hidden, inter,
//  activation dtype (0 bf16, 1 fp16)].
constexpr size_t kQuantFields = 11;

void parse_quant(at::IntArrayRef v, fusedmoe::ProblemShape* s, fusedmoe::QuantParams* q, DType* act) {
  TORCH_CHECK(v.size() == kQuantFields, "fusedmoe: quant: expected ", kQuantFields, " integers, got ", v.size());
  q->format = static_cast<fusedmoe::WeightFormat>(v[0]);
  q->bits = static_cast<int32_t>(v[1]);
  q->group_size = static_cast<int32_t>(v[2]);
  q->has_zeros = v[3] != 0;
  q->has_g_idx = v[4] != 0;
  q->scale_dtype = static_cast<DType>(v[5]);
  q->gptq_zeros_minus_one = v[6] != 0;
  s->num_experts = static_cast<int32_t>(v[7]);
  s->hidden = v[8];
  s->inter = v[9];
  TORCH_CHECK(v[10] == 0 || v[10] == 1, "fusedmoe: quant[10] (activation dtype): expected 0 (bf16) or 1 (fp16), got ",
              v[10]);
  *act = v[10] == 0 ? DType::kBF16 : DType::kFP16;
}

at::ScalarType scalar_type_of(DType d) {
  switch (d) {
    case DType::kBF16: return at::kBFloat16;
    case DType::kFP16: return at::kHalf;
    case DType::kFP32: return at::kFloat;
    case DType::kInt32: return at::kInt;
    case DType::kUInt8: return at::kByte;
    case DType::kFP8E4M3: break;
  }
  return at::kFloat8_e4m3fn;
}

// The checkpoint tensors of one projection against what the format expects (names as
// describe_weight_tensors gives them: "w13.scales", ...).
void check_checkpoint(const fusedmoe::ProblemShape& s, DType act, const fusedmoe::QuantParams& q,
                      fusedmoe::Projection which, const std::vector<std::optional<at::Tensor>>& given,
                      const at::Device& device, fusedmoe::ProjectionWeights* out) {
  std::vector<fusedmoe::TensorSpec> specs;
  ok_or_throw(fusedmoe::describe_weight_tensors(s, act, q, which, &specs));
  const char* fields[] = {"weight", "scales", "zeros", "g_idx"};
  for (size_t i = 0; i < 4; ++i) {
    const std::string name = std::string(fusedmoe::to_string(which)) + "." + fields[i];
    const fusedmoe::TensorSpec* spec = nullptr;
    for (const auto& sp : specs) {
      if (sp.name == name) spec = &sp;
    }
    if (spec == nullptr) continue;  // not part of this format
    TORCH_CHECK(given[i].has_value(), "fusedmoe: ", name, ": expected a ", fusedmoe::to_string(spec->dtype),
                " tensor of shape ", at::IntArrayRef(spec->dims), ", got None");
    const at::Tensor& t = *given[i];
    check_tensor(t, name.c_str(), static_cast<int64_t>(spec->dims.size()), device);
    TORCH_CHECK(t.sizes() == at::IntArrayRef(spec->dims) && t.scalar_type() == scalar_type_of(spec->dtype),
                "fusedmoe: ", name, ": expected ", fusedmoe::to_string(spec->dtype), " ", at::IntArrayRef(spec->dims),
                ", got ", t.scalar_type(), " ", t.sizes());
    const void* p = t.data_ptr();
    if (i == 0) out->weight = p;
    if (i == 1) out->scales = p;
    if (i == 2) out->zeros = p;
    if (i == 3) out->g_idx = static_cast<const int32_t*>(p);
  }
}

// Converts GPTQ / AWQ / moe_wna16 tensors (or dense bf16/fp16 ones: w13's gate and up rows
// interleaved, no scales) once into fusedmoe's prepared layout: a uint8 tensor that
// fused_experts_quant reads with the same quant list.
at::Tensor prepare_quant(const at::Tensor& w1, const std::optional<at::Tensor>& w1_scales,
                         const std::optional<at::Tensor>& w1_zeros, const std::optional<at::Tensor>& w1_g_idx,
                         const at::Tensor& w2, const std::optional<at::Tensor>& w2_scales,
                         const std::optional<at::Tensor>& w2_zeros, const std::optional<at::Tensor>& w2_g_idx,
                         at::IntArrayRef quant) {
  const at::Device device = w1.device();
  TORCH_CHECK(device.is_cuda(), "fusedmoe: w1: expected a CUDA tensor, got ", device);
  const c10::cuda::CUDAGuard guard(device);
  fusedmoe::ProblemShape s;
  fusedmoe::MoeWeights w;
  DType act = DType::kBF16;
  parse_quant(quant, &s, &w.quant, &act);
  s.m = 1;
  s.topk = 1;
  check_checkpoint(s, act, w.quant, fusedmoe::Projection::kW13, {w1, w1_scales, w1_zeros, w1_g_idx}, device, &w.w13);
  check_checkpoint(s, act, w.quant, fusedmoe::Projection::kW2, {w2, w2_scales, w2_zeros, w2_g_idx}, device, &w.w2);
  size_t bytes = 0;
  ok_or_throw(fusedmoe::prepared_weights_size(s, act, w, &bytes));
  at::Tensor storage = at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(device));
  fusedmoe::PreparedWeights prepared;
  ok_or_throw(fusedmoe::prepare_weights(s, act, w, storage.data_ptr(), bytes, at::cuda::getCurrentCUDAStream(), &prepared));
  return storage;
}

void setup_quant_layer(const at::Tensor& x, const at::Tensor& storage, at::IntArrayRef quant, int64_t topk,
                       const std::string& activation, bool weight_on_input, const std::optional<at::Tensor>& expert_map,
                       const std::string& path, Layer* layer) {
  check_hidden_states(x);
  check_tensor(storage, "storage", 1, x.device());
  TORCH_CHECK(storage.scalar_type() == at::kByte, "fusedmoe: storage: expected dtype uint8 (from prepare_quant), got ",
              storage.scalar_type());
  fusedmoe::ProblemShape s;
  fusedmoe::QuantParams q;
  DType act = DType::kBF16;
  parse_quant(quant, &s, &q, &act);
  TORCH_CHECK(act == act_dtype_of(x, "hidden_states"), "fusedmoe: hidden_states: expected dtype ",
              fusedmoe::to_string(act), " (the weights were prepared for it), got ", x.scalar_type());
  TORCH_CHECK(x.size(1) == s.hidden, "fusedmoe: hidden_states: expected [M, ", s.hidden, "], got ", x.sizes());
  s.m = x.size(0);
  s.topk = static_cast<int32_t>(topk);
  setup_inputs(x, s, activation, weight_on_input, expert_map, path, layer);
  ok_or_throw(fusedmoe::bind_prepared_weights(s, act, q, storage.data_ptr(), static_cast<size_t>(storage.numel()),
                                              &layer->prepared));
}

at::Tensor run_layer(Layer* layer, const at::Device& device) {
  size_t bytes = 0;
  ok_or_throw(fusedmoe::workspace_size(layer->args, &bytes));
  at::Tensor workspace = at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(device));
  ok_or_throw(fusedmoe::run(layer->args, bytes ? workspace.data_ptr() : nullptr, bytes, at::cuda::getCurrentCUDAStream()));
  return layer->out;
}

void check_routing(const at::Tensor& x, const at::Tensor& topk_weights, const at::Tensor& topk_ids) {
  check_tensor(topk_ids, "topk_ids", 2, x.device());
  check_tensor(topk_weights, "topk_weights", 2, x.device());
  TORCH_CHECK(topk_ids.scalar_type() == at::kInt, "fusedmoe: topk_ids: expected dtype int32, got ", topk_ids.scalar_type());
  TORCH_CHECK(topk_weights.scalar_type() == at::kFloat, "fusedmoe: topk_weights: expected dtype float32, got ",
              topk_weights.scalar_type());
  TORCH_CHECK(topk_ids.sizes() == topk_weights.sizes() && topk_ids.size(0) == x.size(0),
              "fusedmoe: topk_ids, topk_weights: expected the same shape [", x.size(0), ", topk], got ", topk_ids.sizes(),
              " and ", topk_weights.sizes());
}

at::Tensor fused_experts(const at::Tensor& x, const at::Tensor& w1, const at::Tensor& w2, const at::Tensor& topk_weights,
                         const at::Tensor& topk_ids, const std::string& activation, bool apply_router_weight_on_input,
                         const std::optional<at::Tensor>& expert_map, const std::string& path) {
  const c10::cuda::CUDAGuard guard(x.device());
  check_routing(x, topk_weights, topk_ids);
  Layer layer;
  setup_layer(x, w1, w2, topk_ids.size(1), activation, apply_router_weight_on_input, expert_map, path, &layer);
  layer.args.inputs.topk_ids = topk_ids.data_ptr<int32_t>();
  layer.args.inputs.topk_weights = topk_weights.data_ptr<float>();
  return run_layer(&layer, x.device());
}

at::Tensor fused_experts_quant(const at::Tensor& x, const at::Tensor& storage, at::IntArrayRef quant,
                               const at::Tensor& topk_weights, const at::Tensor& topk_ids, const std::string& activation,
                               bool apply_router_weight_on_input, const std::optional<at::Tensor>& expert_map,
                               const std::string& path) {
  const c10::cuda::CUDAGuard guard(x.device());
  check_routing(x, topk_weights, topk_ids);
  Layer layer;
  setup_quant_layer(x, storage, quant, topk_ids.size(1), activation, apply_router_weight_on_input, expert_map, path,
                    &layer);
  layer.args.inputs.topk_ids = topk_ids.data_ptr<int32_t>();
  layer.args.inputs.topk_weights = topk_weights.data_ptr<float>();
  return run_layer(&layer, x.device());
}

// FP8 W8A8 weights as the checkpoint holds them (no conversion): e4m3 w1 [E, 2I, H] and w2
// [E, H, I] with fp32 scales per expert [E], per row [E, N] or per block [E, N/bn, K/bk];
// a1_scale / a2_scale: static per-tensor activation scales ([1] fp32) or None.
// fp8 = [format (WeightFormat: 1 per-tensor, 2 per-channel, 3 block), act_quant (ActQuant:
// 1 per-tensor dynamic, 2 per-tensor static, 3 per-token, 4 per-group), block_n, block_k].
at::Tensor fused_experts_fp8(const at::Tensor& x, const at::Tensor& w1, const at::Tensor& w1_scale, const at::Tensor& w2,
                             const at::Tensor& w2_scale, const std::optional<at::Tensor>& a1_scale,
                             const std::optional<at::Tensor>& a2_scale, at::IntArrayRef fp8,
                             const at::Tensor& topk_weights, const at::Tensor& topk_ids, const std::string& activation,
                             bool apply_router_weight_on_input, const std::optional<at::Tensor>& expert_map,
                             const std::string& path) {
  const c10::cuda::CUDAGuard guard(x.device());
  check_routing(x, topk_weights, topk_ids);
  check_hidden_states(x);
  TORCH_CHECK(fp8.size() == 4, "fusedmoe: fp8: expected 4 integers, got ", fp8.size());
  check_tensor(w1, "w1", 3, x.device());
  check_tensor(w2, "w2", 3, x.device());
  const fusedmoe::ProblemShape s = shape_from_w1(x, w1, topk_ids.size(1));
  fusedmoe::MoeWeights w;
  w.quant.format = static_cast<fusedmoe::WeightFormat>(fp8[0]);
  w.quant.act_quant = static_cast<fusedmoe::ActQuant>(fp8[1]);
  w.quant.block_n = static_cast<int32_t>(fp8[2]);
  w.quant.block_k = static_cast<int32_t>(fp8[3]);
  const DType act = act_dtype_of(x, "hidden_states");
  Layer layer;
  setup_inputs(x, s, activation, apply_router_weight_on_input, expert_map, path, &layer);
  const fusedmoe::ProblemShape& shape = layer.args.inputs.shape;
  check_checkpoint(shape, act, w.quant, fusedmoe::Projection::kW13, {w1, w1_scale, std::nullopt, std::nullopt},
                   x.device(), &w.w13);
  check_checkpoint(shape, act, w.quant, fusedmoe::Projection::kW2, {w2, w2_scale, std::nullopt, std::nullopt},
                   x.device(), &w.w2);
  auto input_scale = [&](const std::optional<at::Tensor>& t, const char* name) -> const float* {
    if (!t.has_value()) return nullptr;
    check_tensor(*t, name, 1, x.device());
    TORCH_CHECK(t->scalar_type() == at::kFloat && t->numel() == 1, "fusedmoe: ", name,
                ": expected one float32 scale, got ", t->scalar_type(), " ", t->sizes());
    return t->data_ptr<float>();
  };
  w.w13.input_scale = input_scale(a1_scale, "a1_scale");
  w.w2.input_scale = input_scale(a2_scale, "a2_scale");
  ok_or_throw(fusedmoe::prepare_weights(shape, act, w, nullptr, 0, at::cuda::getCurrentCUDAStream(), &layer.prepared));
  layer.args.inputs.topk_ids = topk_ids.data_ptr<int32_t>();
  layer.args.inputs.topk_weights = topk_weights.data_ptr<float>();
  return run_layer(&layer, x.device());
}

fusedmoe::RoutingConfig routing_config(bool renormalize, const std::string& scoring_func, int64_t num_expert_group,
                                       int64_t topk_group, const std::optional<at::Tensor>& bias,
                                       double routed_scaling_factor, const at::Device& device) {
  fusedmoe::RoutingConfig r;
  r.scoring = scoring_of(scoring_func);
  r.renormalize = renormalize;
  r.n_group = static_cast<int32_t>(num_expert_group);
  r.topk_group = static_cast<int32_t>(topk_group);
  r.routed_scaling_factor = static_cast<float>(routed_scaling_factor);
  if (bias.has_value()) {
    check_tensor(*bias, "e_score_correction_bias", 1, device);
    TORCH_CHECK(bias->scalar_type() == at::kFloat, "fusedmoe: e_score_correction_bias: expected dtype float32, got ",
                bias->scalar_type());
    r.correction_bias = bias->data_ptr<float>();
  }
  return r;
}

at::Tensor fused_moe(const at::Tensor& x, const at::Tensor& router_logits, const at::Tensor& w1, const at::Tensor& w2,
                     int64_t topk, bool renormalize, const std::string& scoring_func, int64_t num_expert_group,
                     int64_t topk_group, const std::optional<at::Tensor>& bias, double routed_scaling_factor,
                     const std::string& activation, bool apply_router_weight_on_input,
                     const std::optional<at::Tensor>& expert_map, const std::string& path) {
  const c10::cuda::CUDAGuard guard(x.device());
  check_tensor(router_logits, "router_logits", 2, x.device());
  Layer layer;
  setup_layer(x, w1, w2, topk, activation, apply_router_weight_on_input, expert_map, path, &layer);
  const int64_t global = layer.args.inputs.shape.global_num_experts ? layer.args.inputs.shape.global_num_experts
                                                                      : layer.args.inputs.shape.num_experts;
  TORCH_CHECK(router_logits.size(0) == x.size(0) && router_logits.size(1) == global, "fusedmoe: router_logits: expected [",
              x.size(0), ", ", global, "], got ", router_logits.sizes());
  layer.args.inputs.router_logits = router_logits.data_ptr();
  layer.args.inputs.router_dtype = logits_dtype_of(router_logits);
  layer.args.inputs.routing =
      routing_config(renormalize, scoring_func, num_expert_group, topk_group, bias, routed_scaling_factor, x.device());
  return run_layer(&layer, x.device());
}

std::tuple<at::Tensor, at::Tensor> route_topk(const at::Tensor& router_logits, int64_t topk, bool renormalize,
                                              const std::string& scoring_func, int64_t num_expert_group, int64_t topk_group,
                                              const std::optional<at::Tensor>& bias, double routed_scaling_factor) {
  const at::Device device = router_logits.device();
  TORCH_CHECK(device.is_cuda(), "fusedmoe: router_logits: expected a CUDA tensor, got ", device);
  const c10::cuda::CUDAGuard guard(device);
  check_tensor(router_logits, "router_logits", 2, device);
  fusedmoe::ProblemShape s;
  s.m = router_logits.size(0);
  s.num_experts = static_cast<int32_t>(router_logits.size(1));
  s.hidden = 8;  // routing does not read the layer's dims; any valid values
  s.inter = 8;
  s.topk = static_cast<int32_t>(topk);
  at::Tensor ids = at::empty({s.m, topk}, router_logits.options().dtype(at::kInt));
  at::Tensor weights = at::empty({s.m, topk}, router_logits.options().dtype(at::kFloat));
  const fusedmoe::RoutingConfig r =
      routing_config(renormalize, scoring_func, num_expert_group, topk_group, bias, routed_scaling_factor, device);
  ok_or_throw(fusedmoe::route_topk(s, r, logits_dtype_of(router_logits), router_logits.data_ptr(), ids.data_ptr<int32_t>(),
                                   weights.data_ptr<float>(), at::cuda::getCurrentCUDAStream()));
  return {weights, ids};
}

}  // namespace

TORCH_LIBRARY(fusedmoe, m) {
  m.def(
      "fused_experts(Tensor hidden_states, Tensor w1, Tensor w2, Tensor topk_weights, Tensor topk_ids, "
      "str activation, bool apply_router_weight_on_input, Tensor? expert_map, str path) -> Tensor");
  m.def(
      "fused_moe(Tensor hidden_states, Tensor router_logits, Tensor w1, Tensor w2, int topk, bool renormalize, "
      "str scoring_func, int num_expert_group, int topk_group, Tensor? e_score_correction_bias, "
      "float routed_scaling_factor, str activation, bool apply_router_weight_on_input, Tensor? expert_map, "
      "str path) -> Tensor");
  m.def(
      "prepare_quant(Tensor w1, Tensor? w1_scales, Tensor? w1_zeros, Tensor? w1_g_idx, Tensor w2, Tensor? w2_scales, "
      "Tensor? w2_zeros, Tensor? w2_g_idx, int[] quant) -> Tensor");
  m.def(
      "fused_experts_quant(Tensor hidden_states, Tensor storage, int[] quant, Tensor topk_weights, Tensor topk_ids, "
      "str activation, bool apply_router_weight_on_input, Tensor? expert_map, str path) -> Tensor");
  m.def(
      "fused_experts_fp8(Tensor hidden_states, Tensor w1, Tensor w1_scale, Tensor w2, Tensor w2_scale, "
      "Tensor? a1_scale, Tensor? a2_scale, int[] fp8, Tensor topk_weights, Tensor topk_ids, str activation, "
      "bool apply_router_weight_on_input, Tensor? expert_map, str path) -> Tensor");
  m.def(
      "route_topk(Tensor router_logits, int topk, bool renormalize, str scoring_func, int num_expert_group, "
      "int topk_group, Tensor? e_score_correction_bias, float routed_scaling_factor) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(fusedmoe, CUDA, m) {
  m.impl("fused_experts", &fused_experts);
  m.impl("fused_moe", &fused_moe);
  m.impl("route_topk", &route_topk);
  m.impl("prepare_quant", &prepare_quant);
  m.impl("fused_experts_quant", &fused_experts_quant);
  m.impl("fused_experts_fp8", &fused_experts_fp8);
}
