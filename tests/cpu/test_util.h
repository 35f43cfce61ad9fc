// Helpers shared by the CPU tests.
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

}  // namespace fusedmoe::testing_util
