// Names of the public enums, element sizes and TensorSpec helpers.
#include "fusedmoe/moe.h"
#include "fusedmoe/status.h"
#include "fusedmoe/types.h"

namespace fusedmoe {

const char* to_string(StatusCode code) {
  switch (code) {
    case StatusCode::kSuccess: return "success";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotImplemented: return "not implemented";
    case StatusCode::kWorkspaceTooSmall: return "workspace too small";
    case StatusCode::kCudaError: return "CUDA error";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown status";
}

const char* to_string(DType v) {
  switch (v) {
    case DType::kBF16: return "bf16";
    case DType::kFP16: return "fp16";
    case DType::kFP32: return "fp32";
    case DType::kFP8E4M3: return "fp8_e4m3";
    case DType::kInt32: return "int32";
    case DType::kUInt8: return "uint8";
  }
  return "unknown dtype";
}

const char* to_string(Activation v) {
  switch (v) {
    case Activation::kSiluAndMul: return "silu_and_mul";
    case Activation::kGeluAndMul: return "gelu_and_mul";
    case Activation::kGeluTanhAndMul: return "gelu_tanh_and_mul";
  }
  return "unknown activation";
}

const char* to_string(WeightFormat v) {
  switch (v) {
    case WeightFormat::kDense: return "dense";
    case WeightFormat::kFP8PerTensor: return "fp8_per_tensor";
    case WeightFormat::kFP8PerChannel: return "fp8_per_channel";
    case WeightFormat::kFP8Block: return "fp8_block";
    case WeightFormat::kGPTQ: return "gptq";
    case WeightFormat::kAWQ: return "awq";
    case WeightFormat::kMoeWNA16: return "moe_wna16";
  }
  return "unknown format";
}

const char* to_string(ActQuant v) {
  switch (v) {
    case ActQuant::kNone: return "none";
    case ActQuant::kPerTensorDynamic: return "per_tensor_dynamic";
    case ActQuant::kPerTensorStatic: return "per_tensor_static";
    case ActQuant::kPerToken: return "per_token";
    case ActQuant::kPerGroup: return "per_group";
  }
  return "unknown act_quant";
}

const char* to_string(ScoringFunc v) {
  switch (v) {
    case ScoringFunc::kSoftmax: return "softmax";
    case ScoringFunc::kSigmoid: return "sigmoid";
  }
  return "unknown scoring";
}

const char* to_string(Projection v) {
  switch (v) {
    case Projection::kW13: return "w13";
    case Projection::kW2: return "w2";
  }
  return "unknown projection";
}

const char* to_string(KernelPath v) {
  switch (v) {
    case KernelPath::kAuto: return "auto";
    case KernelPath::kSmallM: return "small_m";
    case KernelPath::kGroupedGemm: return "grouped_gemm";
    case KernelPath::kGroupedSwapped: return "grouped_swapped";
    case KernelPath::kGroupedMixed: return "grouped_mixed";
  }
  return "unknown kernel path";
}

Status parse_kernel_path(const std::string& name, KernelPath* out) {
  for (KernelPath v : {KernelPath::kAuto, KernelPath::kSmallM, KernelPath::kGroupedGemm, KernelPath::kGroupedSwapped,
                       KernelPath::kGroupedMixed}) {
    if (name == to_string(v)) {
      if (out != nullptr) *out = v;
      return Status();
    }
  }
  return Status(StatusCode::kInvalidArgument,
                "path: expected auto, small_m, grouped_gemm, grouped_swapped or grouped_mixed, got '" + name + "'");
}

int64_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
    case DType::kFP16: return 2;
    case DType::kFP32:
    case DType::kInt32: return 4;
    case DType::kFP8E4M3:
    case DType::kUInt8: return 1;
  }
  return 0;
}

int64_t TensorSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t TensorSpec::bytes() const { return numel() * dtype_size(dtype); }

}  // namespace fusedmoe
