#include "fusedmoe_ref/tolerance.h"

#include <cmath>
#include <cstdio>

namespace fusedmoe::ref {

Tolerance tolerance_for(DType act_dtype, const QuantParams& quant) {
  const bool fp16 = act_dtype == DType::kFP16;
  switch (quant.format) {
    case WeightFormat::kFP8PerTensor:
    case WeightFormat::kFP8PerChannel:
    case WeightFormat::kFP8Block: return kToleranceFP8;
    case WeightFormat::kGPTQ:
    case WeightFormat::kAWQ:
    case WeightFormat::kMoeWNA16: return fp16 ? kToleranceWNA16FP16 : kToleranceWNA16BF16;
    case WeightFormat::kDense: break;
  }
  return fp16 ? kToleranceFP16 : kToleranceBF16;
}

Comparison compare(const std::vector<double>& ref, const std::vector<double>& got, const Tolerance& tol) {
  Comparison c;
  c.count = static_cast<int64_t>(ref.size());
  if (got.size() != ref.size()) {
    c.nonfinite = -1;  // sizes differ: never a pass
    return c;
  }
  double diff2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i]) || !std::isfinite(ref[i])) {
      if (c.nonfinite++ == 0) c.worst_index = static_cast<int64_t>(i);
      continue;
    }
    const double d = std::fabs(got[i] - ref[i]);
    diff2 += d * d;
    ref2 += ref[i] * ref[i];
    if (d > c.max_abs && c.nonfinite == 0) {
      c.max_abs = d;
      c.worst_index = static_cast<int64_t>(i);
    }
  }
  c.ref_rms = c.count > 0 ? std::sqrt(ref2 / static_cast<double>(c.count)) : 0.0;
  c.rel_l2 = ref2 > 0.0 ? std::sqrt(diff2 / ref2) : (diff2 > 0.0 ? INFINITY : 0.0);
  c.pass = c.nonfinite == 0 && c.rel_l2 <= tol.rel_l2 && c.max_abs <= tol.max_abs_over_rms * c.ref_rms + 1e-300;
  if (c.count > 0 && ref2 == 0.0) c.pass = c.nonfinite == 0 && diff2 == 0.0;
  return c;
}

std::string Comparison::describe() const {
  char buf[256];
  if (nonfinite < 0) return "output size differs from the reference";
  std::snprintf(buf, sizeof buf, "%s: rel_l2 %.3e, max_abs %.3e (ref rms %.3e, worst index %lld), non-finite %lld",
                pass ? "PASS" : "FAIL", rel_l2, max_abs, ref_rms, static_cast<long long>(worst_index),
                static_cast<long long>(nonfinite));
  return buf;
}

}  // namespace fusedmoe::ref
