// The CPU reference of the whole MoE layer: plain C++17, fp64 accumulation, every weight
// format of the public API. It is the oracle of every test and of `fusedmoe check`.
//
// It models what the GPU paths store between stages, and nothing else: the activation
// output is rounded to the activation dtype (or quantized to e4m3 on FP8 paths) because the
// kernels write it to memory in that type; GEMM accumulations and the epilogues are exact.
#pragma once

#include <cstdint>
#include <vector>

#include "fusedmoe/moe.h"

namespace fusedmoe::ref {

/// topk_ids and topk_weights of every token, [m, topk] row-major.
struct Routing {
  std::vector<int32_t> ids;
  std::vector<float> weights;
};

/// Routes m tokens from router logits [m, global_E] of `logits_dtype` (fp32/bf16/fp16).
/// Scores in fp64; ties go to the lower expert (group) index.
Status route(const ProblemShape& shape, const RoutingConfig& config, DType logits_dtype,
             const void* logits, Routing* out);

/// The (token, slot) pairs sorted by local expert, as the GPU align kernel produces them.
struct Alignment {
  static constexpr int32_t kPad = -1;        ///< marks padding rows in sorted_pairs
  int32_t block_m = 1;
  std::vector<int32_t> expert_counts;        ///< [E] pairs routed to each local expert
  std::vector<int64_t> expert_offsets;       ///< [E + 1] prefix sums of expert_counts
  std::vector<int64_t> padded_offsets;       ///< [E + 1] prefix sums of counts rounded up to block_m
  /// [padded_offsets[E]] pair index token * topk + slot, in token order within each expert,
  /// then kPad up to the expert's padded end.
  std::vector<int32_t> sorted_pairs;
  std::vector<int32_t> tile_expert;          ///< [padded_offsets[E] / block_m] expert of each tile
  int64_t skipped_pairs = 0;                 ///< pairs whose expert lives on another GPU
};

/// Checks every id (0 <= id < global_E) and map entry (-1 <= local < E) and aligns the pairs.
Status align_tokens(const int32_t* topk_ids, int64_t m, int32_t topk, int32_t global_experts,
                    const int32_t* expert_map, int32_t num_experts, int32_t block_m, Alignment* out);

/// Reads one projection's checkpoint tensors and dequantizes rows exactly as the format
/// defines them (docs/FORMATS.md).
class WeightView {
 public:
  /// Validates the description and, for GPTQ act-order, every g_idx entry.
  static Status make(const ProblemShape& shape, DType act_dtype, const QuantParams& quant,
                     const ProjectionWeights& weights, Projection which, WeightView* out);

  int64_t rows() const { return n_; }
  int64_t cols() const { return k_; }
  /// Writes the K dequantized values of output row n of expert e into row[0..K).
  void dequant_row(int64_t e, int64_t n, double* row) const;
  /// Rows n0 .. n0 + count - 1 into out + r * ld (what dequant_row gives, read together).
  void dequant_rows(int64_t e, int64_t n0, int64_t count, double* out, int64_t ld) const;

 private:
  void dequant_integer_rows(int64_t e, int64_t n0, int64_t count, double* out, int64_t ld) const;
  QuantParams q_;
  ProjectionWeights w_;
  DType act_dtype_ = DType::kBF16;
  int64_t n_ = 0, k_ = 0, groups_ = 1;
};

/// The gated activation act(gate) * up.
double apply_activation(Activation activation, double gate, double up);

/// Scale of one FP8 quantization group: fp32 amax / 448 but at least 2^-64, or 1 for an
/// all-zero group (docs/FORMATS.md).
float fp8_dynamic_scale(double amax);

/// Quantizes a [rows, cols] matrix in place to e4m3 with the scales `mode` defines and writes
/// back the dequantized values q * s. kPerTensorStatic uses static_scale; kPerGroup uses
/// groups of `group` columns.
Status fake_quantize_fp8(ActQuant mode, int32_t group, float static_scale, int64_t rows,
                         int64_t cols, double* data);

struct LayerOptions {
  /// Round the activation output to the activation dtype, as the GPU stores it (on FP8 paths
  /// before quantizing it, as both GPU paths do). Off: keep fp64 (the exact function).
  bool round_intermediate = true;
  /// Round GEMM1's gate and up sums to the activation dtype before the activation, as the
  /// grouped path stores them (the GEMVs activate the fp32 sums). FP8 checks need the GPU
  /// path's rounding points: an extra rounding moves values across e4m3 boundaries.
  bool round_gate_up = false;
  /// Compute only these tokens' rows (sampled checks of large M); empty = all tokens.
  std::vector<int64_t> tokens;
  /// FP8 layers: when not null, receives the scales per-tensor dynamic quantization takes
  /// (amax / 448): [0] x's over every token, [1] the intermediate's before its quantization
  /// (over the computed tokens' pairs), whatever act_quant the weights name; so a check can run
  /// the reference on the GPU's own dynamic scales as static ones and compare the scales.
  float* dynamic_act_scales = nullptr;
};

/// `weights` with per-tensor static activation scales `scales` ([0] x's, [1] the
/// intermediate's; they must outlive the result) in place of per-tensor dynamic ones: the
/// reference on the GPU's own dynamic scales. Per-tensor dynamic scaling hangs every e4m3
/// rounding of a tensor on one amax element, which the FP8 tensor cores' accumulation can move
/// across a bf16 rounding boundary (their partial sums keep about 14 bits between the fp32
/// promotions every 128 k, as the DeepSeek-V3 report measured): a 1.5% different scale then
/// decorrelates all of the intermediate's roundings from the reference's (`fusedmoe check`
/// rel_l2 3.4e-2 on the H200 at E = 60, H = 2880, I = 1408, m = 255, seed 1, with the synthetic
/// weights before 30512b4; a CPU emulation of the path with that accumulation reproduced it).
MoeWeights with_static_act_scales(const MoeWeights& weights, const float* scales);

/// The whole layer: routing (when inputs carry logits), align, GEMM1, activation, GEMM2 with
/// routed weights, combine. `out` receives [rows, hidden] in fp64, rows = m or tokens.size().
Status run_layer(const MoeInputs& inputs, const MoeWeights& weights, const LayerOptions& options,
                 std::vector<double>* out);

}  // namespace fusedmoe::ref
