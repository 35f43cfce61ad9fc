#include "cublas_peer.h"

#include <string>

#include "layer.h"
#include "kernels/launch.h"

namespace fusedmoe::tools {

CublasPeer::~CublasPeer() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

Status CublasPeer::setup(const MoeArguments& args, const std::vector<int32_t>& host_ids) {
  const ProblemShape& s = args.inputs.shape;
  if (args.inputs.expert_map != nullptr || args.weights->quant.format != WeightFormat::kDense) {
    return Status(StatusCode::kNotImplemented, "cuBLAS peer: dense weights without an expert map only");
  }
  args_ = args;
  const int64_t pairs = s.m * s.topk;
  offsets_.assign(static_cast<size_t>(s.num_experts) + 1, 0);
  for (int32_t id : host_ids) {
    if (id >= 0 && id < s.num_experts) ++offsets_[static_cast<size_t>(id) + 1];
  }
  for (int32_t e = 0; e < s.num_experts; ++e) offsets_[e + 1] += offsets_[e];
  const size_t act = static_cast<size_t>(dtype_size(args.inputs.act_dtype));
  const size_t p = static_cast<size_t>(pairs);
  Status st = align_.assign(pairs, s.num_experts);
  if (st.ok()) st = row_of_pair_.assign(nullptr, p * 4);
  if (st.ok()) st = rows_.assign(nullptr, p * static_cast<size_t>(s.hidden) * act);
  if (st.ok()) st = gate_up_.assign(nullptr, p * static_cast<size_t>(2 * s.inter) * act);
  if (st.ok()) st = inter_.assign(nullptr, p * static_cast<size_t>(s.inter) * act);
  if (st.ok()) st = out_.assign(nullptr, static_cast<size_t>(s.m * s.hidden) * act);
  if (!st.ok()) return st;
  if (handle_ == nullptr && cublasCreate(&handle_) != CUBLAS_STATUS_SUCCESS) {
    return Status(StatusCode::kCudaError, "cublasCreate failed");
  }
  return Status();
}

Status CublasPeer::enqueue(cudaStream_t stream) {
  const MoeInputs& in = args_.inputs;
  const ProblemShape& s = in.shape;
  const cudaDataType_t type = in.act_dtype == DType::kBF16 ? CUDA_R_16BF : CUDA_R_16F;
  const size_t act = static_cast<size_t>(dtype_size(in.act_dtype));

  kernels::AlignParams al = align_.params();
  Status st = enqueue_align(in, in.topk_ids, &al, stream);
  if (st.ok()) st = enqueue_gather(in, al, rows_.get(), static_cast<int32_t*>(row_of_pair_.get()), stream);
  if (!st.ok()) return st;

  cublasSetStream(handle_, stream);
  const float one = 1.0f, zero = 0.0f;
  // D[rows_e, n] = A[rows_e, k] . W_e[n, k]^T, row-major, as column-major D^T = W_e^T' A^T.
  auto gemms = [&](const void* a, const void* w, void* d, int64_t n, int64_t k) {
    for (int32_t e = 0; e < s.num_experts; ++e) {
      const int64_t rows = offsets_[e + 1] - offsets_[e];
      if (rows == 0) continue;
      const char* ae = static_cast<const char*>(a) + offsets_[e] * k * act;
      const char* we = static_cast<const char*>(w) + static_cast<int64_t>(e) * n * k * act;
      char* de = static_cast<char*>(d) + offsets_[e] * n * act;
      if (cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(rows), static_cast<int>(k),
                       &one, we, type, static_cast<int>(k), ae, type, static_cast<int>(k), &zero, de, type,
                       static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
        return Status(StatusCode::kCudaError, "cublasGemmEx failed");
      }
    }
    return Status();
  };
  st = gemms(rows_.get(), args_.weights->w13.weight, gate_up_.get(), 2 * s.inter, s.hidden);
  if (!st.ok()) return st;

  st = enqueue_gated_act(in, al, in.topk_weights, gate_up_.get(), inter_.get(), stream);
  if (!st.ok()) return st;

  st = gemms(inter_.get(), args_.weights->w2.weight, rows_.get(), s.hidden, s.inter);
  if (!st.ok()) return st;

  return enqueue_combine(in, al, in.apply_router_weight_on_input ? nullptr : in.topk_weights, rows_.get(),
                         static_cast<const int32_t*>(row_of_pair_.get()), out_.get(), stream);
}

}  // namespace fusedmoe::tools
