// The cuBLAS peer of `fusedmoe bench`: the same layer with the expert GEMMs done by cuBLAS,
// one cublasGemmEx per expert with rows (the per-expert counts come from the host's copy of
// the routing, as a per-expert-launch MoE must have them), and the same glue as the grouped
// path (align, gather, gated activation, weighted combine). CUDA builds only.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <vector>

#include "align_buffers.h"
#include "fusedmoe/moe.h"
#include "gpu_layer.h"

namespace fusedmoe::tools {

class CublasPeer {
 public:
  CublasPeer() = default;
  ~CublasPeer();
  CublasPeer(const CublasPeer&) = delete;
  CublasPeer& operator=(const CublasPeer&) = delete;

  /// Sizes the buffers for `args` (dense weights, no expert map) and routing `host_ids`.
  Status setup(const MoeArguments& args, const std::vector<int32_t>& host_ids);
  /// Enqueues the layer into out() (capturable in a CUDA graph).
  Status enqueue(cudaStream_t stream);
  /// The peer's output, [m, hidden] in the activation dtype.
  const void* out() const { return out_.get(); }

 private:
  MoeArguments args_;
  std::vector<int64_t> offsets_;  // [E + 1] rows per expert, prefix sums
  cublasHandle_t handle_ = nullptr;
  AlignBuffers align_;
  DeviceBuffer row_of_pair_, rows_, gate_up_, inter_, out_;
};

}  // namespace fusedmoe::tools
