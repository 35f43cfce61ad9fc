// The named precisions of the CLI and the bindings.
#include "check.h"
#include "fusedmoe/moe.h"

namespace fusedmoe {

namespace {

Precision make(const char* name, DType act, WeightFormat fmt, ActQuant aq = ActQuant::kNone,
               int bits = 4, int group = 128, bool zeros = false, bool g_idx = false) {
  Precision p;
  p.name = name;
  p.act_dtype = act;
  p.quant.format = fmt;
  p.quant.act_quant = aq;
  p.quant.bits = bits;
  p.quant.group_size = group;
  p.quant.has_zeros = zeros;
  p.quant.has_g_idx = g_idx;
  p.quant.scale_dtype = DType::kFP16;  // GPTQ/AWQ checkpoints store fp16 scales
  return p;
}

}  // namespace

const std::vector<Precision>& known_precisions() {
  using F = WeightFormat;
  using A = ActQuant;
  constexpr DType kBF16 = DType::kBF16;
  static const std::vector<Precision> all = {
      make("bf16", kBF16, F::kDense),
      make("fp16", DType::kFP16, F::kDense),
      make("fp8_tensor", kBF16, F::kFP8PerTensor, A::kPerTensorDynamic),
      make("fp8_channel", kBF16, F::kFP8PerChannel, A::kPerToken),
      make("fp8_block", kBF16, F::kFP8Block, A::kPerGroup),
      make("w4a16_gptq", kBF16, F::kGPTQ, A::kNone, 4, 128, false, false),
      make("w4a16_gptq_zp", kBF16, F::kGPTQ, A::kNone, 4, 128, true, false),
      make("w4a16_gptq_actorder", kBF16, F::kGPTQ, A::kNone, 4, 128, false, true),
      make("w8a16_gptq", kBF16, F::kGPTQ, A::kNone, 8, 128, false, false),
      make("w4a16_awq", kBF16, F::kAWQ, A::kNone, 4, 128, true, false),
      make("w4a16_wna16", kBF16, F::kMoeWNA16, A::kNone, 4, 128, true, false),
      make("w8a16_wna16", kBF16, F::kMoeWNA16, A::kNone, 8, 128, false, false),
  };
  return all;
}

Status find_precision(const std::string& name, Precision* out) {
  if (out == nullptr) return detail::invalid_argument("out", "non-null", "nullptr");
  std::string key = name;
  if (key == "fp8") key = "fp8_tensor";
  if (key == "w4a16") key = "w4a16_gptq";
  if (key == "w8a16") key = "w8a16_gptq";
  std::string names;
  for (const Precision& p : known_precisions()) {
    if (p.name == key) {
      *out = p;
      return Status();
    }
    names += (names.empty() ? "" : ", ") + p.name;
  }
  return detail::invalid_argument("precision", "one of " + names + " (aliases fp8, w4a16, w8a16)",
                                  "'" + name + "'");
}

}  // namespace fusedmoe
