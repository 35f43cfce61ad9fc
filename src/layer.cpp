#include "layer.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include "check.h"
#include "kernels/fp8_one_pass.h"
#include "kernels/fp8_one_token_down.h"
#include "kernels/launch.h"
#include "kernels/one_token_layer.h"
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

// Align's inputs (the routing's ids), which the combine and the direct table read too.
static void align_inputs(const MoeInputs& in, const int32_t* topk_ids, kernels::AlignParams* al) {
  al->topk_ids = topk_ids;
  al->expert_map = in.expert_map;
  al->pairs = in.shape.m * in.shape.topk;
  al->global_experts = global_experts(in.shape);
  al->num_experts = in.shape.num_experts;
}

Status enqueue_align(const MoeInputs& in, const int32_t* topk_ids, kernels::AlignParams* al, cudaStream_t stream,
                     bool beside_predecessor) {
  align_inputs(in, topk_ids, al);
  const cudaError_t err = kernels::launch_align_tokens(*al, stream, beside_predecessor);
  return err == cudaSuccess ? Status() : cuda_error(err, "smxx_align_tokens launch");
}

Status enqueue_gather(const MoeInputs& in, const kernels::AlignParams& al, void* rows, int32_t* row_of_pair,
                      cudaStream_t stream, const int32_t* x_order, bool by_pair) {
  kernels::GatherParams ga;
  ga.x_order = x_order;
  ga.topk_ids = al.topk_ids;
  ga.expert_map = al.expert_map;
  ga.global_experts = al.global_experts;
  ga.num_experts = al.num_experts;
  ga.by_pair = by_pair;
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
                         const void* gate_up, void* intermediate, cudaStream_t stream, float* amax) {
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
  if (amax != nullptr) {  // the intermediate's amax reduced as it is stored (zeroed first)
    const cudaError_t err = cudaMemsetAsync(amax, 0, sizeof(float), stream);
    if (err != cudaSuccess) return cuda_error(err, "gated_act amax");
    act.amax_bits = reinterpret_cast<unsigned int*>(amax);
  }
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
  c.num_experts = al.num_experts;
  const cudaError_t err = kernels::launch_combine(c, stream);
  return err == cudaSuccess ? Status() : cuda_error(err, "combine launch");
}

Status layer_can_implement(const MoeArguments& args) {
  const MoeInputs& in = args.inputs;
  const PreparedWeights& w = *args.weights;
  if (in.shape.hidden % 8 != 0 || in.shape.inter % 8 != 0) {
    return not_implemented("the kernels read 16-byte vectors: hidden and inter must be multiples of 8, got " +
                           str(in.shape.hidden) + " and " + str(in.shape.inter));
  }
  if (is_integer_format(w.quant.format) && w.quant.group_size != -1 && w.quant.group_size % 8 != 0) {
    return not_implemented("the integer kernels dequantize 8 consecutive k per group: group_size must be a multiple "
                           "of 8 or -1, got " + str(w.quant.group_size));
  }
  const bool reads_in_registers = args.path == KernelPath::kSmallM || args.path == KernelPath::kGroupedMixed;
  if (is_integer_format(w.quant.format) && reads_in_registers && !wna16_gemv_supports(w.quant)) {
    return invalid_argument("path", "auto, grouped_gemm or grouped_swapped: wna16_gemv and wna16_grouped_gemm read groups of "
                            "32, 64 or a multiple of 128 columns (group_size " + str(w.quant.group_size) + ")",
                            to_string(args.path));
  }
  if (!is_integer_format(w.quant.format) && args.path == KernelPath::kGroupedMixed) {
    return invalid_argument("path", "auto, small_m, grouped_gemm or grouped_swapped for " +
                            std::string(to_string(w.quant.format)) + " weights (grouped_mixed: integer weights only)",
                            to_string(args.path));
  }
  if (is_fp8_format(w.quant.format)) {
    if (in.shape.hidden % 16 != 0 || in.shape.inter % 16 != 0) {
      return not_implemented("fp8_gemv reads 16 e4m3 values per load: hidden and inter must be multiples of 16, got " +
                             str(in.shape.hidden) + " and " + str(in.shape.inter));
    }
    if (in.shape.hidden > kernels::kFp8GemvMaxK || in.shape.inter > kernels::kFp8GemvMaxK) {
      return not_implemented("fp8_gemv counts 64-k steps in 32 bits: hidden and inter must be at most " +
                             str(kernels::kFp8GemvMaxK) + ", got " + str(in.shape.hidden) + " and " +
                             str(in.shape.inter));
    }
    if (w.quant.format == WeightFormat::kFP8Block && w.quant.block_k % 64 != 0) {
      return not_implemented("fp8_gemv scales whole 64-k steps: block_k must be a multiple of 64, got " +
                             str(w.quant.block_k));
    }
    if (is_grouped_path(args.path) && !fp8_grouped_supports(w.quant)) {
      return not_implemented("sm90_fp8_grouped_gemm scales 128 x 128 weight blocks: block_n and block_k must be 128 "
                             "on the grouped_gemm path, got " + str(w.quant.block_n) + " x " + str(w.quant.block_k) +
                             " (path auto takes fp8_gemv)");
    }
    if (w.quant.act_quant == ActQuant::kPerTensorStatic &&
        (w.w13.input_scale == nullptr || w.w2.input_scale == nullptr)) {
      return invalid_argument(w.w13.input_scale == nullptr ? "weights.w13.input_scale" : "weights.w2.input_scale",
                              "a device pointer to one fp32 scale (per_tensor_static activations)", "nullptr");
    }
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

namespace {

bool gemm1_gated(const PreparedWeights& w) { return grouped_fuses_activation(w.quant, w.gate_up_interleaved); }

// Act-order integer weights (prepared with K in group order): x's columns in each expert's
// order, prepared w13.g_idx (FORMATS.md), before GEMM1 reads them; nullptr otherwise.
const int32_t* x_order(const PreparedWeights& w) {
  return is_integer_format(w.quant.format) && w.quant.has_g_idx ? w.w13.g_idx : nullptr;
}

// The tile of the FP8 grouped GEMM that serves projection `which` on `path` (a grouped path) on
// `sms` SMs: swapped, 128 weight rows (and 64 tokens); else token rows by fp8_grouped_tile_rows
// and weight columns by fp8_grouped_tile_cols.
struct Fp8Tile {
  int64_t rows = 128;
  int64_t cols = 128;
};
Fp8Tile fp8_tile(const MoeArguments& args, KernelPath path, Projection which, int32_t sms) {
  if (path == KernelPath::kGroupedSwapped) return Fp8Tile();
  const QuantParams& q = args.weights->quant;
  const ProblemShape& s = args.inputs.shape;
  const bool block_scales = !fp8_epilogue_scales(q);
  Fp8Tile t;
  t.rows = fp8_grouped_tile_rows(s.m * s.topk, s.num_experts, projection_rows(s, which), projection_cols(s, which),
                                 which == Projection::kW13, block_scales, sms);
  t.cols = fp8_grouped_tile_cols(s.m * s.topk, s.num_experts, t.rows, block_scales);
  return t;
}

// Whether GEMM1 reads x's rows in token order itself (planner.h, grouped_gemm1_gathers; FP8:
// its e4m3 codes, fp8_gemm1_gathers): then no gather kernel runs (FP8: x is quantized once
// per token) and align writes row_of_pair.
bool gemm1_gathers_rows(const MoeArguments& args, KernelPath path, int32_t sms) {
  const ProblemShape& s = args.inputs.shape;
  const QuantParams& q = args.weights->quant;
  if (is_fp8_format(q.format)) {
    const Fp8Tile t = fp8_tile(args, path, Projection::kW13, sms);
    return fp8_gemm1_gathers(q, path, t.rows, t.cols, s.hidden, s.inter, static_cast<int32_t>(s.topk));
  }
  return grouped_gemm1_gathers(q, args.weights->gate_up_interleaved, path, s.inter, s.hidden, s.m * s.topk,
                               s.num_experts, sms);
}

// The grouped GEMM instantiation that serves projection `which` of these weights on `path` (a
// grouped path) on `sms` SMs: GEMM1 with the activation in its epilogue where
// grouped_fuses_activation says, the tile's height by swapped_tile_rows (swapped bf16/fp16
// operands), grouped_tile_rows (unswapped bf16/fp16) or, FP8, fp8_tile.
kernels::GroupedGemmEntry grouped_entry(const MoeArguments& args, KernelPath path, Projection which, int32_t sms) {
  const kernels::ElemType elem = elem_type(args.inputs.act_dtype);
  const bool swap = path == KernelPath::kGroupedSwapped;
  const QuantParams& q = args.weights->quant;
  const ProblemShape& s = args.inputs.shape;
  const bool w13 = which == Projection::kW13;
  const int64_t n = projection_rows(s, which);
  if (is_fp8_format(q.format)) {
    const Fp8Tile t = fp8_tile(args, path, which, sms);
    return kernels::fp8_grouped_gemm_entry(elem, !fp8_epilogue_scales(q), swap, static_cast<int>(t.rows),
                                           static_cast<int>(t.cols), w13 && gemm1_gathers_rows(args, path, sms));
  }
  const bool gated = w13 && gemm1_gated(*args.weights);
  const int64_t tile_m = swap ? swapped_tile_rows(n) : grouped_tile_rows(s.m * s.topk, s.num_experts, n, w13, sms);
  return kernels::grouped_gemm_entry(elem, swap, gated, static_cast<int>(tile_m), w13 && gemm1_gathers_rows(args, path, sms));
}

}  // namespace

Status layer_plan(const MoeArguments& args, KernelPath* path, WorkspaceLayout* ws) {
  const MoeInputs& in = args.inputs;
  const ProblemShape& s = in.shape;
  *path = choose_path(args.weights->quant, s.m * s.topk, s.num_experts, s.inter, args.path);
  size_t gemm_ws = 0;
  if (is_grouped_path(*path) && *path != KernelPath::kGroupedMixed) {  // the CUTLASS GEMMs' arguments
    int32_t sms = 0;
    FUSEDMOE_RETURN_IF_ERROR(current_sm_count(&sms));
    for (Projection which : {Projection::kW13, Projection::kW2}) {
      gemm_ws = std::max(gemm_ws, grouped_entry(args, *path, which, sms).workspace_bytes(s.num_experts, sms));
    }
  }
  return plan_workspace(in, args.weights->quant, *path, gemm_ws, ws, args.weights->gate_up_interleaved);
}

namespace {

kernels::ScaleType scale_type(DType d) {
  return d == DType::kBF16 ? kernels::ScaleType::kBF16 : d == DType::kFP32 ? kernels::ScaleType::kFP32
                                                                            : kernels::ScaleType::kFP16;
}

// The kernels' view of one projection of prepared integer weights.
kernels::QuantWeightsView quant_view(const PreparedWeights& w, Projection which) {
  const ProjectionWeights& p = which == Projection::kW13 ? w.w13 : w.w2;
  kernels::QuantWeightsView v;
  v.codes = static_cast<const uint32_t*>(p.weight);
  v.scales = p.scales;
  v.zeros = p.zeros;
  v.scale_type = scale_type(w.quant.scale_dtype);
  v.bits = w.quant.bits;
  v.n = projection_rows(w.shape, which);
  v.k = projection_cols(w.shape, which);
  v.group_size = w.quant.group_size == -1 ? v.k : w.quant.group_size;
  v.groups = quant_groups(w.quant, v.k);
  return v;
}

// The kernels' view of one projection of FP8 weights (the checkpoint's tensors).
kernels::Fp8WeightsView fp8_view(const PreparedWeights& w, Projection which) {
  const ProjectionWeights& p = which == Projection::kW13 ? w.w13 : w.w2;
  kernels::Fp8WeightsView v;
  v.w = static_cast<const uint8_t*>(p.weight);
  v.scales = static_cast<const float*>(p.scales);
  v.kind = w.quant.format == WeightFormat::kFP8PerTensor    ? kernels::Fp8WeightScale::kTensor
           : w.quant.format == WeightFormat::kFP8PerChannel ? kernels::Fp8WeightScale::kRow
                                                            : kernels::Fp8WeightScale::kBlock;
  v.n = projection_rows(w.shape, which);
  v.k = projection_cols(w.shape, which);
  v.block_n = w.quant.block_n;
  v.block_k = w.quant.block_k;
  return v;
}

kernels::Fp8ActScale fp8_act_kind(ActQuant a) {
  return a == ActQuant::kPerToken ? kernels::Fp8ActScale::kRow
         : a == ActQuant::kPerGroup ? kernels::Fp8ActScale::kGroup
                                    : kernels::Fp8ActScale::kTensor;
}

// FP8 activation quantization of `in` [rows, cols] (rows past *live_rows skipped): e4m3
// values in fp16 with their scales for fp8_gemv, or (grouped: the local experts' offsets)
// e4m3 bytes with scales in the grouped GEMM's layout. Per-tensor dynamic scales reduce the
// amax over `amax_rows` rows of `amax_in` first (x: every token, also those routed elsewhere),
// else over the quantized matrix itself. `source`: how its rows are read (plain, x's rows
// gathered by sorted_pairs, or the gated activation of `in` = GEMM1's gate/up halves).
struct Fp8Quantize {
  const void* amax_in = nullptr;
  int64_t amax_rows = 0;
  const kernels::AlignParams* grouped = nullptr;
  int32_t num_experts = 0;
  kernels::Fp8QuantIn source = kernels::Fp8QuantIn::kRows;
  int32_t topk = 1;
  int32_t* row_of_pair = nullptr;
  bool codes_by_token = false;  // kScatterTokens: codes at the token's row, scales at its pairs'
  kernels::GatedAct act = kernels::GatedAct::kSilu;
  const float* topk_weights = nullptr;
  bool amax_ready = false;  // per-tensor dynamic: *amax holds the amax already (gated_act's)
  bool after_predecessor = false;  // launch_fp8_quantize's programmatic dependent launch
  const kernels::AlignParams* table = nullptr;  // launch_fp8_quantize's: align's table written beside
  // A dynamic per-tensor scale in one pass where fp8_one_pass_quantize says (workspace
  // "amax_partials"; sms: the device's SMs), not where the amax is ready or a table is written.
  float* one_pass_partials = nullptr;
  int32_t sms = 0;
};
// An Fp8Quantize with the one-pass quantizer's place: the workspace's CTA amaxes (where the
// plan has them: per-tensor dynamic scales) and the SMs.
Fp8Quantize fp8_quantize_with(void* workspace, const WorkspaceLayout& ws, int32_t sms) {
  Fp8Quantize how;
  how.one_pass_partials = ws.find("amax_partials") ? at<float>(workspace, ws, "amax_partials") : nullptr;
  how.sms = sms;
  return how;
}

Status enqueue_fp8_quantize(const QuantParams& q, kernels::ElemType elem, const void* in, int64_t rows, int64_t cols,
                            const int64_t* live_rows, const float* static_scale, float* amax, const Fp8Quantize& how,
                            void* out, float* scales, const char* what, cudaStream_t stream) {
  kernels::Fp8QuantParams p;
  p.elem = elem;
  p.in = in;
  p.rows = rows;
  p.cols = cols;
  p.live_rows = live_rows;
  p.kind = fp8_act_kind(q.act_quant);
  p.group = q.block_k;
  if (how.grouped != nullptr) {
    p.out_kind = kernels::Fp8QuantOut::kE4M3Grouped;
    p.expert_offsets = how.grouped->expert_offsets;
    p.num_experts = how.num_experts;
  }
  p.out = out;
  p.scales = scales;
  p.in_kind = how.source;
  p.sorted_pairs = how.grouped != nullptr ? how.grouped->sorted_pairs : nullptr;
  p.topk = how.topk;
  p.row_of_pair = how.row_of_pair;
  p.codes_by_token = how.codes_by_token;
  p.act = how.act;
  p.topk_weights = how.topk_weights;
  if (q.act_quant == ActQuant::kPerTensorStatic) p.tensor_scale = static_scale;
  // A small tensor of plain rows (decode): one CTA takes its amax and quantizes it, no amax
  // pass and no memset first. It still leaves the amax in its slot (GpuLayer reads it).
  p.whole_tensor = q.act_quant == ActQuant::kPerTensorDynamic && !how.amax_ready && how.amax_in == nullptr &&
                   how.grouped == nullptr && how.source == kernels::Fp8QuantIn::kRows && cols > 0 &&
                   rows <= kernels::kFp8WholeTensorValues / cols;
  if (p.whole_tensor) p.amax_out = amax;
  // Larger ones whose rows fit the CTAs' shared memory: the amax and the codes in one
  // cooperative launch, no amax pass and no memset (the amax still left in its slot).
  if (!p.whole_tensor && how.one_pass_partials != nullptr && !how.amax_ready && how.table == nullptr &&
      how.source != kernels::Fp8QuantIn::kGatherTokens &&
      fp8_one_pass_quantize(q, rows, cols, how.sms)) {
    p.amax_out = amax;
    const cudaError_t err = kernels::launch_fp8_quantize_one_pass(p, how.one_pass_partials, how.sms, stream);
    return err == cudaSuccess ? Status() : cuda_error(err, std::string("fp8_quantize one pass ") + what);
  }
  if (q.act_quant == ActQuant::kPerTensorDynamic && how.source == kernels::Fp8QuantIn::kGatedAct && !how.amax_ready) {
    // The amax pass below would read GEMM1's output, not the activation (run_grouped keeps
    // gated_act wherever the one pass does not hold the activation).
    return Status(StatusCode::kInternal, std::string("fp8_quantize ") + what +
                                             ": a per-tensor dynamic activation without its amax or the one pass");
  }
  if (q.act_quant == ActQuant::kPerTensorDynamic && !how.amax_ready && !p.whole_tensor) {
    const bool own = how.amax_in == nullptr;
    const cudaError_t err = kernels::launch_fp8_amax(elem, own ? in : how.amax_in, own ? rows : how.amax_rows, cols,
                                                     own ? live_rows : nullptr, amax, stream);
    if (err != cudaSuccess) return cuda_error(err, std::string("fp8_amax ") + what);
  }
  if (q.act_quant == ActQuant::kPerTensorDynamic && !p.whole_tensor) p.amax = amax;
  const cudaError_t err = kernels::launch_fp8_quantize(p, stream, how.after_predecessor, how.table);
  return err == cudaSuccess ? Status() : cuda_error(err, std::string("fp8_quantize ") + what);
}

}  // namespace

namespace {

// Act-order: each expert's column order of both projections (act_order_columns, on the host:
// the checkpoint's g_idx read back once, at load time) into the prepared g_idx slots.
Status write_act_orders(const ProblemShape& shape, const MoeWeights& ck, cudaStream_t stream, PreparedWeights* out) {
  for (Projection which : {Projection::kW13, Projection::kW2}) {
    const int64_t k = projection_cols(shape, which);
    const size_t count = static_cast<size_t>(shape.num_experts * k);
    std::vector<int32_t> g_idx(count), order(count);
    const int32_t* src = (which == Projection::kW13 ? ck.w13 : ck.w2).g_idx;
    cudaError_t err = cudaMemcpyAsync(g_idx.data(), src, count * 4, cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) return cuda_error(err, std::string("reading ") + to_string(which) + ".g_idx");
    const int64_t group_len = ck.quant.group_size == -1 ? k : ck.quant.group_size;
    for (int64_t e = 0; e < shape.num_experts; ++e) {
      FUSEDMOE_RETURN_IF_ERROR(act_order_columns(g_idx.data() + e * k, k, group_len,
                                                 std::string(to_string(which)) + ".g_idx[" + str(e) + "]",
                                                 order.data() + e * k));
    }
    int32_t* dst = const_cast<int32_t*>((which == Projection::kW13 ? out->w13 : out->w2).g_idx);
    err = cudaMemcpyAsync(dst, order.data(), count * 4, cudaMemcpyHostToDevice, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);  // `order` is freed on return
    if (err != cudaSuccess) return cuda_error(err, std::string("writing ") + to_string(which) + "'s column order");
  }
  return Status();
}

}  // namespace

Status gpu_prepare_quant(const ProblemShape& shape, const MoeWeights& ck, void* storage, cudaStream_t stream,
                         PreparedWeights* out) {
  const QuantParams& q = ck.quant;
  prepared_quant_pointers(shape, q, storage, &out->w13, &out->w2);
  if (q.has_g_idx) FUSEDMOE_RETURN_IF_ERROR(write_act_orders(shape, ck, stream, out));
  for (Projection which : {Projection::kW13, Projection::kW2}) {
    const ProjectionWeights& src = which == Projection::kW13 ? ck.w13 : ck.w2;
    const ProjectionWeights& dst = which == Projection::kW13 ? out->w13 : out->w2;
    kernels::QuantRepackParams rp;
    rp.source = q.format == WeightFormat::kGPTQ ? kernels::QuantSource::kGPTQ
                : q.format == WeightFormat::kAWQ ? kernels::QuantSource::kAWQ
                                                 : kernels::QuantSource::kMoeWNA16;
    rp.bits = q.bits;
    rp.experts = shape.num_experts;
    rp.n = projection_rows(shape, which);
    rp.k = projection_cols(shape, which);
    rp.groups = quant_groups(q, rp.k);
    rp.gptq_zeros_minus_one = q.gptq_zeros_minus_one;
    rp.scale_type = scale_type(q.scale_dtype);
    rp.qweight = src.weight;
    rp.qzeros = q.has_zeros ? src.zeros : nullptr;
    rp.scales = src.scales;
    if (q.has_g_idx) {  // K in group order; w13's rows in w2's column order
      rp.k_order = dst.g_idx;
      rp.row_order = which == Projection::kW13 ? out->w2.g_idx : nullptr;
    }
    rp.codes = static_cast<uint32_t*>(const_cast<void*>(dst.weight));
    rp.scales_out = const_cast<void*>(dst.scales);
    rp.zeros_out = const_cast<void*>(dst.zeros);
    const cudaError_t err = kernels::launch_wna16_repack(rp, stream);
    if (err != cudaSuccess) return cuda_error(err, std::string("wna16_repack ") + to_string(which));
  }
  return Status();
}

Status gpu_prepare_dense(const ProblemShape& shape, const MoeWeights& ck, void* storage, cudaStream_t stream,
                         PreparedWeights* out) {
  prepared_quant_pointers(shape, ck.quant, storage, &out->w13, &out->w2);
  kernels::InterleaveParams ip;
  ip.src = ck.w13.weight;
  ip.dst = const_cast<void*>(out->w13.weight);
  ip.experts = shape.num_experts;
  ip.inter = shape.inter;
  ip.hidden = shape.hidden;
  cudaError_t err = kernels::launch_interleave_gate_up(ip, stream);
  if (err != cudaSuccess) return cuda_error(err, "interleave_gate_up");
  const size_t w2_bytes = static_cast<size_t>(prepared_quant_sizes(shape, ck.quant, Projection::kW2).codes);
  err = cudaMemcpyAsync(const_cast<void*>(out->w2.weight), ck.w2.weight, w2_bytes, cudaMemcpyDeviceToDevice, stream);
  if (err != cudaSuccess) return cuda_error(err, "cudaMemcpyAsync(w2)");
  out->gate_up_interleaved = true;
  return Status();
}

namespace {

// small_m_splitk (dense) or wna16_gemv (int) for both GEMMs: the planner picks split-K and
// token tiles from the expert's tile count.
// down_out: the down GEMV's rows by pair (expert_out, or the output itself for top-1), or,
// with down_combines (one_token_down), out's row with the combine folded into the down GEMV.
// direct (direct_table): no align ran; the GEMVs take al.topk_ids as their instances.
Status run_small_m(const MoeArguments& args, const kernels::AlignParams& al, bool direct, const float* topk_weights,
                   void* workspace, const WorkspaceLayout& ws, int32_t sms, void* down_out, bool down_combines,
                   cudaStream_t stream) {
  const MoeInputs& in = args.inputs;
  const ProblemShape& s = in.shape;
  const int64_t pairs = s.m * s.topk;
  // The direct table launches a CTA row per slot.
  const int32_t max_active = static_cast<int32_t>(direct ? pairs : std::min<int64_t>(s.num_experts, pairs));
  const QuantParams& quant = args.weights->quant;
  const bool integer = is_integer_format(quant.format);
  const bool fp8 = is_fp8_format(quant.format);
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
  if (direct) {  // the token's ids as the instances, in the identity order
    const cudaError_t err = kernels::direct_pair_order(&g.sorted_pairs);
    if (err != cudaSuccess) return cuda_error(err, "the direct table's pair order");
    g.expert_counts = nullptr;
    g.expert_offsets = nullptr;
    g.active_experts = al.topk_ids;
  }
  // FP8: the quantized activations' scales as fp8_gemv reads them.
  auto fp8_act_view = [&](const float* x_scales) {
    kernels::Fp8ActView xv;
    xv.kind = fp8_act_kind(quant.act_quant);
    xv.scales = x_scales;
    xv.group = quant.block_k;
    return xv;
  };
  // The one-token down GEMV's parameters (one_token_down): activations x, weights w (FP8:
  // unused, its view passed apart).
  auto one_token_down_params = [&](const void* x, const void* w) {
    g.gate_up = false;
    g.x = x;
    g.w = w;
    g.out = down_out;
    g.n_out = s.hidden;
    g.k = s.inter;
  };
  auto gemm = [&](bool gate_up, const void* x, const void* w, void* out, int64_t n_out, int64_t k,
                  const float* x_scales) {
    g.gate_up = gate_up;
    g.x = x;
    g.w = w;
    g.out = out;
    g.n_out = n_out;
    g.k = k;
    const kernels::QuantWeightsView v =
        integer ? quant_view(*args.weights, gate_up ? Projection::kW13 : Projection::kW2) : kernels::QuantWeightsView();
    const int64_t unit = small_m_split_unit(quant, k);
    // The planner's register-bound block variant is the one fp8_gemv compiles.
    static_assert(kFp8BlockSplitRule.resident_one_tile == kernels::kFp8GemvBoundCtasPerSm);
    static_assert(kDenseSplitRule.resident_one_tile == kernels::kGemvCtasPerSm &&
                  kWna16SplitRule.resident_one_tile == kernels::kGemvCtasPerSm);
    const int64_t tiles = kernels::grouped_gemv_tiles(gate_up, n_out);
    const SmallMGemmConfig cfg =
        quant.format == WeightFormat::kFP8Block
            ? choose_fp8_block_config(tiles, max_active, pairs, k, sms, unit)
            : choose_small_m_config(tiles, max_active, pairs, k, sms, unit, gemv_split_rule(quant, gate_up));
    const int32_t forced_split = gate_up ? args.split_k_gate_up : args.split_k_down;
    g.split_k = forced_split > 0 ? forced_split : cfg.split_k;
    // Eight n-tiles exist unsplit only: a forced split takes four.
    g.n_tiles = cfg.n_tiles == 8 && g.split_k != 1 ? 4 : cfg.n_tiles;
    cudaError_t e = cudaSuccess;
    if (fp8) {
      e = kernels::launch_fp8_gemv(g, fp8_view(*args.weights, gate_up ? Projection::kW13 : Projection::kW2),
                                   fp8_act_view(x_scales), cfg.ctas_per_sm, stream);
    } else {
      const kernels::GemvStaging staging = !gate_up && dense_down_ring(k, g.split_k)
                                               ? kernels::GemvStaging::kSharedRing
                                               : kernels::GemvStaging::kRegisters;
      // Tiles per warp (down): forced, or the planner's for its own split only
      // (kernels::wna16_multi_tile_ok says where the kernel takes them).
      static_assert(kMaxTilesPerWarp == kernels::kWna16MaxTilesPerWarp);
      const int32_t tpw = !integer || gate_up          ? 1
                          : args.tiles_per_warp_down > 0 ? args.tiles_per_warp_down
                          : forced_split <= 0            ? wna16_tiles_per_warp(cfg, gate_up, sms)
                                                         : 1;
      e = integer ? kernels::launch_wna16_gemv(g, v, stream, tpw)
                  : kernels::launch_grouped_gemv(g, args.weights->gate_up_interleaved, staging, stream);
    }
    const char* kernel = fp8 ? "fp8_gemv" : integer ? "wna16_gemv" : "small_m_splitk";
    return e == cudaSuccess ? Status() : cuda_error(e, std::string(kernel) + (gate_up ? " gate-up launch" : " down launch"));
  };
  void* intermediate = at<void>(workspace, ws, "intermediate");
  if (!fp8) {
    const void* x = in.x;
    if (const int32_t* order = x_order(*args.weights)) {
      // Act-order: x's columns in each expert's order, a row per pair in expert_out (the down
      // GEMV's output once the gate-up GEMV has read them), read as tokens of top-1.
      x = at<void>(workspace, ws, "expert_out");
      FUSEDMOE_RETURN_IF_ERROR(enqueue_gather(in, al, const_cast<void*>(x), nullptr, stream, order, true));
      g.topk = 1;
    }
    FUSEDMOE_RETURN_IF_ERROR(gemm(true, x, args.weights->w13.weight, intermediate, s.inter, s.hidden, nullptr));
    g.topk = s.topk;
    if (down_combines) {
      one_token_down_params(intermediate, args.weights->w2.weight);
      const cudaError_t e = integer ? kernels::launch_wna16_one_token_down(g, quant_view(*args.weights, Projection::kW2), stream)
                                    : kernels::launch_one_token_down(g, stream);
      return e == cudaSuccess ? Status() : cuda_error(e, std::string(integer ? "wna16_gemv" : "small_m_splitk") + " one-token down launch");
    }
    return gemm(false, intermediate, args.weights->w2.weight, down_out, s.hidden, s.inter, nullptr);
  }
  // FP8: x was quantized by layer_run; the activation output is quantized between the GEMMs
  // (its live rows: the local pairs, expert_offsets[E]; FP8 always aligns: direct_table), at
  // one to four tokens by the down GEMV itself (one_token_down; its static per-tensor scale
  // passed, dynamic ones not).
  FUSEDMOE_RETURN_IF_ERROR(gemm(true, at<void>(workspace, ws, "x_quantized"), nullptr, intermediate, s.inter, s.hidden,
                                at<float>(workspace, ws, "x_scales")));
  if (down_combines) {
    one_token_down_params(intermediate, nullptr);
    const bool static_scale = quant.act_quant == ActQuant::kPerTensorStatic;
    float* amax = quant.act_quant == ActQuant::kPerTensorDynamic ? at<float>(workspace, ws, "amax") + 1 : nullptr;
    const cudaError_t e = kernels::launch_fp8_one_token_down(
        g, fp8_view(*args.weights, Projection::kW2), fp8_act_view(static_scale ? args.weights->w2.input_scale : nullptr),
        amax, static_cast<int32_t>(s.m), stream);
    return e == cudaSuccess ? Status() : cuda_error(e, "fp8_gemv one-token down launch");
  }
  void* quantized = at<void>(workspace, ws, "intermediate_quantized");
  float* scales = at<float>(workspace, ws, "intermediate_scales");
  Fp8Quantize after_gemv = fp8_quantize_with(workspace, ws, sms);
  after_gemv.after_predecessor = true;  // starts under the gate-up GEMV's tail, reads after it
  FUSEDMOE_RETURN_IF_ERROR(enqueue_fp8_quantize(quant, g.elem, intermediate, pairs, s.inter, al.expert_offsets + s.num_experts,
                                                args.weights->w2.input_scale, at<float>(workspace, ws, "amax") + 1,
                                                after_gemv, quantized, scales, "intermediate", stream));
  return gemm(false, quantized, nullptr, down_out, s.hidden, s.inter, scales);
}

// One token, int4 (planner.h, one_token_layer): both GEMMs and the combine in one cooperative
// launch, no align, the routing's ids read by the kernel.
Status run_one_token_layer(const MoeArguments& args, const int32_t* topk_ids, const float* topk_weights,
                           void* workspace, const WorkspaceLayout& ws, int32_t sms, cudaStream_t stream) {
  const MoeInputs& in = args.inputs;
  const ProblemShape& s = in.shape;
  kernels::OneTokenLayerParams p;
  p.elem = elem_type(in.act_dtype);
  p.act = gated_act(in.activation);
  p.x = in.x;
  p.out = args.out;
  p.intermediate = at<void>(workspace, ws, "intermediate");
  p.topk_ids = topk_ids;
  p.topk_weights = topk_weights;
  p.num_experts = s.num_experts;
  p.topk = s.topk;
  p.hidden = s.hidden;
  p.inter = s.inter;
  p.ctas = sms;
  p.w13 = quant_view(*args.weights, Projection::kW13);
  p.w2 = quant_view(*args.weights, Projection::kW2);
  const cudaError_t e = kernels::launch_wna16_one_token_layer(p, stream);
  return e == cudaSuccess ? Status() : cuda_error(e, "wna16_one_token_layer launch");
}

// Tensor-core path: x's rows gathered in expert order, GEMM1 into the gate/up halves, the
// gated activation, GEMM2; the combine applies the routed weights through row_of_pair.
Status run_grouped(const MoeArguments& args, KernelPath path, const kernels::AlignParams& al, const float* topk_weights,
                   void* workspace, const WorkspaceLayout& ws, int32_t sms, cudaStream_t stream) {
  const MoeInputs& in = args.inputs;
  const ProblemShape& s = in.shape;
  const kernels::ElemType elem = elem_type(in.act_dtype);
  void* rows = at<void>(workspace, ws, "expert_out");  // x gathered (bf16/int), later GEMM2's output
  int32_t* row_of_pair = at<int32_t>(workspace, ws, "row_of_pair");

  const QuantParams& quant = args.weights->quant;
  const bool fp8 = is_fp8_format(quant.format);
  // Whether GEMM1 reads x's rows (FP8: its codes) by token itself; else x's rows are copied in
  // expert order first (FP8: its quantizer gathers them).
  const bool gathers = gemm1_gathers_rows(args, path, sms);
  if (!fp8 && !gathers) FUSEDMOE_RETURN_IF_ERROR(enqueue_gather(in, al, rows, row_of_pair, stream, x_order(*args.weights)));

  if (path == KernelPath::kGroupedMixed) {
    // Integer weights, each GEMM one wna16_grouped_gemm launch over every expert: GEMM1 reads
    // x's rows by token (align wrote row_of_pair for the combine), or, under act-order, the
    // copy in expert order in `rows` with each expert's column order (the gather writes
    // row_of_pair), and writes the activation; GEMM2 reads it and writes its rows in expert
    // order into `rows`.
    void* intermediate = at<void>(workspace, ws, "intermediate");
    kernels::Wna16GemmParams p;
    p.elem = elem;
    p.act = gated_act(in.activation);
    p.num_experts = s.num_experts;
    p.rows_bound = s.m * s.topk;
    p.expert_offsets = al.expert_offsets;
    p.sorted_pairs = al.sorted_pairs;
    p.tile_tokens = wna16_gemm_tile_tokens(p.rows_bound, s.num_experts);
    p.sm_count = sms;
    kernels::Wna16GemmParams gemm1 = p;
    gemm1.gate_up = true;
    gemm1.x = gathers ? in.x : rows;
    gemm1.gather_topk = gathers ? static_cast<int32_t>(s.topk) : 0;
    gemm1.out = intermediate;
    gemm1.n_out = s.inter;
    gemm1.k = s.hidden;
    gemm1.topk_weights = in.apply_router_weight_on_input ? topk_weights : nullptr;
    cudaError_t err = kernels::launch_wna16_grouped_gemm(gemm1, quant_view(*args.weights, Projection::kW13), stream);
    if (err != cudaSuccess) return cuda_error(err, "wna16_grouped_gemm w13 launch");
    kernels::Wna16GemmParams gemm2 = p;
    gemm2.gate_up = false;
    gemm2.x = intermediate;
    gemm2.out = rows;
    gemm2.n_out = s.hidden;
    gemm2.k = s.inter;
    err = kernels::launch_wna16_grouped_gemm(gemm2, quant_view(*args.weights, Projection::kW2), stream);
    return err == cudaSuccess ? Status() : cuda_error(err, "wna16_grouped_gemm w2 launch");
  }

  kernels::GroupedGemmParams gp;
  gp.workspace = at<void>(workspace, ws, "gemm_workspace");
  gp.workspace_bytes = ws.find("gemm_workspace")->bytes;
  gp.sm_count = sms;
  gp.launch_early = grouped_gemms_launch_early(s);  // programmatic dependent GEMMs
  const kernels::GroupedGemmEntry gemm1_entry = grouped_entry(args, path, Projection::kW13, sms);
  const kernels::GroupedGemmEntry gemm2_entry = grouped_entry(args, path, Projection::kW2, sms);
  const int64_t pairs = s.m * s.topk;
  const int64_t* live = al.expert_offsets + s.num_experts;
  if (fp8) {
    // Each GEMM's input quantized to e4m3 in expert order (x's amax over every token), then
    // sm90_fp8_grouped_gemm. The quantizer gathers x's rows itself (or GEMM1 reads x's codes
    // by token: fp8_gemm1_gathers), and applies the gated activation to GEMM1's output as it
    // reads it where fp8_fuses_activation says, so these do not go to memory in bf16. The
    // GEMM: scales that do not vary along k applied in its epilogue (the checkpoint's weight
    // scales as they are); else in its mainloop, the weights' scales rewritten in its layout
    // first. D in the activation dtype.
    void* gate_up = at<void>(workspace, ws, "gate_up");
    void* a8 = at<void>(workspace, ws, "fp8_rows");
    float* sfa = at<float>(workspace, ws, "fp8_row_scales");
    float* sfb = at<float>(workspace, ws, "fp8_weight_scales");
    float* amax = at<float>(workspace, ws, "amax");
    const bool epilogue_scales = fp8_epilogue_scales(quant);
    // Block scales: the weights' columns per scale in each GEMM's layout, by its tile's width.
    const int32_t scale_cols[2] = {kernels::fp8_weight_scale_cols(fp8_tile(args, path, Projection::kW13, sms).cols),
                                   kernels::fp8_weight_scale_cols(fp8_tile(args, path, Projection::kW2, sms).cols)};
    const bool shared_setup = epilogue_scales || scale_cols[0] == scale_cols[1];
    // Each GEMM's parameters (GEMM1 into gate_up, GEMM2 into rows), its arrays set (0 or 1).
    auto params = [&](Projection which) {
      const bool w13 = which == Projection::kW13;
      const kernels::Fp8WeightsView w = fp8_view(*args.weights, which);
      kernels::GroupedGemmParams g = gp;
      g.num_groups = s.num_experts;
      g.expert_offsets = al.expert_offsets;
      g.n = w.n;
      g.k = projection_cols(s, which);
      g.a = a8;
      g.b = w.w;
      g.d = w13 ? gate_up : rows;
      g.sfa = sfa;
      if (w13 && gathers) {
        g.gather_topk = static_cast<int32_t>(s.topk);
        g.sorted_pairs = al.sorted_pairs;
      }
      if (epilogue_scales) {  // [E] per-tensor or [E, n] per-channel, as in the checkpoint
        g.sfb = w.scales;
        g.sfb_per_column = w.kind == kernels::Fp8WeightScale::kRow;
        g.sfb_expert_stride = g.sfb_per_column ? w.n : 1;
      } else {  // rewritten by fp8_weight_scales before each GEMM (scale_cols above)
        g.sfb = sfb;
        g.sfb_expert_stride = fp8_block_scales_per_expert(w.n, g.k, scale_cols[w13 ? 0 : 1]);
      }
      // Both GEMMs' arrays from one setup launch, unless their block-scale layouts differ (each
      // GEMM then writes its own into set 0 right before it).
      g.arrays_set = shared_setup ? (w13 ? 0 : 1) : -1;
      g.release_successor = g.launch_early && !w13;  // the combine; GEMM1 never releases GEMM2
      return g;
    };
    const kernels::GroupedGemmParams gemm1 = params(Projection::kW13), gemm2 = params(Projection::kW2);
    auto gemm = [&](Projection which, const void* a, const float* static_scale, const Fp8Quantize& how) -> Status {
      const bool w13 = which == Projection::kW13;
      const kernels::GroupedGemmParams& g = w13 ? gemm1 : gemm2;
      const bool by_token = how.source == kernels::Fp8QuantIn::kScatterTokens;  // rows: the tokens
      FUSEDMOE_RETURN_IF_ERROR(enqueue_fp8_quantize(quant, elem, a, by_token ? s.m : pairs, g.k,
                                                    by_token ? nullptr : live, static_scale, amax + (w13 ? 0 : 1), how,
                                                    a8, sfa, w13 ? "x" : "intermediate", stream));
      cudaError_t err = cudaSuccess;
      if (!epilogue_scales) {
        kernels::Fp8WeightScalesParams sp;
        sp.w = fp8_view(*args.weights, which);
        sp.experts = s.num_experts;
        sp.expert_counts = al.expert_counts;
        sp.out = sfb;
        sp.n_granularity = scale_cols[w13 ? 0 : 1];
        err = kernels::launch_fp8_weight_scales(sp, stream);
        if (err != cudaSuccess) return cuda_error(err, std::string("fp8_weight_scales ") + to_string(which));
      }
      if (w13 && shared_setup) {  // both GEMMs' per-expert arrays in one launch
        err = gemm1_entry.setup_pair(gemm1, gemm2, stream);
        if (err != cudaSuccess) return cuda_error(err, "sm90_fp8_grouped_gemm setup launch");
      }
      err = (w13 ? gemm1_entry : gemm2_entry).launch(g, stream);
      return err == cudaSuccess ? Status()
                                : cuda_error(err, std::string("sm90_fp8_grouped_gemm ") + to_string(which) + " launch");
    };
    Fp8Quantize x_how = fp8_quantize_with(workspace, ws, sms);
    x_how.amax_in = in.x;
    x_how.amax_rows = s.m;
    x_how.grouped = &al;
    x_how.num_experts = s.num_experts;
    // x quantized once per token and stored at its pairs' rows (align wrote row_of_pair), or
    // once per pair, gathered (planner.h, fp8_x_by_token); for a gathering GEMM1 once per
    // token at the token's row, only the scales at its pairs' rows.
    x_how.source = gathers || fp8_x_by_token(s, quant) ? kernels::Fp8QuantIn::kScatterTokens
                                                       : kernels::Fp8QuantIn::kGatherTokens;
    x_how.codes_by_token = gathers;
    x_how.topk = s.topk;
    x_how.row_of_pair = row_of_pair;
    // Under align's end (it releases there; the quantizer waits before it reads). v47 call 4:
    // fp8_tensor Scout M = 64-512 0.989-0.992, Qwen2 0.994-0.996; elsewhere 0.994-1.006.
    x_how.after_predecessor = true;
    FUSEDMOE_RETURN_IF_ERROR(gemm(Projection::kW13, in.x, args.weights->w13.input_scale, x_how));
    Fp8Quantize act_how = fp8_quantize_with(workspace, ws, sms);
    act_how.grouped = &al;
    act_how.num_experts = s.num_experts;
    // The activation written in bf16 first, unless it is quantized as it is computed: under
    // per-token and group scales where fp8_fuses_activation says, under a dynamic per-tensor
    // scale where the one-pass quantizer holds it (fp8_one_pass_quantize).
    if (!fp8_fuses_activation(s, quant) && !fp8_one_pass_quantize(quant, pairs, s.inter, sms)) {
      void* intermediate = at<void>(workspace, ws, "intermediate");
      // A per-tensor dynamic scale: gated_act reduces the amax as it stores (no amax pass).
      act_how.amax_ready = quant.act_quant == ActQuant::kPerTensorDynamic;
      FUSEDMOE_RETURN_IF_ERROR(enqueue_gated_act(in, al, topk_weights, gate_up, intermediate, stream,
                                                 act_how.amax_ready ? amax + 1 : nullptr));
      return gemm(Projection::kW2, intermediate, args.weights->w2.input_scale, act_how);
    }
    act_how.source = kernels::Fp8QuantIn::kGatedAct;
    act_how.act = gated_act(in.activation);
    act_how.topk_weights = in.apply_router_weight_on_input ? topk_weights : nullptr;
    return gemm(Projection::kW2, gate_up, args.weights->w2.input_scale, act_how);
  }

  void* intermediate = at<void>(workspace, ws, "intermediate");

  // One GEMM over all experts; integer weights a chunk of experts at a time, each chunk first
  // dequantized into the workspace (the scheduler reads expert_offsets from the chunk's first
  // expert on; row offsets stay absolute). GEMM1 on interleaved w13 (prepared dense weights,
  // and the dequantized ones) writes the activation itself.
  const bool integer = is_integer_format(quant.format);
  const bool gated = gemm1_gated(*args.weights);
  const int32_t chunk = integer ? dequant_chunk_experts(s, in.act_dtype) : s.num_experts;
  gp.act = gated_act(in.activation);
  gp.sorted_pairs = al.sorted_pairs;
  gp.topk_weights = in.apply_router_weight_on_input ? topk_weights : nullptr;
  auto params = [&](Projection which, const void* a, void* d) {
    const bool w13 = which == Projection::kW13;
    kernels::GroupedGemmParams g = gp;
    g.n = projection_rows(s, which);
    g.k = projection_cols(s, which);
    g.a = a;
    g.d = d;
    g.num_groups = s.num_experts;
    g.expert_offsets = al.expert_offsets;
    g.b = (w13 ? args.weights->w13 : args.weights->w2).weight;
    g.arrays_set = integer ? -1 : w13 ? 0 : 1;  // integer: a setup per chunk (its dequantized weights)
    g.release_successor = g.launch_early && !w13;  // the combine after the last chunk (the next dequant: plain)
    return g;
  };
  void* gemm1_out = gated ? intermediate : at<void>(workspace, ws, "gate_up");
  kernels::GroupedGemmParams gemm1 = params(Projection::kW13, gathers ? in.x : rows, gemm1_out);
  if (gathers) gemm1.gather_topk = static_cast<int32_t>(s.topk);
  const kernels::GroupedGemmParams gemm2 = params(Projection::kW2, intermediate, rows);
  if (!integer) {  // both GEMMs' per-expert arrays in one launch (either entry writes both)
    const cudaError_t err = gemm2_entry.setup_pair(gemm1, gemm2, stream);
    if (err != cudaSuccess) return cuda_error(err, "sm90_bf16_grouped_gemm setup launch");
  }
  auto gemm = [&](Projection which) -> Status {
    const bool w13 = which == Projection::kW13;
    const kernels::GroupedGemmEntry& entry = w13 ? gemm1_entry : gemm2_entry;
    kernels::GroupedGemmParams g = w13 ? gemm1 : gemm2;
    for (int32_t e0 = 0; e0 < s.num_experts; e0 += chunk) {
      g.num_groups = std::min(chunk, s.num_experts - e0);
      g.expert_offsets = al.expert_offsets + e0;
      if (integer) {
        kernels::QuantDequantParams dq;
        dq.elem = elem;
        dq.w = quant_view(*args.weights, which);
        dq.e0 = e0;
        dq.experts = g.num_groups;
        dq.expert_counts = al.expert_counts;
        dq.out = at<void>(workspace, ws, "dequant_weights");
        dq.interleave_gate_up = w13 && gated;
        const cudaError_t err = kernels::launch_wna16_dequant(dq, stream);
        if (err != cudaSuccess) return cuda_error(err, std::string("wna16_dequant ") + to_string(which));
        g.b = dq.out;
      }
      const cudaError_t err = entry.launch(g, stream);
      if (err != cudaSuccess) return cuda_error(err, std::string("sm90_bf16_grouped_gemm ") + to_string(which) + " launch");
    }
    return Status();
  };
  FUSEDMOE_RETURN_IF_ERROR(gemm(Projection::kW13));
  if (!gated) FUSEDMOE_RETURN_IF_ERROR(enqueue_gated_act(in, al, topk_weights, gemm1_out, intermediate, stream));
  return gemm(Projection::kW2);
}

}  // namespace

Status layer_run(const MoeArguments& args, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  const MoeInputs& in = args.inputs;
  const ProblemShape& s = in.shape;
  KernelPath path = KernelPath::kSmallM;
  WorkspaceLayout ws;
  FUSEDMOE_RETURN_IF_ERROR(layer_plan(args, &path, &ws));
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
  const bool grouped = is_grouped_path(path);
  if (grouped && (fp8_x_by_token(s, args.weights->quant) || gemm1_gathers_rows(args, path, sms))) {
    // x's quantizer stores by it, or (GEMM1 reading x's rows itself) no gather writes it
    al.row_of_pair = at<int32_t>(workspace, ws, "row_of_pair");
  }
  align_inputs(in, topk_ids, &al);
  // A few tokens on the small-M path: no align; the GEMVs take the routing's ids as their
  // instances (planner.h, direct_table).
  const bool direct = !grouped && direct_table(s, args.weights->quant, in.expert_map != nullptr);
  // One token, int4: the whole layer in one launch, unless the caller forces a GEMV's split-K.
  if (direct && one_token_layer(s, args.weights->quant, false, sms) && args.split_k_gate_up <= 0 &&
      args.split_k_down <= 0) {
    return run_one_token_layer(args, topk_ids, topk_weights, workspace, ws, sms, stream);
  }
  // Top-1 on the small-M path: pair = token, so the down GEMV writes out's rows itself (the
  // routed weight applied there) and align (FP8 up to 32 pairs: the table's CTA of x's
  // quantizer) zeroes the rows of skipped pairs, as the combine would: no combine
  // (top1_direct_output). Not where out overlaps x (an in-place call): align would zero rows of
  // x before the gate-up GEMV (or, FP8, x's quantizer beside it) reads them. The direct table's
  // down GEMV zeroes a skipped token's row itself (without align).
  const int64_t row_bytes = s.hidden * dtype_size(in.act_dtype);
  const char* x_begin = static_cast<const char*>(in.x);
  const char* out_begin = static_cast<const char*>(args.out);
  const bool direct_out = !grouped && top1_direct_output(s, in.expert_map != nullptr) &&
                          (out_begin + s.m * row_bytes <= x_begin || x_begin + s.m * row_bytes <= out_begin);
  // One token, or a few on the direct table, on the small-M path: the down GEMV sums each
  // token's experts itself (writing out after the gate-up GEMV has read x, so an in-place call
  // is safe too); not where the caller forces the down GEMV's split-K, which that kernel does
  // not take.
  const bool down_combines = !grouped && one_token_down(s, args.weights->quant, sms, direct) && args.split_k_down <= 0;
  if (direct_out && !direct) {
    al.skipped_rows = args.out;
    al.skipped_row_bytes = row_bytes;
  }
  // Small-M FP8: x quantized once (amax over every token) before align, which reads nothing of
  // it and runs beside it (one CTA each at decode); the gate-up GEMV's wait then covers both.
  // Up to kWarpAlignPairs pairs the quantizer's launch writes align's table itself (one more
  // CTA): no align launch.
  const bool x_first = is_fp8_format(args.weights->quant.format) && !grouped;
  const bool table_with_x = x_first && s.m * s.topk <= kernels::kWarpAlignPairs;
  if (x_first) {
    Fp8Quantize how = fp8_quantize_with(workspace, ws, sms);
    how.table = table_with_x ? &al : nullptr;
    FUSEDMOE_RETURN_IF_ERROR(enqueue_fp8_quantize(args.weights->quant, elem_type(in.act_dtype), in.x, s.m, s.hidden,
                                                  nullptr, args.weights->w13.input_scale, at<float>(workspace, ws, "amax"),
                                                  how, at<void>(workspace, ws, "x_quantized"),
                                                  at<float>(workspace, ws, "x_scales"), "x", stream));
  }
  void* expert_out = at<void>(workspace, ws, "expert_out");
  // Routed here and nothing between: align launches under the router (which lets it at once)
  // and waits for its ids.
  al.ids_from_predecessor = in.router_logits != nullptr && !x_first;
  if (!direct && !table_with_x) FUSEDMOE_RETURN_IF_ERROR(enqueue_align(in, topk_ids, &al, stream, x_first));
  FUSEDMOE_RETURN_IF_ERROR(grouped ? run_grouped(args, path, al, topk_weights, workspace, ws, sms, stream)
                                   : run_small_m(args, al, direct, topk_weights, workspace, ws, sms,
                                                 direct_out || down_combines ? args.out : expert_out, down_combines,
                                                 stream));
  if (direct_out || down_combines) return Status();

  return enqueue_combine(in, al, grouped && !in.apply_router_weight_on_input ? topk_weights : nullptr, expert_out,
                         grouped ? at<int32_t>(workspace, ws, "row_of_pair") : nullptr, args.out, stream);
}

}  // namespace fusedmoe
