// Tolerances, declared once per precision, and the comparison every check uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusedmoe/types.h"

namespace fusedmoe::ref {

/// A result passes when every element is finite, ||got - ref|| / ||ref|| <= rel_l2 and
/// max |got - ref| <= max_abs_over_rms * rms(ref).
struct Tolerance {
  const char* name;
  double rel_l2;
  double max_abs_over_rms;
};

// bf16 output rounding alone is 2^-9 relative; fp32 accumulation order and rare flips of the
// rounded intermediate add about as much again.
constexpr Tolerance kToleranceBF16{"bf16", 1.0e-2, 8.0e-2};
constexpr Tolerance kToleranceFP16{"fp16", 2.5e-3, 2.0e-2};
// FP8: both sides quantize the same way, but an accumulation-order difference can move an
// intermediate value across an e4m3 rounding boundary (1/16 relative).
constexpr Tolerance kToleranceFP8{"fp8", 3.0e-2, 2.5e-1};
// Weight-only int4/int8: the small-M path multiplies exact integers and applies the scales in
// fp32 (but at 64 tokens per pass), and the grouped paths round each dequantized weight
// to the activation dtype once (2^-9 relative in bf16) and store GEMM1's output before the
// activation. With zero points far from the midpoint the outputs share a large common
// component, and those roundings concentrate in few elements (measured on the H200: int8
// per-channel zeros, 16 x 1024 x 512, rel_l2 4.6e-3 and max_abs 0.104 x rms), hence a looser
// max_abs than dense bf16's. There the largest outputs are tens of rms (int4 per-channel
// zeros, m = 150, E = 8, H = 2880, I = 704, skewed: |ref| up to 385 at rms 10.8), where one
// bf16 ulp is 2: a CPU model of the weights rounded once plus the bf16 output alone reaches
// max_abs 0.137 x rms on those inputs, and int4's eight-tile GEMV measured 0.162 (one output
// an ulp off, -256 for -257.7; rel_l2 2.8e-3; PERF.md v55), hence 0.2.
constexpr Tolerance kToleranceWNA16BF16{"wna16_bf16", 1.0e-2, 2.0e-1};
constexpr Tolerance kToleranceWNA16FP16{"wna16_fp16", 2.5e-3, 2.0e-2};

Tolerance tolerance_for(DType act_dtype, const QuantParams& quant);

struct Comparison {
  int64_t count = 0;
  int64_t nonfinite = 0;   ///< NaN or Inf in got (or ref)
  double rel_l2 = 0.0;
  double max_abs = 0.0;
  double ref_rms = 0.0;
  int64_t worst_index = -1;
  bool pass = false;
  std::string describe() const;
};

Comparison compare(const std::vector<double>& ref, const std::vector<double>& got, const Tolerance& tol);

}  // namespace fusedmoe::ref
