// The layer on the GPU, for dense (bf16/fp16) and weight-only int4/int8 weights:
// route (optional) -> align -> two expert GEMMs -> combine. Two paths share the ends:
//   small M: small_m_splitk (dense) or wna16_gemv (int): gate-up GEMV with the activation,
//            down GEMV with the routed weight;
//   grouped: gather -> sm90 grouped GEMM -> gated activation -> sm90 grouped GEMM, with the
//            routed weight in the combine; integer weights are first dequantized by
//            wna16_dequant, a chunk of experts at a time, into the workspace. FP8 weights:
//            fp8_quantize gathers x's rows itself, and quantizes the gated activation as it
//            computes it from GEMM1's output where fp8_fuses_activation says (planner.h).
// CUDA builds only.
#pragma once

#include <cstddef>

#include "fusedmoe/moe.h"
#include "kernels/launch.h"
#include "planner.h"

namespace fusedmoe {

/// The kernels' names for the public activation and element types.
kernels::GatedAct gated_act(Activation a);
kernels::ElemType elem_type(DType d);

/// Enqueues routing_topk (arguments already validated).
Status gpu_route(const ProblemShape& shape, const RoutingConfig& routing, DType logits_dtype, const void* logits,
                 int32_t* topk_ids, float* topk_weights, cudaStream_t stream);

/// The glue around the expert GEMMs, shared by the layer and the cuBLAS peer of the bench
/// tool. `al` carries the alignment buffers (expert_counts, expert_offsets, sorted_pairs,
/// active_experts, block_counts when needed); enqueue_align fills the rest from `in`.
/// beside_predecessor: launch_align_tokens' (the kernel before it writes nothing align reads).
Status enqueue_align(const MoeInputs& in, const int32_t* topk_ids, kernels::AlignParams* al, cudaStream_t stream,
                     bool beside_predecessor = false);
/// x's rows in expert order into `rows`, and row_of_pair for the combine (if not nullptr);
/// act-order weights: each row's columns in its expert's order `x_order` (prepared w13.g_idx);
/// by_pair: the rows at their pairs' indices instead.
Status enqueue_gather(const MoeInputs& in, const kernels::AlignParams& al, void* rows, int32_t* row_of_pair,
                      cudaStream_t stream, const int32_t* x_order = nullptr, bool by_pair = false);
/// act(gate) * up of GEMM1's [rows, 2I] output, with the routed weight if it applies on input;
/// with `amax`, also the max |value| it stores (zeroed first: a per-tensor dynamic FP8 scale's).
Status enqueue_gated_act(const MoeInputs& in, const kernels::AlignParams& al, const float* topk_weights,
                         const void* gate_up, void* intermediate, cudaStream_t stream, float* amax = nullptr);
/// out[t] = sum over slots of weight * y[row]; `weights` nullptr when GEMM2 applied them,
/// `row_of_pair` nullptr when y is indexed by pair.
Status enqueue_combine(const MoeInputs& in, const kernels::AlignParams& al, const float* weights, const void* y,
                       const int32_t* row_of_pair, void* out, cudaStream_t stream);

/// Constraints of the kernels beyond the common validation (16-byte rows and pointers; the
/// small-M path for integer weights needs a layout wna16_gemv reads).
Status layer_can_implement(const MoeArguments& args);
/// The path planned for this call and its workspace (queries the current device's SM count).
Status layer_plan(const MoeArguments& args, KernelPath* path, WorkspaceLayout* ws);
/// Enqueues the layer.
Status layer_run(const MoeArguments& args, void* workspace, size_t workspace_bytes, cudaStream_t stream);

/// Converts GPTQ / AWQ / moe_wna16 checkpoint tensors (device memory, arguments validated)
/// into the prepared integer layout in `storage` (prepared_quant_sizes of w13, then w2).
Status gpu_prepare_quant(const ProblemShape& shape, const MoeWeights& checkpoint, void* storage, cudaStream_t stream,
                         PreparedWeights* out);
/// Dense weights into `storage` (prepared_quant_sizes): w13 with its gate and up rows
/// interleaved (gate_up_row()), then w2 as it is.
Status gpu_prepare_dense(const ProblemShape& shape, const MoeWeights& checkpoint, void* storage, cudaStream_t stream,
                         PreparedWeights* out);

}  // namespace fusedmoe
