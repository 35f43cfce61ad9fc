#include "dense_layer.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "check.h"
#include "kernels/launch.h"
#include "planner.h"
#include "validate.h"

namespace fusedmoe {

using detail::invalid_argument;
using detail::not_implemented;
using detail::str;

namespace {

Status cuda_error(cudaError_t err, const std::string& what) {
  return Status(StatusCode::kCudaError, what + ": " + cudaGetErrorString(err));
}

// SM count of the current device (the grid heuristic's only device input).
Status current_sm_count(int32_t* out) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return cuda_error(err, "cudaGetDevice");
  int sms = 0;
  err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) return cuda_error(err, "cudaDeviceGetAttribute(multiProcessorCount)");
  *out = sms;
  return Status();
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename T>
T* at(void* base, const WorkspaceLayout& ws, const char* name) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + ws.find(name)->offset);
}

}  // namespace

kernels::GatedAct gated_act(Activation a) {
  switch (a) {
    case Activation::kGeluAndMul: return kernels::GatedAct::kGelu;
    case Activation::kGeluTanhAndMul: return kernels::GatedAct::kGeluTanh;
    case Activation::kSiluAndMul: break;
  }
  return kernels::GatedAct::kSilu;
}

kernels::ElemType elem_type(DType d) { return d == DType::kBF16 ? kernels::ElemType::kBF16 : kernels::ElemType::kFP16; }

Status gpu_route(const ProblemShape& s, const RoutingConfig& r, DType logits_dtype, const void* logits,
                 int32_t* topk_ids, float* topk_weights, cudaStream_t stream) {
  kernels::RoutingParams rp;
  rp.logits = logits;
  rp.logits_dtype = logits_dtype == DType::kBF16   ? kernels::RoutingLogits::kBF16
                    : logits_dtype == DType::kFP16 ? kernels::RoutingLogits::kFP16
                                                   : kernels::RoutingLogits::kFP32;
  rp.m = s.m;
  rp.num_experts = global_experts(s);
  rp.topk = s.topk;
  rp.softmax = r.scoring == ScoringFunc::kSoftmax;
  rp.renormalize = r.renormalize;
  rp.n_group = r.n_group;
  rp.topk_group = r.topk_group;
  rp.correction_bias = r.correction_bias;
  rp.routed_scaling_factor = r.routed_scaling_factor;
  rp.topk_ids = topk_ids;
  rp.topk_weights = topk_weights;
  const cudaError_t err = kernels::launch_routing_topk(rp, stream);
  return err == cudaSuccess ? Status() : cuda_error(err, "routing_topk launch");
}

Status enqueue_align(const MoeInputs& in, const int32_t* topk_ids, kernels::AlignParams* al, cudaStream_t stream) {
  al->topk_ids = topk_ids;
  al->expert_map = in.expert_map;
  al->pairs = in.shape.m * in.shape.topk;
  al->global_experts = global_experts(in.shape);
  al->num_experts = in.shape.num_experts;
  const cudaError_t err = kernels::launch_align_tokens(*al, stream);
  return err == cudaSuccess ? Status() : cuda_error(err, "smxx_align_tokens launch");
}

Status enqueue_gather(const MoeInputs& in, const kernels::AlignParams& al, void* rows, int32_t* row_of_pair,
                      cudaStream_t stream) {
  kernels::GatherParams ga;
  ga.elem = elem_type(in.act_dtype);
  ga.x = in.x;
  ga.x_sorted = rows;
  ga.rows_bound = al.pairs;
  ga.hidden = in.shape.hidden;
  ga.topk = in.shape.topk;
  ga.sorted_pairs = al.sorted_pairs;
  ga.live_rows = al.expert_offsets + al.num_experts;
  ga.row_of_pair = row_of_pair;
  const cudaError_t err = kernels::launch_gather_rows(ga, stream);
  return err == cudaSuccess ? Status() : cuda_error(err, "gather_rows launch");
}

Status enqueue_gated_act(const MoeInputs& in, const kernels::AlignParams& al, const float* topk_weights,
                         const void* gate_up, void* intermediate, cudaStream_t stream) {
  kernels::GatedActParams act;
  act.elem = elem_type(in.act_dtype);
  act.act = gated_act(in.activation);
  act.h = gate_up;
  act.a = intermediate;
  act.rows_bound = al.pairs;
  act.inter = in.shape.inter;
  act.live_rows = al.expert_offsets + al.num_experts;
  act.sorted_pairs = al.sorted_pairs;
  act.topk_weights = in.apply_router_weight_on_input ? topk_weights : nullptr;
  const cudaError_t err = kernels::launch_gated_act(act, stream);
  return err == cudaSuccess ? Status() : cuda_error(err, "gated_act launch");
}

Status enqueue_combine(const MoeInputs& in, const kernels::AlignParams& al, const float* weights, const void* y,
                       const int32_t* row_of_pair, void* out, cudaStream_t stream) {
  kernels::CombineParams c;
  c.elem = elem_type(in.act_dtype);
  c.y = y;
  c.row_of_pair = row_of_pair;
  c.topk_weights = weights;
  c.out = out;
  c.m = in.shape.m;
  c.hidden = in.shape.hidden;
  c.topk = in.shape.topk;
  c.topk_ids = al.topk_ids;
  c.expert_map = in.expert_map;
  c.global_experts = al.global_experts;
  const cudaError_t err = kernels::launch_combine(c, stream);
  return err == cudaSuccess ? Status() : cuda_error(err, "combine launch");
}

Status dense_can_implement(const MoeArguments& args) {
  const MoeInputs& in = args.inputs;
  const PreparedWeights& w = *args.weights;
  if (in.router_logits != nullptr) FUSEDMOE_RETURN_IF_ERROR(check_gpu_routing(in.routing));
  if (in.shape.hidden % 8 != 0 || in.shape.inter % 8 != 0) {
    return not_implemented("the dense kernels read 16-byte vectors: hidden and inter must be multiples of 8, got " +
                           str(in.shape.hidden) + " and " + str(in.shape.inter));
  }
  const std::pair<const char*, const void*> pointers[] = {
      {"x", in.x}, {"out", args.out}, {"weights.w13.weight", w.w13.weight}, {"weights.w2.weight", w.w2.weight}};
  for (const auto& [name, ptr] : pointers) {
    if (in.shape.m > 0 && !aligned16(ptr)) {
      return invalid_argument(name, "a 16-byte aligned device pointer", "address " + str(ptr));
    }
  }
  return Status();
}

Status dense_plan(const MoeArguments& args, KernelFamily* family, WorkspaceLayout* ws) {
  const MoeInputs& in = args.inputs;
  const ProblemShape& s = in.shape;
  *family = choose_dense_family(s.m * s.topk, s.num_experts, s.inter, args.path);
  size_t gemm_ws = 0;
  if (*family == KernelFamily::kSm90Bf16GroupedGemm) {
    int32_t sms = 0;
    FUSEDMOE_RETURN_IF_ERROR(current_sm_count(&sms));
    gemm_ws = kernels::grouped_gemm_workspace_bytes(elem_type(in.act_dtype), s.num_experts, sms);
  }
  return plan_workspace(in, args.weights->quant, *family, gemm_ws, ws);
}

namespace {

// small_m_splitk for both GEMMs: the planner picks split-K and token tiles from the expert's
// tile count.
Status run_small_m(const MoeArguments& args, const kernels::AlignParams& al, const float* topk_weights,
                   void* workspace, const WorkspaceLayout& ws, int32_t sms, cudaStream_t stream) {
  const MoeInputs& in = args.inputs;
  const ProblemShape& s = in.shape;
  const int64_t pairs = s.m * s.topk;
  const int32_t max_active = static_cast<int32_t>(std::min<int64_t>(s.num_experts, pairs));
  kernels::GroupedGemvParams g;
  g.elem = elem_type(in.act_dtype);
  g.act = gated_act(in.activation);
  g.topk = s.topk;
  g.num_experts = s.num_experts;
  g.max_active = max_active;
  g.topk_weights = topk_weights;
  g.weight_on_input = in.apply_router_weight_on_input;
  g.expert_counts = al.expert_counts;
  g.expert_offsets = al.expert_offsets;
  g.sorted_pairs = al.sorted_pairs;
  g.active_experts = al.active_experts;
  auto gemm = [&](bool gate_up, const void* x, const void* w, void* out, int64_t n_out, int64_t k) {
    g.gate_up = gate_up;
    g.x = x;
    g.w = w;
    g.out = out;
    g.n_out = n_out;
    g.k = k;
    const SmallMGemmConfig cfg =
        choose_small_m_config(kernels::grouped_gemv_tiles(gate_up, n_out), max_active, pairs, k, sms);
    g.split_k = cfg.split_k;
    g.n_tiles = cfg.n_tiles;
    const cudaError_t e = kernels::launch_grouped_gemv(g, stream);
    return e == cudaSuccess ? Status() : cuda_error(e, gate_up ? "small_m_splitk gate-up launch" : "small_m_splitk down launch");
  };
  void* intermediate = at<void>(workspace, ws, "intermediate");
  void* expert_out = at<void>(workspace, ws, "expert_out");
  FUSEDMOE_RETURN_IF_ERROR(gemm(true, in.x, args.weights->w13.weight, intermediate, s.inter, s.hidden));
  return gemm(false, intermediate, args.weights->w2.weight, expert_out, s.hidden, s.inter);
}

// Tensor-core path: x's rows gathered in expert order, GEMM1 into the gate/up halves, the
// gated activation, GEMM2; the combine applies the routed weights through row_of_pair.
Status run_grouped(const MoeArguments& args, const kernels::AlignParams& al, const float* topk_weights,
                   void* workspace, const WorkspaceLayout& ws, int32_t sms, cudaStream_t stream) {
  const MoeInputs& in = args.inputs;
  const ProblemShape& s = in.shape;
  const kernels::ElemType elem = elem_type(in.act_dtype);
  void* rows = at<void>(workspace, ws, "expert_out");  // x gathered, later GEMM2's output
  void* gate_up = at<void>(workspace, ws, "gate_up");
  void* intermediate = at<void>(workspace, ws, "intermediate");

  FUSEDMOE_RETURN_IF_ERROR(enqueue_gather(in, al, rows, at<int32_t>(workspace, ws, "row_of_pair"), stream));

  kernels::GroupedGemmParams gp;
  gp.num_groups = s.num_experts;
  gp.expert_offsets = al.expert_offsets;
  gp.workspace = at<void>(workspace, ws, "gemm_workspace");
  gp.workspace_bytes = ws.find("gemm_workspace")->bytes;
  gp.sm_count = sms;
  gp.n = 2 * s.inter;
  gp.k = s.hidden;
  gp.a = rows;
  gp.b = args.weights->w13.weight;
  gp.d = gate_up;
  cudaError_t err = kernels::launch_grouped_gemm(elem, gp, stream);
  if (err != cudaSuccess) return cuda_error(err, "sm90_bf16_grouped_gemm gate-up launch");

  FUSEDMOE_RETURN_IF_ERROR(enqueue_gated_act(in, al, topk_weights, gate_up, intermediate, stream));

  gp.n = s.hidden;
  gp.k = s.inter;
  gp.a = intermediate;
  gp.b = args.weights->w2.weight;
  gp.d = rows;
  err = kernels::launch_grouped_gemm(elem, gp, stream);
  return err == cudaSuccess ? Status() : cuda_error(err, "sm90_bf16_grouped_gemm down launch");
}

}  // namespace

Status dense_run(const MoeArguments& args, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  const MoeInputs& in = args.inputs;
  const ProblemShape& s = in.shape;
  KernelFamily family = KernelFamily::kSmallMSplitK;
  WorkspaceLayout ws;
  FUSEDMOE_RETURN_IF_ERROR(dense_plan(args, &family, &ws));
  if (workspace_bytes < ws.total_bytes) {
    return Status(StatusCode::kWorkspaceTooSmall, "workspace_bytes: expected >= " + str(ws.total_bytes) +
                                                      " (workspace_size()), got " + str(workspace_bytes));
  }
  if (s.m == 0) return Status();
  if (workspace == nullptr) return invalid_argument("workspace", "device memory of workspace_size() bytes", "nullptr");
  int32_t sms = 0;
  FUSEDMOE_RETURN_IF_ERROR(current_sm_count(&sms));

  // Routing from logits lands in the workspace; everything below reads it from there.
  const int32_t* topk_ids = in.topk_ids;
  const float* topk_weights = in.topk_weights;
  if (in.router_logits != nullptr) {
    int32_t* ids = at<int32_t>(workspace, ws, "topk_ids");
    float* weights = at<float>(workspace, ws, "topk_weights");
    FUSEDMOE_RETURN_IF_ERROR(gpu_route(s, in.routing, in.router_dtype, in.router_logits, ids, weights, stream));
    topk_ids = ids;
    topk_weights = weights;
  }

  kernels::AlignParams al;
  al.expert_counts = at<int32_t>(workspace, ws, "expert_counts");
  al.expert_offsets = at<int64_t>(workspace, ws, "expert_offsets");
  al.sorted_pairs = at<int32_t>(workspace, ws, "sorted_pairs");
  al.active_experts = at<int32_t>(workspace, ws, "active_experts");
  al.block_counts = ws.find("align_chunk_counts") ? at<int32_t>(workspace, ws, "align_chunk_counts") : nullptr;
  FUSEDMOE_RETURN_IF_ERROR(enqueue_align(in, topk_ids, &al, stream));

  const bool grouped = family == KernelFamily::kSm90Bf16GroupedGemm;
  FUSEDMOE_RETURN_IF_ERROR(grouped ? run_grouped(args, al, topk_weights, workspace, ws, sms, stream)
                                   : run_small_m(args, al, topk_weights, workspace, ws, sms, stream));

  return enqueue_combine(in, al, grouped && !in.apply_router_weight_on_input ? topk_weights : nullptr,
                         at<void>(workspace, ws, "expert_out"),
                         grouped ? at<int32_t>(workspace, ws, "row_of_pair") : nullptr, args.out, stream);
}

}  // namespace fusedmoe
