// The public host contract: can_implement -> workspace_size -> run, and prepare_weights.
// Validation is complete here; launching waits for the kernel families (src/kernels/).
#include <cstdint>
#include <string>
#include <utility>

#include "check.h"
#include "planner.h"
#include "validate.h"
#ifdef FUSEDMOE_WITH_CUDA
#include "layer.h"
#endif

namespace fusedmoe {

using detail::invalid_argument;
using detail::not_implemented;
using detail::str;

namespace {

Status no_kernel(const QuantParams& q, DType act_dtype) {
  return not_implemented(std::string("no GPU kernel for ") + to_string(q.format) + " weights with " +
                         to_string(act_dtype) + " activations in this build (kernel family " +
                         kernel_families_description(q) + " is not compiled)");
}

// The tensors the kernels will read are there (and 16-byte aligned where they are copied in
// 16-byte pieces): a PreparedWeights filled by hand must fail here, not in a kernel.
Status check_prepared_pointers(const PreparedWeights& w) {
  const bool integer = is_integer_format(w.quant.format);
  const bool fp8 = is_fp8_format(w.quant.format);  // the checkpoint's e4m3 weights and fp32 scales
  const std::string from = "pointer from prepare_weights() or bind_prepared_weights()";
  for (Projection which : {Projection::kW13, Projection::kW2}) {
    const ProjectionWeights& p = which == Projection::kW13 ? w.w13 : w.w2;
    const std::string name = std::string("weights.") + to_string(which);
    const std::pair<const char*, const void*> parts[] = {{".weight", p.weight},
                                                         {".scales", integer || fp8 ? p.scales : nullptr},
                                                         {".zeros", integer && w.quant.has_zeros ? p.zeros : nullptr},
                                                         {".g_idx", integer && w.quant.has_g_idx ? p.g_idx : nullptr}};
    const bool needed[] = {true, integer || fp8, integer && w.quant.has_zeros, integer && w.quant.has_g_idx};
    for (size_t i = 0; i < 4; ++i) {
      if (!needed[i]) continue;
      if (parts[i].second == nullptr) return invalid_argument(name + parts[i].first, "a " + from, "nullptr");
      if (integer && reinterpret_cast<uintptr_t>(parts[i].second) % 16 != 0) {
        return invalid_argument(name + parts[i].first, "a 16-byte aligned " + from, "address " + str(parts[i].second));
      }
    }
  }
  return Status();
}

// Prepared dense storage holds w13 with gate and up rows interleaved in blocks of 8.
Status check_dense_interleave(const ProblemShape& shape, const std::string& hint) {
  if (shape.inter % 8 == 0) return Status();
  return not_implemented("prepared dense w13 interleaves gate and up rows in blocks of 8: inter must be a multiple of "
                         "8, got " + str(shape.inter) + hint);
}

Status check_split_k(const MoeArguments& args) {
  for (const auto& [name, value] : {std::pair<const char*, int32_t>{"split_k_gate_up", args.split_k_gate_up},
                                    std::pair<const char*, int32_t>{"split_k_down", args.split_k_down}}) {
    if (!is_valid_split_k(value)) return invalid_argument(name, "0 (the planner's choice), 1, 2, 4 or 8", str(value));
  }
  if (args.tiles_per_warp_down < 0 || args.tiles_per_warp_down > kMaxTilesPerWarp) {
    return invalid_argument("tiles_per_warp_down", "0 (the planner's choice) to " + str(kMaxTilesPerWarp),
                            str(args.tiles_per_warp_down));
  }
  return Status();
}

Status check_prepared(const MoeArguments& args) {
  if (args.weights == nullptr) return invalid_argument("weights", "prepared weights", "nullptr");
  const PreparedWeights& w = *args.weights;
  const ProblemShape& s = args.inputs.shape;
  if (w.shape.num_experts != s.num_experts || w.shape.hidden != s.hidden || w.shape.inter != s.inter) {
    return invalid_argument("weights.shape (E, H, I)",
                            "(" + str(s.num_experts) + ", " + str(s.hidden) + ", " + str(s.inter) +
                                ") as in inputs.shape",
                            "(" + str(w.shape.num_experts) + ", " + str(w.shape.hidden) + ", " +
                                str(w.shape.inter) + ")");
  }
  if (w.act_dtype != args.inputs.act_dtype) {
    return invalid_argument("weights.act_dtype", to_string(args.inputs.act_dtype), to_string(w.act_dtype));
  }
  if (w.gate_up_interleaved && w.quant.format != WeightFormat::kDense) {
    return invalid_argument("weights.gate_up_interleaved", std::string("false for ") + to_string(w.quant.format) +
                                                               " weights (only dense w13 is interleaved)",
                            "true");
  }
  return validate_quant(s, w.act_dtype, w.quant);
}

}  // namespace

Status can_implement(const MoeArguments& args) {
  FUSEDMOE_RETURN_IF_ERROR(validate_inputs(args.inputs));
  FUSEDMOE_RETURN_IF_ERROR(check_prepared(args));
  FUSEDMOE_RETURN_IF_ERROR(check_prepared_pointers(*args.weights));
  if (args.inputs.shape.m > 0 && args.out == nullptr) {
    return invalid_argument("out", "a pointer to [m, hidden] output", "nullptr");
  }
  FUSEDMOE_RETURN_IF_ERROR(check_split_k(args));
  if (!kernel_family_available(kernel_family_for(args.weights->quant))) {
    return no_kernel(args.weights->quant, args.inputs.act_dtype);
  }
#ifdef FUSEDMOE_WITH_CUDA
  return layer_can_implement(args);
#else
  return Status(StatusCode::kInternal, "can_implement: a CPU-only build reported a kernel family");
#endif
}

Status workspace_size(const MoeArguments& args, size_t* bytes) {
  if (bytes == nullptr) return invalid_argument("bytes", "non-null", "nullptr");
  FUSEDMOE_RETURN_IF_ERROR(can_implement(args));
#ifdef FUSEDMOE_WITH_CUDA
  KernelPath path = KernelPath::kAuto;
  WorkspaceLayout ws;
  FUSEDMOE_RETURN_IF_ERROR(layer_plan(args, &path, &ws));
  *bytes = ws.total_bytes;
  return Status();
#else
  return Status(StatusCode::kInternal, "workspace_size: a CPU-only build reported a kernel family");
#endif
}

Status run(const MoeArguments& args, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  FUSEDMOE_RETURN_IF_ERROR(can_implement(args));
#ifdef FUSEDMOE_WITH_CUDA
  return layer_run(args, workspace, workspace_bytes, stream);
#else
  (void)workspace;
  (void)workspace_bytes;
  (void)stream;
  return Status(StatusCode::kInternal, "run: a CPU-only build reported a kernel family");
#endif
}

Status planned_path(const MoeArguments& args, KernelPath* out) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  FUSEDMOE_RETURN_IF_ERROR(validate_shape(args.inputs.shape));
  FUSEDMOE_RETURN_IF_ERROR(check_prepared(args));
  const ProblemShape& s = args.inputs.shape;
  *out = choose_path(args.weights->quant, s.m * s.topk, s.num_experts, s.inter, args.path);
  return Status();
}

Status prepared_weights_size(const ProblemShape& shape, DType act_dtype, const MoeWeights& w,
                             size_t* bytes) {
  if (bytes == nullptr) return invalid_argument("bytes", "non-null", "nullptr");
  FUSEDMOE_RETURN_IF_ERROR(validate_shape(shape));
  FUSEDMOE_RETURN_IF_ERROR(validate_weights(shape, act_dtype, w));
  if (!kernel_family_available(kernel_family_for(w.quant))) return no_kernel(w.quant, act_dtype);
  *bytes = 0;  // FP8: the kernels read the checkpoint's tensors as they are
  if (is_integer_format(w.quant.format) || w.quant.format == WeightFormat::kDense) {
    *bytes = prepared_quant_bytes(shape, w.quant);
  }
  return Status();
}

Status prepare_weights(const ProblemShape& shape, DType act_dtype, const MoeWeights& w, void* storage,
                       size_t storage_bytes, cudaStream_t stream, PreparedWeights* out) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  size_t needed = 0;
  FUSEDMOE_RETURN_IF_ERROR(prepared_weights_size(shape, act_dtype, w, &needed));
  // Dense weights without storage are read in place, in the checkpoint's order.
  const bool dense_in_place = w.quant.format == WeightFormat::kDense && storage == nullptr && storage_bytes == 0;
  if (dense_in_place) needed = 0;
  if (needed > 0 && w.quant.format == WeightFormat::kDense) {
    FUSEDMOE_RETURN_IF_ERROR(check_dense_interleave(shape, " (pass no storage to read the weights in place)"));
  }
  if (needed > 0 && storage == nullptr) {
    return invalid_argument("storage", "device memory of prepared_weights_size() = " + str(needed) + " bytes", "nullptr");
  }
  if (storage_bytes < needed) {
    return invalid_argument("storage_bytes", ">= " + str(needed) + " (prepared_weights_size())", str(storage_bytes));
  }
  if (reinterpret_cast<uintptr_t>(storage) % 256 != 0) {
    return invalid_argument("storage", "a 256-byte aligned device pointer", "address " + str(storage));
  }
  out->shape = shape;
  out->act_dtype = act_dtype;
  out->quant = w.quant;
  out->w13 = w.w13;  // FP8, and dense in place: the kernels read the checkpoint's pointers
  out->w2 = w.w2;
  out->gate_up_interleaved = false;
  if (needed == 0) return Status();
#ifdef FUSEDMOE_WITH_CUDA
  if (w.quant.format == WeightFormat::kDense) return gpu_prepare_dense(shape, w, storage, stream, out);
  return gpu_prepare_quant(shape, w, storage, stream, out);
#else
  (void)stream;
  return Status(StatusCode::kInternal, "prepare_weights: a CPU-only build reported a kernel family");
#endif
}

Status bind_prepared_weights(const ProblemShape& shape, DType act_dtype, const QuantParams& quant, const void* storage,
                             size_t storage_bytes, PreparedWeights* out) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  FUSEDMOE_RETURN_IF_ERROR(validate_shape(shape));
  FUSEDMOE_RETURN_IF_ERROR(validate_quant(shape, act_dtype, quant));
  if (!is_integer_format(quant.format) && quant.format != WeightFormat::kDense) {
    return invalid_argument("quant.format", "dense, gptq, awq or moe_wna16 (the formats with prepared storage)",
                            to_string(quant.format));
  }
  if (quant.format == WeightFormat::kDense) FUSEDMOE_RETURN_IF_ERROR(check_dense_interleave(shape, ""));
  const size_t needed = prepared_quant_bytes(shape, quant);
  if (storage == nullptr) return invalid_argument("storage", "prepared storage of " + str(needed) + " bytes", "nullptr");
  if (reinterpret_cast<uintptr_t>(storage) % 256 != 0) {
    return invalid_argument("storage", "a 256-byte aligned pointer (as prepare_weights wrote it)", "address " + str(storage));
  }
  if (storage_bytes < needed) {
    return invalid_argument("storage_bytes", ">= " + str(needed) + " (prepared_weights_size())", str(storage_bytes));
  }
  out->shape = shape;
  out->act_dtype = act_dtype;
  out->quant = quant;
  out->gate_up_interleaved = quant.format == WeightFormat::kDense;
  prepared_quant_pointers(shape, quant, storage, &out->w13, &out->w2);
  return Status();
}

Status route_topk(const ProblemShape& shape, const RoutingConfig& routing, DType logits_dtype, const void* logits,
                  int32_t* topk_ids, float* topk_weights, cudaStream_t stream) {
  FUSEDMOE_RETURN_IF_ERROR(validate_shape(shape));
  if (logits_dtype != DType::kFP32 && logits_dtype != DType::kBF16 && logits_dtype != DType::kFP16) {
    return invalid_argument("logits_dtype", "fp32, bf16 or fp16", to_string(logits_dtype));
  }
  FUSEDMOE_RETURN_IF_ERROR(validate_routing(shape, routing));
  if (shape.m == 0) return Status();
  const std::pair<const char*, const void*> pointers[] = {
      {"logits", logits}, {"topk_ids", topk_ids}, {"topk_weights", topk_weights}};
  for (const auto& [name, ptr] : pointers) {
    if (ptr == nullptr) return invalid_argument(name, "a device pointer", "nullptr");
  }
#ifdef FUSEDMOE_WITH_CUDA
  return gpu_route(shape, routing, logits_dtype, logits, topk_ids, topk_weights, stream);
#else
  (void)stream;
  return not_implemented("route_topk: this build has no CUDA support (CPU-only preset)");
#endif
}

std::vector<PathInfo> supported_paths() {
  std::vector<PathInfo> paths;
  for (const Precision& p : known_precisions()) {
    const bool available = kernel_family_available(kernel_family_for(p.quant));
    paths.push_back(PathInfo{p.name, kernel_families_description(p.quant), available,
                             available ? "" : "not compiled in this build"});
  }
  return paths;
}

}  // namespace fusedmoe
