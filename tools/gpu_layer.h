// One layer on the current GPU through the public API, for `fusedmoe check` and `bench`:
// uploads a synthetic checkpoint and inputs, prepares the weights, sizes the workspace.
// CUDA builds only.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "fusedmoe/moe.h"
#include "fusedmoe_ref/reference.h"
#include "fusedmoe_ref/synthetic.h"
#include "split_k.h"

namespace fusedmoe::tools {

/// Device memory freed with its owner.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// Allocates `bytes` (and copies them from `host` when it is not null).
  Status assign(const void* host, size_t bytes);
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

class GpuLayer {
 public:
  /// Uploads the checkpoint's tensors and prepares them for `shape` (m is ignored);
  /// `dense_in_place`: dense weights read as uploaded (the checkpoint's order, no storage).
  Status load_weights(const ProblemShape& shape, DType act_dtype, const ref::Checkpoint& checkpoint,
                      cudaStream_t stream, bool dense_in_place = false);
  /// Uploads x and the routing and allocates the output and the workspace. With `routing`
  /// the layer gets its topk ids and weights; without, it gets the router logits (and the
  /// correction bias) of `inputs` and routes on the GPU. `path` forces the dense path.
  /// `split_k` (0: the planner's) forces the small-M path's split-K per GEMV.
  Status set_inputs(const MoeInputs& inputs, const ref::Routing* routing, KernelPath path = KernelPath::kAuto,
                    SplitK split_k = SplitK());
  /// out_is_x: the layer runs in place (out = x, as a caller may pass): each run first copies
  /// the uploaded x into the output buffer and passes that buffer as both x and out.
  void set_out_is_x(bool out_is_x);
  /// Poisons the output (0xFF bytes: NaN), or with out_is_x writes x there, and enqueues the
  /// layer.
  Status run(cudaStream_t stream);
  /// The output, [m, hidden], as doubles (after the stream is synchronized).
  Status output(std::vector<double>* out) const;
  /// The output's bits, [m, hidden] bf16/fp16 (after the stream is synchronized).
  Status output_bits(std::vector<uint16_t>* out) const;
  /// FP8 layers: the per-tensor dynamic activation scales the last run computed (amax / 448 as
  /// fp8_quantize takes it; [0] x's, [1] the intermediate's), read from the workspace after
  /// the stream is synchronized.
  Status fp8_dynamic_scales(float (&scales)[2]) const;
  const MoeArguments& args() const { return args_; }
  /// The uploaded checkpoint's tensors as the kernels would read them in place (dense: the
  /// checkpoint's row order, whatever load_weights prepared), for peers that need that order.
  const PreparedWeights& checkpoint_weights() const { return checkpoint_weights_; }
  void* workspace() const { return workspace_.get(); }
  size_t workspace_bytes() const { return workspace_.bytes(); }

 private:
  std::vector<std::unique_ptr<DeviceBuffer>> tensors_;
  DeviceBuffer x_, ids_, weights_, logits_, bias_, map_, out_, workspace_;
  bool out_is_x_ = false;
  DeviceBuffer prepared_;  // prepare_weights' storage (dense and integer formats)
  PreparedWeights prepared_weights_;
  PreparedWeights checkpoint_weights_;
  MoeArguments args_;
};

}  // namespace fusedmoe::tools
