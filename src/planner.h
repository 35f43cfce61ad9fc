// Planner: which kernel family serves a call, and how the workspace is laid out.
// Tile and split choices join this file with the kernels that need them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fusedmoe/moe.h"

namespace fusedmoe {

/// Kernel families of src/kernels/, named by their file stems.
enum class KernelFamily {
  kSmallMSplitK,              ///< dense bf16/fp16 weights, grouped GEMV with in-CTA split-K
  kSm90Bf16GroupedGemm,       ///< dense bf16/fp16 weights, tensor cores (large batches)
  kSm90Fp8GroupedGemm,        ///< fp8 per-tensor / per-channel scales
  kSm90Fp8GroupedGemmBlockscale,  ///< fp8 128x128 block scales
  kWna16GroupedGemm,          ///< GPTQ / AWQ / moe_wna16 int4 and int8
};

const char* kernel_family_name(KernelFamily family);
KernelFamily kernel_family_for(const QuantParams& quant);
/// Whether this build compiled the family's kernels.
bool kernel_family_available(KernelFamily family);

/// Split-K choice of the small-M path for one GEMM (see choose_split_k).
struct SmallMGemmConfig {
  int32_t split_k = 1;   ///< warps of a CTA sharing one row group's K range: 1, 2, 4, 8
  int64_t ctas = 0;      ///< CTAs launched (an upper bound: slots past the live experts exit)
};

/// The small-M kernel's CTA has 8 warps; a warp owns `rows_per_warp_unit` output units
/// (2 gate/up columns or 4 down rows). Split-K trades row groups for K slices until the grid
/// has at least two CTAs per SM (the weight stream then has enough loads in flight), as long
/// as each warp keeps at least one 16-byte load per lane per slice (K >= 256 * split_k).
///   units        output units of one expert (gate-up: ceil(I / 2), down: ceil(H / 4))
///   max_active   host-known bound on experts with tokens: min(E, m * topk)
SmallMGemmConfig choose_split_k(int64_t units, int64_t max_active, int64_t k, int32_t sm_count);

/// One named region of the workspace.
struct WorkspaceBuffer {
  const char* name;
  size_t offset;
  size_t bytes;
};

/// The workspace of one layer call, sized from host-known bounds only (m is the bound of the
/// live token count), so that a captured CUDA graph stays valid for any routing.
struct WorkspaceLayout {
  static constexpr size_t kAlignment = 256;
  std::vector<WorkspaceBuffer> buffers;
  size_t total_bytes = 0;
  const WorkspaceBuffer* find(const char* name) const;
};

/// Lays out the workspace for `block_m` rows per GEMM tile. All products in 64 bits; fails
/// (naming the product) when a size leaves int64.
Status plan_workspace(const MoeInputs& inputs, const QuantParams& quant, int32_t block_m,
                      WorkspaceLayout* out);

}  // namespace fusedmoe
