// Checkpoint weight formats: which tensors each format has, their shapes, and the checks
// on a weight description. docs/FORMATS.md explains each format with an example.
#include <string>
#include <vector>

#include "check.h"
#include "fusedmoe/moe.h"
#include "validate.h"

namespace fusedmoe {

using detail::invalid_argument;
using detail::str;

int64_t projection_rows(const ProblemShape& s, Projection which) {
  return which == Projection::kW13 ? 2 * s.inter : s.hidden;
}

int64_t projection_cols(const ProblemShape& s, Projection which) {
  return which == Projection::kW13 ? s.hidden : s.inter;
}

int64_t quant_groups(const QuantParams& q, int64_t k) {
  return q.group_size == -1 ? 1 : k / q.group_size;
}

bool is_integer_format(WeightFormat f) {
  return f == WeightFormat::kGPTQ || f == WeightFormat::kAWQ || f == WeightFormat::kMoeWNA16;
}

bool is_fp8_format(WeightFormat f) {
  return f == WeightFormat::kFP8PerTensor || f == WeightFormat::kFP8PerChannel ||
         f == WeightFormat::kFP8Block;
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Divisibility of one projection's N (rows) and K (columns) by what the format packs.
Status check_projection_dims(const ProblemShape& s, const QuantParams& q, Projection which) {
  const std::string p = to_string(which);
  const int64_t n = projection_rows(s, which);
  const int64_t k = projection_cols(s, which);
  const std::string nk = " (" + p + " has N = " + str(n) + ", K = " + str(k) + ")";
  if (is_integer_format(q.format) && q.group_size != -1 && k % q.group_size != 0) {
    return invalid_argument("quant.group_size", "a divisor of K" + nk, str(q.group_size));
  }
  switch (q.format) {
    case WeightFormat::kGPTQ: {
      const int64_t pack = 32 / q.bits;
      if (k % pack != 0) {
        return invalid_argument(p + " K", "a multiple of " + str(pack) + " (GPTQ packs " +
                                              str(pack) + " values of " + str(q.bits) +
                                              " bits along K)" + nk, str(k));
      }
      if (q.has_zeros && n % pack != 0) {
        return invalid_argument(p + " N", "a multiple of " + str(pack) +
                                              " (GPTQ qzeros pack along N)" + nk, str(n));
      }
      break;
    }
    case WeightFormat::kAWQ:
      if (n % 8 != 0) {
        return invalid_argument(p + " N", "a multiple of 8 (AWQ packs 8 values along N)" + nk,
                                str(n));
      }
      break;
    case WeightFormat::kMoeWNA16: {
      const int64_t pack = 8 / q.bits;
      if (k % pack != 0) {
        return invalid_argument(p + " K", "a multiple of " + str(pack) +
                                              " (moe_wna16 packs along K in bytes)" + nk, str(k));
      }
      if (q.has_zeros && n % pack != 0) {
        return invalid_argument(p + " N", "a multiple of " + str(pack) +
                                              " (moe_wna16 qzeros pack along N)" + nk, str(n));
      }
      break;
    }
    default: break;
  }
  return Status();
}

}  // namespace

Status validate_quant(const ProblemShape& s, DType act_dtype, const QuantParams& q) {
  if (act_dtype != DType::kBF16 && act_dtype != DType::kFP16) {
    return invalid_argument("act_dtype", "bf16 or fp16", to_string(act_dtype));
  }
  const std::string fmt = std::string(" for format ") + to_string(q.format);
  if (is_integer_format(q.format)) {
    if (q.format == WeightFormat::kAWQ ? q.bits != 4 : (q.bits != 4 && q.bits != 8)) {
      return invalid_argument("quant.bits", q.format == WeightFormat::kAWQ ? "4 for awq" : "4 or 8" + fmt,
                              str(q.bits));
    }
    if (q.group_size != -1 && q.group_size <= 0) {
      return invalid_argument("quant.group_size", "a positive group size or -1 (per-channel)",
                              str(q.group_size));
    }
    if (q.scale_dtype != DType::kFP16 && q.scale_dtype != DType::kBF16 &&
        q.scale_dtype != DType::kFP32) {
      return invalid_argument("quant.scale_dtype", "fp16, bf16 or fp32", to_string(q.scale_dtype));
    }
    if (q.has_g_idx && q.format != WeightFormat::kGPTQ) {
      return invalid_argument("quant.has_g_idx", "false" + fmt + " (act-order is GPTQ's)", "true");
    }
    if (q.act_quant != ActQuant::kNone) {
      return invalid_argument("quant.act_quant", "none" + fmt + " (weight-only)",
                              to_string(q.act_quant));
    }
  } else if (is_fp8_format(q.format)) {
    if (q.has_zeros || q.has_g_idx) {
      return invalid_argument(q.has_zeros ? "quant.has_zeros" : "quant.has_g_idx", "false" + fmt,
                              "true");
    }
    if (q.format == WeightFormat::kFP8Block) {
      if (q.block_n <= 0 || q.block_k <= 0 || q.block_k % 16 != 0) {
        return invalid_argument("quant.block_n/block_k",
                                "positive, block_k a multiple of 16 (DeepSeek: 128x128)",
                                str(q.block_n) + "x" + str(q.block_k));
      }
      if (q.act_quant != ActQuant::kPerGroup) {
        return invalid_argument("quant.act_quant", "per_group" + fmt + " (1 x block_k scales)",
                                to_string(q.act_quant));
      }
    } else if (q.act_quant == ActQuant::kNone || q.act_quant == ActQuant::kPerGroup) {
      return invalid_argument("quant.act_quant",
                              "per_tensor_dynamic, per_tensor_static or per_token" + fmt,
                              to_string(q.act_quant));
    }
  } else if (q.format == WeightFormat::kDense) {
    if (q.act_quant != ActQuant::kNone || q.has_zeros || q.has_g_idx) {
      return invalid_argument("quant", "no act_quant, zeros or g_idx for dense weights",
                              std::string("act_quant=") + to_string(q.act_quant) +
                                  (q.has_zeros ? ", has_zeros" : "") + (q.has_g_idx ? ", has_g_idx" : ""));
    }
  } else {
    return invalid_argument("quant.format", "a WeightFormat value", str(static_cast<int>(q.format)));
  }
  FUSEDMOE_RETURN_IF_ERROR(check_projection_dims(s, q, Projection::kW13));
  return check_projection_dims(s, q, Projection::kW2);
}

Status describe_weight_tensors(const ProblemShape& s, DType act_dtype, const QuantParams& q,
                               Projection which, std::vector<TensorSpec>* out) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  FUSEDMOE_RETURN_IF_ERROR(validate_shape(s));
  FUSEDMOE_RETURN_IF_ERROR(validate_quant(s, act_dtype, q));
  out->clear();
  const std::string p = to_string(which);
  const int64_t e = s.num_experts;
  const int64_t n = projection_rows(s, which);
  const int64_t k = projection_cols(s, which);
  const int64_t g = quant_groups(q, k);
  auto add = [&](const char* name, DType dt, std::vector<int64_t> dims) {
    out->push_back(TensorSpec{p + "." + name, dt, std::move(dims)});
  };
  switch (q.format) {
    case WeightFormat::kDense:
      add("weight", act_dtype, {e, n, k});
      break;
    case WeightFormat::kFP8PerTensor:
    case WeightFormat::kFP8PerChannel:
    case WeightFormat::kFP8Block:
      add("weight", DType::kFP8E4M3, {e, n, k});
      if (q.format == WeightFormat::kFP8PerTensor) add("scales", DType::kFP32, {e});
      if (q.format == WeightFormat::kFP8PerChannel) add("scales", DType::kFP32, {e, n});
      if (q.format == WeightFormat::kFP8Block) {
        add("scales", DType::kFP32, {e, ceil_div(n, q.block_n), ceil_div(k, q.block_k)});
      }
      if (q.act_quant == ActQuant::kPerTensorStatic) add("input_scale", DType::kFP32, {1});
      break;
    case WeightFormat::kGPTQ: {
      const int64_t pack = 32 / q.bits;
      add("weight", DType::kInt32, {e, k / pack, n});
      add("scales", q.scale_dtype, {e, g, n});
      if (q.has_zeros) add("zeros", DType::kInt32, {e, g, n / pack});
      if (q.has_g_idx) add("g_idx", DType::kInt32, {e, k});
      break;
    }
    case WeightFormat::kAWQ:
      add("weight", DType::kInt32, {e, k, n / 8});
      add("scales", q.scale_dtype, {e, g, n});
      if (q.has_zeros) add("zeros", DType::kInt32, {e, g, n / 8});
      break;
    case WeightFormat::kMoeWNA16: {
      const int64_t pack = 8 / q.bits;
      add("weight", DType::kUInt8, {e, n, k / pack});
      add("scales", q.scale_dtype, {e, n, g});
      if (q.has_zeros) add("zeros", DType::kUInt8, {e, n / pack, g});
      break;
    }
  }
  return Status();
}

namespace {

const void* pointer_of(const ProjectionWeights& w, const std::string& spec_name) {
  const std::string field = spec_name.substr(spec_name.find('.') + 1);
  if (field == "weight") return w.weight;
  if (field == "scales") return w.scales;
  if (field == "zeros") return w.zeros;
  if (field == "g_idx") return w.g_idx;
  if (field == "input_scale") return w.input_scale;
  return nullptr;
}

Status check_pointers(const ProblemShape& s, DType act_dtype, const QuantParams& q,
                      Projection which, const ProjectionWeights& w) {
  std::vector<TensorSpec> specs;
  FUSEDMOE_RETURN_IF_ERROR(describe_weight_tensors(s, act_dtype, q, which, &specs));
  for (const TensorSpec& spec : specs) {
    if (pointer_of(w, spec.name) == nullptr) {
      return invalid_argument("weights." + spec.name,
                              std::string("a pointer to ") + to_string(spec.dtype) + " data for format " +
                                  to_string(q.format),
                              "nullptr");
    }
  }
  return Status();
}

}  // namespace

Status validate_weights(const ProblemShape& s, DType act_dtype, const MoeWeights& w) {
  FUSEDMOE_RETURN_IF_ERROR(check_pointers(s, act_dtype, w.quant, Projection::kW13, w.w13));
  return check_pointers(s, act_dtype, w.quant, Projection::kW2, w.w2);
}

Status act_order_columns(const int32_t* g_idx, int64_t k, int64_t group_len, const std::string& name,
                         int32_t* order) {
  const int64_t groups = group_len > 0 ? k / group_len : 0;
  if (groups <= 0 || groups * group_len != k) {
    return invalid_argument("group_size", "a divisor of " + str(k), str(group_len));
  }
  std::vector<int64_t> next(static_cast<size_t>(groups), 0);  // channels per group, then each group's next position
  for (int64_t c = 0; c < k; ++c) {
    const int32_t g = g_idx[c];
    if (g < 0 || g >= groups) {
      return invalid_argument(name + "[" + str(c) + "]", "a group in 0.." + str(groups - 1), str(g));
    }
    ++next[static_cast<size_t>(g)];
  }
  for (int64_t g = 0; g < groups; ++g) {
    if (next[static_cast<size_t>(g)] != group_len) {
      return invalid_argument(name, str(group_len) + " channels in every group (GPTQ act-order: g_idx[perm[i]] = i / "
                                  "group_size)", str(next[static_cast<size_t>(g)]) + " in group " + str(g));
    }
    next[static_cast<size_t>(g)] = g * group_len;
  }
  for (int64_t c = 0; c < k; ++c) order[next[static_cast<size_t>(g_idx[c])]++] = static_cast<int32_t>(c);
  return Status();
}

}  // namespace fusedmoe
