// fusedmoe public API: the fused MoE layer.
//
// Host contract (as CUTLASS's device adapters):
//   prepare_weights   once, at load time: checkpoint format -> the layout the kernels read
//   can_implement     is this call supported by this build and these arguments?
//   workspace_size    bytes of scratch the call needs (a bound from host-known sizes only)
//   run               enqueue the whole layer on a stream; never synchronizes with the host
//
// Every function returns a Status; nothing throws, nothing prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fusedmoe/status.h"
#include "fusedmoe/types.h"

namespace fusedmoe {

/// Output rows N of a projection: 2I for w13, H for w2.
int64_t projection_rows(const ProblemShape& shape, Projection which);
/// Input columns K of a projection: H for w13, I for w2.
int64_t projection_cols(const ProblemShape& shape, Projection which);
/// Scale groups along K of an integer format: K / group_size, or 1 for group_size = -1.
int64_t quant_groups(const QuantParams& quant, int64_t k);

/// The checkpoint tensors one projection needs under these quantization parameters, with
/// their dtypes and shapes: the single source of truth for the formats of docs/FORMATS.md.
Status describe_weight_tensors(const ProblemShape& shape, DType act_dtype,
                               const QuantParams& quant, Projection which,
                               std::vector<TensorSpec>* out);

/// Host-side checks of everything in MoeInputs that does not need reading device data.
Status validate_inputs(const MoeInputs& inputs);
/// Host-side checks of the weight description (format combinations, divisibility, pointers).
Status validate_weights(const ProblemShape& shape, DType act_dtype, const MoeWeights& weights);

/// Weights in the kernels' layout, produced by prepare_weights(). The storage belongs to
/// the caller; this struct only describes it.
struct PreparedWeights {
  ProblemShape shape;     ///< E, H and I the weights were prepared for (m is ignored)
  DType act_dtype = DType::kBF16;
  QuantParams quant;
  ProjectionWeights w13;  ///< pointers into the prepared storage
  ProjectionWeights w2;
  /// Dense w13 with its gate and up rows interleaved in blocks of 8 (docs/FORMATS.md), so
  /// GEMM1 applies the activation in its epilogue; false: the checkpoint's order.
  bool gate_up_interleaved = false;
};

/// Bytes of device storage prepare_weights() needs for these weights (0 for FP8, whose
/// tensors the kernels read as they are).
Status prepared_weights_size(const ProblemShape& shape, DType act_dtype,
                             const MoeWeights& checkpoint, size_t* bytes);

/// Converts checkpoint weights (device memory) into the kernels' layout in `storage`. Dense
/// weights: w13 with gate and up rows interleaved, then w2 (the checkpoint may then be freed);
/// or, given no storage (nullptr, 0 bytes), read in place in the checkpoint's order, at the
/// cost of GEMM1 writing gate and up (2I columns) for a separate activation pass at prefill.
/// GPTQ act-order: K is put in group order (each expert's g_idx read back to the host, a
/// synchronization of `stream`, and checked: kInvalidArgument naming the expert's g_idx where
/// a group does not hold group_size channels).
Status prepare_weights(const ProblemShape& shape, DType act_dtype, const MoeWeights& checkpoint,
                       void* storage, size_t storage_bytes, cudaStream_t stream,
                       PreparedWeights* out);

/// Describes storage that prepare_weights() already filled for these checkpoint parameters
/// (kept elsewhere, e.g. as one framework tensor): fills `out`'s pointers into `storage`, no
/// device work. Integer and dense formats (FP8 weights have no prepared storage).
Status bind_prepared_weights(const ProblemShape& shape, DType act_dtype, const QuantParams& quant,
                             const void* storage, size_t storage_bytes, PreparedWeights* out);

/// Routes m tokens on the GPU, as run() does when given router logits: logits [m, global
/// experts] (fp32, bf16 or fp16) -> topk_ids [m, topk] int32 and topk_weights [m, topk] fp32,
/// all device memory, enqueued on `stream`. Scores in fp32; ties go to the lower index. The
/// kernel lets a successor launched as its programmatic dependent start at once: such a
/// kernel must wait for it (cudaGridDependencySynchronize) before it reads the outputs.
Status route_topk(const ProblemShape& shape, const RoutingConfig& routing, DType logits_dtype,
                  const void* logits, int32_t* topk_ids, float* topk_weights, cudaStream_t stream);

/// Which kernels serve the layer (dense, weight-only int4/int8 or FP8). kAuto lets the
/// planner choose from the batch (the default, fast without tuning); the others force one
/// path, for benchmarks and tests.
enum class KernelPath {
  kAuto,
  kSmallM,       ///< weight-streaming tensor-core GEMV with split-K (decode): small_m_splitk for
                 ///< dense weights, wna16_gemv (dequantizing in registers) for integer weights
  kGroupedGemm,  ///< sm90_bf16_grouped_gemm: persistent TMA + wgmma grouped GEMM (prefill);
                 ///< integer weights are dequantized into the workspace first (wna16_dequant)
  kGroupedSwapped,  ///< the same GEMMs with swapped operands (weights on the MMA's 128-row side,
                    ///< an expert's rows on its 64-column side): experts with few rows
  kGroupedMixed,    ///< integer weights only: wna16_grouped_gemm, the codes dequantized in
                    ///< registers into wgmma's operand (no dense copy of the weights); the
                    ///< layouts wna16_gemv reads. The planner's grouped path for those
                    ///< layouts (docs/PERF.md v55)
};
const char* to_string(KernelPath v);
/// The tensor-core grouped GEMM paths (either operand order, or the integer weights' mixed-input GEMM).
inline bool is_grouped_path(KernelPath p) {
  return p == KernelPath::kGroupedGemm || p == KernelPath::kGroupedSwapped || p == KernelPath::kGroupedMixed;
}
/// "auto", "small_m", "grouped_gemm", "grouped_swapped" or "grouped_mixed".
Status parse_kernel_path(const std::string& name, KernelPath* out);

struct MoeArguments;
/// The path run() takes for these arguments (kSmallM, kGroupedGemm, kGroupedSwapped or, for
/// integer weights, kGroupedMixed).
/// Host-only, no device needed.
Status planned_path(const MoeArguments& args, KernelPath* out);

/// One call of the layer.
struct MoeArguments {
  MoeInputs inputs;
  const PreparedWeights* weights = nullptr;
  void* out = nullptr;  ///< [m, hidden] in inputs.act_dtype
  KernelPath path = KernelPath::kAuto;
  /// Split-K of the small-M path's gate-up and down GEMVs: 0 lets the planner choose (the
  /// default, fast without tuning); 1, 2, 4 or 8 forces it, for benchmarks and tuning.
  int32_t split_k_gate_up = 0;
  int32_t split_k_down = 0;
  /// Row tiles each warp of the integer (int4/int8) small-M down GEMV streams, its pipeline
  /// carried from tile to tile: 0 lets the planner choose (the default); 1 to 8 forces it, for
  /// benchmarks, tuning and tests. It applies where that GEMV runs one 8-token tile per pass at
  /// split-K 1 or 2 over whole 16-row tiles (H a multiple of 16), after align; elsewhere 1.
  int32_t tiles_per_warp_down = 0;
};
/// The largest MoeArguments::tiles_per_warp_down.
inline constexpr int32_t kMaxTilesPerWarp = 8;
/// Whether `split_k` is a value MoeArguments::split_k_gate_up / split_k_down take: 0, 1, 2, 4 or 8.
inline bool is_valid_split_k(int64_t split_k) {
  return split_k == 0 || split_k == 1 || split_k == 2 || split_k == 4 || split_k == 8;
}

Status can_implement(const MoeArguments& args);
Status workspace_size(const MoeArguments& args, size_t* bytes);
Status run(const MoeArguments& args, void* workspace, size_t workspace_bytes,
           cudaStream_t stream);

/// A named precision ("bf16", "fp8_block", "w4a16_gptq", ...): an activation dtype and the
/// quantization parameters of a typical checkpoint of that kind.
struct Precision {
  std::string name;
  DType act_dtype = DType::kBF16;
  QuantParams quant;
};
/// The precisions fusedmoe knows, in a fixed order.
const std::vector<Precision>& known_precisions();
/// Looks a precision up by name or alias (fp8 = fp8_tensor, w4a16 = w4a16_gptq, ...).
Status find_precision(const std::string& name, Precision* out);

/// Whether this build has a GPU kernel path for each precision, for `fusedmoe info`.
struct PathInfo {
  std::string precision;
  std::string kernel;  ///< the kernel family that serves it
  bool available = false;
  std::string note;
};
std::vector<PathInfo> supported_paths();

}  // namespace fusedmoe
