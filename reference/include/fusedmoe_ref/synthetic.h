// Random but realistic layers: checkpoints in every weight format and layer inputs, made
// from a seed (the same seed gives the same bytes everywhere). Used by the tests and by
// `fusedmoe check`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusedmoe/moe.h"
#include "fusedmoe_ref/buffer.h"

namespace fusedmoe::ref {

/// A whole layer's weights in a checkpoint format, owning its storage.
struct Checkpoint {
  MoeWeights weights;                       ///< points into data
  std::vector<TensorSpec> specs;            ///< w13's tensors, then w2's
  std::vector<ByteBuffer> data;             ///< one buffer per spec
  /// The buffer of the tensor named `name` ("w13.scales"), or nullptr.
  ByteBuffer* find(const std::string& name);
};

/// Draws a checkpoint: dense weights uniform with variance 1/K; FP8 weights quantized from such values
/// with the format's amax scales; integer codes uniform over their range with zero points
/// away from the midpoint, scales spread over 2^-2..2^2 of a base that keeps outputs O(1),
/// and act-order g_idx from a random permutation.
Status make_random_checkpoint(const ProblemShape& shape, DType act_dtype, const QuantParams& quant,
                              uint64_t seed, Checkpoint* out);

/// Quantizes dense weights into an integer checkpoint the way GPTQ (RTN, without the Hessian
/// update), AutoAWQ and vLLM's moe_wna16 store one: per (group, output row) min/max scales,
/// scale = (max - min) / (2^bits - 1) and zero = round(-min / scale) with zero points,
/// else scale = 2 max|w| / (2^bits - 1) around the midpoint; codes = clamp(round(w / scale) +
/// zero); scales stored in quant.scale_dtype after rounding, codes computed with the stored
/// scale. Act-order (has_g_idx): channels ranked by their column's L2 norm over the rows
/// (descending, as GPTQ orders by the Hessian diagonal) fill the groups in turn. FP8 formats:
/// e4m3 codes of w / s with s = amax / 448 over each scale block (the tensor, a row, or
/// block_n x block_k), as the synthetic FP8 checkpoints are made. `dense` is a kDense
/// checkpoint of the same shape in act_dtype.
Status quantize_checkpoint(const ProblemShape& shape, DType act_dtype, const Checkpoint& dense, const QuantParams& quant,
                           Checkpoint* out);

/// Random layer inputs owning their storage; `inputs` points into the vectors.
struct LayerData {
  MoeInputs inputs;
  std::vector<uint16_t> x;            ///< [m, hidden] in act_dtype
  std::vector<float> router_logits;   ///< [m, global_E]
  std::vector<float> correction_bias; ///< [global_E]
  std::vector<int32_t> topk_ids;      ///< [m, topk]
  std::vector<float> topk_weights;    ///< [m, topk]
  std::vector<int32_t> expert_map;    ///< [global_E] when experts are absent
};

/// How synthetic routing places tokens.
enum class RoutingMode {
  kRouter,     ///< router logits ~ N(0,1) routed by inputs.routing (set by the caller)
  kUniform,    ///< topk distinct experts uniformly at random
  kSkewed,     ///< expert e drawn with weight (1 + 0.3 * cos(e)): about +-30% per expert
  kOneExpert,  ///< every token's first slot on expert 0 (the rest distinct, at random)
  kBalanced,   ///< token t's slot s on expert (t * topk + s) mod E: each expert m * topk / E pairs,
               ///< rounded up or down (the bench's controlled tile counts)
};

/// x ~ N(0,1); routing as `mode` says (weights uniform in [0.1, 1)).
Status make_random_inputs(const ProblemShape& shape, DType act_dtype, RoutingMode mode, uint64_t seed,
                          LayerData* out);

/// Re-points out->inputs at out's own vectors (after a copy or a move).
void bind(LayerData* data);

}  // namespace fusedmoe::ref
