#include "gpu_layer.h"

#include <cuda_runtime_api.h>

#include <string>

#include "fusedmoe_ref/numeric.h"
#include "layer.h"
#include "planner.h"

namespace fusedmoe::tools {

namespace {

Status cuda_status(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status();
  return Status(StatusCode::kCudaError, std::string(what) + ": " + cudaGetErrorString(err));
}

}  // namespace

DeviceBuffer::~DeviceBuffer() { cudaFree(ptr_); }

Status DeviceBuffer::assign(const void* host, size_t bytes) {
  cudaFree(ptr_);
  ptr_ = nullptr;
  bytes_ = bytes;
  if (bytes == 0) return Status();
  Status st = cuda_status(cudaMalloc(&ptr_, bytes), "cudaMalloc");
  if (st.ok() && host != nullptr) st = cuda_status(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  return st;
}

Status GpuLayer::load_weights(const ProblemShape& shape, DType act_dtype, const ref::Checkpoint& ck,
                              cudaStream_t stream, bool dense_in_place) {
  tensors_.clear();
  MoeWeights w;
  w.quant = ck.weights.quant;
  ProjectionWeights* projections[2] = {&w.w13, &w.w2};
  for (size_t i = 0; i < ck.specs.size(); ++i) {
    tensors_.push_back(std::make_unique<DeviceBuffer>());
    Status st = tensors_.back()->assign(ck.data[i].data(), ck.data[i].size());
    if (!st.ok()) return st;
    const std::string& name = ck.specs[i].name;
    ProjectionWeights* p = projections[name.rfind("w13.", 0) == 0 ? 0 : 1];
    const std::string field = name.substr(name.find('.') + 1);
    void* ptr = tensors_.back()->get();
    if (field == "weight") p->weight = ptr;
    if (field == "scales") p->scales = ptr;
    if (field == "zeros") p->zeros = ptr;
    if (field == "g_idx") p->g_idx = static_cast<const int32_t*>(ptr);
    if (field == "input_scale") p->input_scale = static_cast<const float*>(ptr);
  }
  size_t bytes = 0;
  Status st = prepared_weights_size(shape, act_dtype, w, &bytes);
  if (!st.ok()) return st;
  if (dense_in_place && w.quant.format == WeightFormat::kDense) bytes = 0;
  st = prepared_.assign(nullptr, bytes);
  if (!st.ok()) return st;
  checkpoint_weights_ = PreparedWeights();
  checkpoint_weights_.shape = shape;
  checkpoint_weights_.act_dtype = act_dtype;
  checkpoint_weights_.quant = w.quant;
  checkpoint_weights_.w13 = w.w13;
  checkpoint_weights_.w2 = w.w2;
  return prepare_weights(shape, act_dtype, w, prepared_.get(), bytes, stream, &prepared_weights_);
}

Status GpuLayer::set_inputs(const MoeInputs& in, const ref::Routing* routing, KernelPath path, SplitK split_k) {
  const ProblemShape& s = in.shape;
  const size_t act = static_cast<size_t>(dtype_size(in.act_dtype));
  const size_t global = static_cast<size_t>(s.global_num_experts ? s.global_num_experts : s.num_experts);
  Status st = x_.assign(in.x, static_cast<size_t>(s.m * s.hidden) * act);
  if (routing != nullptr) {
    if (st.ok()) st = ids_.assign(routing->ids.data(), routing->ids.size() * sizeof(int32_t));
    if (st.ok()) st = weights_.assign(routing->weights.data(), routing->weights.size() * sizeof(float));
  } else {
    if (st.ok()) st = logits_.assign(in.router_logits, static_cast<size_t>(s.m) * global * dtype_size(in.router_dtype));
    if (st.ok() && in.routing.correction_bias) st = bias_.assign(in.routing.correction_bias, global * sizeof(float));
  }
  if (st.ok()) st = map_.assign(in.expert_map, in.expert_map ? global * sizeof(int32_t) : 0);
  if (st.ok()) st = out_.assign(nullptr, static_cast<size_t>(s.m * s.hidden) * act);
  if (!st.ok()) return st;
  args_ = MoeArguments();
  args_.inputs = in;
  set_out_is_x(out_is_x_);  // args_.inputs.x
  if (routing != nullptr) {
    args_.inputs.router_logits = nullptr;
    args_.inputs.topk_ids = static_cast<const int32_t*>(ids_.get());
    args_.inputs.topk_weights = static_cast<const float*>(weights_.get());
  } else {
    args_.inputs.router_logits = logits_.get();
    args_.inputs.routing.correction_bias = in.routing.correction_bias ? static_cast<const float*>(bias_.get()) : nullptr;
    args_.inputs.topk_ids = nullptr;
    args_.inputs.topk_weights = nullptr;
  }
  args_.inputs.expert_map = static_cast<const int32_t*>(map_.get());
  args_.weights = &prepared_weights_;
  args_.out = out_.get();
  args_.path = path;
  args_.split_k_gate_up = split_k.gate_up;
  args_.split_k_down = split_k.down;
  args_.tiles_per_warp_down = split_k.tiles_down;
  size_t bytes = 0;
  st = workspace_size(args_, &bytes);
  if (!st.ok()) return st;
  return workspace_.assign(nullptr, bytes);
}

void GpuLayer::set_out_is_x(bool out_is_x) {
  out_is_x_ = out_is_x;
  args_.inputs.x = out_is_x ? out_.get() : x_.get();
}

Status GpuLayer::run(cudaStream_t stream) {
  Status st = out_is_x_ ? cuda_status(cudaMemcpyAsync(out_.get(), x_.get(), out_.bytes(), cudaMemcpyDeviceToDevice, stream),
                                      "cudaMemcpyAsync")
                        : cuda_status(cudaMemsetAsync(out_.get(), 0xff, out_.bytes(), stream), "cudaMemsetAsync");
  if (!st.ok()) return st;
  return fusedmoe::run(args_, workspace_.get(), workspace_.bytes(), stream);
}

Status GpuLayer::fp8_dynamic_scales(float (&scales)[2]) const {
  KernelPath path = KernelPath::kAuto;
  WorkspaceLayout ws;
  Status st = layer_plan(args_, &path, &ws);
  if (!st.ok()) return st;
  const WorkspaceBuffer* amax = ws.find("amax");
  if (amax == nullptr || workspace_.get() == nullptr) {
    return Status(StatusCode::kInvalidArgument, "fp8_dynamic_scales: the layer is not FP8 (no amax in its workspace)");
  }
  float raw[2];
  st = cuda_status(cudaMemcpy(raw, static_cast<const char*>(workspace_.get()) + amax->offset, sizeof(raw),
                              cudaMemcpyDeviceToHost),
                   "cudaMemcpy");
  if (!st.ok()) return st;
  for (int i = 0; i < 2; ++i) scales[i] = ref::fp8_dynamic_scale(raw[i]);
  return Status();
}

Status GpuLayer::output_bits(std::vector<uint16_t>* out) const {
  out->resize(out_.bytes() / 2);
  return cuda_status(cudaMemcpy(out->data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
}

Status GpuLayer::output(std::vector<double>* out) const {
  const DType act = args_.inputs.act_dtype;
  std::vector<uint16_t> raw;
  const Status st = output_bits(&raw);
  if (!st.ok()) return st;
  out->resize(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) (*out)[i] = ref::load_as_double(raw.data(), act, static_cast<int64_t>(i));
  return Status();
}

}  // namespace fusedmoe::tools
