// Device memory for align's outputs (smxx_align_tokens: expert counts, offsets, sorted pairs,
// active experts, and the multi-CTA kernel's block counts), for the bench tool's layers that
// enqueue align themselves (the cuBLAS peer, the routing stage). CUDA builds only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu_layer.h"
#include "kernels/align_geometry.h"
#include "kernels/launch.h"

namespace fusedmoe::tools {

struct AlignBuffers {
  DeviceBuffer counts, offsets, active, sorted, block_counts;

  /// Sizes them for `pairs` (m * topk) over `experts` local experts (no block counts where
  /// align runs in one CTA).
  Status assign(int64_t pairs, int32_t experts) {
    const size_t e = static_cast<size_t>(experts), p = static_cast<size_t>(pairs);
    const size_t blocks = static_cast<size_t>(kernels::align_block_counts_size(pairs, experts));
    Status st = counts.assign(nullptr, e * sizeof(int32_t));
    if (st.ok()) st = offsets.assign(nullptr, (e + 1) * sizeof(int64_t));
    if (st.ok()) st = active.assign(nullptr, (e + 1) * sizeof(int32_t));
    if (st.ok()) st = sorted.assign(nullptr, p * sizeof(int32_t));
    if (st.ok() && blocks > 0) st = block_counts.assign(nullptr, blocks * sizeof(int32_t));
    return st;
  }
  /// The outputs of enqueue_align's parameters (it fills the inputs).
  kernels::AlignParams params() const {
    kernels::AlignParams al;
    al.expert_counts = static_cast<int32_t*>(counts.get());
    al.expert_offsets = static_cast<int64_t*>(offsets.get());
    al.sorted_pairs = static_cast<int32_t*>(sorted.get());
    al.active_experts = static_cast<int32_t*>(active.get());
    al.block_counts = static_cast<int32_t*>(block_counts.get());
    return al;
  }
};

}  // namespace fusedmoe::tools
