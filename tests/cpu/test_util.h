// Helpers shared by the CPU and GPU tests.
#pragma once

#include "fusedmoe/types.h"

namespace fusedmoe::testing_util {

inline ProblemShape make_shape(int64_t m, int64_t hidden, int64_t inter, int32_t experts, int32_t topk) {
  ProblemShape s;
  s.m = m;
  s.hidden = hidden;
  s.inter = inter;
  s.num_experts = experts;
  s.topk = topk;
  return s;
}

// Weight-only int4/int8 quantization parameters (FP16 scales unless given).
inline QuantParams integer_quant(WeightFormat f, int bits, int group, bool zeros, DType scales = DType::kFP16) {
  QuantParams q;
  q.format = f;
  q.bits = bits;
  q.group_size = group;
  q.has_zeros = zeros;
  q.scale_dtype = scales;
  return q;
}

// FP8 W8A8 quantization parameters: the weights' scaling and the activations'.
inline QuantParams fp8_quant(WeightFormat f, ActQuant a) {
  QuantParams q;
  q.format = f;
  q.act_quant = a;
  return q;
}

}  // namespace fusedmoe::testing_util
