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
  kSm90Bf16GroupedGemm,       ///< dense bf16/fp16 weights
  kSm90Fp8GroupedGemm,        ///< fp8 per-tensor / per-channel scales
  kSm90Fp8GroupedGemmBlockscale,  ///< fp8 128x128 block scales
  kWna16GroupedGemm,          ///< GPTQ / AWQ / moe_wna16 int4 and int8
};

const char* kernel_family_name(KernelFamily family);
KernelFamily kernel_family_for(const QuantParams& quant);
/// Whether this build compiled the family's kernels.
bool kernel_family_available(KernelFamily family);

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
